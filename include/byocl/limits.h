/* byocl: caps on memory that hostile or mistaken inputs could otherwise exhaust. */
#ifndef BYOCL_LIMITS_H
#define BYOCL_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "byocl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Byte caps checked before byocl allocates tensor data: every host tensor
 * (byocl_tensor_new, so the readers, the ONNX importer and the reference executor) and
 * the graph executor's buffer block. 0 means no cap. */
typedef struct byocl_limits {
    uint64_t max_tensor_bytes; /* one tensor (or one executor buffer)          */
    uint64_t max_total_bytes;  /* all of them alive at the same time, together */
} byocl_limits;

/* Defaults: 4 GiB for one tensor, 16 GiB in all (ResNet-18 runs within 64 MiB). */
#define BYOCL_DEFAULT_MAX_TENSOR_BYTES (UINT64_C(4) << 30)
#define BYOCL_DEFAULT_MAX_TOTAL_BYTES (UINT64_C(16) << 30)

/* Environment variables read once, at the first allocation or limits call, over the
 * defaults: a byte count, optionally with a K, M, G or T suffix (powers of 1024). */
#define BYOCL_MAX_TENSOR_BYTES_ENV "BYOCL_MAX_TENSOR_BYTES"
#define BYOCL_MAX_TOTAL_BYTES_ENV "BYOCL_MAX_TOTAL_BYTES"

/* The limits in force. Fails when one of the environment variables is not a byte count
 * (*out then holds the defaults or the other variable's value); every allocation then
 * fails the same way, until byocl_limits_set. */
byocl_status byocl_limits_get(byocl_limits *out, byocl_error *err);
/* Replaces the limits for the whole process (overriding the environment). */
void byocl_limits_set(const byocl_limits *limits);
/* Bytes of tensor data allocated now, counted against max_total_bytes. */
uint64_t byocl_limits_bytes_in_use(void);

/* Parses a byte count as the environment variables take it ("4096", "512M", "4G");
 * false for anything else (empty, negative, an unknown suffix, overflow). */
bool byocl_limits_parse_bytes(const char *text, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif
