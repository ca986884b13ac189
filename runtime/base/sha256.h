/* SHA-256 (FIPS 180-4): the strong hash behind the on-disk caches' keys. */
#ifndef BYOCL_SHA256_H
#define BYOCL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define BYOCL_SHA256_BYTES 32

typedef struct byocl_sha256 {
    uint32_t state[8];
    uint64_t length;          /* bytes hashed so far */
    unsigned char block[64];  /* the partial block */
    size_t filled;            /* bytes of it in use */
} byocl_sha256;

void base_sha256_init(byocl_sha256 *h);
void base_sha256_update(byocl_sha256 *h, const void *data, size_t len);
void base_sha256_final(byocl_sha256 *h, unsigned char digest[BYOCL_SHA256_BYTES]);

#endif
