/* libFuzzer target for the output sanitizer: whatever the bytes, the result
 * holds no control character, no ESC and only valid UTF-8, and the string
 * path gives what the screen's piece-by-piece path gives. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool collect(void *ctx, const char *piece, size_t n, bool escaped)
{
    (void)escaped;
    sg_buf_append(ctx, piece, n);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        size = 65536;
    char *out = sg_sanitize((const char *)data, size, 0);
    size_t n = strlen(out);
    /* the string path and the screen's piece-by-piece path agree */
    struct sg_buf b;
    sg_buf_init(&b, size * 10 + 1);
    sg_sanitize_each((const char *)data, size, 0, collect, &b);
    char *pieces = sg_buf_steal(&b);
    if (strcmp(out, pieces) != 0)
        abort();
    free(pieces);
    if (!sg_utf8_valid(out, n, NULL))
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f)
            abort();
    }
    free(out);
    /* the colour terminal's form: its only controls are whole colour
     * sequences (ESC [ digits and ';' m), and the last one resets */
    out = sg_sanitize_colour((const char *)data, size, 0);
    n = strlen(out);
    if (!sg_utf8_valid(out, n, NULL))
        abort();
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c == 0x1b) {
            size_t k = i + 1;
            if (k >= n || out[k++] != '[')
                abort();
            while (k < n && ((out[k] >= '0' && out[k] <= '9') || out[k] == ';'))
                k++;
            if (k >= n || out[k] != 'm' || k + 1 - i > SG_SAN_SGR_MAX)
                abort();
            last = i;
            i = k;
        } else if (c < 0x20 || c == 0x7f) {
            abort();
        }
    }
    if (last != n && strcmp(out + last, "\033[0m") != 0)
        abort();
    free(out);
    return 0;
}
