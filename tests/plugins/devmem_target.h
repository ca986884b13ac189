/* What tests see of the devmem plugin (tests/plugins/devmem_target.c): its counters and
 * its failure injection, fetched with dlsym from the loaded library (the symbol names
 * below). */
#ifndef DEVMEM_TARGET_H
#define DEVMEM_TARGET_H

#include <stddef.h>

/* The plugin's two simulated devices: target "devmem" runs on device 0, "devmem2" on 1
 * (DLDevice {kDLExtDev, 0 or 1}). */
#define DEVMEM_DEVICES 2

typedef struct devmem_counters {
    long uploads, downloads;            /* host <-> device copies */
    size_t upload_bytes, download_bytes;
    long allocs, frees;                 /* buffers */
    long runs;                          /* region calls */
    long live;                          /* buffers allocated and not freed (never reset) */
} devmem_counters;

typedef enum devmem_call {
    DEVMEM_ALLOC = 0,
    DEVMEM_UPLOAD,
    DEVMEM_DOWNLOAD,
    DEVMEM_CALLS
} devmem_call;

/* void devmem_get_counters(int device, devmem_counters *out): counts since the last
 * reset. */
#define DEVMEM_COUNTERS_SYMBOL "devmem_get_counters"
typedef void (*devmem_counters_fn)(int device, devmem_counters *out);
/* void devmem_reset(void): zeroes the counts (not `live`) and cancels injected failures. */
#define DEVMEM_RESET_SYMBOL "devmem_reset"
typedef void (*devmem_reset_fn)(void);
/* void devmem_fail(devmem_call call, long nth): the nth call of that kind from now on (on
 * either device) fails; 0 cancels. */
#define DEVMEM_FAIL_SYMBOL "devmem_fail"
typedef void (*devmem_fail_fn)(devmem_call call, long nth);

#endif
