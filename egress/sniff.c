#include "sniff.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static size_t rd16(const uint8_t *p)
{
    return (size_t)((p[0] << 8) | p[1]);
}

/* The ClientHello's SNI. Its handshake bytes are joined from as many
 * records as it takes (a hello split over records is legal, and servers
 * join it), so the SNI is read whole or the hello is refused (TLS_BAD):
 * never relayed unread. */
static enum sg_sniff tls(const uint8_t *b, size_t len, char *name, size_t max)
{
    uint8_t hs[SG_SNIFF_MAX];
    size_t hn = 0, off = 0, want = 0;
    for (;;) {
        /* record header: 0x16, version 3.x, length */
        if (len - off < 5)
            return len >= SG_SNIFF_MAX ? SG_SNIFF_TLS_BAD : SG_SNIFF_NEED_MORE;
        if (b[off] != 0x16 || b[off + 1] != 3)
            return SG_SNIFF_TLS_BAD; /* another record before the hello is whole */
        size_t rec = rd16(b + off + 3);
        if (rec == 0 || rec > SG_SNIFF_MAX)
            return SG_SNIFF_TLS_BAD;
        if (len - off - 5 < rec)
            return len >= SG_SNIFF_MAX ? SG_SNIFF_TLS_BAD : SG_SNIFF_NEED_MORE;
        memcpy(hs + hn, b + off + 5, rec); /* hn + rec <= len <= SG_SNIFF_MAX */
        hn += rec;
        off += 5 + rec;
        if (hn < 4)
            continue;
        /* handshake: type 1 (ClientHello), 3-byte length */
        if (hs[0] != 1)
            return SG_SNIFF_TLS_BAD;
        want = 4 + (((size_t)hs[1] << 16) | rd16(hs + 2));
        if (want > SG_SNIFF_MAX)
            return SG_SNIFF_TLS_BAD; /* padded past what the proxy reads */
        if (hn >= want)
            break;
    }
    const uint8_t *p = hs + 4, *end = hs + want;
    if (end - p < 2 + 32 + 1)
        return SG_SNIFF_TLS_BAD;
    p += 2 + 32; /* version, random */
    size_t sid = *p++;
    if (sid > (size_t)(end - p))
        return SG_SNIFF_TLS_BAD;
    p += sid;
    if (end - p < 2)
        return SG_SNIFF_TLS_BAD;
    size_t cs = rd16(p);
    p += 2;
    if (cs > (size_t)(end - p))
        return SG_SNIFF_TLS_BAD;
    p += cs;
    if (end - p < 1)
        return SG_SNIFF_TLS_BAD;
    size_t cm = *p++;
    if (cm > (size_t)(end - p))
        return SG_SNIFF_TLS_BAD;
    p += cm;
    name[0] = '\0';
    if (end - p < 2)
        return SG_SNIFF_TLS; /* no extensions, no SNI */
    size_t ext = rd16(p);
    p += 2;
    if (ext > (size_t)(end - p))
        return SG_SNIFF_TLS_BAD;
    end = p + ext;
    while (end - p >= 4) {
        size_t type = rd16(p), el = rd16(p + 2);
        p += 4;
        if (el > (size_t)(end - p))
            return SG_SNIFF_TLS_BAD;
        if (type == 0) { /* server_name */
            const uint8_t *q = p, *qe = p + el;
            if (qe - q < 2)
                return SG_SNIFF_TLS_BAD;
            size_t ll = rd16(q);
            q += 2;
            if (ll > (size_t)(qe - q))
                return SG_SNIFF_TLS_BAD;
            qe = q + ll;
            while (qe - q >= 3) {
                uint8_t nt = q[0];
                size_t nl = rd16(q + 1);
                q += 3;
                if (nl > (size_t)(qe - q))
                    return SG_SNIFF_TLS_BAD;
                if (nt == 0) { /* host_name */
                    if (nl == 0 || nl >= max)
                        return SG_SNIFF_TLS_BAD;
                    for (size_t i = 0; i < nl; i++) {
                        if (q[i] < 0x21 || q[i] > 0x7e)
                            return SG_SNIFF_TLS_BAD;
                        name[i] = (char)tolower(q[i]);
                    }
                    name[nl] = '\0';
                    if (nl && name[nl - 1] == '.')
                        name[nl - 1] = '\0';
                    return SG_SNIFF_TLS;
                }
                q += nl;
            }
            return SG_SNIFF_TLS_BAD;
        }
        p += el;
    }
    return SG_SNIFF_TLS;
}

