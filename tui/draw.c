/* Drawing text that may have come from a skill: every byte goes through the
 * one sanitizer (lib/sanitize.c); what it escapes is drawn in the
 * "escaped" colour; a code point the terminal would draw with no width (or
 * cannot draw) is escaped too; wide characters are clipped by cell width,
 * never cut in half. Nothing here writes a byte the skill chose as a
 * control sequence. */
#include <stdarg.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "sanitize.h"
#include "tui.h"
#include "util.h"

struct put {
    WINDOW *w;
    int y, x, width, skip, used;
    int row, max_rows; /* wrapping: the row drawn on, and how many there may be */
    attr_t attr, esc_attr;
    bool draw, clipped;
};

/* Wrapping: the next row, when there is one and what comes fits on it. */
static bool next_row(struct put *p, int cells)
{
    if (p->row + 1 >= p->max_rows || cells > p->width)
        return false;
    p->row++;
    p->used = 0;
    return true;
}

static bool put_cells(struct put *p, const wchar_t *ws, int cells, attr_t attr)
{
    if (p->skip > 0) { /* horizontal scroll: whole characters only */
        p->skip -= cells;
        if (p->skip < 0 && p->draw) { /* a wide char straddles the edge: blank its visible half */
            for (int k = 0; k < -p->skip && p->used < p->width; k++, p->used++)
                mvwaddch(p->w, p->y, p->x + p->used, ' ' | attr);
        }
        return true;
    }
    if (p->used + cells > p->width && !next_row(p, cells)) {
        p->clipped = true;
        return false;
    }
    if (p->draw) {
        wattrset(p->w, attr);
        mvwaddnwstr(p->w, p->y + p->row, p->x + p->used, ws, -1);
    }
    p->used += cells;
    return true;
}

static bool put_piece(void *ctx, const char *piece, size_t n, bool escaped)
{
    struct put *p = ctx;
    if (escaped) {
        /* wrapping: an escape ("\\x1b", "\\u{202e}") starts a row rather than straddle two */
        if (p->max_rows > 1 && p->used + (int)n > p->width)
            next_row(p, (int)n);
        for (size_t i = 0; i < n; i++) {
            wchar_t ws[2] = {(wchar_t)(unsigned char)piece[i], 0};
            if (!put_cells(p, ws, 1, p->esc_attr))
                return false;
        }
        return true;
    }
    unsigned cp;
    if (sg_utf8_decode((const unsigned char *)piece, n, &cp) != n)
        return true;
    if (cp == '\t') {
        static const wchar_t sp[2] = {L' ', 0};
        for (int k = 0; k < 4; k++)
            if (!put_cells(p, sp, 1, p->attr))
                return false;
        return true;
    }
    int cw = wcwidth((wchar_t)cp);
    if (cw < 1) { /* combining, zero-width or unprintable here: show it, escaped */
        char esc[16];
        int k = snprintf(esc, sizeof esc, "\\u{%04x}", cp);
        return put_piece(p, esc, (size_t)k, true);
    }
    wchar_t ws[2] = {(wchar_t)cp, 0};
    return put_cells(p, ws, cw, p->attr);
}

int tui_put_scrolled(WINDOW *w, int y, int x, int width, int skip, const char *s, size_t len,
                     attr_t attr, attr_t escaped_attr)
{
    if (width <= 0 || !s)
        return 0;
    struct put p = {.w = w, .y = y, .x = x, .width = width, .skip = skip, .attr = attr,
                    .esc_attr = escaped_attr, .draw = w != NULL};
    sg_sanitize_each(s, len, SG_SAN_KEEP_TAB, put_piece, &p);
    if (p.clipped && w && skip >= 0 && width > 4) {
        /* the line goes on to the right: say so in its last cell */
        static const wchar_t more[] = {0x203a, 0}, ascii[] = {L'>', 0};
        wattrset(w, escaped_attr);
        mvwaddnwstr(w, y, x + width - 1, MB_CUR_MAX > 1 ? more : ascii, -1);
        if (p.used < width)
            p.used = width;
    }
    return p.used;
}

int tui_put_wrapped_chars(WINDOW *w, int y, int x, int width, int max_rows, const char *s,
                          size_t len, attr_t attr, attr_t escaped_attr)
{
    if (width <= 0 || max_rows <= 0 || !s)
        return 0;
    struct put p = {.w = w, .y = y, .x = x, .width = width, .max_rows = max_rows, .attr = attr,
                    .esc_attr = escaped_attr, .draw = w != NULL};
    sg_sanitize_each(s, len, SG_SAN_KEEP_TAB, put_piece, &p);
    if (p.clipped && w && width > 4) { /* more than max_rows hold: the last cell says so */
        static const wchar_t more[] = {0x203a, 0}, ascii[] = {L'>', 0};
        wattrset(w, escaped_attr);
        mvwaddnwstr(w, y + p.row, x + width - 1, MB_CUR_MAX > 1 ? more : ascii, -1);
    }
    return p.row + 1;
}

