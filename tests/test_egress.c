/* The egress parsers: DNS queries and answers, the ClientHello SNI and the
 * HTTP Host sniffers, the plain-HTTP request checker (issue 14, item 3:
 * each way of fronting plain HTTP it refuses), and the allowlist. */
#include "helpers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/rtnetlink.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <string.h>

#include "dns.h"
#include "egress.h"
#include "otel.h"
#include "parse.h"
#include "publish.h"
#include "route.h"
#include "runopts.h"
#include "sniff.h"
#include "util.h"

static void dns_query_and_answer(void **st)
{
    (void)st;
    uint8_t q[512], out[512];
    size_t n = th_read_seed("dns-query-a.bin", q, sizeof q);
    struct sg_dns_query dq;
    assert_int_equal(sg_dns_parse_query(q, n, &dq), 0);
    assert_string_equal(dq.name, "api.weather.test");
    assert_int_equal(dq.qtype, SG_DNS_A);
    assert_int_equal(dq.id, 0x1234);
    uint8_t addr[4] = {198, 18, 0, 1};
    int len = sg_dns_build_answer(q, &dq, SG_RCODE_NOERROR, addr, 4, 5, out, sizeof out);
    assert_int_equal(len, (int)n + 16);
    assert_int_equal(out[0], 0x12);
    assert_int_equal(out[3] & 0xf, 0);
    assert_int_equal(out[7], 1); /* one answer */
    assert_memory_equal(out + len - 4, addr, 4);
    len = sg_dns_build_answer(q, &dq, SG_RCODE_NXDOMAIN, NULL, 0, 0, out, sizeof out);
    assert_int_equal(out[3] & 0xf, SG_RCODE_NXDOMAIN);
    assert_int_equal(sg_dns_build_answer(q, &dq, 0, addr, 4, 5, out, 20), -ENOBUFS);
}

static void dns_refuses_tricks(void **st)
{
    (void)st;
    uint8_t q[512];
    size_t n = th_read_seed("dns-query-a.bin", q, sizeof q);
    struct sg_dns_query dq;
    for (size_t cut = 0; cut < n; cut++)
        assert_int_equal(sg_dns_parse_query(q, cut, &dq), -EINVAL);
    uint8_t bad[512];
    memcpy(bad, q, n);
    bad[12] = 0xc0; /* a compression pointer in the question */
    assert_int_equal(sg_dns_parse_query(bad, n, &dq), -EINVAL);
    memcpy(bad, q, n);
    bad[2] |= 0x80; /* a response */
    assert_int_equal(sg_dns_parse_query(bad, n, &dq), -EINVAL);
    memcpy(bad, q, n);
    bad[14] = '.'; /* a dot inside a label would make the text name lie */
    assert_int_equal(sg_dns_parse_query(bad, n, &dq), -EINVAL);
    memcpy(bad, q, n);
    bad[5] = 2; /* two questions */
    assert_int_equal(sg_dns_parse_query(bad, n, &dq), -EINVAL);
}

static void exfil_heuristic(void **st)
{
    (void)st;
    assert_false(sg_dns_looks_like_exfil("api.weather.test"));
    assert_false(sg_dns_looks_like_exfil("www.googleapis.example.test"));
    assert_true(sg_dns_looks_like_exfil("pmrgk3twei5ca635fqqceztjnrsxgir2eb5x27i.exfil.attacker.test"));
    assert_true(sg_dns_looks_like_exfil("a8f3k2m9x7q1z5w4e6r0t.attacker.test"));
}

static void sniff_tls_and_http(void **st)
{
    (void)st;
    uint8_t b[4096];
    char name[256];
    size_t n = th_read_seed("clienthello-sni.bin", b, sizeof b);
    assert_int_equal(sg_sniff_name(b, n, name, sizeof name), SG_SNIFF_TLS);
    assert_string_equal(name, "api.weather.test");
    /* a hello cut short is not a verdict yet, never a wrong name */
    for (size_t cut = 1; cut < n; cut += 7) {
        enum sg_sniff s = sg_sniff_name(b, cut, name, sizeof name);
        assert_true(s == SG_SNIFF_NEED_MORE);
    }
    n = th_read_seed("http-host.txt", b, sizeof b);
    assert_int_equal(sg_sniff_name(b, n, name, sizeof name), SG_SNIFF_HTTP);
    assert_string_equal(name, "api.weather.test");
    assert_int_equal(sg_sniff_name(b, 10, name, sizeof name), SG_SNIFF_NEED_MORE);
    const char *two = "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n";
    assert_int_equal(sg_sniff_name((const uint8_t *)two, strlen(two), name, sizeof name),
                     SG_SNIFF_HTTP);
    assert_string_equal(name, ""); /* two Host headers: no name to trust */
    const char *ssh = "SSH-2.0-OpenSSH_9.2\r\n";
    assert_int_equal(sg_sniff_name((const uint8_t *)ssh, strlen(ssh), name, sizeof name),
                     SG_SNIFF_OTHER);
}

