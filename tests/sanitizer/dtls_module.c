/* A shared library with a small thread-local block, for dtls_probe.c. Opened with dlopen,
 * so glibc gives each thread a block of its own from malloc at the thread's first access
 * (dynamic TLS), as PoCL and its LLVM 15 get theirs. */
_Thread_local void *dtls_module_slots[4];

void **dtls_module_slot(void)
{
    return dtls_module_slots;
}