/* ---- HTTP/1.x, read strictly ---- */

#define CHUNK_LINE_MAX 1024 /* a chunk size with its extensions */
#define HOST_MAX 256

static bool is_tchar(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Methods any client uses: with one of these a line is HTTP even when its
 * version is missing or wrong (and then refused as not HTTP/1.x). */
static const char *const methods[] = {"GET",   "POST",  "PUT",     "HEAD",     "DELETE",
                                      "PATCH", "TRACE", "OPTIONS", "CONNECT",  "PRI",
                                      "COPY",  "MOVE",  "MKCOL",   "PROPFIND", "PROPPATCH",
                                      "LOCK",  "UNLOCK", "SEARCH", "REPORT",   "PURGE"};

static bool known_method(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strlen(methods[i]) == n && !memcmp(b, methods[i], n))
            return true;
    return false;
}

/* Servers skip empty lines before a request line (and lenient ones, such as
 * Python's http.server, leading blanks), so those are part of what is read
 * as HTTP; the checker then refuses all but CRLF. */
static size_t skip_eol(const uint8_t *b, size_t len)
{
    size_t i = 0;
    while (i < len && (b[i] == '\r' || b[i] == '\n' || b[i] == ' ' || b[i] == '\t' ||
                       b[i] == '\v' || b[i] == '\f'))
        i++;
    return i;
}

bool sg_sniff_nameless_prefix(const uint8_t *b, size_t len)
{
    if (len == 0 || len >= SG_SNIFF_MAX)
        return false;
    for (size_t i = skip_eol(b, len); i < len; i++)
        if (!is_tchar(b[i]))
            return false;
    return true;
}

enum sg_sniff sg_sniff_kind(const uint8_t *b, size_t len)
{
    if (len > SG_SNIFF_MAX)
        len = SG_SNIFF_MAX;
    if (len == 0)
        return SG_SNIFF_NEED_MORE;
    if (b[0] == 0x16) /* a handshake record, TLS 3.x (SSL 3 to TLS 1.3) */
        return len < 2 || b[1] == 3 ? SG_SNIFF_TLS : SG_SNIFF_OTHER;
    /* Whatever a server could take for a request line is HTTP, and checked:
     * a token, whitespace, then a line that has a known method or says
     * HTTP/. A line protocol ("EHLO x", "PING") or binary bytes are OTHER.
     * What is still undecided at the cap is HTTP, which the checker refuses:
     * padding never buys an unchecked relay. */
    size_t i = skip_eol(b, len), t = i;
    while (t < len && is_tchar(b[t]))
        t++;
    if (t == len)
        return len == SG_SNIFF_MAX ? SG_SNIFF_HTTP : SG_SNIFF_NEED_MORE;
    if (t == i || (b[t] != ' ' && b[t] != '\t' && b[t] != '\v' && b[t] != '\f'))
        return SG_SNIFF_OTHER;
    size_t k = t;
    while (k < len && b[k] != '\r' && b[k] != '\n') {
        if ((b[k] < 0x20 && b[k] != '\t' && b[k] != '\v' && b[k] != '\f') || b[k] == 0x7f)
            return SG_SNIFF_OTHER; /* no server takes a NUL or ESC in a request line */
        k++;
    }
    if (k == len)
        return len == SG_SNIFF_MAX ? SG_SNIFF_HTTP : SG_SNIFF_NEED_MORE;
    if (known_method(b + i, t - i))
        return SG_SNIFF_HTTP;
    for (size_t j = t; j + 5 <= k; j++)
        if (!strncasecmp((const char *)b + j, "HTTP/", 5))
            return SG_SNIFF_HTTP;
    return SG_SNIFF_OTHER;
}