/* The cells s takes, counted no further than limit + 1 (a long word costs
 * no more than a row's worth of looking). */
static int width_upto(const char *s, size_t len, int limit)
{
    struct put p = {.width = limit + 1, .max_rows = 1};
    sg_sanitize_each(s, len, SG_SAN_KEEP_TAB, put_piece, &p);
    return p.clipped ? limit + 1 : p.used;
}

/* Where the row starting at s ends: after as many whole words (and the
 * spaces between them) as fit in width cells; 0 when not even the first
 * does. */
static size_t row_of_words(const char *s, size_t len, int width)
{
    size_t end = 0;
    int used = 0;
    while (end < len) {
        size_t sp = end, we;
        while (sp < len && s[sp] == ' ')
            sp++;
        for (we = sp; we < len && s[we] != ' '; we++)
            ;
        int add = (int)(sp - end) + width_upto(s + sp, we - sp, width);
        if (used + add > width)
            break;
        used += add;
        end = we;
    }
    return end;
}

int tui_put_wrapped_words(WINDOW *w, int y, int x, int width, int max_rows, const char *s,
                          size_t len, attr_t attr, attr_t escaped_attr)
{
    int rows = 0;
    if (width <= 0 || max_rows <= 0 || !s)
        return 0;
    do {
        size_t take = row_of_words(s, len, width);
        if (rows == max_rows - 1 && take < len) /* the last row: cut, marked › */
            take = len;
        if (take) {
            tui_put_scrolled(w, y + rows, x, width, 0, s, take, attr, escaped_attr);
            rows++;
        } else { /* a word wider than the line: cut where it must, on rows of its own */
            size_t we = 0;
            while (we < len && s[we] == ' ')
                we++;
            while (we < len && s[we] != ' ')
                we++;
            rows += tui_put_wrapped_chars(w, y + rows, x, width, max_rows - rows, s, we, attr,
                                          escaped_attr);
            take = we;
        }
        s += take, len -= take;
        while (len && *s == ' ') /* the spaces at a break are the break */
            s++, len--;
    } while (len && rows < max_rows);
    return rows;
}

int tui_put(WINDOW *w, int y, int x, int width, const char *s, size_t len, attr_t attr)
{
    return tui_put_scrolled(w, y, x, width, 0, s, len, attr, attr | A_UNDERLINE);
}

/* The longest prefix of s (bytes) that fits in width cells. */
static size_t fit_bytes(const char *s, size_t len, int width)
{
    size_t n = 0;
    while (n < len) {
        unsigned cp;
        size_t k = sg_utf8_decode((const unsigned char *)s + n, len - n, &cp);
        k = k ? k : 1;
        if (tui_width(s, n + k) > width)
            break;
        n += k;
    }
    return n;
}

int tui_put_wrapped(WINDOW *w, int y, int x, int width, int max_rows, const char *s, size_t len,
                    attr_t attr)
{
    int rows = 0;
    while (len && rows < max_rows && width > 0) {
        size_t take = len;
        if (tui_width(s, len) > width) {
            size_t fit = fit_bytes(s, len, width);
            take = fit;
            while (take && s[take] != ' ')
                take--; /* back to the last space that fits */
            if (!take)
                take = fit ? fit : 1; /* one word wider than the line */
        }
        if (rows == max_rows - 1 && take < len)
            take = len; /* the last row: cut, marked › */
        tui_put(w, y + rows, x, width, s, take, attr);
        rows++;
        s += take, len -= take;
        while (len && *s == ' ')
            s++, len--;
    }
    return rows;
}

int tui_put_flow(WINDOW *w, int y, int x, int right, int indent, int max_rows, const char *s,
                 size_t len, attr_t attr, attr_t escaped_attr)
{
    size_t first = x < right ? fit_bytes(s, len, right - x) : 0;
    if (first < len && first < 8 && x > indent)
        first = 0; /* a row's last few cells: the text starts on the next */
    if (first)
        tui_put_scrolled(w, y, x, right - x, 0, s, first, attr, escaped_attr);
    if (first == len)
        return 1;
    return 1 + tui_put_wrapped_chars(w, y + 1, indent, right - indent, max_rows - 1, s + first,
                                     len - first, attr, escaped_attr);
}

int tui_putf(WINDOW *w, int y, int x, int width, attr_t attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *s = sg_xvasprintf(fmt, ap);
    va_end(ap);
    return tui_put(w, y, x, width, s, strlen(s), attr);
}

