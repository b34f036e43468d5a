/* An http(s) URL's host and port, the WHATWG way or not at all (urlhost.h).
 * Step names in the comments are those of https://url.spec.whatwg.org. */
#include "urlhost.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* A DNS name is at most 253 bytes, plus the trailing dot Node keeps. */
#define HOST_MAX 254

static bool is_c0_or_space(unsigned char c)
{
    return c <= 0x20;
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static int hexval(unsigned char c)
{
    if (is_digit(c))
        return c - '0';
    c = lower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "IPv4 number parser": 0 and *out (saturated past 2^40: anything that
 * large fails later), or -1. Input already lower case. */
static int ipv4_number(const char *s, size_t n, uint64_t *out)
{
    if (!n)
        return -1;
    unsigned radix = 10;
    if (n >= 2 && s[0] == '0' && s[1] == 'x')
        radix = 16, s += 2, n -= 2;
    else if (n >= 2 && s[0] == '0')
        radix = 8, s += 1, n -= 1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hexval((unsigned char)s[i]);
        if (d < 0 || (unsigned)d >= radix)
            return -1;
        v = v * radix + (unsigned)d;
        if (v > (UINT64_C(1) << 40))
            v = UINT64_C(1) << 40;
    }
    *out = v;
    return 0;
}

/* Split d (length n) on '.'; the standard drops one empty last part. */
static size_t split_dots(const char *d, size_t n, const char *part[], size_t plen[], size_t max)
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && d[i] != '.')
            continue;
        if (k < max)
            part[k] = d + start, plen[k] = i - start;
        k++;
        start = i + 1;
    }
    return k;
}

/* "ends in a number checker". */
static bool ends_in_number(const char *d, size_t n)
{
    size_t e = n; /* n > 0: "abc." is the parts "abc" and "", drop "" */
    if (e && d[e - 1] == '.')
        e--;
    size_t s = e;
    while (s && d[s - 1] != '.')
        s--;
    if (s == e)
        return false;
    bool digits = true;
    for (size_t i = s; i < e; i++)
        digits = digits && is_digit((unsigned char)d[i]);
    uint64_t v;
    return digits || ipv4_number(d + s, e - s, &v) == 0;
}

/* "IPv4 parser": 0 and the address, or -1. */
static int ipv4_parse(const char *d, size_t n, uint32_t *addr)
{
    const char *part[5];
    size_t plen[5];
    size_t k = split_dots(d, n, part, plen, 5);
    if (k > 5)
        return -1; /* more than four even without an empty last part */
    if (k > 1 && !plen[k - 1])
        k--;
    if (k > 4)
        return -1;
    uint64_t num[4];
    for (size_t i = 0; i < k; i++)
        if (ipv4_number(part[i], plen[i], &num[i]) < 0)
            return -1;
    for (size_t i = 0; i + 1 < k; i++)
        if (num[i] > 255)
            return -1;
    if (num[k - 1] >= (UINT64_C(1) << (8 * (5 - k))))
        return -1;
    uint64_t v = num[k - 1];
    for (size_t i = 0; i + 1 < k; i++)
        v += num[i] << (8 * (3 - i));
    *addr = (uint32_t)v;
    return 0;
}

/* "IPv6 parser" by inet_pton (the two accept the same forms for the same
 * address; a form only one accepts is a refusal or a failed fetch, never
 * another host), "IPv6 serializer" by the standard: lower-case hex, the
 * first longest run of two or more zero pieces as "::". */
static char *ipv6_host(const char *s, size_t n, const char **why)
{
    char in[64];
    unsigned char a[16];
    for (size_t i = 0; i < n; i++)
        if (hexval((unsigned char)s[i]) < 0 && s[i] != ':' && s[i] != '.') {
            *why = "the IPv6 address holds a character it cannot (a zone id?)";
            return NULL;
        }
    if (n >= sizeof in) {
        *why = "the IPv6 address is too long";
        return NULL;
    }
    memcpy(in, s, n);
    in[n] = '\0';
    if (inet_pton(AF_INET6, in, a) != 1) {
        *why = "the IPv6 address is not valid";
        return NULL;
    }
    unsigned piece[8];
    for (int i = 0; i < 8; i++)
        piece[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    int best = -1, best_len = 1;
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && !piece[j])
            j++;
        if (j - i > best_len)
            best = i, best_len = j - i;
        i = j > i ? j : i + 1;
    }
    char out[64] = "["; /* at most 41 bytes */
    size_t o = 1;
    bool ignore0 = false;
    for (int i = 0; i < 8; i++) {
        if (ignore0 && !piece[i])
            continue;
        ignore0 = false;
        if (i == best) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", i == 0 ? "::" : ":");
            ignore0 = true;
            continue;
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "%x%s", piece[i], i != 7 ? ":" : "");
    }
    snprintf(out + o, sizeof out - o, "]");
    return sg_xstrdup(out);
}

/* The "host parser" for a special scheme, on the bytes between the
 * authority's last '@' and its port. */
