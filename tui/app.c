/* The main loop: the terminal, the screens, the input line and the
 * permission prompt. One loop (loop.h) runs the terminal, the attach
 * socket and, while a skill runs, the run's own sources (view_run.c), so
 * there is only ever one poll() and neither side blocks the other. */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "stopsig.h"
#include "tui.h"
#include "util.h"

#define FRAME_MS 33 /* redraw at most this often while output streams in */

int64_t tui_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tui_mark_dirty(struct tui *t)
{
    t->dirty = true;
}

void tui_message(struct tui *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tui_messages_vkeep(t, fmt, ap); /* the log keeps it whole */
    va_end(ap);
    t->message_ms = tui_now_ms();
    t->dirty = true;
}

void tui_switch(struct tui *t, enum tui_screen s)
{
    if (s != TUI_S_PAGER)
        t->back = s;
    t->cur = s;
    if (t->views[s].ops->open && s != TUI_S_PAGER && s != TUI_S_RUN)
        t->views[s].ops->open(t, &t->views[s]);
    t->dirty = true;
}

void tui_confirm(struct tui *t, const char *question, tui_input_done done, void *ctx)
{
    tui_input(t, question, "", done, ctx);
    t->input_confirm = true;
}

void tui_input(struct tui *t, const char *label, const char *initial, tui_input_done done,
               void *ctx)
{
    t->input_active = true;
    t->input_confirm = false;
    snprintf(t->input_label, sizeof t->input_label, "%s", label);
    snprintf(t->input_buf, sizeof t->input_buf, "%s", initial ? initial : "");
    t->input_len = strlen(t->input_buf);
    t->input_done = done;
    t->input_changed = NULL;
    t->input_ctx = ctx;
    t->dirty = true;
}

void tui_input_live(struct tui *t, const char *label, const char *initial,
                    tui_input_done changed, tui_input_done done, void *ctx)
{
    tui_input(t, label, initial, done, ctx);
    t->input_changed = changed;
}

static void input_key(struct tui *t, int key)
{
    if (t->input_confirm) { /* a y/N question: one key answers it */
        t->input_active = false;
        t->input_buf[0] = (key == 'y' || key == 'Y') ? 'y' : 'n';
        t->input_buf[1] = '\0';
        t->input_done(t, t->input_buf, t->input_ctx);
        return;
    }
    if (key == 27 || key == 3) { /* Esc, ^C */
        t->input_active = false;
        t->input_done(t, NULL, t->input_ctx);
    } else if (key == '\n') {
        t->input_active = false;
        t->input_buf[t->input_len] = '\0';
        char text[sizeof t->input_buf]; /* done() may open the line again */
        memcpy(text, t->input_buf, t->input_len + 1);
        t->input_done(t, text, t->input_ctx);
    } else if (key == (TUI_KEY_FN | KEY_BACKSPACE) || key == 127 || key == 8) {
        while (t->input_len && ((unsigned char)t->input_buf[t->input_len - 1] & 0xc0) == 0x80)
            t->input_len--;
        if (t->input_len)
            t->input_len--;
    } else if (key == 21) { /* ^U */
        t->input_len = 0;
    } else if (key >= 32 && !(key & TUI_KEY_FN) && key != 127) {
        char u[8];
        mbstate_t st = {0};
        size_t k = wcrtomb(u, (wchar_t)key, &st);
        if (k != (size_t)-1 && t->input_len + k < sizeof t->input_buf)
            memcpy(t->input_buf + t->input_len, u, k), t->input_len += k;
    }
    t->input_buf[t->input_len] = '\0';
    if (t->input_active && t->input_changed)
        t->input_changed(t, t->input_buf, t->input_ctx);
    t->dirty = true;
}

static void next_theme(struct tui *t)
{
    if (!t->nthemes)
        return;
    size_t i = 0;
    while (i < t->nthemes && strcmp(t->theme_names[i], t->theme.name))
        i++;
    i = (i + 1) % t->nthemes;
    struct sg_diags d = {0};
    struct tui_theme th;
    if (secure_getenv("NO_COLOR") && *secure_getenv("NO_COLOR")) {
        tui_message(t, "NO_COLOR is set: themes have no effect (attributes only)");
        return;
    }
    if (tui_theme_load(t->theme_names[i], &th, &d) == 0) {
        t->theme = th;
        tui_theme_apply(&t->theme);
        tui_message(t, "theme %s", th.name);
    } else {
        tui_message(t, "theme %s has errors (skillgate tui --theme %s shows them)",
                    t->theme_names[i], t->theme_names[i]);
    }
    sg_diags_free(&d);
    clearok(curscr, TRUE);
}

static bool global_action(struct tui *t, enum tui_action a)
{
    switch (a) {
    case TUI_A_QUIT:
        if (t->cur == TUI_S_SKILLS && !t->running)
            t->quit = true;
        else if (t->cur == TUI_S_SKILLS)
            tui_message(t, "a skill is running: stop it first (x on the run screen)");
        else
            tui_switch(t, t->cur == TUI_S_PAGER ? t->back : TUI_S_SKILLS);
        return true;
    case TUI_A_HELP: {
        struct sg_buf b;
        sg_buf_init(&b, 64 * 1024);
        cleanup_free char *cfgp = sg_config_default_path();
        sg_buf_printf(&b, "Keys (rebind them under keys: in %s)\n",
                      cfgp ? cfgp : "~/.config/skillgate/config.yaml");
        for (int g = 0; g < TUI_G_COUNT; g++) {
            sg_buf_printf(&b, "\n%s\n", tui_group_name((enum tui_group)g));
            for (int k = 1; k < TUI_A_COUNT; k++) {
                if (tui_action_group((enum tui_action)k) != (enum tui_group)g)
                    continue;
                char keys[96];
                tui_keymap_describe(&t->keys, (enum tui_action)k, keys, sizeof keys);
                sg_buf_printf(&b, "  %-16s %-14s %s\n", keys, tui_action_name((enum tui_action)k),
                              tui_action_help((enum tui_action)k));
            }
        }
        sg_buf_printf(&b, "\nThe prompt: Enter alone never allows; keys typed before it opened, "
                          "and for a moment after, do not count.\n"
                          "Themes: %zu found; --theme NAME, theme: in the config, NO_COLOR for "
                          "attributes only.\n",
                      t->nthemes);
        cleanup_free char *text = sg_buf_steal(&b);
        tui_pager_show(t, "Help", text);
        return true;
    }
    case TUI_A_VIEW_SKILLS: tui_switch(t, TUI_S_SKILLS); return true;
    case TUI_A_VIEW_RUN: tui_switch(t, TUI_S_RUN); return true;
    case TUI_A_VIEW_TRACES: tui_switch(t, TUI_S_TRACES); return true;
    case TUI_A_VIEW_GRANTS: tui_switch(t, TUI_S_GRANTS); return true;
    case TUI_A_VIEW_AGENT:
        if (t->attach)
            tui_switch(t, TUI_S_AGENT);
        else
            tui_message(t, "the agent screen is for tui --attach: the agent's tool calls "
                           "(skillgate hook install) show there");
        return true;
    case TUI_A_REDRAW: clearok(curscr, TRUE); t->dirty = true; return true;
    case TUI_A_THEME: next_theme(t); return true;
    case TUI_A_MESSAGES: tui_messages_show(t); return true;
    case TUI_A_PALETTE: tui_palette_open(t); return true;
    case TUI_A_WRAP:
        t->wrap = !t->wrap;
        tui_message(t, t->wrap ? "long lines wrap (w: scroll them sideways instead)"
                               : "long lines scroll sideways with Left/Right (w: wrap them)");
        return true;
    default: return false;
    }
}

bool tui_act(struct tui *t, enum tui_action a)
{
    struct tui_view *v = &t->views[t->cur];
    return (v->ops->request && v->ops->request(t, v, a)) || global_action(t, a);
}

