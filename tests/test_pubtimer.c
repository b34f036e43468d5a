/* The published ports' accept pause (egress/publish.c, dab8902): after
 * accept4 ran out of descriptors the listeners stay out of the poll set
 * until accept_after_ms. sg_pub_pollfds and sg_pub_timeout each read the
 * clock; when the pause ends between the two reads, the listeners were
 * left out and the timeout must still wake the loop to put them back, not
 * wait forever (no sock_diag scan to wake it otherwise). The clock is
 * this file's, so the boundary is hit exactly. */
#include <time.h>

static long long fake_ms;
static int fake_clock_gettime(clockid_t id, struct timespec *t)
{
    (void)id;
    t->tv_sec = fake_ms / 1000;
    t->tv_nsec = (fake_ms % 1000) * 1000000;
    return 0;
}
#define clock_gettime fake_clock_gettime
#include "../egress/publish.c"
#undef clock_gettime

#include "helpers.h"

static void the_listeners_come_back_when_the_pause_ends_between_reads(void **st)
{
    (void)st;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(lfd >= 0);
    struct sg_pub *p = sg_xcalloc(1, sizeof *p);
    p->sp = -1;
    p->diag = -1;
    p->host_diag = -1;
    p->next_scan_ms = -1; /* no sock_diag: nothing else wakes the loop */
    p->nports = 1;
    p->ports[0].lfd = lfd;
    p->accept_after_ms = 1000;
    struct pollfd pf[8];
    fake_ms = 999; /* the pause still on: the listener is left out */
    size_t n = sg_pub_pollfds(p, pf, 8);
    assert_int_equal(n, 0);
    fake_ms = 1000; /* the pause over before the timeout is asked */
    int t = sg_pub_timeout(p);
    assert_true(t >= 0); /* BREAK: -1, the listener never polled again */
    assert_true(t <= 1);
    fake_ms = 1000;
    assert_int_equal(sg_pub_pollfds(p, pf, 8), 1);
    close(lfd);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_listeners_come_back_when_the_pause_ends_between_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
