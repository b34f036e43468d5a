/* libFuzzer target for the home paths a skill's words name (homenamed.h):
 * whatever the text, at most SG_HOMENAMED_MAX paths, each non-empty, at
 * most SG_HOMENAMED_LEN bytes, of path characters only, never absolute,
 * never with a ".." part, each once. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "homenamed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v[SG_HOMENAMED_MAX + 1];
    size_t n = sg_home_named((const char *)data, size, v, SG_HOMENAMED_MAX + 1);
    if (n > SG_HOMENAMED_MAX)
        abort();
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(v[i]);
        if (!len || len > SG_HOMENAMED_LEN || v[i][0] == '/' ||
            strspn(v[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+@") !=
                len)
            abort();
        if (!strcmp(v[i], "..") || !strncmp(v[i], "../", 3) || strstr(v[i], "/../") ||
            (len >= 3 && !strcmp(v[i] + len - 3, "/..")))
            abort();
        for (size_t j = 0; j < i; j++)
            if (!strcmp(v[i], v[j]))
                abort();
    }
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    return 0;
}
