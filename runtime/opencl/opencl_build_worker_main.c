/* byocl-opencl-build: the worker program that byocl starts to build parts of a large
 * OpenCL program in parallel (opencl_build_worker.c). Not part of the library
 * (cmake/layers.cmake leaves *_main.c files out). */
#include "opencl_impl.h"

int main(int argc, char **argv) { return ocl_build_worker_main(argc, argv); }