enum hres { H_MORE, H_OK, H_BAD };

struct head {
    char host[HOST_MAX]; /* lowercased, no port, no trailing dot; "" when none */
    int host_port;       /* 0 when the Host has none */
    int hosts, minor;
    bool chunked, has_cl, bodyless;
    uint64_t clen;
    size_t len; /* the whole head: leading empty lines and the final CRLF too */
};

__attribute__((format(printf, 3, 4))) static enum hres bad(char *why, size_t max, const char *fmt,
                                                            ...)
{
    if (why && max) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, max, fmt, ap);
        va_end(ap);
    }
    return H_BAD;
}

/* At most max-1 bytes of s as text: printable ASCII kept, the rest '?'. */
static const char *excerpt(char *out, size_t max, const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (; k < n && k + 1 < max; k++)
        out[k] = s[k] >= 0x20 && s[k] < 0x7f ? (char)s[k] : '?';
    if (k < n && k >= 3)
        memcpy(out + k - 3, "...", 3);
    out[k] = '\0';
    return out;
}

/* The next line from p: 1 with [p, *eol) its content and *next after its
 * CRLF, 0 when it has not ended yet, -1 for a bare CR or LF (servers split
 * lines on those differently). */
static int next_line(const uint8_t *b, size_t p, size_t len, size_t *eol, size_t *next)
{
    for (size_t i = p; i < len; i++) {
        if (b[i] == '\n')
            return -1;
        if (b[i] == '\r') {
            if (i + 1 == len)
                return 0;
            if (b[i + 1] != '\n')
                return -1;
            *eol = i;
            *next = i + 2;
            return 1;
        }
    }
    return 0;
}

static bool name_is(const uint8_t *n, size_t nl, const char *want)
{
    return strlen(want) == nl && !strncasecmp((const char *)n, want, nl);
}

/* host [":" port]: a name of [A-Za-z0-9._-] or an [IPv6] literal. */
static int parse_hostport(const uint8_t *v, size_t n, char host[HOST_MAX], int *port)
{
    size_t i = 0, hl = 0;
    *port = 0;
    if (n && v[0] == '[') {
        for (i = 1; i < n && v[i] != ']'; i++)
            if (!isxdigit(v[i]) && v[i] != ':' && v[i] != '.')
                return -1;
        if (i == n || i == 1 || i - 1 >= HOST_MAX)
            return -1;
        for (size_t k = 1; k < i; k++)
            host[hl++] = (char)tolower(v[k]);
        i++;
    } else {
        for (; i < n && v[i] != ':'; i++) {
            if (!isalnum(v[i]) && v[i] != '.' && v[i] != '-' && v[i] != '_')
                return -1;
            if (hl + 1 >= HOST_MAX)
                return -1;
            host[hl++] = (char)tolower(v[i]);
        }
        if (hl && host[hl - 1] == '.')
            hl--;
        if (hl == 0)
            return -1;
    }
    host[hl] = '\0';
    if (i == n)
        return 0;
    if (v[i] != ':' || i + 1 == n || n - i - 1 > 5)
        return -1;
    int p = 0;
    for (i++; i < n; i++) {
        if (!isdigit(v[i]))
            return -1;
        p = p * 10 + (v[i] - '0');
    }
    if (p < 1 || p > 65535)
        return -1;
    *port = p;
    return 0;
}

/* Does a host read from a header name what the address was issued for? */
static bool same_host(const char *host, const char *want)
{
    size_t wl = strlen(want);
    if (wl && want[wl - 1] == '.')
        wl--;
    if (strlen(host) == wl && !strncasecmp(host, want, wl))
        return true;
    uint8_t a[16], b[16];
    return strchr(host, ':') && inet_pton(AF_INET6, host, a) == 1 &&
           inet_pton(AF_INET6, want, b) == 1 && !memcmp(a, b, 16);
}

/* Headers through which a front end may be told another host than the one
 * in Host (reverse proxies and frameworks that trust them route by them). */
