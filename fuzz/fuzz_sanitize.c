/* libFuzzer target for the output sanitizer: whatever the bytes, the result
 * holds no control character, no ESC and only valid UTF-8. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        size = 65536;
    char *out = sg_sanitize((const char *)data, size, 0);
    size_t n = strlen(out);
    if (!sg_utf8_valid(out, n, NULL))
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f)
            abort();
    }
    free(out);
    return 0;
}
