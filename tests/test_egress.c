/* The egress parsers: DNS queries and answers, the ClientHello SNI and the
 * HTTP Host sniffers, and the allowlist. */
#include "helpers.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "dns.h"
#include "egress.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dns_query_and_answer),
        cmocka_unit_test(dns_refuses_tricks),
        cmocka_unit_test(exfil_heuristic),
        cmocka_unit_test(sniff_tls_and_http),
        cmocka_unit_test(allowlist_matching),
    };
    return cmocka_run_group_tests_name("egress", tests, NULL, NULL);
}