static const char *const host_headers[] = {"x-forwarded-host", "x-host", "x-original-host",
                                           "x-forwarded-server", "x-http-host-override"};
/* Headers some frameworks take the request's URL from. */
static const char *const url_headers[] = {"x-original-url", "x-rewrite-url"};

static enum hres check_one_host(const uint8_t *v, size_t n, const uint8_t *hn, size_t hnl,
                                const char *want, char *why, size_t wmax)
{
    while (n && (v[0] == ' ' || v[0] == '\t'))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    char host[HOST_MAX];
    int port;
    if (parse_hostport(v, n, host, &port) < 0)
        return bad(why, wmax, "a malformed %.*s header", (int)hnl, (const char *)hn);
    if (!same_host(host, want))
        return bad(why, wmax,
                   "the %.*s header names %s, but the address was issued for %s "
                   "(domain fronting)",
                   (int)hnl, (const char *)hn, host, want);
    return H_OK;
}

/* X-Forwarded-Host and the like: a comma-separated list of hosts. */
static enum hres check_host_list(const uint8_t *v, size_t n, const uint8_t *hn, size_t hnl,
                                 const char *want, char *why, size_t wmax)
{
    size_t s = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && v[i] != ',')
            continue;
        if (check_one_host(v + s, i - s, hn, hnl, want, why, wmax) != H_OK)
            return H_BAD;
        s = i + 1;
    }
    return H_OK;
}

/* Forwarded (RFC 7239): elements split by ',', pairs by ';', values tokens
 * or quoted strings; every host= must name want. */
static enum hres check_forwarded(const uint8_t *v, size_t n, const char *want, char *why,
                                 size_t wmax)
{
    static const uint8_t fw[] = "Forwarded";
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',' || v[i] == ';'))
            i++;
        if (i == n)
            break;
        size_t ns = i;
        while (i < n && is_tchar(v[i]))
            i++;
        size_t nl = i - ns;
        if (nl == 0 || i == n || v[i] != '=')
            return bad(why, wmax, "a malformed Forwarded header");
        i++;
        uint8_t val[HOST_MAX + 2];
        size_t vl = 0;
        if (i < n && v[i] == '"') {
            for (i++; i < n && v[i] != '"'; i++) {
                if (v[i] == '\\' && ++i == n)
                    break;
                if (vl < sizeof val)
                    val[vl++] = v[i];
            }
            if (i == n)
                return bad(why, wmax, "a malformed Forwarded header (an open quote)");
            i++;
        } else {
            for (; i < n && is_tchar(v[i]); i++)
                if (vl < sizeof val)
                    val[vl++] = v[i];
        }
        if (i < n && v[i] != ',' && v[i] != ';' && v[i] != ' ' && v[i] != '\t')
            return bad(why, wmax, "a malformed Forwarded header");
        if (name_is(v + ns, nl, "host")) {
            if (vl == sizeof val)
                return bad(why, wmax, "a malformed Forwarded header (a host too long)");
            if (check_one_host(val, vl, fw, sizeof fw - 1, want, why, wmax) != H_OK)
                return H_BAD;
        }
    }
    return H_OK;
}

/* One request head, from the first byte after the last request. want NULL:
 * read it, compare nothing (sg_sniff_name). */
