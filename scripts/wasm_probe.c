/* meson checks that clang can build a wasm32-wasi module (meson.build) */
#include <stdio.h>

int main(void)
{
    puts("ok");
    return 0;
}
