/* libFuzzer target for a WASM run's WASI-layer reports: the bytes come
 * from inside the sandbox. Split in two feeds to cover a line across reads. */
#include <stddef.h>
#include <stdint.h>

#include "wasireport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(void *ctx, const struct sg_event *ev)
{
    size_t *n = ctx;
    *n += ev->message_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sg_wasi_report w;
    struct sg_event_bus bus = {0};
    size_t n = 0;
    sg_bus_subscribe(&bus, sink, &n);
    w = (struct sg_wasi_report){0};
    size_t half = size / 2;
    sg_wasi_report_feed(&w, (const char *)data, half, &bus);
    sg_wasi_report_feed(&w, (const char *)data + half, size - half, &bus);
    sg_wasi_report_end(&w, &bus);
    return 0;
}