/* The seed hello's handshake split over two records at cut. */
static size_t split_hello(const uint8_t *rec, size_t n, size_t cut, uint8_t *out)
{
    size_t hs = n - 5;
    memcpy(out, rec, 3);
    out[3] = (uint8_t)(cut >> 8), out[4] = (uint8_t)cut;
    memcpy(out + 5, rec + 5, cut);
    memcpy(out + 5 + cut, rec, 3);
    out[8 + cut] = (uint8_t)((hs - cut) >> 8), out[9 + cut] = (uint8_t)(hs - cut);
    memcpy(out + 10 + cut, rec + 5 + cut, hs - cut);
    return n + 5;
}

static void sniff_tls_split_and_padded(void **st)
{
    (void)st;
    uint8_t b[4096], two[4096 + 5];
    char name[256];
    size_t n = th_read_seed("clienthello-sni.bin", b, sizeof b);
    /* a hello over two records is read whole, wherever it is cut */
    for (size_t cut = 1; cut < n - 5; cut += 5) {
        size_t m = split_hello(b, n, cut, two);
        assert_int_equal(sg_sniff_name(two, m, name, sizeof name), SG_SNIFF_TLS);
        assert_string_equal(name, "api.weather.test");
        for (size_t part = 1; part < m; part += 11)
            assert_int_equal(sg_sniff_name(two, part, name, sizeof name), SG_SNIFF_NEED_MORE);
    }
    /* and its SNI is the one checked: a split no longer hides it */
    uint8_t evil[4096];
    memcpy(evil, b, n);
    uint8_t *at = memmem(evil, n, "api.weather.test", 16);
    assert_non_null(at);
    memcpy(at, "evl", 3);
    size_t m = split_hello(evil, n, (size_t)(at - evil) - 5 + 2, two); /* inside the name */
    assert_int_equal(sg_sniff_name(two, m, name, sizeof name), SG_SNIFF_TLS);
    assert_string_equal(name, "evl.weather.test");
    /* a hello longer than the proxy reads is refused, not relayed unread */
    static uint8_t big[SG_SNIFF_MAX + 64];
    memset(big, 0, sizeof big);
    const uint8_t hdr[] = {0x16, 3, 1, 0x00, 0x04, 1, 0x00, 0x50, 0x00}; /* 20 KiB announced */
    assert_int_equal(sg_sniff_name(hdr, sizeof hdr, name, sizeof name), SG_SNIFF_TLS_BAD);
    const uint8_t full[] = {0x16, 3, 1, 0x40, 0x00}; /* one full record, then more to come */
    memcpy(big, full, sizeof full);
    big[5] = 1, big[6] = 0, big[7] = 0x3f, big[8] = 0xfc;
    assert_int_equal(sg_sniff_name(big, sizeof big, name, sizeof name), SG_SNIFF_TLS_BAD);
    /* another record before the hello is whole */
    m = split_hello(b, n, 40, two);
    two[5 + 40] = 0x17;
    assert_int_equal(sg_sniff_name(two, m, name, sizeof name), SG_SNIFF_TLS_BAD);
    /* 0x16 not followed by a TLS version is not TLS at all */
    const uint8_t notls[] = {0x16, 0x00, 0x00, 0x00, 0xd4, 0x07};
    assert_int_equal(sg_sniff_kind(notls, sizeof notls), SG_SNIFF_OTHER);
}

/* Feed a whole stream to the plain-HTTP checker, one step at a time, as the
 * proxy does; returns the last verdict, *cleared how much went up. */
static enum sg_http_verdict feed(const char *s, const char *name, int port, size_t *cleared,
                                 char *why, size_t whymax)
{
    struct sg_http h = {0};
    size_t len = strlen(s), at = 0;
    enum sg_http_verdict v = SG_HTTP_MORE;
    why[0] = '\0';
    for (int steps = 0; steps < 10000 && at < len; steps++) {
        size_t used = 0;
        v = sg_http_check(&h, (const uint8_t *)s + at, len - at, name, port, &used, why, whymax);
        if (v != SG_HTTP_PASS)
            break;
        assert_true(used > 0 && used <= len - at);
        at += used;
    }
    *cleared = at;
    return v;
}

/* The same stream fed a byte at a time into a growing buffer: the verdict
 * and what went up must not depend on how the bytes arrived. */