static enum hres parse_head(const uint8_t *b, size_t len, const char *want, int port,
                            struct head *h, char *why, size_t wmax)
{
    memset(h, 0, sizeof *h);
    size_t cap = len < SG_SNIFF_MAX ? len : SG_SNIFF_MAX;
    size_t p = 0, eol, next;
    char ex[96];
    int r;
    /* empty lines before the request line (RFC 9112, 2.2) */
    while ((r = next_line(b, p, cap, &eol, &next)) == 1 && eol == p)
        p = next;
    if (r <= 0)
        goto partial;
    /* request-line = method SP request-target SP HTTP-version */
    size_t m = p;
    while (m < eol && is_tchar(b[m]))
        m++;
    size_t t = m + 1, te = t;
    while (te < eol && b[te] > 0x20 && b[te] < 0x7f)
        te++;
    if (m == p || m == eol || b[m] != ' ' || te == t || te == eol || b[te] != ' ' ||
        eol - te - 1 != 8 || memcmp(b + te + 1, "HTTP/", 5) || !isdigit(b[te + 6]) ||
        b[te + 7] != '.' || !isdigit(b[te + 8]))
        return bad(why, wmax, "not an HTTP/1.x request line: %s",
                   excerpt(ex, sizeof ex, b + p, eol - p));
    if (b[te + 6] != '1' || (b[te + 8] != '0' && b[te + 8] != '1'))
        return bad(why, wmax, "HTTP/%c.%c in clear text: the proxy reads only HTTP/1.0 and 1.1",
                   b[te + 6], b[te + 8]);
    h->minor = b[te + 8] - '0';
    if (m - p == 7 && !memcmp(b + p, "CONNECT", 7))
        return bad(why, wmax, "CONNECT asks the upstream for a tunnel the proxy cannot follow");
    h->bodyless = (m - p == 3 && !memcmp(b + p, "GET", 3)) ||
                  (m - p == 4 && !memcmp(b + p, "HEAD", 4)) ||
                  (m - p == 5 && !memcmp(b + p, "TRACE", 5));
    bool options = m - p == 7 && !memcmp(b + p, "OPTIONS", 7);
    if (b[t] != '/' && !(options && te - t == 1 && b[t] == '*'))
        return bad(why, wmax,
                   "an absolute-form request target (%s): it names a host of its own, which "
                   "only a proxy takes",
                   excerpt(ex, sizeof ex, b + t, te - t));
    p = next;
    /* header fields, up to the empty line */
    for (;;) {
        r = next_line(b, p, cap, &eol, &next);
        if (r <= 0)
            goto partial;
        if (eol == p)
            break;
        if (b[p] == ' ' || b[p] == '\t')
            return bad(why, wmax, "a folded header line (obs-fold)");
        size_t n = p;
        while (n < eol && is_tchar(b[n]))
            n++;
        const uint8_t *hn = b + p;
        size_t hnl = n - p;
        int shown = hnl > 64 ? 64 : (int)hnl;
        size_t ws = n;
        while (ws < eol && (b[ws] == ' ' || b[ws] == '\t'))
            ws++;
        if (hnl && ws > n && ws < eol && b[ws] == ':')
            return bad(why, wmax, "whitespace between the header name %.*s and its colon", shown,
                       (const char *)hn);
        if (hnl == 0 || n == eol || b[n] != ':')
            return bad(why, wmax, "a malformed header line: %s",
                       excerpt(ex, sizeof ex, b + p, eol - p));
        size_t v = n + 1, ve = eol;
        while (v < ve && (b[v] == ' ' || b[v] == '\t'))
            v++;
        while (ve > v && (b[ve - 1] == ' ' || b[ve - 1] == '\t'))
            ve--;
        for (size_t k = v; k < ve; k++)
            if ((b[k] < 0x20 && b[k] != '\t') || b[k] == 0x7f)
                return bad(why, wmax, "a control character in the %.*s header", shown,
                           (const char *)hn);
        const uint8_t *val = b + v;
        size_t vl = ve - v;
        if (name_is(hn, hnl, "host")) {
            if (++h->hosts > 1)
                return bad(why, wmax, "two Host headers (servers disagree on which one counts)");
            if (parse_hostport(val, vl, h->host, &h->host_port) < 0)
                return bad(why, wmax, "a malformed Host header: %s",
                           excerpt(ex, sizeof ex, val, vl));
        } else if (name_is(hn, hnl, "content-length")) {
            if (h->has_cl)
                return bad(why, wmax, "two Content-Length headers");
            h->has_cl = true;
            if (vl == 0 || vl > 15)
                return bad(why, wmax, "a malformed Content-Length");
            for (size_t k = 0; k < vl; k++) {
                if (!isdigit(val[k]))
                    return bad(why, wmax, "a malformed Content-Length");
                h->clen = h->clen * 10 + (uint64_t)(val[k] - '0');
            }
        } else if (name_is(hn, hnl, "transfer-encoding")) {
            if (h->chunked)
                return bad(why, wmax, "two Transfer-Encoding headers");
            if (!name_is(val, vl, "chunked"))
                return bad(why, wmax, "a Transfer-Encoding other than chunked: %s",
                           excerpt(ex, sizeof ex, val, vl));
            h->chunked = true;
        } else if (name_is(hn, hnl, "upgrade")) {
            return bad(why, wmax,
                       "an Upgrade to %s: the proxy cannot follow the stream after it "
                       "(use TLS: https://, wss://)",
                       excerpt(ex, sizeof ex, val, vl));
        } else if (want && name_is(hn, hnl, "forwarded")) {
            if (check_forwarded(val, vl, want, why, wmax) != H_OK)
                return H_BAD;
        } else if (want) {
            for (size_t k = 0; k < sizeof host_headers / sizeof host_headers[0]; k++)
                if (name_is(hn, hnl, host_headers[k]) &&
                    check_host_list(val, vl, hn, (size_t)shown, want, why, wmax) != H_OK)
                    return H_BAD;
            for (size_t k = 0; k < sizeof url_headers / sizeof url_headers[0]; k++)
                if (name_is(hn, hnl, url_headers[k]) && (vl == 0 || val[0] != '/'))
                    return bad(why, wmax, "the %.*s header names a URL of its own: %s", shown,
                               (const char *)hn, excerpt(ex, sizeof ex, val, vl));
        }
        p = next;
    }
    h->len = next;
    if (h->minor == 1 && h->hosts == 0)
        return bad(why, wmax, "an HTTP/1.1 request without a Host header");
    if (h->chunked && h->has_cl)
        return bad(why, wmax,
                   "both Content-Length and Transfer-Encoding (servers disagree on where the "
                   "request ends)");
    if (h->chunked && h->minor == 0)
        return bad(why, wmax, "Transfer-Encoding in an HTTP/1.0 request");
    if (h->bodyless && (h->chunked || h->clen))
        return bad(why, wmax,
                   "a body on a GET, HEAD or TRACE request (some servers ignore it and read "
                   "it as the next request)");
    if (want && h->hosts && !same_host(h->host, want))
        return bad(why, wmax,
                   "the HTTP Host header names %s, but the address was issued for %s "
                   "(domain fronting)",
                   h->host, want);
    if (want && h->host_port && h->host_port != port)
        return bad(why, wmax, "the HTTP Host header names port %d, but the connection is to port %d",
                   h->host_port, port);
    return H_OK;
partial:
    if (r < 0)
        return bad(why, wmax, "a bare CR or LF in a request head (servers split lines on it "
                              "differently)");
    if (cap == SG_SNIFF_MAX)
        return bad(why, wmax, "a request head over %d bytes", SG_SNIFF_MAX);
    return H_MORE;
}

