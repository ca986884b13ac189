# The LLVM host backend (codegen/llvm/) as its own shared library, libbyocl_llvm.so.
#
# LLVM 19 (Debian llvm-19-dev) is linked statically into it, and the library exports only
# byocl_llvm_* and byocl_host_backend_llvm (cmake/byocl_llvm.map, --exclude-libs,ALL): a
# process that also loads PoCL's shared LLVM 15 then sees one LLVM only, and PoCL's
# kernel build no longer crashes (../shared/PLATFORM_NOTES.md). byocl_core links this
# library, so programs stay small and LLVM is linked once.
#
# The backend reads the IR through codegen/ir's structs and a few functions of the layers
# below it (cmake/layers.txt); it links their objects as a static archive, of which the
# linker takes only what the backend calls (hidden copies, --exclude-libs), because
# byocl_core itself links this library and CMake allows no cycle through a shared library.
find_program(BYOCL_LLVM_CONFIG NAMES llvm-config-19 llvm-config
             PATHS /usr/lib/llvm-19/bin NO_DEFAULT_PATH)
if(NOT BYOCL_LLVM_CONFIG)
  find_program(BYOCL_LLVM_CONFIG NAMES llvm-config-19)
endif()
if(NOT BYOCL_LLVM_CONFIG)
  message(FATAL_ERROR "llvm-config for LLVM 19 not found: install Debian's llvm-19-dev "
                      "(cmake/install-deps.sh installs every package byocl needs)")
endif()
function(byocl_llvm_config out)
  execute_process(COMMAND ${BYOCL_LLVM_CONFIG} ${ARGN} OUTPUT_VARIABLE value
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${BYOCL_LLVM_CONFIG} ${ARGN} failed")
  endif()
  separate_arguments(value UNIX_COMMAND "${value}")
  set(${out} ${value} PARENT_SCOPE)
endfunction()
byocl_llvm_config(BYOCL_LLVM_VERSION --version)
if(NOT BYOCL_LLVM_VERSION VERSION_GREATER_EQUAL 19)
  message(FATAL_ERROR "byocl needs LLVM 19 or newer, ${BYOCL_LLVM_CONFIG} is ${BYOCL_LLVM_VERSION}")
endif()
byocl_llvm_config(BYOCL_LLVM_INCLUDE --includedir)
byocl_llvm_config(BYOCL_LLVM_LIBDIR --libdir)
byocl_llvm_config(BYOCL_LLVM_LIBS --link-static --libs core linker orcjit native passes)
byocl_llvm_config(BYOCL_LLVM_SYSLIBS --link-static --system-libs)

file(GLOB BYOCL_LLVM_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/codegen/llvm/*.c)
# The layers below the backends that it calls into (see above), compiled once.
add_library(byocl_llvm_below STATIC $<TARGET_OBJECTS:byocl_layer_base>
            $<TARGET_OBJECTS:byocl_layer_ir> $<TARGET_OBJECTS:byocl_layer_interfaces>)
add_library(byocl_llvm SHARED ${BYOCL_LLVM_SOURCES})
target_include_directories(byocl_llvm
  PRIVATE ${BYOCL_LAYER_backends_VIEW} ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(byocl_llvm PRIVATE byocl_llvm_below)
# LLVM's headers as system headers: our -Werror flags are not for them.
target_include_directories(byocl_llvm SYSTEM PRIVATE ${BYOCL_LLVM_INCLUDE})
target_link_directories(byocl_llvm PRIVATE ${BYOCL_LLVM_LIBDIR})
target_link_libraries(byocl_llvm PRIVATE ${BYOCL_LLVM_LIBS} ${BYOCL_LLVM_SYSLIBS} stdc++ m)
target_link_options(byocl_llvm PRIVATE
  -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/cmake/byocl_llvm.map
  -Wl,--exclude-libs,ALL -Wl,--no-undefined -Wl,--gc-sections -Wl,--as-needed)
set_target_properties(byocl_llvm PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/byocl_llvm.map)
target_link_libraries(byocl_core PUBLIC byocl_llvm)

if(BYOCL_BUILD_TESTS)
  # A tuning tool for the kernels (not a test): bench_llvm MODEL [THREADS [RUNS]].
  add_executable(bench_llvm ${CMAKE_CURRENT_SOURCE_DIR}/tests/bench_llvm.c)
  target_include_directories(bench_llvm PRIVATE ${BYOCL_ALL_LAYERS_VIEW})
  target_link_libraries(bench_llvm PRIVATE byocl_core pthread m)
endif()