static enum sg_http_verdict feed_bytewise(const char *s, const char *name, int port,
                                          size_t *cleared)
{
    struct sg_http h = {0};
    size_t len = strlen(s), at = 0;
    char why[640];
    enum sg_http_verdict v = SG_HTTP_MORE;
    for (size_t have = 1; have <= len; have++) {
        for (int steps = 0; steps < 10000 && at < have; steps++) {
            size_t used = 0;
            v = sg_http_check(&h, (const uint8_t *)s + at, have - at, name, port, &used, why,
                              sizeof why);
            if (v != SG_HTTP_PASS)
                break;
            at += used;
        }
        if (v == SG_HTTP_REFUSE)
            break;
    }
    *cleared = at;
    return v;
}

#define NAME "api.weather.test"
#define OK_HEAD "GET /v1 HTTP/1.1\r\nHost: api.weather.test\r\n\r\n"

/* Each vector is refused, for the reason given, and nothing of the request
 * that carries it is cleared to go up. */
static void refused(const char *stream, size_t cleared_before, const char *reason)
{
    size_t cleared = 0, cleared2 = 0;
    char why[640];
    enum sg_http_verdict v = feed(stream, NAME, 80, &cleared, why, sizeof why);
    if (v != SG_HTTP_REFUSE || !strstr(why, reason) || cleared != cleared_before) {
        print_error("stream: %s\nverdict %d, cleared %zu (wanted %zu), why: %s\nwanted: %s\n",
                    stream, v, cleared, cleared_before, why, reason);
        fail();
    }
    assert_int_equal(feed_bytewise(stream, NAME, 80, &cleared2), SG_HTTP_REFUSE);
    assert_int_equal(cleared2, cleared_before);
}

static void passes(const char *stream)
{
    size_t cleared = 0, cleared2 = 0;
    char why[640];
    enum sg_http_verdict v = feed(stream, NAME, 80, &cleared, why, sizeof why);
    if (v != SG_HTTP_PASS || cleared != strlen(stream)) {
        print_error("stream: %s\nverdict %d, cleared %zu of %zu, why: %s\n", stream, v, cleared,
                    strlen(stream), why);
        fail();
    }
    assert_int_equal(feed_bytewise(stream, NAME, 80, &cleared2), SG_HTTP_PASS);
    assert_int_equal(cleared2, strlen(stream));
}

static void http_fronting_vectors_are_refused(void **st)
{
    (void)st;
    /* the vectors of issue 14, item 3 */
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nHost: evil.test\r\n\r\n", 0,
            "two Host headers");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nHost: api.weather.test\r\n\r\n", 0,
            "two Host headers");
    refused("GET / HTTP/1.1\r\nHost : evil.test\r\n\r\n", 0,
            "whitespace between the header name Host and its colon");
    refused("GET / HTTP/1.1\r\nHost\t: evil.test\r\n\r\n", 0, "whitespace between");
    refused("GET http://evil.test/ HTTP/1.1\r\nHost: api.weather.test\r\n\r\n", 0,
            "absolute-form request target (http://evil.test/)");
    refused("GET http://api.weather.test/ HTTP/1.1\r\nHost: api.weather.test\r\n\r\n", 0,
            "absolute-form"); /* refused whatever it names: only a proxy takes one */
    refused(OK_HEAD "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", strlen(OK_HEAD),
            "request 2 on this connection: the HTTP Host header names evil.test, but the "
            "address was issued for api.weather.test (domain fronting)");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nX-Forwarded-Host: evil.test\r\n\r\n", 0,
            "the X-Forwarded-Host header names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nx-host: evil.test\r\n\r\n", 0,
            "the x-host header names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nX-Original-Host: evil.test\r\n\r\n", 0,
            "X-Original-Host header names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\n"
            "X-Forwarded-Host: api.weather.test, evil.test\r\n\r\n",
            0, "names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\n"
            "Forwarded: for=192.0.2.1;host=evil.test;proto=http\r\n\r\n",
            0, "the Forwarded header names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\n"
            "Forwarded: for=192.0.2.1, for=\"[2001:db8::1]\";Host=\"evil.test:80\"\r\n\r\n",
            0, "the Forwarded header names evil.test");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nX-Original-URL: http://evil.test/\r\n\r\n",
            0, "names a URL of its own");
    /* what else is ambiguous */
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\n X-Folded: evil.test\r\n\r\n", 0,
            "folded header line");
    refused("GET / HTTP/1.1\r\nX-A: b\r\n\r\n", 0, "HTTP/1.1 request without a Host header");
    refused("GET / HTTP/1.1\nHost: evil.test\n\n", 0, "bare CR or LF");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\rX: y\r\n\r\n", 0, "bare CR or LF");
    refused("\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", 0, "bare CR or LF");
    refused("GET / HTTP/1.1 x\r\nHost: api.weather.test\r\n\r\n", 0, "not an HTTP/1.x");
    refused("GET  / HTTP/1.1\r\nHost: api.weather.test\r\n\r\n", 0, "not an HTTP/1.x");
    refused("GET /\r\n\r\n", 0, "not an HTTP/1.x");
    refused("GET / HTTP/1.2\r\nHost: api.weather.test\r\n\r\n", 0, "HTTP/1.2 in clear text");
    refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, "HTTP/2.0 in clear text");
    refused("CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", 0, "CONNECT");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\n\r\n",
            0, "an Upgrade to websocket");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nUpgrade: h2c\r\n\r\n", 0, "Upgrade");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test:81\r\n\r\n", 0,
            "names port 81, but the connection is to port 80");
    refused("GET / HTTP/1.1\r\nHost: evil.test@api.weather.test\r\n\r\n", 0,
            "malformed Host header");
    refused("GET / HTTP/1.1\r\nHost:\r\n\r\n", 0, "malformed Host header");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nX-A: a\x01b\r\n\r\n", 0,
            "control character");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nno colon here\r\n\r\n", 0,
            "malformed header line");
    /* framing: bodies are skipped exactly as the upstream will skip them */
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5\r\n"
            "Transfer-Encoding: chunked\r\n\r\n",
            0, "both Content-Length and Transfer-Encoding");
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5\r\n"
            "Content-Length: 5\r\n\r\n",
            0, "two Content-Length");
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: +5\r\n\r\n", 0,
            "malformed Content-Length");
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5, 5\r\n\r\n", 0,
            "malformed Content-Length");
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            0, "other than chunked");
    refused("POST / HTTP/1.1\r\nHost: api.weather.test\r\nTransfer-Encoding: chunked\r\n"
            "Transfer-Encoding: chunked\r\n\r\n",
            0, "two Transfer-Encoding");
    refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "HTTP/1.0");
    refused("GET / HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 40\r\n\r\n", 0,
            "a body on a GET");
