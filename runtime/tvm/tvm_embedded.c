/* The entry of the code that byocl's Relax codegen (relax.ext.byocl, python/byocl_tvm)
 * generates: TVM compiles that code with its own compiler options, without byocl's headers
 * or link flags, so the code finds this function with dlopen/dlsym and passes the region
 * as plain strings. The weights come as base64 text: a compiler reads a string literal of
 * base64 about twice as fast as one of octal escapes, and resnet18's weights are 45 MB. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvm/ffi/c_api.h>

#include "byocl/tvm.h"
#include "tvm_registry.h"

static int base64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decodes base64 text (padding optional, no other characters); false when malformed. */
static bool base64_decode(const char *text, unsigned char **out, size_t *out_len)
{
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '=')
        n--;
    unsigned char *buf = malloc(n / 4 * 3 + 3);
    if (!buf)
        return false;
    size_t at = 0;
    uint32_t bits = 0;
    int have = 0;
    for (size_t i = 0; i < n; i++) {
        int v = base64_value((unsigned char)text[i]);
        if (v < 0) {
            free(buf);
            return false;
        }
        bits = bits << 6 | (uint32_t)v;
        if ((have += 6) >= 8) {
            have -= 8;
            buf[at++] = (unsigned char)(bits >> have);
        }
    }
    *out = buf;
    *out_len = at;
    return true;
}

int byocl_tvm_embedded_call(byocl_tvm_region **slot, const char *symbol, const char *relay_text,
                            const char *weights_base64, const char *target,
                            const char *target_options, const char *plugins, int threads,
                            const void *args, int32_t num_args, void *result)
{
    byocl_tvm_region_spec spec = {symbol, relay_text, NULL, 0, target, target_options, threads};
    if (!slot || __atomic_load_n(slot, __ATOMIC_ACQUIRE))
        return byocl_tvm_region_call(slot, &spec, args, num_args, result);
    /* The first call: the region compiles from the spec, with its weights decoded. */
    byocl_error err = {0};
    if (tvm_registry_load_plugins(target, plugins, &err) != BYOCL_OK) {
        char msg[BYOCL_ERROR_MSG_MAX + 256];
        snprintf(msg, sizeof msg, "byocl region %s: %s", symbol ? symbol : "(no symbol)",
                 err.msg);
        TVMFFIErrorSetRaisedFromCStr("RuntimeError", msg);
        return -1;
    }
    unsigned char *weights = NULL;
    if (weights_base64 && *weights_base64 &&
        !base64_decode(weights_base64, &weights, &spec.weights_npz_len)) {
        char msg[512];
        snprintf(msg, sizeof msg, "byocl region %s: the embedded weights are not base64 text",
                 symbol ? symbol : "(no symbol)");
        TVMFFIErrorSetRaisedFromCStr("RuntimeError", msg);
        return -1;
    }
    spec.weights_npz = weights;
    int rc = byocl_tvm_region_call(slot, &spec, args, num_args, result);
    free(weights);
    return rc;
}
