#include "sniff.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static size_t rd16(const uint8_t *p)
{
    return (size_t)((p[0] << 8) | p[1]);
}

static enum sg_sniff tls(const uint8_t *b, size_t len, char *name, size_t max)
{
    /* record header: 0x16, version, length */
    if (len < 5)
        return SG_SNIFF_NEED_MORE;
    size_t rec = rd16(b + 3);
    if (rec > SG_SNIFF_MAX)
        return SG_SNIFF_OTHER;
    if (len < 5 + rec)
        return len >= SG_SNIFF_MAX ? SG_SNIFF_OTHER : SG_SNIFF_NEED_MORE;
    const uint8_t *p = b + 5, *end = b + 5 + rec;
    /* handshake: type 1 (ClientHello), 3-byte length */
    if (end - p < 4 || p[0] != 1)
        return SG_SNIFF_OTHER;
    size_t hl = ((size_t)p[1] << 16) | rd16(p + 2);
    p += 4;
    if (hl > (size_t)(end - p))
        return SG_SNIFF_OTHER; /* a hello split over records: treat as opaque */
    end = p + hl;
    if (end - p < 2 + 32 + 1)
        return SG_SNIFF_OTHER;
    p += 2 + 32; /* version, random */
    size_t sid = *p++;
    if (sid > (size_t)(end - p))
        return SG_SNIFF_OTHER;
    p += sid;
    if (end - p < 2)
        return SG_SNIFF_OTHER;
    size_t cs = rd16(p);
    p += 2;
    if (cs > (size_t)(end - p))
        return SG_SNIFF_OTHER;
    p += cs;
    if (end - p < 1)
        return SG_SNIFF_OTHER;
    size_t cm = *p++;
    if (cm > (size_t)(end - p))
        return SG_SNIFF_OTHER;
    p += cm;
    name[0] = '\0';
    if (end - p < 2)
        return SG_SNIFF_TLS; /* no extensions, no SNI */
    size_t ext = rd16(p);
    p += 2;
    if (ext > (size_t)(end - p))
        return SG_SNIFF_OTHER;
    end = p + ext;
    while (end - p >= 4) {
        size_t type = rd16(p), el = rd16(p + 2);
        p += 4;
        if (el > (size_t)(end - p))
            return SG_SNIFF_OTHER;
        if (type == 0) { /* server_name */
            const uint8_t *q = p, *qe = p + el;
            if (qe - q < 2)
                return SG_SNIFF_OTHER;
            size_t ll = rd16(q);
            q += 2;
            if (ll > (size_t)(qe - q))
                return SG_SNIFF_OTHER;
            qe = q + ll;
            while (qe - q >= 3) {
                uint8_t nt = q[0];
                size_t nl = rd16(q + 1);
                q += 3;
                if (nl > (size_t)(qe - q))
                    return SG_SNIFF_OTHER;
                if (nt == 0) { /* host_name */
                    if (nl == 0 || nl >= max)
                        return SG_SNIFF_OTHER;
                    for (size_t i = 0; i < nl; i++) {
                        if (q[i] < 0x21 || q[i] > 0x7e)
                            return SG_SNIFF_OTHER;
                        name[i] = (char)tolower(q[i]);
                    }
                    name[nl] = '\0';
                    if (nl && name[nl - 1] == '.')
                        name[nl - 1] = '\0';
                    return SG_SNIFF_TLS;
                }
                q += nl;
            }
            return SG_SNIFF_OTHER;
        }
        p += el;
    }
    return SG_SNIFF_TLS;
}

static const char *const methods[] = {"GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "PATCH ",
                                      "OPTIONS ", "CONNECT ", "TRACE "};

static enum sg_sniff http(const uint8_t *b, size_t len, char *name, size_t max)
{
    const char *s = (const char *)b;
    const char *head_end = NULL;
    for (size_t i = 0; i + 3 < len; i++) {
        if (!memcmp(b + i, "\r\n\r\n", 4)) {
            head_end = s + i;
            break;
        }
    }
    if (!head_end)
        return len >= SG_SNIFF_MAX ? SG_SNIFF_OTHER : SG_SNIFF_NEED_MORE;
    name[0] = '\0';
    int hosts = 0;
    for (const char *line = memchr(s, '\n', (size_t)(head_end - s)); line && line < head_end;
         line = memchr(line + 1, '\n', (size_t)(head_end - line - 1))) {
        const char *l = line + 1;
        if (head_end - l > 5 && !strncasecmp(l, "host:", 5)) {
            hosts++;
            l += 5;
            while (l < head_end && (*l == ' ' || *l == '\t'))
                l++;
            size_t n = 0;
            while (l + n < head_end && l[n] != '\r' && l[n] != '\n' && l[n] != ' ')
                n++;
            if (n == 0 || n >= max)
                return SG_SNIFF_OTHER;
            for (size_t i = 0; i < n; i++)
                name[i] = (char)tolower((unsigned char)l[i]);
            name[n] = '\0';
            /* strip a port, not the inside of [v6] */
            char *colon = strrchr(name, ':');
            if (colon && !strchr(colon, ']'))
                *colon = '\0';
        }
    }
    /* two Host headers are how request smuggling starts: no name at all */
    if (hosts > 1)
        name[0] = '\0';
    return SG_SNIFF_HTTP;
}

enum sg_sniff sg_sniff_name(const uint8_t *buf, size_t len, char *name, size_t namemax)
{
    if (len > SG_SNIFF_MAX)
        len = SG_SNIFF_MAX;
    name[0] = '\0';
    if (len == 0)
        return SG_SNIFF_NEED_MORE;
    if (buf[0] == 0x16)
        return tls(buf, len, name, namemax);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        size_t ml = strlen(methods[i]);
        size_t n = len < ml ? len : ml;
        if (!memcmp(buf, methods[i], n))
            return n < ml ? SG_SNIFF_NEED_MORE : http(buf, len, name, namemax);
    }
    return SG_SNIFF_OTHER;
}
