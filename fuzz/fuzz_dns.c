/* libFuzzer target for the DNS stub's parser and answer builder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_dns_query q;
    if (size > SG_DNS_TCP_MAX)
        size = SG_DNS_TCP_MAX;
    if (sg_dns_parse_query(data, size, &q) == 0) {
        uint8_t out[SG_DNS_TCP_MAX];
        static const uint8_t a[16] = {198, 18, 0, 1};
        int n = sg_dns_build_answer(data, &q, 0, a, q.qtype == 28 ? 16 : 4, 5, out, sizeof out);
        if (n > (int)sizeof out)
            abort();
        (void)sg_dns_looks_like_exfil(q.name);
    }
    return 0;
}