#define POST5 "POST /a HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5\r\n\r\n"
    refused(POST5 "helloGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", strlen(POST5 "hello"),
            "request 2 on this connection: the HTTP Host header names evil.test");
#define CHUNKED "POST /c HTTP/1.1\r\nHost: api.weather.test\r\nTransfer-Encoding: chunked\r\n\r\n"
    refused(CHUNKED "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
            strlen(CHUNKED "5\r\nhello\r\n0\r\n\r\n"), "request 2 on this connection");
    refused(CHUNKED "5\r\nhello world\r\n", strlen(CHUNKED "5\r\nhello"),
            "a chunk longer than its size");
    refused(CHUNKED "5x\r\nhello\r\n", strlen(CHUNKED), "malformed chunk size");
    refused(CHUNKED "ffffffffffffffffff\r\n", strlen(CHUNKED), "chunk size too large");
    refused(CHUNKED "0\r\nHost: evil.test\r\n\r\n", strlen(CHUNKED "0\r\n"), "trailer fields");
    /* a head too big to check is refused, never relayed unchecked */
    static char big[SG_SNIFF_MAX + 200];
    int n = snprintf(big, sizeof big, "GET / HTTP/1.1\r\nX-Pad: ");
    memset(big + n, 'a', sizeof big - (size_t)n - 1);
    big[sizeof big - 1] = '\0';
    refused(big, 0, "a request head over 16384 bytes");

    /* what honest clients send still goes through */
    passes(OK_HEAD);
    passes(OK_HEAD OK_HEAD OK_HEAD); /* keep-alive, pipelined */
    passes("GET /v1?q=Oslo HTTP/1.1\r\nHost: API.Weather.Test.\r\nUser-Agent: x\r\n"
           "Accept: */*\r\nX-Forwarded-Host: api.weather.test\r\n"
           "Forwarded: for=192.0.2.1;proto=http;host=\"api.weather.test:80\"\r\n\r\n");
    passes("GET / HTTP/1.1\r\nHost: api.weather.test:80\r\n\r\n");
    passes("GET /raw HTTP/1.0\r\n\r\n"); /* HTTP/1.0 may leave Host out */
    passes("\r\n" OK_HEAD); /* an empty line before a request is skipped by servers */
    passes("OPTIONS * HTTP/1.1\r\nHost: api.weather.test\r\n\r\n");
    passes(POST5 "hello" OK_HEAD);
    /* a body is the upstream's body: what it looks like does not matter */
    passes("POST /a HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 35\r\n\r\n"
           "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n" OK_HEAD);
    passes(CHUNKED "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\n\r\n" OK_HEAD);
    passes("POST /a HTTP/1.1\r\nHost: api.weather.test\r\nContent-Length: 5\r\n"
           "Expect: 100-continue\r\n\r\nhello");
    /* an IPv6 literal the manifest names, written another way in Host */
    size_t cleared;
    char why[640];
    assert_int_equal(feed("GET / HTTP/1.1\r\nHost: [2001:DB8:0::1]:8080\r\n\r\n", "2001:db8::1",
                          8080, &cleared, why, sizeof why),
                     SG_HTTP_PASS);
}