static void tui_key(struct tui *t, int key)
{
    t->dirty = true;
    /* raw mode delivers Enter as CR; keypads send KEY_ENTER: all are Enter */
    if (key == '\r' || key == (TUI_KEY_FN | KEY_ENTER))
        key = '\n';
    if (key == (TUI_KEY_FN | KEY_RESIZE)) {
        t->resized = true;
        return;
    }
    if (tui_prompt_active(t) && !(t->input_active && t->input_confirm)) {
        tui_prompt_key(t, key); /* a y/N over it (stopping the run) takes the key first */
        return;
    }
    if (tui_palette_key(t, key))
        return;
    if (t->input_active) {
        input_key(t, key);
        return;
    }
    t->message[0] = '\0';
    if (t->demo && tui_demo_key(t, key))
        return;
    if (t->demo && !t->running && tui_keymap_lookup(&t->keys, key, TUI_G_GLOBAL) == TUI_A_QUIT &&
        t->cur != TUI_S_PAGER) {
        t->quit = true; /* q ends the demo from any screen */
        return;
    }
    if (key == 3) { /* ^C: leave, as everywhere; a run is stopped first */
        if (t->running)
            t->views[TUI_S_RUN].ops->request(t, &t->views[TUI_S_RUN], TUI_A_DELETE);
        else
            t->quit = true;
        return;
    }
    static const enum tui_group order[] = {TUI_G_VIEW, TUI_G_MOVE, TUI_G_GLOBAL};
    for (size_t i = 0; i < SG_ARRAY_LEN(order); i++) {
        enum tui_action a = tui_keymap_lookup(&t->keys, key, order[i]);
        if (a != TUI_A_NONE && tui_act(t, a))
            return;
    }
    tui_key_unhandled(t, key); /* every key acts or says why not */
}

/* After a bare Esc, the rest of an escape sequence curses did not know
 * (terminfo and terminal disagree): map the common ones, swallow the rest,
 * never type them as keys. */
static int escape_sequence(void)
{
    char seq[16];
    size_t n = 0;
    wint_t ch;
    int r = wget_wch(stdscr, &ch);
    if (r == ERR)
        return 27; /* a real Esc */
    if (r != OK || (ch != '[' && ch != 'O'))
        return r == OK ? -(int)ch - 1 : 27; /* Alt+key: ignored */
    seq[n++] = (char)ch;
    while (n + 1 < sizeof seq && wget_wch(stdscr, &ch) == OK) {
        seq[n++] = (char)ch;
        if (ch >= 0x40 && ch <= 0x7e && n > 1)
            break;
    }
    seq[n] = '\0';
    static const struct {
        const char *s;
        int key;
    } known[] = {{"[1~", KEY_HOME}, {"[7~", KEY_HOME}, {"[H", KEY_HOME},  {"OH", KEY_HOME},
                 {"[4~", KEY_END},  {"[8~", KEY_END},  {"[F", KEY_END},   {"OF", KEY_END},
                 {"[5~", KEY_PPAGE}, {"[6~", KEY_NPAGE}, {"[3~", KEY_DC}, {"[A", KEY_UP},
                 {"[B", KEY_DOWN},  {"[C", KEY_RIGHT}, {"[D", KEY_LEFT},  {"OA", KEY_UP},
                 {"OB", KEY_DOWN},  {"OC", KEY_RIGHT}, {"OD", KEY_LEFT},  {"[Z", KEY_BTAB}};
    for (size_t i = 0; i < SG_ARRAY_LEN(known); i++)
        if (!strcmp(seq, known[i].s))
            return TUI_KEY_FN | known[i].key;
    return 0; /* unknown: dropped */
}

/* Keys typed while one key's work kept the screen from being drawn (over
 * BUSY_MS) were aimed at a screen the person never saw: they are read and
 * dropped, and the status bar says how many. */
#define BUSY_MS 250

static void drop_typeahead(struct tui *t)
{
    size_t n = 0;
    wint_t ch;
    while (n < 4096 && wget_wch(stdscr, &ch) != ERR)
        n++;
    if (n)
        tui_message(t, "%zu key%s typed while the screen was busy %s ignored", n,
                    n == 1 ? "" : "s", n == 1 ? "was" : "were");
}

void tui_mouse(struct tui *t, enum tui_mouse m, int y, int x)
{
    if (tui_prompt_active(t) || t->input_active)
        return; /* a prompt is answered with a key; a line being typed is finished with one */
    t->dirty = true;
    if (m == TUI_M_CLICK && y == 0) {
        for (size_t i = 0; i < t->ntabs; i++)
            if (x >= t->tab[i].x0 && x < t->tab[i].x1)
                tui_switch(t, t->tab[i].s);
        return;
    }
    if (y < 1 || y >= LINES - 1) /* the body: between the tabs and the status line */
        return;
    struct tui_view *v = &t->views[t->cur];
    if (v->ops->click)
        v->ops->click(t, v, y - 1, x); /* a wheel scrolls what is under it */
    if (m == TUI_M_CLICK || !v->ops->request)
        return;
    for (int i = 0; i < 3; i++)
        v->ops->request(t, v, m == TUI_M_WHEEL_UP ? TUI_A_UP : TUI_A_DOWN);
}

static void mouse_event(struct tui *t)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
        tui_mouse(t, TUI_M_CLICK, ev.y, ev.x);
    else if (ev.bstate & BUTTON4_PRESSED)
        tui_mouse(t, TUI_M_WHEEL_UP, ev.y, ev.x);
#ifdef BUTTON5_PRESSED
    else if (ev.bstate & BUTTON5_PRESSED)
        tui_mouse(t, TUI_M_WHEEL_DOWN, ev.y, ev.x);
#endif
}

/* Returns how many reads gave something (a key, the mouse, a resize). */
static size_t read_keys(struct tui *t)
{
    size_t got = 0;
    if (t->script)
        return 0; /* keys come from the script */
    for (int i = 0; i < 256; i++) { /* a paste is handled, then we draw */
        if (i && tui_now_ms() - t->key_ms > BUSY_MS) {
            drop_typeahead(t);
            break;
        }
        t->key_ms = tui_now_ms();
        wint_t ch;
        int r = wget_wch(stdscr, &ch);
        if (r == ERR)
            break;
        got++;
        int key = r == KEY_CODE_YES ? (int)(TUI_KEY_FN | (int)ch) : (int)ch;
        if (key == (TUI_KEY_FN | KEY_MOUSE)) {
            mouse_event(t);
            continue;
        }
        if (key == 27) {
            key = escape_sequence();
            if (key < 0 || key == 0) {
                if (key < -1 && tui_prompt_active(t))
                    tui_key(t, 27); /* Esc then a key, in the prompt: still a deny */
                continue;
            }
        }
        tui_key(t, key);
    }
    return got;
}

void tui_handle_input(struct tui *t)
{
    read_keys(t);
}

void tui_feed_key(struct tui *t, int key)
{
    tui_key(t, key);
}

static void draw_title(struct tui *t)
{
    tui_fill(stdscr, 0, 0, COLS, tui_attr(t, TUI_R_TITLE));
    int x = tui_putf(stdscr, 0, 0, COLS, tui_attr(t, TUI_R_TITLE), " skillgate ");
    static const enum tui_screen tabs[] = {TUI_S_SKILLS, TUI_S_RUN, TUI_S_TRACES, TUI_S_GRANTS,
                                           TUI_S_AGENT};
    /* the agent's tab only where its calls come: attached */
    t->ntabs = 0;
    for (size_t i = 0; i < SG_ARRAY_LEN(tabs) - (t->attach ? 0 : 1); i++) {
        enum tui_screen s = tabs[i];
        bool on = t->cur == s || (t->cur == TUI_S_PAGER && t->back == s);
        int x0 = x;
        x += tui_putf(stdscr, 0, x, COLS - x, tui_attr(t, on ? TUI_R_TAB_ACTIVE : TUI_R_TAB),
                      " %zu %s%s ", i + 1, t->views[s].ops->name,
                      s == TUI_S_RUN && t->running ? "*" : "");
        t->tab[t->ntabs].x0 = x0, t->tab[t->ntabs].x1 = x, t->tab[t->ntabs++].s = s;
        x += tui_put(stdscr, 0, x, COLS - x, " ", 1, tui_attr(t, TUI_R_TITLE));
    }
    char right[128];
    snprintf(right, sizeof right, "%s%s  ? help ", t->attach ? "attached  " : "", t->theme.name);
    int rw = (int)strlen(right);
    if (COLS - rw > x)
        tui_put(stdscr, 0, COLS - rw, rw, right, strlen(right), tui_attr(t, TUI_R_TITLE));
}

