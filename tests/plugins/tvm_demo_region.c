/* What a C-source module of TVM's export_library looks like with byocl regions in it: one
 * spec and one BYOCL_TVM_DEFINE_REGION per region, linked with libbyocl_tvm.so. Built as
 * libtvm_demo_region.so (tests/CMakeLists.txt), which test_tvm_ffi loads through tvm-ffi's
 * own module loader (ffi.ModuleLoadFromFile, as tvm_ffi.load_module does) and calls by
 * name; the ctest tvm_demo_region_cxx compiles it as C++ too, as export_library would (g++).
 * Positional initializers: designated ones are C++20. */
#include <tvm/ffi/c_api.h>

#include "byocl/tvm.h"
#include "tvm_demo_region.h"

static const byocl_tvm_region_spec demo_spec = {
    DEMO_REGION_SYMBOL, DEMO_REGION_TEXT, NULL, 0, "host", NULL, 1,
};

BYOCL_TVM_DEFINE_REGION(byocl_demo_0, &demo_spec)
