# The TVM bridge (runtime/tvm/, include/byocl/tvm.h) as its own shared library,
# libbyocl_tvm.so: byocl regions callable from Apache TVM as tvm-ffi functions
# (__tvm_ffi_<symbol>; docs/tvm.md). Pure C against tvm-ffi's C ABI (tvm/ffi/c_api.h,
# dlpack/dlpack.h and libtvm_ffi.so, from PyPI's apache-tvm-ffi wheel); it uses byocl's
# public API only and links the public libbyocl.so, as any program would.
#
# Optional: built where tvm-ffi is found, else byocl builds as without it and `byocl info`
# says so. BYOCL_TVM_FFI_CONFIG names the wheel's `tvm-ffi-config` program (default: the
# one on PATH); `make test` installs the wheel into <build>/tvm-venv (cmake/tvm-venv.sh)
# and passes its tvm-ffi-config. -DBYOCL_TVM=OFF leaves the bridge out on purpose.
option(BYOCL_TVM "Build the TVM bridge (libbyocl_tvm.so) where tvm-ffi is found" ON)
find_program(BYOCL_TVM_FFI_CONFIG NAMES tvm-ffi-config
             DOC "tvm-ffi-config of an apache-tvm-ffi install (pip), for the TVM bridge")
set(BYOCL_HAVE_TVM_FFI OFF)
set(BYOCL_TVM_FFI_VERSION "")

