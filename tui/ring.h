/* Scrollback: a ring of lines bounded in count and in bytes, chosen up
 * front (STYLE 7). When either bound is reached the oldest lines go, and
 * what went is counted so the screen can say so. Lines are kept raw (any
 * bytes, as the skill wrote them) and sanitized only when drawn. */
#ifndef SG_TUI_RING_H
#define SG_TUI_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tui_line {
    char *text;
    uint32_t len;
    uint32_t dlen;     /* data's length (counted in the ring's bytes) */
    char *data;        /* an event's JSON data, NULL for output */
    uint16_t kind;     /* an sg_event_kind */
    uint8_t severity;
    int8_t how;        /* an sg_att_how (refused, asked, allowed), -1: no attempt */
    int64_t wall_ms;
    uint64_t seq;      /* position in the whole stream (0 is the first line ever) */
};

struct tui_ring {
    struct tui_line *v;
    size_t cap, head, n;      /* head: index of the oldest */
    size_t bytes, max_bytes;
    uint64_t total;           /* lines ever appended */
    uint64_t dropped_lines, dropped_bytes;
};

void tui_ring_init(struct tui_ring *r, size_t max_lines, size_t max_bytes);
void tui_ring_free(struct tui_ring *r);
void tui_ring_clear(struct tui_ring *r);
void tui_ring_push(struct tui_ring *r, const char *text, size_t len, int kind, int severity,
                   int64_t wall_ms);
/* The same with an event's data (JSON text, cut at the line cap) and what
 * it counts as (attempts.h's sg_attempts_how, -1: nothing). */
void tui_ring_push_data(struct tui_ring *r, const char *text, size_t len, const char *data,
                        size_t dlen, int kind, int severity, int how, int64_t wall_ms);
/* The i-th line kept (0 the oldest), NULL past the end. */
const struct tui_line *tui_ring_at(const struct tui_ring *r, size_t i);

#endif