/* The longest tail of s that fits in width cells (s itself when it fits;
 * one cell less, for the ‹, when it does not). */
static const char *tail_fit(const char *s, int width)
{
    if (tui_width(s, strlen(s)) <= width)
        return s;
    while (*s && tui_width(s, strlen(s)) > width - 1) {
        unsigned cp;
        size_t n = sg_utf8_decode((const unsigned char *)s, strlen(s), &cp);
        s += n ? n : 1;
    }
    return s;
}

/* A screen's key hints ("3 skills  Enter run  d dry run  ...  ? help  q
 * quit", items two blanks apart) at width: the items before "? help" give
 * way from the right, so the count, the first keys and help stay. */
static void fit_hint(char *hint, int width)
{
    char *help = strstr(hint, "  ? help");
    while (help && tui_width(hint, strlen(hint)) > width) {
        char *cut = NULL;
        for (char *p = strstr(hint, "  "); p && p < help; p = strstr(p + 2, "  "))
            cut = p;
        if (!cut || cut == strstr(hint, "  "))
            return; /* only the first item is left: the line is clipped */
        memmove(cut, help, strlen(help) + 1);
        help = cut;
    }
}

static void draw_status(struct tui *t)
{
    int y = LINES - 1;
    attr_t a = tui_attr(t, TUI_R_STATUS);
    tui_fill(stdscr, y, 0, COLS, a);
    if (t->input_active) {
        /* a question's end (its answers, "y/N") matters: a question too
         * long loses its start, marked ‹; any other label keeps its start
         * and leaves room to type; what is typed shows its end */
        const char *label = t->input_confirm ? tail_fit(t->input_label, COLS - 2) : t->input_label;
        int x = 0;
        if (label != t->input_label)
            x += tui_put(stdscr, y, x, 1, "\xe2\x80\xb9", 3, a | A_BOLD);
        x += tui_put(stdscr, y, x, t->input_confirm ? COLS - x : COLS - 16, label, strlen(label),
                     a | A_BOLD);
        const char *s = tail_fit(t->input_buf, COLS - x - 2);
        if (s != t->input_buf)
            x += tui_put(stdscr, y, x, 1, "\xe2\x80\xb9", 3, a);
        x += tui_put(stdscr, y, x, COLS - x, s, strlen(s), a);
        tui_put(stdscr, y, x, 1, "_", 1, a | A_BLINK);
        return;
    }
    if (t->message[0]) {
        tui_putf(stdscr, y, 0, COLS, a | A_BOLD, " %s", t->message);
        return;
    }
    char hint[512] = "";
    struct tui_view *v = &t->views[t->cur];
    if (v->ops->status)
        v->ops->status(t, v, hint, sizeof hint);
    fit_hint(hint, COLS - 2);
    tui_putf(stdscr, y, 0, COLS, a, " %s", hint);
}

void tui_draw_now(struct tui *t)
{
    if (t->resized) {
        t->resized = false;
        clearok(curscr, TRUE);
    }
    werase(stdscr);
    if (LINES < 10 || COLS < 40) {
        tui_putf(stdscr, 0, 0, COLS, A_BOLD, "skillgate needs at least 40x10 (this is %dx%d)",
                 COLS, LINES);
    } else {
        draw_title(t);
        struct tui_view *v = &t->views[t->cur];
        int narration = t->demo ? tui_demo_draw(t, LINES - 2) : 0;
        WINDOW *body = derwin(stdscr, LINES - 2 - narration, COLS, 1, 0);
        if (body) {
            v->ops->draw(t, v, body, LINES - 2 - narration, COLS);
            delwin(body);
        }
        draw_status(t);
        tui_palette_draw(t);
        if (tui_prompt_active(t))
            tui_prompt_draw(t);
    }
    wnoutrefresh(stdscr);
    doupdate();
    t->dirty = false;
    t->last_draw_ms = tui_now_ms();
}