static void sniff_kinds(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        enum sg_sniff k;
    } v[] = {
        {"GET / HTTP/1.1\r\n", SG_SNIFF_HTTP},
        {"GE", SG_SNIFF_NEED_MORE},
        {"GET /", SG_SNIFF_NEED_MORE},
        {"FOO / HTTP/1.1\r\n", SG_SNIFF_HTTP},  /* an unknown method still says HTTP/ */
        {"get / http/1.1\r\n", SG_SNIFF_HTTP},  /* and is then refused as not HTTP/1.x */
        {"\r\nGET / HTTP/1.1\r\n", SG_SNIFF_HTTP},
        {" GET / HTTP/1.1\r\n", SG_SNIFF_HTTP}, /* Python's http.server skips blanks */
        {"GET /\r\n", SG_SNIFF_HTTP},          /* HTTP/0.9: refused by the checker */
        {"EHLO mail.test\r\n", SG_SNIFF_OTHER},
        {"PING\r\n", SG_SNIFF_OTHER},
        {"SSH-2.0-OpenSSH_9.2\r\n", SG_SNIFF_OTHER},
        {"*1\r\n$4\r\nPING\r\n", SG_SNIFF_OTHER},
        {"\x16\x03\x01", SG_SNIFF_TLS},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        enum sg_sniff k = sg_sniff_kind((const uint8_t *)v[i].s, strlen(v[i].s));
        if (k != v[i].k) {
            print_error("%s: %d, wanted %d\n", v[i].s, k, v[i].k);
            fail();
        }
    }
    /* a first token padded to the cap is HTTP (then refused), never OTHER */
    static uint8_t pad[SG_SNIFF_MAX];
    memset(pad, 'A', sizeof pad);
    assert_int_equal(sg_sniff_kind(pad, sizeof pad), SG_SNIFF_HTTP);
    assert_true(sg_sniff_nameless_prefix((const uint8_t *)"PO", 2));
    assert_false(sg_sniff_nameless_prefix((const uint8_t *)"POST ", 5));
}

static void allowlist_matching(void **st)
{
    (void)st;
    struct sg_plan_egress rules[2] = {
        {.domain = "api.example.test", .ports = {443}, .nports = 1},
        {.domain = "*.cdn.example.test", .wildcard = true, .ports = {80, 443}, .nports = 2},
    };
    struct sg_plan p = {.egress = rules, .negress = 2};
    assert_true(sg_egress_allowed(&p, "api.example.test", 443));
    assert_false(sg_egress_allowed(&p, "api.example.test", 80));
    assert_true(sg_egress_allowed(&p, "api.example.test", 0));
    assert_true(sg_egress_allowed(&p, "a.cdn.example.test", 80));
    assert_true(sg_egress_allowed(&p, "x.y.cdn.example.test", 443));
    assert_false(sg_egress_allowed(&p, "cdn.example.test", 443)); /* *. needs a label */
    assert_false(sg_egress_allowed(&p, "evilcdn.example.test", 443));
    assert_false(sg_egress_allowed(&p, "api.example.test.attacker.test", 443));
}

/* Upstreams no declaration reaches (sg_addr_private): the proxy and
 * validate ask the same function. */
static void private_upstreams(void **st)
{
    (void)st;
    static const char *const refused[] = {"127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1",
                                          "172.31.255.255", "192.168.1.1", "169.254.169.254",
                                          "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::",
                                          "fe80::1", "fd00::1", "ff02::1", "::ffff:127.0.0.1",
                                          "::ffff:169.254.169.254"};
    static const char *const allowed[] = {"192.0.2.1", "198.51.100.7", "203.0.113.9",
                                          "172.32.0.1", "2001:db8::1", "::ffff:192.0.2.1",
                                          "api.example.test"};
    for (size_t i = 0; i < SG_ARRAY_LEN(refused); i++)
        if (!sg_addr_private(refused[i]))
            fail_msg("%s is not refused", refused[i]);
    for (size_t i = 0; i < SG_ARRAY_LEN(allowed); i++)
        if (sg_addr_private(allowed[i]))
            fail_msg("%s is refused", allowed[i]);
}

/* The kernel's word on where an upstream goes (route.h): every address of
 * this machine's interfaces, loopback's whole 127/8 and a v4-mapped one
 * stay here; a documentation address does not (it has a route out, or no
 * route at all); without a socket there is no answer, never a guess. */
static int route_of(struct sg_route *r, const char *text)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &s4->sin_addr) == 1)
        s4->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1)
        s6->sin6_family = AF_INET6;
    else
        fail_msg("%s is no address", text);
    return sg_route_type(r, (struct sockaddr *)&ss);
}

