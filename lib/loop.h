/* The run's event loop: a table of poll sources and one poll().
 *
 * A source is one part of the broker that waits on something: the fds it
 * wants polled now (pollfds), what it does with poll's answer (dispatch,
 * called every turn with its own slice of the array, in table order, even
 * when nothing of its is ready, so it can look at its deadlines), and when
 * it next wants a turn without any fd (timeout, ms; -1 none). Adding a
 * source is a file and a table entry, never a new index variable in the
 * session (STYLE 9; libuv's handles, systemd's sd-event sources). */
#ifndef SG_LOOP_H
#define SG_LOOP_H

#include <poll.h>
#include <stddef.h>

struct sg_loop_source {
    const char *name;
    size_t (*pollfds)(void *ctx, struct pollfd *out, size_t max); /* NULL: none */
    void (*dispatch)(void *ctx, const struct pollfd *p, size_t n);
    int (*timeout)(void *ctx); /* NULL: none */
    void *ctx;
};

/* fds one turn may poll, all sources together, and sources in a table */
#define SG_LOOP_MAX_FDS 1024
#define SG_LOOP_MAX_SOURCES 32

/* One turn: every source's fds in one poll(), waiting at most for the
 * nearest source timeout (and cap_ms when >= 0), then every source's
 * dispatch in table order. 0, or -errno of poll (EINTR is 0: a signal
 * only ends the wait early). */
int sg_loop_turn(const struct sg_loop_source *s, size_t n, int cap_ms);

#endif
