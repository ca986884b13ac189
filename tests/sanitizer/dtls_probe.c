/* Reproduces the crash of issue 14 ("Tracer caught signal 11" when LeakSanitizer checks at
 * exit) on any machine, and checks that the sanitizer settings of the suite survive it.
 *
 * GCC 12's sanitizer runtime (libasan8, LLVM 14's code) intercepts __tls_get_addr to learn
 * where each dynamic TLS block is. A block whose address is 16 bytes past a page boundary is
 * taken for glibc <= 2.24's layout: it reads the 16 bytes before the block as {start, size}.
 * Since glibc 2.25 those bytes are ASan's own chunk header, so LeakSanitizer later scans a
 * wild range and its tracer dies. Which block lands there depends on the allocation history,
 * hence one machine failing three times out of three and another never.
 *
 * This program puts its dynamic TLS block there on purpose: it allocates blocks of the same
 * size until one starts 16 bytes into a page, frees that one (with ASan's quarantine off, the
 * next allocation of the size reuses it), then touches the thread-local variable so that
 * glibc allocates the block there. It prints where the block landed and exits; LeakSanitizer
 * runs at exit. With intercept_tls_get_addr=1 the run ends in the tracer's crash; with the
 * suite's settings (docs/reliability.md) it exits 0. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { tls_block_bytes = 4 * sizeof(void *), max_tries = 1 << 16 };

static void *kept[max_tries]; /* reachable, so not leaks */

/* ASan keeps freed blocks in quarantine; without it a freed block is reused at once. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/libdtls_module.so\n", argv[0]);
        return 2;
    }
    void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        fprintf(stderr, "dtls_probe: %s\n", dlerror());
        return 2;
    }
    void **(*slot)(void) = (void **(*)(void))(uintptr_t)dlsym(module, "dtls_module_slot");
    if (!slot) {
        fprintf(stderr, "dtls_probe: %s\n", dlerror());
        return 2;
    }
    int n = 0;
    uintptr_t freed = 0; /* the address of the block freed for glibc to reuse */
    while (n < max_tries) {
        void *p = malloc(tls_block_bytes);
        if ((uintptr_t)p % 4096 == 16) {
            freed = (uintptr_t)p;
            free(p);
            break;
        }
        kept[n++] = p;
    }
    if (!freed) {
        fprintf(stderr, "dtls_probe: no block of %zu bytes started 16 bytes into a page\n",
                (size_t)tls_block_bytes);
        return 2;
    }
    void **tls = slot(); /* glibc allocates this thread's block of the module here */
    printf("dynamic TLS block at page offset %lu, %s the freed block (%#lx, %#lx, %d)\n",
           (unsigned long)((uintptr_t)tls % 4096), (uintptr_t)tls == freed ? "reusing" : "not",
           (unsigned long)(uintptr_t)tls, (unsigned long)freed, n);
    for (int i = 0; i < n; i++)
        free(kept[i]);
    /* The module stays open, as the ICD loader keeps PoCL: LeakSanitizer runs at exit. */
    return 0;
}
