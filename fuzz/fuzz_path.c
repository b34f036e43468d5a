/* libFuzzer target for the normaliser of paths a skill names in its system
 * calls (lib/util.c, used by run/notifpath.c): any bytes, up to PATH_MAX. An absolute path
 * comes out absolute, no longer, with no empty, "." or ".." component; any
 * other path is refused untouched. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[PATH_MAX], path[PATH_MAX];
    if (size >= sizeof in)
        size = sizeof in - 1;
    memcpy(in, data, size);
    in[size] = '\0';
    memcpy(path, in, size + 1);
    int r = sg_path_normalize(path);
    if (in[0] != '/') {
        if (r != -EINVAL || strcmp(in, path))
            abort();
        return 0;
    }
    if (r != 0 || path[0] != '/' || strlen(path) > strlen(in))
        abort();
    if (strcmp(path, "/") == 0)
        return 0;
    for (const char *c = path + 1;;) { /* every component: not empty, ".", ".." */
        const char *e = strchrnul(c, '/');
        size_t n = (size_t)(e - c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            abort();
        if (!*e)
            break;
        c = e + 1;
    }
    return 0;
}
