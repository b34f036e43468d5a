#include "ring.h"

#include <string.h>

#include "util.h"

#define LINE_MAX_KEPT 4096 /* longer lines are cut; the trace has them whole */

void tui_ring_init(struct tui_ring *r, size_t max_lines, size_t max_bytes)
{
    memset(r, 0, sizeof *r);
    r->cap = max_lines;
    r->max_bytes = max_bytes;
    r->v = sg_xcalloc(max_lines, sizeof *r->v);
}

void tui_ring_clear(struct tui_ring *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[(r->head + i) % r->cap].text);
        free(r->v[(r->head + i) % r->cap].data);
    }
    r->head = r->n = r->bytes = 0;
    r->total = r->dropped_lines = r->dropped_bytes = 0;
}

void tui_ring_free(struct tui_ring *r)
{
    if (!r->v)
        return;
    tui_ring_clear(r);
    free(r->v);
    r->v = NULL;
}

static void drop_oldest(struct tui_ring *r)
{
    struct tui_line *l = &r->v[r->head];
    r->bytes -= l->len + l->dlen;
    r->dropped_lines++;
    r->dropped_bytes += l->len;
    free(l->text);
    free(l->data);
    l->text = l->data = NULL;
    r->head = (r->head + 1) % r->cap;
    r->n--;
}

void tui_ring_push(struct tui_ring *r, const char *text, size_t len, int kind, int severity,
                   int64_t wall_ms)
{
    tui_ring_push_data(r, text, len, NULL, 0, kind, severity, -1, wall_ms);
}

void tui_ring_push_data(struct tui_ring *r, const char *text, size_t len, const char *data,
                        size_t dlen, int kind, int severity, int how, int64_t wall_ms)
{
    if (len > LINE_MAX_KEPT)
        len = LINE_MAX_KEPT;
    if (dlen > LINE_MAX_KEPT)
        dlen = LINE_MAX_KEPT;
    if (!data)
        dlen = 0;
    while (r->n && (r->n == r->cap || r->bytes + len + dlen > r->max_bytes))
        drop_oldest(r);
    struct tui_line *l = &r->v[(r->head + r->n) % r->cap];
    l->text = sg_xmalloc(len + 1); /* output may hold NUL bytes: copy them all */
    memcpy(l->text, text, len);
    l->text[len] = '\0';
    l->len = (uint32_t)len;
    l->data = data ? sg_xstrndup(data, dlen) : NULL;
    l->dlen = (uint32_t)dlen;
    l->kind = (uint16_t)kind;
    l->severity = (uint8_t)severity;
    l->how = (int8_t)how;
    l->wall_ms = wall_ms;
    l->seq = r->total++;
    r->bytes += len + dlen;
    r->n++;
}

const struct tui_line *tui_ring_at(const struct tui_ring *r, size_t i)
{
    return i < r->n ? &r->v[(r->head + i) % r->cap] : NULL;
}
