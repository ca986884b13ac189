/* byocl info: what this build of byocl is and what it has. */
#include <stdlib.h>

#include <zip.h>

#include "byocl/stages_mpi.h"
#include "byocl/target.h"
#include "cli.h"
#include "cli_build.h"

#ifndef BYOCL_BUILD_TYPE
#define BYOCL_BUILD_TYPE "unknown"
#endif
#ifndef BYOCL_COMPILER_ID
#define BYOCL_COMPILER_ID "C compiler"
#endif

static const cli_option info_options[] = {
    {NULL, 0, CLI_ARG_NONE, false, NULL, NULL},
};

/* Each registered target with its options and devices (or why it has none). */
static void print_targets(void)
{
    printf("targets:");
    for (int i = 0; i < byocl_target_count(); i++)
        printf("%s %s", i ? "," : "", byocl_target_at(i)->name);
    printf("%s\n", byocl_target_count() ? "" : " none");
    for (int i = 0; i < byocl_target_count(); i++)
        cli_print_target(byocl_target_at(i));
}

static int run_info(const cli_command *cmd, const cli_args *args)
{
    printf("byocl %s\n", BYOCL_VERSION_STRING);
    printf("build: %s, %s %s\n", BYOCL_BUILD_TYPE, BYOCL_COMPILER_ID, __VERSION__);
    printf("dependencies:\n");
    printf("  libzip %s (reads and writes .npz parameter files)\n", zip_libzip_version());
    printf("  cmocka (tests only; not needed at run time)\n");
    printf("  MPI: %s%s\n", byocl_mpi_library(),
           byocl_mpi_available() ? " (run-stages --mpi)" : "");
#ifdef BYOCL_HAVE_TVM_FFI
    printf("  tvm-ffi: %s (libbyocl_tvm.so: regions callable from TVM as __tvm_ffi_<symbol>)\n",
           BYOCL_TVM_FFI_VERSION);
#else
    printf("  tvm-ffi: not found (no TVM bridge: pip install apache-tvm-ffi, then configure with "
           "-DBYOCL_TVM_FFI_CONFIG=<its tvm-ffi-config>)\n");
#endif
    printf("executors: ref\n");
    print_targets();
    printf("built-in models:\n");
    for (int i = 0; i < byocl_builtin_count(); i++)
        printf("  builtin:%-14s %s\n", byocl_builtin_name(i), byocl_builtin_description(i));
    printf("ops: %d (byocl ops lists them)\n", byocl_op_count());
    return CLI_EXIT_OK;
}

const cli_command cli_cmd_info = {
    .name = "info",
    .summary = "show the version, build, dependencies, built-in models and op count",
    .args_usage = "",
    .description = "Prints what this build of byocl is: version, build type and compiler, the\n"
                   "libraries it uses, the executors, the built-in models and the number of ops.\n",
    .options = info_options,
    .examples = NULL,
    .run = run_info,
};