static bool setup_terminal(struct tui *t, const char *size)
{
    if (t->o.script) {
        /* headless: nothing is shown, the screen is read back with :dump */
        int cols = 80, rows = 24;
        if (size && sscanf(size, "%dx%d", &cols, &rows) != 2)
            cols = 80, rows = 24;
        char c[16], r[16];
        snprintf(c, sizeof c, "%d", cols);
        snprintf(r, sizeof r, "%d", rows);
        setenv("COLUMNS", c, 1);
        setenv("LINES", r, 1);
        FILE *out = fopen("/dev/null", "we"), *in = fopen("/dev/null", "re");
        if (!out || !in || !newterm("xterm-256color", out, in)) {
            fprintf(stderr, "skillgate: cannot set up the headless terminal\n");
            return false;
        }
        t->tty_fd = -1;
    } else {
        if (!newterm(NULL, stdout, stdin)) {
            fprintf(stderr, "skillgate: cannot use this terminal (TERM=%s)\n",
                    secure_getenv("TERM") ? secure_getenv("TERM") : "unset");
            return false;
        }
        t->tty_fd = STDIN_FILENO;
    }
    raw();
    noecho();
    /* what many terminals send for Home and End whatever terminfo says */
    define_key("\033[1~", KEY_HOME);
    define_key("\033[4~", KEY_END);
    define_key("\033[H", KEY_HOME);
    define_key("\033[F", KEY_END);
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    /* lists, tabs and the wheel (shift keeps the terminal's own selection) */
    mmask_t want = BUTTON1_PRESSED | BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
    want |= BUTTON5_PRESSED;
#endif
    mousemask(want, NULL);
    mouseinterval(0);
    curs_set(0);
    /* NO_COLOR: no colour codes at all, not even the white on black that
     * curses paints once colours are started (no-color.org) */
    if (has_colors() && !(secure_getenv("NO_COLOR") && *secure_getenv("NO_COLOR")))
        start_color();
    tui_theme_apply(&t->theme);
    return true;
}

static int load_theme(struct tui *t)
{
    bool nocolor = secure_getenv("NO_COLOR") && *secure_getenv("NO_COLOR");
    const char *name = t->o.theme ? t->o.theme : t->cfg->theme;
    struct sg_diags d = {0};
    int r = 0;
    if (name) {
        r = tui_theme_load(name, &t->theme, &d);
        for (size_t i = 0; i < d.n; i++) {
            cleanup_free char *m = sg_diag_format(&d.v[i]);
            fprintf(stderr, "%s\n", m);
        }
        /* said once: the loader's diagnostic names where it looked, and a
         * theme config.yaml named, the file and line that named it */
        if (r < 0 && !t->o.theme && t->cfg->path)
            fprintf(stderr, "%s:%d: error: theme: \"%s\" cannot be used (the themes found: "
                            "skillgate tui --list-themes)\n",
                    t->cfg->path, t->cfg->theme_line, name);
        else if (r < 0 && r != -ENOENT)
            fprintf(stderr, "skillgate: the theme %s has errors\n", name);
        else if (r == -ENOENT && !d.n)
            fprintf(stderr, "skillgate: no theme named %s\n", name);
    } else if (nocolor) {
        tui_theme_mono(&t->theme);
    } else if (tui_theme_load("default", &t->theme, &d) < 0) {
        tui_theme_builtin(&t->theme);
    }
    if (nocolor)
        t->theme.mono = true;
    sg_diags_free(&d);
    return r;
}

/* ---- the loop: the terminal, attached agents, a local run's sources ---- */

/* Between turns: the script's and the demo's next step, the prompt's clock,
 * the screen (while a run goes, at most every FRAME_MS, and each second for
 * the clock). false: the script is over. */
