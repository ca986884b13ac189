/* A target plugin that simulates devices with memory of their own, for the tests of the
 * executor's device memory (tests/test_device_memory.c).
 *
 * Two targets, one device each: "devmem" (DLDevice {kDLExtDev, 0}) claims float32 add,
 * multiply and nn.relu; "devmem2" ({kDLExtDev, 1}) claims float32 subtract. Each region's
 * runtime module has device memory (byocl_rtmod_i.memory): buffers are blocks this plugin
 * allocates, each behind a handle with a magic number and its device, listed while alive.
 * A region call checks that every tensor it receives is a live buffer of its own device
 * (never host memory, never the other device's), then computes on the blocks' bytes with
 * byocl's ref region module. Every allocation, free, upload, download and call is counted
 * per device; a test reads the counts and injects failures through the functions of
 * devmem_target.h. Uses only byocl's public headers. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/byocl.h"
#include "byocl/plugin.h"
#include "byocl/runtime.h"
#include "byocl/target.h"
#include "devmem_target.h"
#include "plugin_checks.h"

#define DEVMEM_MAGIC 0x64657620626c6b21ull /* "dev blk!" */

/* ------------------------------------------------------------ the devices */

typedef struct devmem_block {
    uint64_t magic;
    int device;
    size_t bytes;
    unsigned char *data; /* apart from the handle: byocl must never write through a handle */
    struct devmem_block *next;
} devmem_block;

typedef struct devmem_device {
    int id;
    atomic_long uploads, downloads, upload_bytes, download_bytes, allocs, frees, runs, live;
} devmem_device;

static devmem_device devices[DEVMEM_DEVICES] = {{.id = 0}, {.id = 1}};
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static devmem_block *blocks; /* live blocks of both devices */
static atomic_long fail_countdown[DEVMEM_CALLS];

/* Whether this call of kind `call` is the one to fail. */
static bool fails_now(devmem_call call)
{
    long left = atomic_load(&fail_countdown[call]);
    while (left > 0 && !atomic_compare_exchange_weak(&fail_countdown[call], &left, left - 1))
        ;
    return left == 1;
}

/* The live block `handle` of device `dev` holding at least `bytes`, or NULL. */
static devmem_block *find_block(const devmem_device *dev, const void *handle, size_t bytes)
{
    pthread_mutex_lock(&blocks_lock);
    devmem_block *b = blocks;
    while (b && b != handle)
        b = b->next;
    pthread_mutex_unlock(&blocks_lock);
    return b && b->magic == DEVMEM_MAGIC && b->device == dev->id && b->bytes >= bytes ? b : NULL;
}

static byocl_status devmem_alloc(void *ctx, size_t bytes, void **out, byocl_error *err)
{
    devmem_device *dev = ctx;
    *out = NULL;
    if (fails_now(DEVMEM_ALLOC))
        return byocl_error_set(err, BYOCL_ERR_NOMEM,
                               "devmem device %d: out of device memory (injected)", dev->id);
    devmem_block *b = calloc(1, sizeof *b);
    if (b)
        b->data = malloc(bytes ? bytes : 1);
    if (!b || !b->data) {
        free(b);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "devmem device %d: out of memory", dev->id);
    }
    b->magic = DEVMEM_MAGIC;
    b->device = dev->id;
    b->bytes = bytes;
    pthread_mutex_lock(&blocks_lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&blocks_lock);
    atomic_fetch_add(&dev->allocs, 1);
    atomic_fetch_add(&dev->live, 1);
    *out = b;
    return BYOCL_OK;
}

static void devmem_free(void *ctx, void *buffer)
{
    devmem_device *dev = ctx;
    if (!buffer)
        return;
    pthread_mutex_lock(&blocks_lock);
    devmem_block **at = &blocks;
    while (*at && *at != buffer)
        at = &(*at)->next;
    devmem_block *b = *at;
    if (b)
        *at = b->next;
    pthread_mutex_unlock(&blocks_lock);
    if (!b) {
        fprintf(stderr, "devmem device %d: free of %p, which is no live buffer\n", dev->id,
                buffer);
        abort();
    }
    b->magic = 0;
    free(b->data);
    free(b);
    atomic_fetch_add(&dev->frees, 1);
    atomic_fetch_sub(&dev->live, 1);
}

