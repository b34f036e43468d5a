/* libFuzzer target for the W3C traceparent an agent sends (MCP _meta, the
 * hook's environment): what parses formats back to the same value, and
 * parses again to the same context. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "otel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_span_ctx c, again;
    if (!sg_traceparent_parse((const char *)data, size, &c))
        return 0;
    /* what the W3C spec refuses never parses: version ff, upper-case or
     * other non-hex digits, all-zero ids, a version 00 of another length */
    static const uint8_t zero[16];
    if (size < 55 || (data[0] == 'f' && data[1] == 'f') || !memcmp(c.trace_id, zero, 16) ||
        !memcmp(c.span_id, zero, 8) || (data[0] == '0' && data[1] == '0' && size != 55))
        abort();
    for (size_t i = 0; i < 55; i++)
        if (i != 2 && i != 35 && i != 52 && !strchr("0123456789abcdef", data[i]))
            abort();
    char out[56];
    sg_traceparent_format(&c, out);
    if (!sg_traceparent_parse(out, strlen(out), &again) || memcmp(&c, &again, sizeof c))
        abort();
    if (size == 55 && data[0] == '0' && data[1] == '0' && memcmp(out + 2, data + 2, 53))
        abort();
    return 0;
}