int tui_width(const char *s, size_t len)
{
    struct put p = {.width = 1 << 30};
    sg_sanitize_each(s, len, SG_SAN_KEEP_TAB, put_piece, &p);
    return p.used;
}

void tui_fill(WINDOW *w, int y, int x, int width, attr_t attr)
{
    wattrset(w, attr);
    for (int i = 0; i < width; i++)
        mvwaddch(w, y, x + i, ' ');
}

void tui_hline(WINDOW *w, int y, int x, int n, attr_t attr)
{
    wattrset(w, attr);
    mvwhline_set(w, y, x, WACS_HLINE, n);
}

void tui_vline(WINDOW *w, int y, int x, int n, attr_t attr)
{
    wattrset(w, attr);
    mvwvline_set(w, y, x, WACS_VLINE, n);
}

void tui_box(WINDOW *w, int y, int x, int h, int wd, attr_t attr, const char *title)
{
    /* the wide-character forms: Unicode box drawing in a UTF-8 locale (no
     * alternate character set to get wrong), ACS otherwise */
    wattrset(w, attr);
    mvwhline_set(w, y, x + 1, WACS_HLINE, wd - 2);
    mvwhline_set(w, y + h - 1, x + 1, WACS_HLINE, wd - 2);
    mvwvline_set(w, y + 1, x, WACS_VLINE, h - 2);
    mvwvline_set(w, y + 1, x + wd - 1, WACS_VLINE, h - 2);
    mvwadd_wch(w, y, x, WACS_ULCORNER);
    mvwadd_wch(w, y, x + wd - 1, WACS_URCORNER);
    mvwadd_wch(w, y + h - 1, x, WACS_LLCORNER);
    mvwadd_wch(w, y + h - 1, x + wd - 1, WACS_LRCORNER);
    if (title && *title)
        tui_putf(w, y, x + 2, wd - 4, attr, " %s ", title);
}

attr_t tui_attr(const struct tui *t, enum tui_role r)
{
    return t->theme.attr[r];
}

attr_t tui_severity_attr(const struct tui *t, int severity)
{
    static const enum tui_role r[] = {TUI_R_SEV_INFO, TUI_R_SEV_NOTICE, TUI_R_SEV_WARNING,
                                      TUI_R_SEV_ERROR};
    return t->theme.attr[r[severity < 0 ? 0 : severity > 3 ? 3 : severity]];
}

static bool to_lower_buf(void *ctx, const char *piece, size_t n, bool escaped)
{
    (void)escaped;
    struct sg_buf *b = ctx;
    for (size_t i = 0; i < n; i++) {
        char c = piece[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        sg_buf_append(b, &c, 1);
    }
    return true;
}

bool tui_matches(const char *s, size_t len, const char *needle)
{
    if (!needle || !*needle)
        return false;
    struct sg_buf hay, nd;
    sg_buf_init(&hay, len * 10 + 16);
    sg_buf_init(&nd, strlen(needle) * 10 + 16);
    sg_sanitize_each(s, len, SG_SAN_KEEP_TAB, to_lower_buf, &hay);
    to_lower_buf(&nd, needle, strlen(needle), false);
    bool m = hay.data && nd.data && memmem(hay.data, hay.len, nd.data, nd.len);
    sg_buf_free(&hay);
    sg_buf_free(&nd);
    return m;
}

void tui_copy(struct tui *t, const char *what, const char *text)
{
    if (!text || !*text) {
        tui_message(t, "nothing to copy here");
        return;
    }
    /* what a skill chose is copied escaped: a paste never carries its
     * newlines or control sequences into a shell */
    cleanup_free char *clean = sg_sanitize_str(text, 0);
    size_t n = strlen(clean);
    if (n > TUI_COPY_MAX) {
        tui_message(t, "not copied: the %s is %zu bytes, over %d", what, n, TUI_COPY_MAX);
        return;
    }
    snprintf(t->copied, sizeof t->copied, "%s", clean);
    if (!t->script) { /* OSC 52: the terminal's clipboard, over ssh and in tmux too */
        cleanup_free unsigned char *b64 = sg_xmalloc(4 * ((n + 2) / 3) + 1);
        int k = EVP_EncodeBlock(b64, (const unsigned char *)clean, (int)n);
        struct sg_buf b;
        sg_buf_init(&b, (size_t)k + 16);
        sg_buf_printf(&b, "\033]52;c;%.*s\007", k, (const char *)b64);
        if (write(STDOUT_FILENO, b.data, b.len) < 0)
            tui_message(t, "not copied: the terminal could not be written to");
        sg_buf_free(&b);
    }
    tui_message(t, "copied the %s (OSC 52): %s", what, clean);
}