static byocl_status devmem_upload(void *ctx, void *buffer, const void *host, size_t bytes,
                                  byocl_error *err)
{
    devmem_device *dev = ctx;
    devmem_block *b = find_block(dev, buffer, bytes);
    if (!b)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "devmem device %d: upload of %zu bytes into %p, which is not a "
                               "buffer of this device that large",
                               dev->id, bytes, buffer);
    if (fails_now(DEVMEM_UPLOAD))
        return byocl_error_set(err, BYOCL_ERR_RUNTIME, "devmem device %d: upload failed "
                                                       "(injected)", dev->id);
    memcpy(b->data, host, bytes);
    atomic_fetch_add(&dev->uploads, 1);
    atomic_fetch_add(&dev->upload_bytes, (long)bytes);
    return BYOCL_OK;
}

static byocl_status devmem_download(void *ctx, void *host, const void *buffer, size_t bytes,
                                    byocl_error *err)
{
    devmem_device *dev = ctx;
    devmem_block *b = find_block(dev, buffer, bytes);
    if (!b)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "devmem device %d: download of %zu bytes from %p, which is not "
                               "a buffer of this device that large",
                               dev->id, bytes, buffer);
    if (fails_now(DEVMEM_DOWNLOAD))
        return byocl_error_set(err, BYOCL_ERR_RUNTIME, "devmem device %d: download failed "
                                                       "(injected)", dev->id);
    memcpy(host, b->data, bytes);
    atomic_fetch_add(&dev->downloads, 1);
    atomic_fetch_add(&dev->download_bytes, (long)bytes);
    return BYOCL_OK;
}

static const byocl_device_memory_i devmem_memory_i = {
    .alloc = devmem_alloc,
    .free = devmem_free,
    .upload = devmem_upload,
    .download = devmem_download,
};

/* ------------------------------------------------------ the test interface */

void devmem_get_counters(int device, devmem_counters *out);
void devmem_reset(void);
void devmem_fail(devmem_call call, long nth);

void devmem_get_counters(int device, devmem_counters *out)
{
    memset(out, 0, sizeof *out);
    if (device < 0 || device >= DEVMEM_DEVICES)
        return;
    devmem_device *d = &devices[device];
    out->uploads = atomic_load(&d->uploads);
    out->downloads = atomic_load(&d->downloads);
    out->upload_bytes = (size_t)atomic_load(&d->upload_bytes);
    out->download_bytes = (size_t)atomic_load(&d->download_bytes);
    out->allocs = atomic_load(&d->allocs);
    out->frees = atomic_load(&d->frees);
    out->runs = atomic_load(&d->runs);
    out->live = atomic_load(&d->live);
}

void devmem_reset(void)
{
    for (int i = 0; i < DEVMEM_DEVICES; i++) {
        devmem_device *d = &devices[i];
        atomic_store(&d->uploads, 0);
        atomic_store(&d->downloads, 0);
        atomic_store(&d->upload_bytes, 0);
        atomic_store(&d->download_bytes, 0);
        atomic_store(&d->allocs, 0);
        atomic_store(&d->frees, 0);
        atomic_store(&d->runs, 0);
    }
    for (int c = 0; c < DEVMEM_CALLS; c++)
        atomic_store(&fail_countdown[c], 0);
}

void devmem_fail(devmem_call call, long nth)
{
    if (call >= 0 && call < DEVMEM_CALLS)
        atomic_store(&fail_countdown[call], nth > 0 ? nth : 0);
}

/* -------------------------------------------------------------- the target */

static bool claimed(const devmem_device *dev, const char *op)
{
    static const char *const ops0[] = {"add", "multiply", "nn.relu"};
    if (!op)
        return false;
    if (dev->id == 1)
        return strcmp(op, "subtract") == 0;
    for (size_t i = 0; i < sizeof ops0 / sizeof ops0[0]; i++)
        if (strcmp(op, ops0[i]) == 0)
            return true;
    return false;
}

static bool devmem_supports(void *ctx, const byocl_function *fn, int node, char *why,
                            size_t why_len)
{
    const devmem_device *dev = ctx;
    const char *op = byocl_node_op(fn, node);
    if (!claimed(dev, op)) {
        snprintf(why, why_len, "op %s is not one of %s", op ? op : "?",
                 dev->id == 1 ? "subtract" : "add, multiply, nn.relu");
        return false;
    }
    return plugin_operands_match_result(fn, node, why, why_len);
}

