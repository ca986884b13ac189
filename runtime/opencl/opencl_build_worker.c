/* The worker of parallel builds (opencl_build_parts.c): a process of its own, because
 * PoCL compiles one kernel at a time per process. It builds one program for one device
 * into the program cache, where the process that started it loads it from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "opencl_impl.h"

/* Must equal OCL_WORKER_PROTOCOL in opencl_build_parts.c. */
#define PROTOCOL "1"

static int usage(const char *why)
{
    fprintf(stderr,
            "byocl-opencl-build: %s\n"
            "usage: byocl-opencl-build --protocol %s --device INDEX --cache-dir DIR "
            "--options OPTIONS --region NAME SOURCE_FILE\n"
            "(byocl starts it to build parts of a large OpenCL program in parallel)\n",
            why, PROTOCOL);
    return 2;
}

int ocl_build_worker_main(int argc, char **argv)
{
    const char *protocol = NULL, *device = NULL, *dir = NULL, *options = NULL, *region = NULL,
               *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char **slot = strcmp(argv[i], "--protocol") == 0    ? &protocol
                            : strcmp(argv[i], "--device") == 0    ? &device
                            : strcmp(argv[i], "--cache-dir") == 0 ? &dir
                            : strcmp(argv[i], "--options") == 0   ? &options
                            : strcmp(argv[i], "--region") == 0    ? &region
                                                                  : NULL;
        if (slot && i + 1 < argc)
            *slot = argv[++i];
        else if (!slot && !file && argv[i][0] != '-')
            file = argv[i];
        else
            return usage(slot ? "an option without its value" : "an unknown argument");
    }
    if (!protocol || strcmp(protocol, PROTOCOL) != 0)
        return usage("another byocl's protocol");
    if (!device || !dir || !options || !region || !file)
        return usage("an argument is missing");
    byocl_error err = {0};
    char *source = NULL;
    size_t len = 0;
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    cl_program program = NULL;
    byocl_status st = base_file_read_all(file, (void **)&source, &len, &err);
    if (st == BYOCL_OK)
        st = ocl_choose_device(device, &desc, &err);
    if (st == BYOCL_OK)
        st = ocl_device_acquire(&desc, false, BYOCL_OPENCL_BUFFERS_AUTO, &dev, &err);
    if (st == BYOCL_OK)
        st = ocl_program_get(dev, dir, region, source, options, &program, &err);
    if (program)
        clReleaseProgram(program);
    ocl_device_release(dev);
    free(source);
    if (st != BYOCL_OK)
        fprintf(stderr, "byocl-opencl-build: %s\n", err.msg);
    return st == BYOCL_OK ? 0 : 1;
}
