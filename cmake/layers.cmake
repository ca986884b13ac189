# byocl's layers (cmake/layers.txt) as libraries: one OBJECT library per layer,
# byocl_layer_<name>, compiled with the include folders of its own layer and of the layers
# below it only. Those folders are reached through a view of symbolic links,
# <build>/layers/<name>/<folder>, so that "base/json.h" resolves and a header of a higher
# layer does not: an include that points up a layer fails to compile. Two folders of one
# name (codegen/opencl and runtime/opencl: one target's compiler and runtime) share one
# folder of the view, made of links to their headers.
#
# byocl_core, the static library that the CLI and the tests link, is every layer's objects
# (codegen/llvm excepted: cmake/llvm.cmake builds it as libbyocl_llvm.so; and runtime/tvm,
# which cmake/tvm.cmake builds as libbyocl_tvm.so where tvm-ffi is found).
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/layers.txt BYOCL_LAYER_LINES REGEX "^[a-z]")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_SOURCE_DIR}/cmake/layers.txt)
set(BYOCL_LAYERS "")
set(byocl_visible "")
foreach(line IN LISTS BYOCL_LAYER_LINES)
  string(REGEX REPLACE "[ \t]+" ";" fields "${line}")
  list(POP_FRONT fields layer)
  list(APPEND BYOCL_LAYERS ${layer})
  list(APPEND byocl_visible ${fields})
  set(BYOCL_LAYER_${layer}_FOLDERS ${fields})
  set(BYOCL_LAYER_${layer}_VISIBLE ${byocl_visible})
endforeach()

# Makes the include view of `folders` in <build>/layers/<name>; sets ${out} to its path.
function(byocl_layer_view name folders out)
  set(view ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  set(leaves "")
  foreach(folder IN LISTS folders)
    get_filename_component(leaf ${folder} NAME)
    list(APPEND leaves ${leaf})
  endforeach()
  foreach(folder IN LISTS folders)
    get_filename_component(leaf ${folder} NAME)
    set(same ${leaves})
    list(FILTER same INCLUDE REGEX "^${leaf}$")
    list(LENGTH same n_same)
    if(n_same EQUAL 1)
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${view}/${leaf} SYMBOLIC)
    else()
      file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/${folder}
           ${CMAKE_SOURCE_DIR}/${folder}/*.h)
      foreach(header IN LISTS headers)
        get_filename_component(dir ${view}/${leaf}/${header} DIRECTORY)
        file(MAKE_DIRECTORY ${dir})
        file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder}/${header} ${view}/${leaf}/${header}
             SYMBOLIC)
      endforeach()
    endif()
  endforeach()
  set(${out} ${view} PARENT_SCOPE)
endfunction()

set(BYOCL_LAYER_OBJECTS "")
foreach(layer IN LISTS BYOCL_LAYERS)
  set(sources "")
  foreach(folder IN LISTS BYOCL_LAYER_${layer}_FOLDERS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.c)
    list(APPEND sources ${found})
  endforeach()
  list(FILTER sources EXCLUDE REGEX "/codegen/llvm/|/runtime/tvm/")
  # A *_main.c file is the entry point of a program of the layer's own, not library code.
  list(FILTER sources EXCLUDE REGEX "_main\\.c$")
  # runtime/distributed: MPI's implementation where MPI is found, else mpi_absent.c.
  if(BYOCL_HAVE_MPI)
    list(FILTER sources EXCLUDE REGEX "/runtime/distributed/mpi_absent\\.c$")
  else()
    list(FILTER sources EXCLUDE REGEX "/runtime/distributed/(mpi_world|stages_mpi)\\.c$")
  endif()
  byocl_layer_view(${layer} "${BYOCL_LAYER_${layer}_VISIBLE}" view)
  set(BYOCL_LAYER_${layer}_VIEW ${view})
  if(NOT sources) # a layer built as a library of its own (tvm): no object library
    list(REMOVE_ITEM BYOCL_LAYERS ${layer})
    continue()
  endif()
  add_library(byocl_layer_${layer} OBJECT ${sources})
  target_include_directories(byocl_layer_${layer} PRIVATE ${view}
                             ${CMAKE_CURRENT_SOURCE_DIR}/include)
  # The libraries' headers and definitions (libzip, OpenCL, protobuf-c) for every layer.
  target_link_libraries(byocl_layer_${layer} PRIVATE PkgConfig::LIBZIP OpenCL::OpenCL
                        PkgConfig::PROTOBUF_C)
  target_compile_definitions(byocl_layer_${layer} PRIVATE CL_TARGET_OPENCL_VERSION=120)
  if(BYOCL_HAVE_MPI AND layer STREQUAL "distributed")
    target_link_libraries(byocl_layer_${layer} PRIVATE MPI::MPI_C)
  endif()
  list(APPEND BYOCL_LAYER_OBJECTS $<TARGET_OBJECTS:byocl_layer_${layer}>)
endforeach()
# The view of every layer: for the tests, which reach internal functions of all of them.
list(GET BYOCL_LAYERS -1 byocl_top)
set(BYOCL_ALL_LAYERS_VIEW ${BYOCL_LAYER_${byocl_top}_VIEW})