/* A region's module: the ref region module, run on the bytes of the device buffers. */
typedef struct devmem_module {
    devmem_device *dev;
    byocl_rtmod *ref;
} devmem_module;

static bool devmem_module_memory(void *ctx, byocl_device_memory *out)
{
    devmem_module *m = ctx;
    *out = (byocl_device_memory){
        .device = {kDLExtDev, m->dev->id}, .iface = &devmem_memory_i, .ctx = m->dev};
    return true;
}

static byocl_status devmem_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                               int n_out, byocl_error *err)
{
    devmem_module *m = ctx;
    int n = n_in + n_out;
    DLTensor *host = calloc((size_t)n + 1, sizeof *host);
    DLTensor **host_args = calloc((size_t)n + 1, sizeof *host_args);
    if (!host || !host_args) {
        free(host);
        free(host_args);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "devmem: out of memory");
    }
    byocl_status st = BYOCL_OK;
    for (int i = 0; i < n && st == BYOCL_OK; i++) {
        const DLTensor *t = args[i];
        size_t bytes = (size_t)(((int64_t)t->dtype.bits * t->dtype.lanes + 7) / 8);
        for (int d = 0; d < t->ndim; d++)
            bytes *= (size_t)t->shape[d];
        devmem_block *b = NULL;
        if (t->device.device_type != kDLExtDev || t->device.device_id != m->dev->id ||
            t->byte_offset != 0 || !(b = find_block(m->dev, t->data, bytes)))
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "devmem device %d: %s %d of %s is not a buffer of this device "
                                 "(device type %d, id %d, data %p)",
                                 m->dev->id, i < n_in ? "input" : "output",
                                 i < n_in ? i : i - n_in, symbol, (int)t->device.device_type,
                                 (int)t->device.device_id, t->data);
        else {
            host[i] = *t;
            host[i].data = b->data;
            host[i].device = (DLDevice){kDLCPU, 0};
            host_args[i] = &host[i];
        }
    }
    if (st == BYOCL_OK) {
        atomic_fetch_add(&m->dev->runs, 1);
        st = byocl_rtmod_run(m->ref, symbol, host_args, n_in, n_out, err);
    }
    free(host);
    free(host_args);
    return st;
}

static void devmem_destroy(void *ctx)
{
    devmem_module *m = ctx;
    byocl_rtmod_free(m->ref);
    free(m);
}

static byocl_status devmem_compile(void *ctx, const byocl_function *region,
                                   const byocl_target_config *config, byocl_rtmod **out,
                                   byocl_error *err)
{
    (void)config;
    *out = NULL;
    devmem_module *m = calloc(1, sizeof *m);
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "devmem: out of memory");
    m->dev = ctx;
    byocl_status st = byocl_rtmod_ref_new(region, &m->ref, err); /* copies the function */
    if (st != BYOCL_OK) {
        devmem_destroy(m);
        return st;
    }
    static const byocl_rtmod_i iface = {
        .run = devmem_run, .destroy = devmem_destroy, .memory = devmem_module_memory};
    return byocl_rtmod_new(m->dev->id == 0 ? "devmem" : "devmem2", &iface, m, out, err);
}

/* -------------------------------------------------------------- the plugin */

const uint32_t byocl_target_plugin_api_version = BYOCL_TARGET_API_VERSION;

byocl_status byocl_target_plugin_init(uint32_t api_version, byocl_error *err)
{
    if (api_version != BYOCL_TARGET_API_VERSION)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "devmem target: built for target API %u, loaded by %u",
                               (unsigned)BYOCL_TARGET_API_VERSION, (unsigned)api_version);
    static const char *const names[DEVMEM_DEVICES] = {"devmem", "devmem2"};
    for (int i = 0; i < DEVMEM_DEVICES; i++) {
        const byocl_target_i target = {
            .name = names[i],
            .api_version = BYOCL_TARGET_API_VERSION,
            .ctx = &devices[i],
            .supports = devmem_supports,
            .compile = devmem_compile,
        };
        byocl_status st = byocl_target_register(&target, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}