enum sg_sniff sg_sniff_name(const uint8_t *buf, size_t len, char *name, size_t namemax)
{
    if (len > SG_SNIFF_MAX)
        len = SG_SNIFF_MAX;
    name[0] = '\0';
    enum sg_sniff k = sg_sniff_kind(buf, len);
    if (k == SG_SNIFF_TLS)
        return tls(buf, len, name, namemax);
    if (k != SG_SNIFF_HTTP)
        return k;
    struct head h;
    enum hres r = parse_head(buf, len, NULL, 0, &h, NULL, 0);
    if (r == H_MORE)
        return SG_SNIFF_NEED_MORE;
    if (r == H_OK && strlen(h.host) < namemax)
        memcpy(name, h.host, strlen(h.host) + 1);
    return SG_SNIFF_HTTP; /* a refused head names nothing to trust */
}

/* ---- one request after another ---- */

enum { ST_HEAD, ST_BODY, ST_CHUNK_LINE, ST_CHUNK_DATA, ST_CHUNK_END, ST_TRAILER };

static enum sg_http_verdict refuse(struct sg_http *h, char *why, size_t wmax, const char *what)
{
    if (why && wmax) {
        if (h->requests > 1)
            snprintf(why, wmax, "request %u on this connection: %s", h->requests, what);
        else
            snprintf(why, wmax, "%s", what);
    }
    return SG_HTTP_REFUSE;
}

