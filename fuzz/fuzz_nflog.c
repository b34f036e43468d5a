/* libFuzzer target for the NFLOG parser: the packets inside are the skill's. */
#include <stddef.h>
#include <stdint.h>

#include "nflog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(void *ctx, const struct sg_pkt *p)
{
    size_t *n = ctx;
    *n += (size_t)p->dport + (size_t)p->proto;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    sg_nflog_parse(data, size, sink, &n);
    return 0;
}
