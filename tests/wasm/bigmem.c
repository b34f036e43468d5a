/* A WASI module whose linear memory starts at 1 GiB: a zero-initialized
 * static array is .bss, which costs nothing in the file but must lie inside
 * the initial memory, so instantiation itself asks for 1 GiB. A runtime
 * that caps memory (64 MiB) must refuse it before any code runs.
 *
 * Build: clang --target=wasm32-wasi --sysroot=/usr -O2 -Wall -Wextra -o bigmem.wasm bigmem.c */
#include <stdio.h>

#define BIG_BYTES (1024u * 1024u * 1024u)

/* volatile: the accesses below cannot be folded away, so the array (and
 * the 1 GiB of initial memory) stays in the module */
static volatile unsigned char big[BIG_BYTES];

int main(void)
{
    big[0] = 1;
    big[BIG_BYTES - 1] = 1;
    if (printf("result {\"bigmem\":%u}\n", (unsigned)(big[0] + big[BIG_BYTES - 1])) < 0)
        return 1;
    return 0;
}
