/* A program outside the build tree that uses an installed byocl (see check_install.sh). */
#include <stdio.h>

#include <byocl/byocl.h>

int main(void)
{
    byocl_module *m;
    byocl_error err;
    if (byocl_builtin_build("seed", &m, &err) != BYOCL_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    printf("builtin:seed has %d function(s); byocl %s\n", byocl_module_num_functions(m),
           BYOCL_VERSION_STRING);
    byocl_module_free(m);
    return 0;
}
