#include "dns.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

int sg_dns_parse_query(const uint8_t *buf, size_t len, struct sg_dns_query *q)
{
    memset(q, 0, sizeof *q);
    if (len < 12 || len > SG_DNS_TCP_MAX)
        return -EINVAL;
    q->id = rd16(buf);
    q->flags = rd16(buf + 2);
    if (q->flags & 0x8000) /* a response, not a query */
        return -EINVAL;
    if ((q->flags >> 11 & 0xf) != 0) /* only standard queries */
        return -EINVAL;
    if (rd16(buf + 4) != 1) /* exactly one question */
        return -EINVAL;
    size_t off = 12, n = 0;
    for (;;) {
        if (off >= len)
            return -EINVAL;
        uint8_t l = buf[off++];
        if (l == 0)
            break;
        if (l & 0xc0) /* compression pointers have no place in a query */
            return -EINVAL;
        if (off + l > len || n + l + 1 > SG_DNS_NAME_MAX)
            return -EINVAL;
        if (n)
            q->name[n++] = '.';
        for (uint8_t i = 0; i < l; i++) {
            unsigned char c = buf[off + i];
            if (c == 0 || c == '.')
                return -EINVAL; /* would make the text name lie */
            q->name[n++] = (char)tolower(c);
        }
        if (l > q->longest_label)
            q->longest_label = l;
        off += l;
    }
    q->name[n] = '\0';
    if (off + 4 > len)
        return -EINVAL;
    q->qtype = rd16(buf + off);
    q->qclass = rd16(buf + off + 2);
    q->question_len = off + 4 - 12;
    return 0;
}

int sg_dns_build_answer(const uint8_t *query, const struct sg_dns_query *q, int rcode,
                        const uint8_t *addr, size_t alen, uint32_t ttl, uint8_t *out,
                        size_t outmax)
{
    size_t need = 12 + q->question_len + (addr ? 12 + alen : 0);
    if (need > outmax)
        return -ENOBUFS;
    wr16(out, q->id);
    /* QR, opcode 0, AA, RD copied, RA, rcode */
    wr16(out + 2, (uint16_t)(0x8000 | 0x0400 | (q->flags & 0x0100) | 0x0080 | (rcode & 0xf)));
    wr16(out + 4, 1);
    wr16(out + 6, addr ? 1 : 0);
    wr16(out + 8, 0);
    wr16(out + 10, 0);
    memcpy(out + 12, query + 12, q->question_len);
    size_t off = 12 + q->question_len;
    if (addr) {
        wr16(out + off, 0xc00c); /* the name of the question */
        wr16(out + off + 2, alen == 4 ? SG_DNS_A : SG_DNS_AAAA);
        wr16(out + off + 4, 1);
        out[off + 6] = (uint8_t)(ttl >> 24), out[off + 7] = (uint8_t)(ttl >> 16);
        out[off + 8] = (uint8_t)(ttl >> 8), out[off + 9] = (uint8_t)ttl;
        wr16(out + off + 10, (uint16_t)alen);
        memcpy(out + off + 12, addr, alen);
        off += 12 + alen;
    }
    return (int)off;
}

int sg_dns_build_ptr(const uint8_t *query, const struct sg_dns_query *q, const char *target,
                     uint32_t ttl, uint8_t *out, size_t outmax)
{
    uint8_t rdata[SG_DNS_NAME_MAX + 2];
    size_t n = 0, tl = strlen(target);
    if (tl == 0 || tl > SG_DNS_NAME_MAX)
        return -EINVAL;
    for (const char *s = target; *s;) {
        const char *e = strchr(s, '.');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 0 || l > 63 || n + 1 + l + 1 > sizeof rdata)
            return -EINVAL;
        rdata[n++] = (uint8_t)l;
        memcpy(rdata + n, s, l);
        n += l;
        s = e ? e + 1 : s + l;
    }
    rdata[n++] = 0;
    int r = sg_dns_build_answer(query, q, SG_RCODE_NOERROR, NULL, 0, 0, out, outmax);
    if (r < 0)
        return r;
    size_t off = (size_t)r;
    if (off + 12 + n > outmax)
        return -ENOBUFS;
    wr16(out + 6, 1); /* one answer */
    wr16(out + off, 0xc00c);
    wr16(out + off + 2, SG_DNS_PTR);
    wr16(out + off + 4, 1);
    out[off + 6] = (uint8_t)(ttl >> 24), out[off + 7] = (uint8_t)(ttl >> 16);
    out[off + 8] = (uint8_t)(ttl >> 8), out[off + 9] = (uint8_t)ttl;
    wr16(out + off + 10, (uint16_t)n);
    memcpy(out + off + 12, rdata, n);
    return (int)(off + 12 + n);
}

bool sg_dns_loopback_reverse(const char *name)
{
    /* 127.0.0.0/8: four decimal labels, the last one 127 */
    const char *s = name;
    for (int i = 0; i < 3; i++) {
        size_t d = strspn(s, "0123456789");
        if (d == 0 || d > 3 || s[d] != '.')
            goto v6;
        s += d + 1;
    }
    if (!strcmp(s, "127.in-addr.arpa"))
        return true;
v6:;
    /* ::1: "1" then 31 "0", nibble by nibble */
    static const char one[] = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa";
    return !strcmp(name, one);
}

double sg_dns_label_entropy(const char *label, size_t len)
{
    unsigned counts[256] = {0};
    if (!len)
        return 0;
    for (size_t i = 0; i < len; i++)
        counts[(unsigned char)label[i]]++;
    double h = 0;
    for (int c = 0; c < 256; c++) {
        if (!counts[c])
            continue;
        double p = (double)counts[c] / (double)len;
        h -= p * log2(p);
    }
    return h;
}

int sg_dns_looks_like_exfil(const char *name)
{
    const char *s = name;
    while (*s) {
        const char *e = strchr(s, '.');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        /* long labels, or base32/hex-looking ones dense with information */
        if (n >= 40 || (n >= 20 && sg_dns_label_entropy(s, n) > 3.8))
            return 1;
        if (!e)
            break;
        s = e + 1;
    }
    return strlen(name) > 180;
}
