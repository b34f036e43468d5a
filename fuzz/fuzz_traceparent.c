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
    char out[56];
    sg_traceparent_format(&c, out);
    if (!sg_traceparent_parse(out, strlen(out), &again) || memcmp(&c, &again, sizeof c))
        abort();
    if (size == 55 && data[0] == '0' && data[1] == '0' && memcmp(out + 2, data + 2, 53))
        abort();
    return 0;
}