static void routes_say_what_stays_here(void **st)
{
    (void)st;
    struct sg_route r;
    assert_int_equal(sg_route_open(&r), 0);
    static const char *const here[] = {"127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1"};
    for (size_t i = 0; i < SG_ARRAY_LEN(here); i++) {
        int t = route_of(&r, here[i]);
        if (t != RTN_LOCAL)
            fail_msg("%s: route type %d, not local", here[i], t);
    }
    struct ifaddrs *ifs = NULL;
    assert_int_equal(getifaddrs(&ifs), 0);
    int seen = 0;
    bool doc_is_mine = false; /* this machine may hold a documentation address */
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
                             i->ifa_addr->sa_family != AF_INET6))
            continue;
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)i->ifa_addr;
        if (i->ifa_addr->sa_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr))
            continue; /* the proxy refuses those by their range (fe80::/10) */
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)i->ifa_addr;
        doc_is_mine |= i->ifa_addr->sa_family == AF_INET &&
                       (ntohl(a4->sin_addr.s_addr) >> 8) == ((198u << 16) | (51u << 8) | 100u);
        doc_is_mine |= i->ifa_addr->sa_family == AF_INET6 &&
                       !memcmp(a6->sin6_addr.s6_addr, "\x20\x01\x0d\xb8", 4);
        int t = sg_route_type(&r, i->ifa_addr);
        if (!sg_route_stays_here(t))
            fail_msg("%s's address: route type %d", i->ifa_name, t);
        seen++;
    }
    freeifaddrs(ifs);
    assert_true(seen >= 1); /* 127.0.0.1 on lo at least */
    if (!doc_is_mine) {
        int t = route_of(&r, "198.51.100.77");
        assert_true(t < 0 || t == RTN_UNICAST);
        t = route_of(&r, "2001:db8::77");
        assert_true(t < 0 || t == RTN_UNICAST);
    }
    assert_true(sg_route_stays_here(RTN_LOCAL) && sg_route_stays_here(RTN_BROADCAST) &&
                sg_route_stays_here(RTN_ANYCAST) && sg_route_stays_here(RTN_MULTICAST));
    assert_false(sg_route_stays_here(RTN_UNICAST));
    sg_route_close(&r);
    assert_int_equal(route_of(&r, "127.0.0.1"), -EBADF);
}

/* A query for name (type qtype), built by hand. */
static size_t make_query(const char *name, uint16_t qtype, uint8_t *q, size_t max)
{
    size_t n = 12;
    memset(q, 0, 12);
    q[0] = 0xab, q[1] = 0xcd, q[2] = 0x01, q[5] = 1;
    for (const char *s = name; *s;) {
        const char *e = strchr(s, '.');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        assert_true(n + 1 + l + 5 < max);
        q[n++] = (uint8_t)l;
        memcpy(q + n, s, l);
        n += l;
        s = e ? e + 1 : s + l;
    }
    q[n++] = 0;
    q[n++] = (uint8_t)(qtype >> 8), q[n++] = (uint8_t)qtype;
    q[n++] = 0, q[n++] = 1;
    return n;
}

static void dns_ptr_and_loopback_reverse(void **st)
{
    (void)st;
    uint8_t q[512], out[512];
    const char *v6 = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa";
    size_t n = make_query("1.0.0.127.in-addr.arpa", SG_DNS_PTR, q, sizeof q);
    struct sg_dns_query dq;
    assert_int_equal(sg_dns_parse_query(q, n, &dq), 0);
    assert_true(sg_dns_loopback_reverse(dq.name));
    int len = sg_dns_build_ptr(q, &dq, "localhost", 5, out, sizeof out);
    /* the question, then name pointer, type, class, ttl, rdlength, "\9localhost\0" */
    assert_int_equal(len, (int)n + 12 + 11);
    assert_int_equal(out[7], 1);
    assert_int_equal(out[n + 3], SG_DNS_PTR);
    assert_memory_equal(out + n + 12, "\x09localhost\x00", 11);
    assert_int_equal(sg_dns_build_ptr(q, &dq, "localhost", 5, out, n + 12), -ENOBUFS);
    assert_int_equal(sg_dns_build_ptr(q, &dq, "a..b", 5, out, sizeof out), -EINVAL);
    assert_true(sg_dns_loopback_reverse("9.8.7.127.in-addr.arpa"));
    assert_true(sg_dns_loopback_reverse(v6));
    assert_false(sg_dns_loopback_reverse("1.0.0.10.in-addr.arpa"));
    assert_false(sg_dns_loopback_reverse("1.0.127.in-addr.arpa"));
    assert_false(sg_dns_loopback_reverse("x.0.0.127.in-addr.arpa"));
    assert_false(sg_dns_loopback_reverse("2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa"));
}