static bool frame(struct tui *t)
{
    int64_t now = tui_now_ms();
    if (t->message[0] && !t->script && now - t->message_ms >= 5000)
        t->message[0] = '\0', t->dirty = true;
    /* the demo's next step is drawn now, not after the next wait: with
     * --auto each step shows for its pace, the closing one too */
    tui_demo_tick(t);
    if (t->resized || (t->dirty && (!t->running || now - t->last_draw_ms >= FRAME_MS)) ||
        (t->running && now - t->last_draw_ms >= 1000))
        tui_draw_now(t);
    if (t->script && !tui_script_step(t))
        return false;
    if (t->quit)
        return false;
    tui_prompt_tick(t);
    return !t->quit;
}

/* The terminal as a source of the loop. It can go away under us (the
 * tmux server killed, the ssh connection or the window closed: its pty
 * hung up). SIGHUP says so first as a rule; when it never comes (ignored,
 * as nohup leaves it, or a TUI outside the terminal's foreground) the
 * terminal itself says so: poll's POLLHUP or POLLERR, or input "ready"
 * that reads as nothing (EOF) or fails (EIO). Either way it ends as
 * SIGHUP ends it (on_stop_signal), never as a loop of empty reads. */
struct terminal {
    struct tui *t;
    unsigned empty; /* turns in a row the terminal was ready and gave nothing */
    bool gone;
};

#define TERMINAL_EMPTY_MAX 3 /* a live terminal ready with nothing: not even once */

static void on_stop_signal(void *ctx, int signo);

static bool terminal_gone(struct terminal *tm, short revents, size_t got)
{
    if (revents & (POLLHUP | POLLERR | POLLNVAL))
        return true;
    if (!(revents & POLLIN) || got) {
        tm->empty = 0;
        return false;
    }
    int waiting = 0;
    if (ioctl(tm->t->tty_fd, FIONREAD, &waiting) < 0)
        return errno == EIO || errno == ENXIO || errno == ENODEV;
    return waiting == 0 && ++tm->empty >= TERMINAL_EMPTY_MAX;
}

static size_t terminal_fds(void *ctx, struct pollfd *out, size_t max)
{
    struct terminal *tm = ctx;
    if (tm->t->tty_fd < 0 || !max)
        return 0;
    out[0] = (struct pollfd){.fd = tm->t->tty_fd, .events = POLLIN};
    return 1;
}

/* Keys, and curses' KEY_RESIZE after a SIGWINCH ended the wait. */
static void terminal_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct terminal *tm = ctx;
    size_t got = read_keys(tm->t);
    if (!n || !terminal_gone(tm, p[0].revents, got))
        return;
    tm->gone = true;
    tm->t->tty_fd = -1; /* never polled again */
    on_stop_signal(tm->t, SIGHUP);
}

static int min_timeout(int a, int b)
{
    return a < 0 ? b : b < 0 || a < b ? a : b;
}

static int terminal_timeout(void *ctx)
{
    struct tui *t = ((struct terminal *)ctx)->t;
    int to = t->script ? tui_script_timeout(t) : -1;
    to = min_timeout(to, tui_demo_timeout(t));
    to = min_timeout(to, tui_prompt_timeout(t));
    int64_t now = tui_now_ms();
    if (t->message[0] && !t->script) {
        int64_t left = t->message_ms + 5000 - now;
        to = min_timeout(to, left > 0 ? (int)left : 0);
    }
    if (t->running) {
        int64_t since = now - t->last_draw_ms;
        int draw = t->dirty ? (int)(since >= FRAME_MS ? 0 : FRAME_MS - since)
                            : (int)(since >= 1000 ? 0 : 1000 - since); /* the clock ticks */
        to = min_timeout(to, draw < 100 ? draw : 100); /* a SIGWINCH that raced the wait */
    }
    return to;
}

/* SIGTERM, SIGHUP (the terminal closed, or seen closed), SIGINT from
 * outside: a live run ends "interrupted" with its records written, then
 * the TUI closes, with 128 + the signal as its exit status. */
