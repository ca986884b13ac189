/* byocl: everything public, in one include. */
#ifndef BYOCL_BYOCL_H
#define BYOCL_BYOCL_H

#include "byocl/error.h"
#include "byocl/tensor.h"
#include "byocl/limits.h"
#include "byocl/ir.h"
#include "byocl/ops.h"
#include "byocl/passes.h"
#include "byocl/text.h"
#include "byocl/tensor_io.h"
#include "byocl/reference.h"
#include "byocl/models.h"
#include "byocl/frontend.h"
#include "byocl/target.h"
#include "byocl/plugin.h"
#include "byocl/runtime.h"
#include "byocl/pipeline.h"
#include "byocl/opencl.h"
#include "byocl/capture.h"
#include "byocl/split.h"
#include "byocl/stages_mpi.h"
#include "byocl/dot.h"
#include "byocl/tvm.h"
#include "byocl/version.h"

#endif
