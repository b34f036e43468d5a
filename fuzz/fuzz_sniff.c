/* libFuzzer target for the ClientHello SNI and HTTP Host sniffers and the
 * plain-HTTP request checker. The checker is run twice over the input: all
 * at once, and in pieces through a buffer of the proxy's size that drops
 * what was cleared (as the proxy does); both must clear the same bytes and
 * reach the same verdict, whatever the split. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "api.weather.test"
#define PORT 80

static void check(bool ok)
{
    if (!ok)
        abort();
}

/* One step after another over data, all there from the start. */
static enum sg_http_verdict whole(const uint8_t *data, size_t size, size_t *cleared)
{
    struct sg_http h = {0};
    char why[640];
    size_t at = 0;
    enum sg_http_verdict v = SG_HTTP_MORE;
    while (at < size) {
        size_t used = 0;
        v = sg_http_check(&h, data + at, size - at, NAME, PORT, &used, why, sizeof why);
        check(strlen(why) < sizeof why);
        if (v != SG_HTTP_PASS) {
            check(used == 0 && (v == SG_HTTP_MORE || why[0]));
            break;
        }
        check(used > 0 && used <= size - at);
        at += used;
    }
    *cleared = at;
    return v;
}

/* The same bytes arriving in pieces (sizes taken from the data itself) into
 * a buffer of SG_SNIFF_MAX, cleared bytes dropped at once. */
static enum sg_http_verdict pieces(const uint8_t *data, size_t size, size_t *cleared)
{
    static uint8_t buf[SG_SNIFF_MAX];
    struct sg_http h = {0};
    char why[640];
    size_t in = 0, len = 0, done = 0;
    enum sg_http_verdict v = SG_HTTP_MORE;
    for (size_t k = 0; in < size; k++) {
        size_t piece = 1 + data[(k * 7) % size] % 97;
        if (piece > size - in)
            piece = size - in;
        if (piece > sizeof buf - len)
            piece = sizeof buf - len;
        check(piece > 0); /* a full buffer always resolves: PASS or REFUSE */
        memcpy(buf + len, data + in, piece);
        len += piece;
        in += piece;
        for (;;) {
            size_t used = 0;
            v = sg_http_check(&h, buf, len, NAME, PORT, &used, why, sizeof why);
            if (v != SG_HTTP_PASS)
                break;
            check(used > 0 && used <= len);
            memmove(buf, buf + used, len - used);
            len -= used;
            done += used;
            if (len == 0)
                break;
        }
        if (v == SG_HTTP_REFUSE)
            break;
    }
    *cleared = done;
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[256];
    enum sg_sniff s = sg_sniff_name(data, size, name, sizeof name);
    check(strlen(name) < sizeof name && !(s == SG_SNIFF_NEED_MORE && name[0]));
    enum sg_sniff k = sg_sniff_kind(data, size);
    check(k != SG_SNIFF_HTTP || s != SG_SNIFF_OTHER);
    if (sg_sniff_nameless_prefix(data, size))
        check(k == SG_SNIFF_NEED_MORE);
    if (size == 0)
        return 0;
    size_t a = 0, b = 0;
    enum sg_http_verdict va = whole(data, size, &a);
    enum sg_http_verdict vb = pieces(data, size, &b);
    check((va == SG_HTTP_REFUSE) == (vb == SG_HTTP_REFUSE) && a == b);
    return 0;
}
