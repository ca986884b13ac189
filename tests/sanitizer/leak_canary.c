/* The suite's sanitizer settings must not hide a leak of byocl's: this program loses a
 * module that byocl allocated (and a plain block), and its ctest passes only when
 * LeakSanitizer reports both under the settings every other test runs with. */
#include <byocl/ir.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile lost; /* written, then overwritten: the first block becomes unreachable */

int main(void)
{
    lost = byocl_module_new();
    lost = malloc(4242);
    lost = NULL;
    puts("leak_canary: lost a byocl module and 4242 bytes");
    return 0;
}