/* chunk-size [ chunk-ext ] CRLF; the extension is kept to printable bytes. */
static enum sg_http_verdict chunk_line(struct sg_http *h, const uint8_t *b, size_t len,
                                       size_t *used, char *why, size_t wmax)
{
    size_t cap = len < CHUNK_LINE_MAX ? len : CHUNK_LINE_MAX, eol, next;
    int r = next_line(b, 0, cap, &eol, &next);
    if (r < 0)
        return refuse(h, why, wmax, "a bare CR or LF in a chunk size line");
    if (r == 0)
        return cap == CHUNK_LINE_MAX ? refuse(h, why, wmax, "a chunk size line too long")
                                     : SG_HTTP_MORE;
    uint64_t size = 0;
    size_t i = 0;
    for (; i < eol && isxdigit(b[i]); i++) {
        if (i == 15)
            return refuse(h, why, wmax, "a chunk size too large");
        size = size * 16 + (uint64_t)(isdigit(b[i]) ? b[i] - '0' : tolower(b[i]) - 'a' + 10);
    }
    if (i == 0)
        return refuse(h, why, wmax, "a malformed chunk size");
    size_t k = i;
    while (k < eol && (b[k] == ' ' || b[k] == '\t'))
        k++;
    if (k < eol && b[k] != ';')
        return refuse(h, why, wmax, "a malformed chunk size");
    if (k == eol && k != i)
        return refuse(h, why, wmax, "a malformed chunk size (trailing whitespace)");
    for (; k < eol; k++)
        if ((b[k] < 0x20 && b[k] != '\t') || b[k] == 0x7f)
            return refuse(h, why, wmax, "a control character in a chunk extension");
    *used = next;
    h->left = size;
    h->state = size ? ST_CHUNK_DATA : ST_TRAILER;
    return SG_HTTP_PASS;
}

enum sg_http_verdict sg_http_check(struct sg_http *h, const uint8_t *buf, size_t len,
                                   const char *name, int port, size_t *used, char *why,
                                   size_t whymax)
{
    *used = 0;
    if (why && whymax)
        why[0] = '\0';
    if (len == 0)
        return SG_HTTP_MORE;
    switch (h->state) {
    case ST_HEAD: {
        struct head hd;
        char inner[512];
        enum hres r = parse_head(buf, len, name, port, &hd, inner, sizeof inner);
        if (r == H_MORE)
            return SG_HTTP_MORE;
        h->requests++;
        if (r == H_BAD)
            return refuse(h, why, whymax, inner);
        *used = hd.len;
        if (hd.chunked) {
            h->state = ST_CHUNK_LINE;
        } else if (hd.clen) {
            h->state = ST_BODY;
            h->left = hd.clen;
        }
        return SG_HTTP_PASS;
    }
    case ST_BODY:
    case ST_CHUNK_DATA: {
        size_t n = len < h->left ? len : (size_t)h->left;
        h->left -= n;
        if (!h->left)
            h->state = h->state == ST_BODY ? ST_HEAD : ST_CHUNK_END;
        *used = n;
        return SG_HTTP_PASS;
    }
    case ST_CHUNK_LINE:
        return chunk_line(h, buf, len, used, why, whymax);
    case ST_CHUNK_END:
    case ST_TRAILER:
        if (buf[0] != '\r' || (len > 1 && buf[1] != '\n'))
            return refuse(h, why, whymax,
                          h->state == ST_TRAILER
                              ? "trailer fields after a chunked body (some servers merge them "
                                "into the head)"
                              : "a chunk longer than its size says");
        if (len < 2)
            return SG_HTTP_MORE;
        *used = 2;
        h->state = h->state == ST_TRAILER ? ST_HEAD : ST_CHUNK_LINE;
        return SG_HTTP_PASS;
    }
    return refuse(h, why, whymax, "an internal state the checker does not know");
}
