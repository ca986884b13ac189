# Installs the shared library, public headers, CLI, CMake package config and pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS byocl EXPORT byoclTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS byocl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/byocl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT byoclTargets NAMESPACE byocl:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/byoclConfig.cmake.in
  ${CMAKE_BINARY_DIR}/byoclConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/byoclConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/byoclConfig.cmake ${CMAKE_BINARY_DIR}/byoclConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/byocl)
configure_file(${CMAKE_SOURCE_DIR}/cmake/byocl.pc.in ${CMAKE_BINARY_DIR}/byocl.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/byocl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