/* One sock_diag message for a socket of port (host order) in state st. */
static size_t diag_msg(uint8_t *out, uint32_t seq, uint16_t type, uint16_t port, uint8_t st)
{
    struct nlmsghdr *h = (struct nlmsghdr *)out;
    memset(out, 0, NLMSG_SPACE(sizeof(struct inet_diag_msg)));
    h->nlmsg_len = NLMSG_LENGTH(sizeof(struct inet_diag_msg));
    h->nlmsg_type = type;
    h->nlmsg_seq = seq;
    struct inet_diag_msg *m = NLMSG_DATA(h);
    m->idiag_family = AF_INET;
    m->idiag_state = st;
    m->id.idiag_sport = htons(port);
    return NLMSG_SPACE(sizeof(struct inet_diag_msg));
}

static void published_ports_come_from_sock_diag(void **st)
{
    (void)st;
    uint8_t buf[4096];
    size_t len = 0;
    len += diag_msg(buf + len, 7, SOCK_DIAG_BY_FAMILY, 8000, 10);
    len += diag_msg(buf + len, 7, SOCK_DIAG_BY_FAMILY, 8000, 10); /* v4 and v6 of one port */
    len += diag_msg(buf + len, 7, SOCK_DIAG_BY_FAMILY, 9000, 1);  /* established: not a listener */
    len += diag_msg(buf + len, 6, SOCK_DIAG_BY_FAMILY, 7000, 10); /* an older dump's */
    len += diag_msg(buf + len, 7, SOCK_DIAG_BY_FAMILY, 8080, 10);
    uint16_t ports[4];
    size_t n = 0;
    assert_int_equal(sg_pub_parse_diag(buf, len, 7, ports, 4, &n), 0); /* no DONE yet */
    assert_int_equal(n, 2);
    assert_int_equal(ports[0], 8000);
    assert_int_equal(ports[1], 8080);
    len = diag_msg(buf, 7, SOCK_DIAG_BY_FAMILY, 8443, 10);
    len += diag_msg(buf + len, 7, NLMSG_DONE, 0, 0);
    len += diag_msg(buf + len, 7, SOCK_DIAG_BY_FAMILY, 9999, 10); /* after DONE */
    assert_int_equal(sg_pub_parse_diag(buf, len, 7, ports, 4, &n), 1);
    assert_int_equal(n, 3);
    assert_int_equal(ports[2], 8443);
    n = 0;
    assert_int_equal(sg_pub_parse_diag(buf, len, 7, ports, 0, &n), 1); /* capped */
    assert_int_equal(n, 0);
    assert_int_equal(sg_pub_parse_diag(buf, 7, 7, ports, 4, &n), 0); /* a cut message */
    assert_int_equal(n, 0);
}

/* Who owns a client socket: the one answer of an exact lookup, of this
 * lookup (seq), or nothing (an error: the socket is gone already). */
static void a_client_sockets_owner_comes_from_sock_diag(void **st)
{
    (void)st;
    uint8_t buf[4096];
    size_t len = diag_msg(buf, 3, SOCK_DIAG_BY_FAMILY, 40000, 1); /* an older lookup's */
    size_t at = len;
    len += diag_msg(buf + len, 4, SOCK_DIAG_BY_FAMILY, 40001, 1);
    struct inet_diag_msg *m = NLMSG_DATA((struct nlmsghdr *)(buf + at));
    m->idiag_uid = 4242;
    m->idiag_inode = 77;
    m->id.idiag_dport = htons(8000);
    m->id.idiag_src[0] = m->id.idiag_dst[0] = htonl(0x7f000001);
    struct inet_diag_sockid want = m->id;
    uint32_t uid = 0;
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 1);
    assert_int_equal(uid, 4242);
    assert_int_equal(sg_pub_parse_owner(buf, len, 5, &want, &uid), 0); /* none of this lookup */
    /* a socket its process closed already: uid 0, no inode, TIME_WAIT */
    m->idiag_uid = 0;
    m->idiag_inode = 0;
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    m->idiag_inode = 77;
    m->idiag_state = 6;
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    /* the kernel's fallback: a listener on the client's address and port */
    m->idiag_state = 10;
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    m->idiag_state = 1;
    m->id.idiag_dport = 0;
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    /* a dual-stack client: an IPv6 socket, its addresses v4-mapped */
    m->id.idiag_dport = htons(8000);
    m->idiag_family = AF_INET6;
    m->idiag_uid = 1000;
    memset(m->id.idiag_src, 0, sizeof m->id.idiag_src);
    memset(m->id.idiag_dst, 0, sizeof m->id.idiag_dst);
    m->id.idiag_src[2] = m->id.idiag_dst[2] = htonl(0xffff);
    m->id.idiag_src[3] = m->id.idiag_dst[3] = htonl(0x7f000001);
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 1);
    assert_int_equal(uid, 1000);
    m->id.idiag_src[2] = 0; /* not v4-mapped: another address */
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    len = diag_msg(buf, 4, NLMSG_ERROR, 0, 0);
    assert_int_equal(sg_pub_parse_owner(buf, len, 4, &want, &uid), 0);
    assert_int_equal(sg_pub_parse_owner(buf, 7, 4, &want, &uid), 0); /* a cut message */
}

