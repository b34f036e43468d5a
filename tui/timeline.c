/* A run's timeline (timeline.h). */
#include <string.h>

#include "attempts.h"
#include "timeline.h"
#include "trace.h"
#include "util.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void tui_tl_reset(struct tui_timeline *tl, int64_t t0_ms)
{
    memset(tl, 0, sizeof *tl);
    tl->t0_ms = t0_ms;
    tl->last_ms = t0_ms;
    tl->width_ms = 1;
}

void tui_tl_add(struct tui_timeline *tl, int64_t wall_ms, enum tui_tl_lane lane, uint64_t weight)
{
    int64_t d = wall_ms - tl->t0_ms;
    if (d < 0)
        d = 0;
    if (d > (int64_t)1 << 50)
        d = (int64_t)1 << 50; /* a forged trace's times: bounded doublings */
    while (d / tl->width_ms >= TUI_TL_BUCKETS) { /* two buckets become one */
        for (int l = 0; l < TUI_TL_LANES; l++) {
            for (int b = 0; b < TUI_TL_BUCKETS / 2; b++)
                tl->n[l][b] = sat_add(tl->n[l][2 * b], tl->n[l][2 * b + 1]);
            memset(tl->n[l] + TUI_TL_BUCKETS / 2, 0, sizeof tl->n[l] / 2);
        }
        tl->width_ms *= 2;
    }
    uint64_t *c = &tl->n[lane][d / tl->width_ms];
    *c = sat_add(*c, weight); /* a forged trace's huge counts stay counted, never wrap to 0 */
    if (wall_ms > tl->last_ms)
        tl->last_ms = wall_ms;
}

void tui_tl_add_attempt(struct tui_timeline *tl, int64_t wall_ms, int how, uint64_t times)
{
    tui_tl_add(tl, wall_ms, how == SG_ATT_BLOCKED ? TUI_TL_REFUSED
                            : how == SG_ATT_ASKED ? TUI_TL_ASKED
                                                  : TUI_TL_ALLOWED, times);
}

void tui_tl_from_trace(struct tui_timeline *tl, json_t *trace)
{
    size_t i;
    json_t *ev;
    bool started = false;
    json_array_foreach(json_object_get(trace, "events"), i, ev)
    {
        int64_t t = sg_trace_time_ms(json_string_value(json_object_get(ev, "timestamp")));
        if (t < 0)
            continue;
        if (!started)
            tui_tl_reset(tl, t), started = true;
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        if (kind && (!strcmp(kind, "stdout") || !strcmp(kind, "stderr"))) {
            const char *m = json_string_value(json_object_get(ev, "message"));
            tui_tl_add(tl, t, TUI_TL_OUT, (m ? strlen(m) : 0) + 1);
            continue;
        }
        for (int k = 0; kind && k < SG_EV_COUNT; k++) {
            if (strcmp(kind, sg_event_name((enum sg_event_kind)k)))
                continue;
            enum sg_att_what what;
            int how = sg_attempts_how((enum sg_event_kind)k, json_object_get(ev, "data"), &what);
            json_t *rep = json_object_get(ev, "repeated");
            uint64_t times = 1 + (json_integer_value(rep) > 0 ? (uint64_t)json_integer_value(rep) : 0);
            if (how >= 0)
                tui_tl_add_attempt(tl, t, how, times);
            break;
        }
    }
    if (!started)
        tui_tl_reset(tl, 0);
}

void tui_tl_cells(const struct tui_timeline *tl, int64_t end_ms, struct tui_tl_cell *cells,
                  int ncells)
{
    int64_t span = end_ms - tl->t0_ms;
    if (span < 1)
        span = 1;
    if (ncells > TUI_TL_MAX_CELLS)
        ncells = TUI_TL_MAX_CELLS;
    uint64_t out[TUI_TL_MAX_CELLS], peak = 0;
    for (int c = 0; c < ncells; c++) {
        int64_t b0 = span * c / ncells / tl->width_ms;
        int64_t b1 = span * (c + 1) / ncells / tl->width_ms;
        if (b1 <= b0)
            b1 = b0 + 1; /* a cell narrower than a bucket shows that bucket */
        uint64_t sum[TUI_TL_LANES] = {0};
        for (int64_t b = b0; b < b1 && b < TUI_TL_BUCKETS; b++)
            for (int l = 0; l < TUI_TL_LANES; l++)
                sum[l] = sat_add(sum[l], tl->n[l][b]);
        out[c] = sum[TUI_TL_OUT];
        peak = out[c] > peak ? out[c] : peak;
        cells[c].mark = sum[TUI_TL_REFUSED] ? 'x' : sum[TUI_TL_ASKED] ? '?'
                        : sum[TUI_TL_ALLOWED] ? '+' : ' ';
    }
    for (int c = 0; c < ncells; c++) { /* 1 + 7 * out / peak, rounded up: 2..8 for any output */
        double v = (double)out[c] * 7.0 / (double)(peak ? peak : 1);
        int lv = (int)v;
        lv += v > lv;
        cells[c].level = !out[c] ? 0 : (unsigned char)(1 + (lv > 7 ? 7 : lv));
    }
}

const char *tui_tl_bar(unsigned level)
{
    static const char *const bars[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    return bars[level > 8 ? 8 : level];
}

char *tui_tl_text(const struct tui_timeline *tl, int64_t end_ms, int ncells)
{
    struct tui_tl_cell cells[TUI_TL_MAX_CELLS];
    ncells = ncells < 1 ? 1 : ncells > TUI_TL_MAX_CELLS ? TUI_TL_MAX_CELLS : ncells;
    tui_tl_cells(tl, end_ms, cells, ncells);
    struct sg_buf b;
    sg_buf_init(&b, (size_t)ncells * 8 + 256);
    sg_buf_printf(&b, "%-*s", TUI_TL_LABEL, "output");
    for (int c = 0; c < ncells; c++)
        sg_buf_printf(&b, "%s", tui_tl_bar(cells[c].level));
    sg_buf_printf(&b, "\n%-*s", TUI_TL_LABEL, "events");
    for (int c = 0; c < ncells; c++)
        sg_buf_printf(&b, "%c", cells[c].mark == ' ' ? '.' : cells[c].mark);
    sg_buf_printf(&b, "\n%-*s0 s%*s%.1f s\n", TUI_TL_LABEL, "", ncells - 10 > 0 ? ncells - 10 : 1,
                  "", (double)(end_ms - tl->t0_ms) / 1000.0);
    return sg_buf_steal(&b);
}