static void on_stop_signal(void *ctx, int signo)
{
    struct tui *t = ctx;
    tui_run_interrupt(t, signo);
    t->quit = true;
}

int tui_main(const struct tui_opts *o)
{
    setlocale(LC_CTYPE, ""); /* as main() does */
    struct tui *t = sg_xcalloc(1, sizeof *t);
    t->o = *o;
    t->cfg = sg_xcalloc(1, sizeof *t->cfg);
    int rc = 0;
    struct sg_diags d = {0};
    cleanup_free char *cfgpath = NULL;
    /* first: the demo lives in a world of its own, config included */
    if (o->demo && tui_demo_open(t, o->demo_auto, o->demo_pace, o->demo_keep) < 0) {
        rc = 1;
        goto out;
    }
    cfgpath = sg_config_default_path();
    int bad = cfgpath ? sg_config_load(cfgpath, t->cfg, &d) : 0;
    tui_keymap_default(&t->keys);
    if (!bad)
        bad = tui_keymap_config(&t->keys, t->cfg, &d);
    for (size_t i = 0; i < d.n; i++) {
        cleanup_free char *m = sg_diag_format(&d.v[i]);
        fprintf(stderr, "%s\n", m);
    }
    sg_diags_free(&d);
    if (bad || load_theme(t) < 0) {
        rc = 2;
        goto out;
    }
    t->theme_names = tui_theme_list(&t->nthemes);
    if (!o->script && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "skillgate: the TUI needs a terminal on stdin and stdout; for scripts use "
                        "`skillgate run --watch` or `--json`, `skillgate list`\n");
        rc = 2;
        goto out;
    }
    if (o->script && tui_script_open(t, o->script) < 0) {
        rc = 2;
        goto out;
    }
    if (o->attach && tui_attach_open(t) < 0) {
        rc = 1;
        goto out;
    }
    if (!setup_terminal(t, o->size)) {
        rc = 2;
        goto out;
    }
    t->views[TUI_S_SKILLS].ops = &tui_skills_ops;
    t->views[TUI_S_RUN].ops = &tui_run_ops;
    t->views[TUI_S_TRACES].ops = &tui_traces_ops;
    t->views[TUI_S_GRANTS].ops = &tui_grants_ops;
    t->views[TUI_S_AGENT].ops = &tui_agent_ops;
    t->views[TUI_S_PAGER].ops = &tui_pager_ops;
    tui_prompt_init(t);
    tui_switch(t, TUI_S_SKILLS);
    if (t->demo)
        tui_switch(t, TUI_S_RUN);
    if (o->notice)
        tui_message(t, "%s", o->notice);
    t->wrap = t->demo != NULL; /* an audience reads whole lines */
    sg_stopsig_install();
    struct terminal tm = {.t = t};
    while (!t->quit) {
        if (!frame(t))
            break;
        struct sg_loop_source src[SG_LOOP_MAX_SOURCES] = {
            {"terminal", terminal_fds, terminal_dispatch, terminal_timeout, &tm},
            tui_attach_source(t),
            sg_stopsig_source(on_stop_signal, t),
            tui_traces_source(t),
        };
        size_t n = 4 + tui_run_sources(t, src + 4, SG_ARRAY_LEN(src) - 4);
        if (sg_loop_turn(src, n, -1) < 0)
            break;
    }
    rc = t->script ? tui_script_result(t) : 0;
    if (tm.gone || sg_stopsig_first())
        rc = 128 + (tm.gone ? SIGHUP : sg_stopsig_first());
    for (int i = 0; i < TUI_S_COUNT; i++)
        if (t->views[i].ops && t->views[i].ops->close)
            t->views[i].ops->close(t, &t->views[i]);
    tui_prompt_free(t);
    tui_palette_free(t);
    endwin();
out:
    tui_attach_close(t);
    tui_demo_free(t);
    tui_script_free(t);
    for (size_t i = 0; i < t->nthemes; i++)
        free(t->theme_names[i]);
    free(t->theme_names);
    sg_config_free(t->cfg);
    free(t->cfg);
    free(t);
    return rc;
}
