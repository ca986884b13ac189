# Targets at run time: target plugins (include/byocl/plugin.h, codegen/target/plugin.c), the
# example plugin, and the OpenCL runtime's measuring tool (bench_opencl).
#
# The plugin loader uses dlopen. A plugin calls byocl's public API from the program that loads
# it, so such programs export their symbols (ENABLE_EXPORTS, i.e. -rdynamic): the CLI
# (`byocl --plugin LIB`) and test_plugin. A plugin links nothing of byocl itself: linking
# the core again would give it a target registry of its own.
target_link_libraries(byocl_core PUBLIC ${CMAKE_DL_LIBS})
set_target_properties(byocl_cli PROPERTIES ENABLE_EXPORTS ON)

# The example plugin (tests/plugins/example_target.c) as lib<name>.so in
# <build>/plugins, built with the compile definitions given after the name.
function(byocl_example_plugin name)
  add_library(${name} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/tests/plugins/example_target.c)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  set_target_properties(${name} PROPERTIES PREFIX "lib"
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/plugins)
  foreach(user test_plugin test_cli_opencl test_bad_inputs)
    if(TARGET ${user})
      add_dependencies(${user} ${name})
    endif()
  endforeach()
endfunction()

if(BYOCL_BUILD_TESTS)
  byocl_example_plugin(example_target)
  # Broken builds for the loader's errors: made for the previous target API (1) or another
  # version, and without the init function.
  byocl_example_plugin(example_target_v1 EXAMPLE_API_VERSION=1u)
  byocl_example_plugin(example_target_v99 EXAMPLE_API_VERSION=99u)
  byocl_example_plugin(example_target_noinit EXAMPLE_NO_INIT)
  foreach(user test_plugin test_cli_opencl test_bad_inputs)
    if(TARGET ${user})
      target_compile_definitions(${user} PRIVATE
        BYOCL_PLUGIN_DIR="${CMAKE_CURRENT_BINARY_DIR}/plugins")
    endif()
  endforeach()
  if(TARGET test_plugin)
    set_target_properties(test_plugin PROPERTIES ENABLE_EXPORTS ON)
  endif()
  # A target that computes nn.relu wrong on purpose, for the tests of bisect and replay.
  add_library(faulty_target MODULE ${CMAKE_CURRENT_SOURCE_DIR}/tests/plugins/faulty_target.c)
  target_include_directories(faulty_target PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  set_target_properties(faulty_target PROPERTIES PREFIX "lib"
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/plugins)
  foreach(user test_bisect test_capture test_cli_progress)
    if(TARGET ${user})
      add_dependencies(${user} faulty_target)
      target_compile_definitions(${user} PRIVATE
        BYOCL_PLUGIN_DIR="${CMAKE_CURRENT_BINARY_DIR}/plugins")
    endif()
  endforeach()
  # A target whose regions run in a simulated device memory, for the tests of the
  # executor's copies between host and device (test_device_memory loads it in-process).
  add_library(devmem_target MODULE ${CMAKE_CURRENT_SOURCE_DIR}/tests/plugins/devmem_target.c)
  target_include_directories(devmem_target PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  set_target_properties(devmem_target PROPERTIES PREFIX "lib"
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/plugins)
  foreach(user test_device_memory)
    if(TARGET ${user})
      add_dependencies(${user} devmem_target)
      target_compile_definitions(${user} PRIVATE
        BYOCL_PLUGIN_DIR="${CMAKE_CURRENT_BINARY_DIR}/plugins")
      set_target_properties(${user} PROPERTIES ENABLE_EXPORTS ON)
    endif()
  endforeach()
  # A measuring tool for the OpenCL runtime (not a test): bench_opencl [RUNS [call|resnet18|...]].
  add_executable(bench_opencl ${CMAKE_CURRENT_SOURCE_DIR}/tests/bench_opencl.c)
  target_link_libraries(bench_opencl PRIVATE byocl_core)
endif()
