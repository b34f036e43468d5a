/* The WASM benchmark's compute-heavy module (bench/bench.py, bench_wasm):
 * 300 million rounds of FNV-1a over a counter, the same C built natively
 * as the floor. */
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t i = 0; i < 300000000u; i++) {
        h ^= i;
        h *= 1099511628211ULL;
    }
    printf("%llx\n", (unsigned long long)h);
    return 0;
}