# Runs tvm-ffi-config with `flag`; sets ${out} to its output as a list, or "" on failure.
function(byocl_tvm_ffi_config out flag)
  execute_process(COMMAND ${BYOCL_TVM_FFI_CONFIG} ${flag} OUTPUT_VARIABLE value
                  ERROR_VARIABLE error OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(WARNING "byocl: ${BYOCL_TVM_FFI_CONFIG} ${flag} failed (${rc}): ${error}")
    set(value "")
  endif()
  separate_arguments(value UNIX_COMMAND "${value}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

if(BYOCL_TVM AND BYOCL_TVM_FFI_CONFIG AND NOT EXISTS "${BYOCL_TVM_FFI_CONFIG}")
  message(WARNING "byocl: BYOCL_TVM_FFI_CONFIG=${BYOCL_TVM_FFI_CONFIG} does not exist: "
                  "building without the TVM bridge")
elseif(BYOCL_TVM AND BYOCL_TVM_FFI_CONFIG)
  byocl_tvm_ffi_config(tvm_cflags --cflags)
  byocl_tvm_ffi_config(tvm_ldflags --ldflags)
  byocl_tvm_ffi_config(tvm_libs --libs)
  byocl_tvm_ffi_config(tvm_libdir --libdir)
  set(tvm_includes "")
  set(tvm_options "")
  foreach(flag IN LISTS tvm_cflags)
    if(flag MATCHES "^-I(.+)")
      list(APPEND tvm_includes ${CMAKE_MATCH_1})
    else()
      list(APPEND tvm_options ${flag})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES tvm_includes)
  # The C ABI's version, from the header (the wheel's own version may differ: 0.1.15.post2
  # ships the C ABI 0.1.16).
  foreach(dir IN LISTS tvm_includes)
    if(EXISTS ${dir}/tvm/ffi/c_api.h)
      file(STRINGS ${dir}/tvm/ffi/c_api.h version_lines
           REGEX "^#define TVM_FFI_VERSION_(MAJOR|MINOR|PATCH) ")
      set(parts "")
      foreach(line IN LISTS version_lines)
        string(REGEX REPLACE "^#define TVM_FFI_VERSION_[A-Z]+ +([0-9]+).*" "\\1" part "${line}")
        list(APPEND parts ${part})
      endforeach()
      string(JOIN "." BYOCL_TVM_FFI_VERSION ${parts})
    endif()
  endforeach()
  # Each -lNAME of --libs as a file of --libdir (or an -L folder of --ldflags), so that
  # CMake gives the programs that link it a run path to it.
  set(tvm_libfiles "")
  set(tvm_libdirs ${tvm_libdir})
  foreach(flag IN LISTS tvm_ldflags)
    if(flag MATCHES "^-L(.+)")
      list(APPEND tvm_libdirs ${CMAKE_MATCH_1})
    endif()
  endforeach()
  foreach(flag IN LISTS tvm_libs)
    if(flag MATCHES "^-l(.+)")
      unset(BYOCL_TVM_FFI_LIB CACHE)
      find_library(BYOCL_TVM_FFI_LIB NAMES ${CMAKE_MATCH_1} PATHS ${tvm_libdirs} NO_DEFAULT_PATH)
      if(BYOCL_TVM_FFI_LIB)
        list(APPEND tvm_libfiles ${BYOCL_TVM_FFI_LIB})
      else()
        set(tvm_libfiles "")
        break()
      endif()
      unset(BYOCL_TVM_FFI_LIB CACHE)
    endif()
  endforeach()
  if(NOT BYOCL_TVM_FFI_VERSION OR NOT tvm_libfiles)
    message(WARNING "byocl: ${BYOCL_TVM_FFI_CONFIG} gives no tvm/ffi/c_api.h or no library: "
                    "building without the TVM bridge")
  else()
    set(BYOCL_HAVE_TVM_FFI ON)
  endif()
endif()
if(BYOCL_HAVE_TVM_FFI)
  message(STATUS "byocl: TVM bridge ON (libbyocl_tvm.so; tvm-ffi ${BYOCL_TVM_FFI_VERSION} "
                 "from ${BYOCL_TVM_FFI_CONFIG})")
else()
  message(STATUS "byocl: TVM bridge OFF (no tvm-ffi: pip install apache-tvm-ffi, then "
                 "-DBYOCL_TVM_FFI_CONFIG=<its tvm-ffi-config>; make test does both)")
endif()

if(BYOCL_HAVE_TVM_FFI)
  # tvm-ffi's flags, for the library and the programs that call it (the tests): its headers
  # as system headers (our -Werror flags are not for them), before /usr/include, so that
  # its newer dlpack/dlpack.h (1.x, same DLTensor layout) is the one everybody sees.
  add_library(byocl_tvm_ffi INTERFACE)
  target_include_directories(byocl_tvm_ffi SYSTEM INTERFACE ${tvm_includes})
  target_compile_options(byocl_tvm_ffi INTERFACE ${tvm_options})
  target_link_libraries(byocl_tvm_ffi INTERFACE ${tvm_libfiles})

  file(GLOB BYOCL_TVM_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/runtime/tvm/*.c)
  # Plus base64.c of the base layer (for the weights that generated code embeds), the
  # strbuf.c it uses and clock.c (a captured call's time), which libbyocl.so does not
  # export: compiled into this library too.
  add_library(byocl_tvm SHARED ${BYOCL_TVM_SOURCES}
              ${CMAKE_CURRENT_SOURCE_DIR}/runtime/base/base64.c
              ${CMAKE_CURRENT_SOURCE_DIR}/runtime/base/clock.c
              ${CMAKE_CURRENT_SOURCE_DIR}/runtime/base/strbuf.c)
  # Public headers, its own folder and those files of the base layer.
  target_include_directories(byocl_tvm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include
                             ${CMAKE_CURRENT_SOURCE_DIR}/runtime/tvm
                             ${CMAKE_CURRENT_SOURCE_DIR}/runtime/base)
  target_link_libraries(byocl_tvm PUBLIC byocl byocl_tvm_ffi PRIVATE Threads::Threads)
  target_link_options(byocl_tvm PRIVATE
    -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/cmake/byocl_tvm.map -Wl,--no-undefined)
  set_target_properties(byocl_tvm PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/byocl_tvm.map)
  if(BYOCL_FUZZ) # the sanitizer runtimes come from the executables (CMakeLists.txt)
    target_link_options(byocl_tvm PRIVATE -Wl,-z,undefs)
  endif()
  set(BYOCL_TVM_FFI_LIBDIR ${tvm_libdir})
  # The Python beside tvm-ffi-config (a venv's, as cmake/tvm-venv.sh makes it) runs the
  # Relax tests (tests/tvm/test_relax.py), which skip themselves where TVM is not installed.
  get_filename_component(tvm_bin_dir ${BYOCL_TVM_FFI_CONFIG} DIRECTORY)
  set(BYOCL_TVM_PYTHON "")
  if(EXISTS ${tvm_bin_dir}/python)
    set(BYOCL_TVM_PYTHON ${tvm_bin_dir}/python)
  endif()
endif()
