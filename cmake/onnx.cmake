# ONNX import: protoc-c turns the repository's copy of onnx.proto into C at build time
# (codegen/frontend/onnx/onnx.proto -> <build>/generated/onnx/onnx.pb-c.{c,h}), compiled into
# byocl_core and linked against libprotobuf-c (found in CMakeLists.txt). CMake has no
# FindProtobufC, hence find_program + pkg-config (Debian: protobuf-c-compiler,
# libprotobuf-c-dev).
find_program(BYOCL_PROTOC_C protoc-c)
if(NOT BYOCL_PROTOC_C)
  message(FATAL_ERROR "protoc-c not found: install Debian's protobuf-c-compiler "
                      "(cmake/install-deps.sh installs every package byocl needs)")
endif()

set(BYOCL_ONNX_PROTO_DIR ${CMAKE_CURRENT_SOURCE_DIR}/codegen/frontend/onnx)
set(BYOCL_ONNX_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated/onnx)
file(MAKE_DIRECTORY ${BYOCL_ONNX_GEN_DIR})
add_custom_command(
  OUTPUT ${BYOCL_ONNX_GEN_DIR}/onnx.pb-c.c ${BYOCL_ONNX_GEN_DIR}/onnx.pb-c.h
  COMMAND ${BYOCL_PROTOC_C} --proto_path=${BYOCL_ONNX_PROTO_DIR} --c_out=${BYOCL_ONNX_GEN_DIR}
          ${BYOCL_ONNX_PROTO_DIR}/onnx.proto
  DEPENDS ${BYOCL_ONNX_PROTO_DIR}/onnx.proto
  COMMENT "Generating C for onnx.proto with protoc-c"
  VERBATIM)

# The generated code belongs to the tensor-file layer (runtime/tensorio/tensor_pb.c reads
# TensorProto); the ONNX frontend above it includes the header too.
target_sources(byocl_layer_tensorio PRIVATE ${BYOCL_ONNX_GEN_DIR}/onnx.pb-c.c)
foreach(layer IN LISTS BYOCL_LAYERS)
  target_include_directories(byocl_layer_${layer} PRIVATE ${BYOCL_ONNX_GEN_DIR})
endforeach()
target_link_libraries(byocl PRIVATE PkgConfig::PROTOBUF_C)
