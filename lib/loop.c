#include "loop.h"

#include <errno.h>

int sg_loop_turn(const struct sg_loop_source *s, size_t n, int cap_ms)
{
    struct pollfd p[SG_LOOP_MAX_FDS];
    size_t first[SG_LOOP_MAX_SOURCES], count[SG_LOOP_MAX_SOURCES], used = 0;
    if (n > SG_LOOP_MAX_SOURCES)
        return -E2BIG;
    int timeout = cap_ms;
    for (size_t i = 0; i < n; i++) {
        first[i] = used;
        count[i] = s[i].pollfds ? s[i].pollfds(s[i].ctx, p + used, SG_LOOP_MAX_FDS - used) : 0;
        used += count[i];
        int t = s[i].timeout ? s[i].timeout(s[i].ctx) : -1;
        if (t >= 0 && (timeout < 0 || t < timeout))
            timeout = t;
    }
    int r = poll(p, (nfds_t)used, timeout);
    if (r < 0 && errno != EINTR)
        return -errno;
    if (r < 0)
        for (size_t k = 0; k < used; k++)
            p[k].revents = 0;
    for (size_t i = 0; i < n; i++)
        s[i].dispatch(s[i].ctx, p + first[i], count[i]);
    return 0;
}
