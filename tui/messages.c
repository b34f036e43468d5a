/* The status line's messages, kept: the line holds one at a time, for a
 * few seconds and at most its width, so every message also goes to a
 * bounded log (a ring, as the run's scrollback) that L (and :messages)
 * opens whole in the pager. A message wider than the status line ends in
 * "… L: whole" there instead of a bare cut. Paths in the home are said
 * from ~/, as a person types them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "ring.h"
#include "tui.h"
#include "util.h"

#define LOG_LINES 500
#define LOG_BYTES (512u << 10)

static struct tui_ring msglog; /* one TUI a process, as one terminal */

/* A byte that can be part of a path: what may come right before or after
 * the home for it to be the home and not part of a longer name. */
char *tui_home_short(const char *s)
{
    return sg_home_short(s, sg_invoking_home());
}

/* What the status line shows of text: all of it when it fits, else as
 * much as fits before "… KEY: whole" (KEY: what opens the log). */
static void status_fit(const struct tui *t, const char *text, char *out, size_t n)
{
    int width = COLS - 2; /* the line has a blank before it and a cell to spare */
    if (COLS < 40 || (tui_width(text, strlen(text)) <= width && strlen(text) < n)) {
        snprintf(out, n, "%s", text); /* no screen yet (or too small): as it is */
        return;
    }
    char keys[96], tail[128];
    tui_keymap_describe(&t->keys, TUI_A_MESSAGES, keys, sizeof keys);
    char *sp = strchr(keys, ' ');
    if (sp)
        *sp = '\0';
    snprintf(tail, sizeof tail, "\xe2\x80\xa6 %s%s", keys[0] ? keys : ":messages",
             keys[0] ? ": whole" : "");
    int room = width - tui_width(tail, strlen(tail));
    size_t len = strlen(text), k = 0;
    while (k < len && room > 0) { /* whole characters, as many as fit */
        unsigned cp;
        size_t step = sg_utf8_decode((const unsigned char *)text + k, len - k, &cp);
        step = step ? step : 1;
        if (tui_width(text, k + step) > room || k + step + strlen(tail) >= n)
            break; /* the cells, or the bytes of out */
        k += step;
    }
    snprintf(out, n, "%.*s%s", (int)k, text, tail);
}

void tui_messages_vkeep(struct tui *t, const char *fmt, va_list ap)
{
    cleanup_free char *raw = sg_xvasprintf(fmt, ap);
    cleanup_free char *text = tui_home_short(raw);
    if (!msglog.v)
        tui_ring_init(&msglog, LOG_LINES, LOG_BYTES);
    tui_ring_push(&msglog, text, strlen(text), 0, 0, tui_now_ms());
    status_fit(t, text, t->message, sizeof t->message);
}

void tui_messages_show(struct tui *t)
{
    struct sg_buf b;
    sg_buf_init(&b, LOG_BYTES + LOG_LINES * 16u + 256);
    if (!msglog.n)
        sg_buf_printf(&b, "No messages yet: what the status line says is kept here.\n");
    if (msglog.dropped_lines)
        sg_buf_printf(&b, "... %llu older messages dropped\n",
                      (unsigned long long)msglog.dropped_lines);
    for (size_t i = 0; i < msglog.n; i++) {
        const struct tui_line *l = tui_ring_at(&msglog, i);
        char clock[16];
        sg_format_clock(l->wall_ms, clock);
        sg_buf_printf(&b, "%.8s  ", clock);
        sg_buf_append(&b, l->text, l->len); /* drawn through the sanitizer */
        sg_buf_append(&b, "\n", 1);
    }
    cleanup_free char *text = sg_buf_steal(&b);
    size_t lines = msglog.n + (msglog.dropped_lines ? 1 : 0);
    tui_pager_show(t, "Messages, oldest first (each whole; q back)", text ? text : "");
    tui_pager_wrap(t);
    size_t page = LINES > 4 ? (size_t)LINES - 4 : 1;
    tui_pager_goto(t, lines > page ? lines - page : 0); /* the newest at the bottom */
}
