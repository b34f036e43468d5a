/* The NFLOG parser: real message shapes, and cut or lying lengths. */
#include "helpers.h"

#include <stdio.h>
#include <string.h>

#include "nflog.h"

struct got {
    struct sg_pkt p[4];
    int n;
};

static void sink(void *ctx, const struct sg_pkt *p)
{
    struct got *g = ctx;
    if (g->n < 4)
        g->p[g->n++] = *p;
}

static void parses_tcp4_and_udp6(void **st)
{
    (void)st;
    unsigned char buf[512];
    struct got g = {0};
    size_t n = th_read_seed("nflog-tcp4.bin", buf, sizeof buf);
    assert_int_equal(sg_nflog_parse(buf, n, sink, &g), 1);
    assert_int_equal(g.p[0].family, 4);
    assert_string_equal(sg_proto_name(g.p[0].proto), "TCP");
    assert_string_equal(g.p[0].dst, "203.0.113.7");
    assert_int_equal(g.p[0].dport, 443);
    n = th_read_seed("nflog-udp6.bin", buf, sizeof buf);
    assert_int_equal(sg_nflog_parse(buf, n, sink, &g), 1);
    assert_int_equal(g.p[1].family, 6);
    assert_string_equal(g.p[1].dst, "2001:db8::1");
    assert_int_equal(g.p[1].dport, 53);
}

static void cut_and_lying_lengths_are_safe(void **st)
{
    (void)st;
    unsigned char buf[512];
    size_t n = th_read_seed("nflog-tcp4.bin", buf, sizeof buf);
    for (size_t cut = 0; cut < n; cut++) {
        struct got g = {0};
        int found = sg_nflog_parse(buf, cut, sink, &g);
        /* a cut message is never half-parsed into a wrong port */
        assert_true(found == 0 || g.p[0].dport == 443 || g.p[0].dport == -1);
    }
    buf[0] = 0xff; /* nlmsg_len larger than the buffer */
    struct got g = {0};
    assert_int_equal(sg_nflog_parse(buf, n, sink, &g), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_tcp4_and_udp6),
        cmocka_unit_test(cut_and_lying_lengths_are_safe),
    };
    return cmocka_run_group_tests_name("nflog", tests, NULL, NULL);
}