static char *host_parse(const char *h, size_t n, const char **why)
{
    if (h[0] == '[') {
        if (n < 2 || h[n - 1] != ']') {
            *why = "the host has a '[' without its ']'";
            return NULL;
        }
        return ipv6_host(h + 1, n - 2, why);
    }
    /* percent-decode, then the domain's checks on the decoded bytes */
    char d[HOST_MAX + 1];
    size_t dn = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if (c == '%' && i + 2 < n && hexval((unsigned char)h[i + 1]) >= 0 &&
            hexval((unsigned char)h[i + 2]) >= 0) {
            c = (unsigned char)(hexval((unsigned char)h[i + 1]) << 4 | hexval((unsigned char)h[i + 2]));
            i += 2;
        }
        if (c >= 0x80) {
            *why = "the host is not ASCII (IDNA is not read here)";
            return NULL;
        }
        c = lower(c);
        if (!(is_alpha(c) || is_digit(c) || c == '.' || c == '-' || c == '_')) {
            *why = "the host holds a character host names do not use";
            return NULL;
        }
        if (dn == HOST_MAX) {
            *why = "the host is longer than a DNS name can be";
            return NULL;
        }
        d[dn++] = (char)c;
    }
    if (!dn) {
        *why = "the URL has an empty host";
        return NULL;
    }
    d[dn] = '\0';
    for (size_t i = 0; i < dn; i++)
        if ((i == 0 || d[i - 1] == '.') && !strncmp(d + i, "xn--", 4)) {
            *why = "the host has a punycode (xn--) label (IDNA is not read here)";
            return NULL;
        }
    if (ends_in_number(d, dn)) {
        uint32_t a;
        if (ipv4_parse(d, dn, &a) < 0) {
            *why = "the host ends in a number but is no IPv4 address";
            return NULL;
        }
        return sg_xasprintf("%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    }
    return sg_xstrdup(d);
}

static int refuse(const char **why, const char *text)
{
    *why = text;
    return -EINVAL;
}

int sg_url_host(const char *url, size_t len, char **host_port, const char **why)
{
    *host_port = NULL;
    *why = NULL;
    if (len > SG_URL_MAX) {
        *why = "the URL is longer than this reader takes";
        return -E2BIG;
    }
    /* trim C0 controls and space at both ends; drop tab, LF, CR anywhere */
    size_t a = 0, z = len;
    while (a < z && is_c0_or_space((unsigned char)url[a]))
        a++;
    while (z > a && is_c0_or_space((unsigned char)url[z - 1]))
        z--;
    char s[SG_URL_MAX];
    size_t n = 0;
    for (size_t i = a; i < z; i++)
        if (url[i] != '\t' && url[i] != '\n' && url[i] != '\r')
            s[n++] = url[i];

    /* "scheme start state", "scheme state" */
    size_t p = 0;
    if (!n || !is_alpha((unsigned char)s[0]))
        return refuse(why, "the URL has no scheme (a relative URL)");
    while (p < n && (is_alpha((unsigned char)s[p]) || is_digit((unsigned char)s[p]) ||
                     s[p] == '+' || s[p] == '-' || s[p] == '.'))
        p++;
    if (p == n || s[p] != ':')
        return refuse(why, "the URL has no scheme (a relative URL)");
    unsigned port;
    if (p == 4 && !strncasecmp(s, "http", 4))
        port = 80;
    else if (p == 5 && !strncasecmp(s, "https", 5))
        port = 443;
    else
        return refuse(why, "only http and https URLs have a host read here");
    p++;

    /* "special authority slashes state", "... ignore slashes state": any
     * run of '/' and '\', even none */
    while (p < n && (s[p] == '/' || s[p] == '\\'))
        p++;

    /* "authority state": it ends at '/', '\', '?', '#'; the host starts
     * after its last '@' */
    size_t end = p;
    while (end < n && s[end] != '/' && s[end] != '\\' && s[end] != '?' && s[end] != '#')
        end++;
    for (size_t i = p; i < end; i++)
        if (s[i] == '@')
            p = i + 1;

    /* "host state": to the first ':' outside brackets */
    size_t hend = p;
    if (p < end && s[p] == '[') {
        while (hend < end && s[hend] != ']')
            hend++;
        if (hend == end)
            return refuse(why, "the host has a '[' without its ']'");
        hend++;
        if (hend < end && s[hend] != ':')
            return refuse(why, "the host goes on after its ']'");
    } else {
        while (hend < end && s[hend] != ':')
            hend++;
        for (size_t i = p; i < hend; i++)
            if (s[i] == '[' || s[i] == ']')
                return refuse(why, "the host holds a bracket");
    }
    if (hend == p)
        return refuse(why, "the URL has an empty host");

    /* "port state": digits or nothing; the scheme's default otherwise */
    if (hend < end) {
        unsigned long v = 0;
        bool any = false;
        for (size_t i = hend + 1; i < end; i++) {
            if (!is_digit((unsigned char)s[i]))
                return refuse(why, "the port is not a number");
            v = v * 10 + (unsigned)(s[i] - '0');
            if (v > 65535)
                return refuse(why, "the port is larger than 65535");
            any = true;
        }
        if (any)
            port = (unsigned)v;
    }

    char *host = host_parse(s + p, hend - p, why);
    if (!host)
        return -EINVAL;
    *host_port = sg_xasprintf("%s:%u", host, port);
    free(host);
    return 0;
}
