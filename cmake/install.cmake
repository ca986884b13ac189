# Installs the shared library, public headers, CLI, CMake package config and pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS byocl EXPORT byoclTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS byocl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The OpenCL target's build worker, where the library looks for it (opencl_build_parts.c).
install(TARGETS byocl_opencl_build RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/byocl)
# --- LLVM host backend: libbyocl_llvm.so next to libbyocl.so, found through $ORIGIN
install(TARGETS byocl_llvm EXPORT byoclTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
file(RELATIVE_PATH BYOCL_BIN_TO_LIB "/root/${CMAKE_INSTALL_BINDIR}" "/root/${CMAKE_INSTALL_LIBDIR}")
set_target_properties(byocl PROPERTIES INSTALL_RPATH "$ORIGIN")
set_target_properties(byocl_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${BYOCL_BIN_TO_LIB}")
file(RELATIVE_PATH BYOCL_LIBEXEC_TO_LIB "/root/${CMAKE_INSTALL_LIBEXECDIR}/byocl"
     "/root/${CMAKE_INSTALL_LIBDIR}")
set_target_properties(byocl_opencl_build PROPERTIES INSTALL_RPATH "$ORIGIN/${BYOCL_LIBEXEC_TO_LIB}")
# --- end LLVM host backend
# The TVM bridge, where it is built (cmake/tvm.cmake): libbyocl_tvm.so beside libbyocl.so.
# libtvm_ffi.so is found as the process has it (a Python that imported tvm_ffi) or through
# the loader's path: it lives in a Python environment, not in the prefix.
if(TARGET byocl_tvm)
  install(TARGETS byocl_tvm LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set_target_properties(byocl_tvm PROPERTIES INSTALL_RPATH "$ORIGIN")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/byocl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT byoclTargets NAMESPACE byocl:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/byoclConfig.cmake.in
  ${PROJECT_BINARY_DIR}/byoclConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/byoclConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/byoclConfig.cmake ${PROJECT_BINARY_DIR}/byoclConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
# The pkg-config file locates the prefix from its own place (${pcfiledir}), so that
# `cmake --install build --prefix P` gives a working file for any P.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(BYOCL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH BYOCL_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  string(REGEX REPLACE "/$" "" BYOCL_PC_UP "${BYOCL_PC_UP}")
  set(BYOCL_PC_PREFIX "\${pcfiledir}/${BYOCL_PC_UP}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/byocl.pc.in ${PROJECT_BINARY_DIR}/byocl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/byocl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