/* Issue 50: --publish [HOSTPORT:]PORT, and the ports skillgate's own
 * settings point at, which no published port takes on this machine. */
static void published_host_ports_are_the_persons_never_skillgates(void **st)
{
    (void)st;
    struct sg_publish p;
    assert_int_equal(sg_runopts_publish_one("8080", &p), 0);
    assert_int_equal(p.port, 8080);
    assert_int_equal(p.host, 0); /* the kernel picks */
    assert_int_equal(sg_runopts_publish_one("41000:3117", &p), 0);
    assert_int_equal(p.port, 3117);
    assert_int_equal(p.host, 41000);
    static const char *const bad[] = {"", "80", "8080:80", "80:8080", "0", "65536", "x",
                                      ":8080", "8080:", "1:2:3", "127.0.0.1:8080:3117",
                                      "8080 ", "-8080", "100000:8080"};
    for (size_t i = 0; i < SG_ARRAY_LEN(bad); i++)
        assert_int_equal(sg_runopts_publish_one(bad[i], &p), -EINVAL);
    const char *twice[] = {"8080", "9000:8080"}, *hosts[] = {"9000:8080", "9000:3117"};
    struct sg_run_request rq = {.publish = twice, .npublish = 2};
    struct sg_publish out[SG_MAX_PORTS];
    size_t n;
    const char *why = NULL;
    assert_int_equal(sg_runopts_publish(&rq, out, SG_MAX_PORTS, &n, &why), -EINVAL);
    assert_non_null(strstr(why, "port 8080 is given twice"));
    rq.publish = hosts;
    assert_int_equal(sg_runopts_publish(&rq, out, SG_MAX_PORTS, &n, &why), -EINVAL);
    assert_non_null(strstr(why, "port 9000 is given twice"));
    rq.npublish = 1;
    assert_int_equal(sg_runopts_publish(&rq, out, SG_MAX_PORTS, &n, &why), 0);
    assert_int_equal(n, 1);

    struct sg_own_ports *own = sg_xcalloc(1, sizeof *own);
    char *words[] = {"/usr/bin/python3", "/opt/ask-service.py", "http://127.0.0.1:8787/decide",
                     "--port=9123", "--retries", "3", "--big", "99999", NULL};
    sg_runopts_prompt_ports(words, own);
    assert_int_equal(sg_own_ports_which(own, 8787), SG_OWN_PROMPT);
    assert_int_equal(sg_own_ports_which(own, 9123), SG_OWN_PROMPT);
    assert_int_equal(sg_own_ports_which(own, 3), SG_OWN_PROMPT);
    assert_int_equal(sg_own_ports_which(own, 8788), -1);
    assert_int_equal(sg_own_ports_which(own, 34463), -1); /* 99999 is no port */
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:pw@localhost:4318", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://[::1]/v1/traces", 1);
    struct sg_config cfg = {0};
    char *k = "OTEL_EXPORTER_OTLP_ENDPOINT", *v = "http://collector.test:14318/x:1";
    cfg.otel_keys[0] = k;
    cfg.otel_vals[0] = v;
    cfg.notel = 1;
    sg_otel_own_ports(&cfg, own);
    assert_int_equal(sg_own_ports_which(own, 4318), SG_OWN_OTEL);
    assert_int_equal(sg_own_ports_which(own, 443), SG_OWN_OTEL); /* https, no port */
    assert_int_equal(sg_own_ports_which(own, 14318), SG_OWN_OTEL); /* config.yaml's too */
    assert_int_equal(sg_own_ports_which(own, 80), -1); /* no setting names it */
    unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    unsetenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    free(own);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(private_upstreams),
        cmocka_unit_test(routes_say_what_stays_here),
        cmocka_unit_test(dns_query_and_answer),
        cmocka_unit_test(dns_refuses_tricks),
        cmocka_unit_test(exfil_heuristic),
        cmocka_unit_test(sniff_tls_and_http),
        cmocka_unit_test(sniff_kinds),
        cmocka_unit_test(sniff_tls_split_and_padded),
        cmocka_unit_test(http_fronting_vectors_are_refused),
        cmocka_unit_test(allowlist_matching),
        cmocka_unit_test(dns_ptr_and_loopback_reverse),
        cmocka_unit_test(published_ports_come_from_sock_diag),
        cmocka_unit_test(a_client_sockets_owner_comes_from_sock_diag),
        cmocka_unit_test(published_host_ports_are_the_persons_never_skillgates),
    };
    return cmocka_run_group_tests_name("egress", tests, NULL, NULL);
}
