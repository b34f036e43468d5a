/* The command palette (":", as k9s and lazygit have): the input line, with
 * the actions that match what is typed listed above it, each with its keys
 * (as bound now, config included) and its help. Every entry comes from
 * TUI_ACTIONS, so a new action is in the palette the day it is in the key
 * table. Tab completes the name, Up/Down choose, Enter runs the chosen one
 * as its key would on this screen, Esc closes; a name that matches nothing
 * says so. It never answers a permission prompt: those actions are listed
 * (dim) so a person can find their keys, and running one says why not. */
#include <string.h>
#include <strings.h>

#include "tui.h"
#include "util.h"

#define PALETTE_ROWS_MAX 12 /* entries shown at once; Up/Down scroll the rest */

struct tui_palette {
    enum tui_action match[TUI_A_COUNT]; /* what the text matches, best first */
    size_t n, sel, top;
    bool chosen; /* Up/Down moved the choice: Enter runs it even with nothing typed */
};

/* 0: the name is the text, 1: starts with it, 2: has it, 3: the help has it;
 * -1: no match. */
static int rank(enum tui_action a, const char *text)
{
    const char *name = tui_action_name(a);
    size_t n = strlen(text);
    if (!strcasecmp(name, text))
        return 0;
    if (!strncasecmp(name, text, n))
        return 1;
    if (strcasestr(name, text))
        return 2;
    return strcasestr(tui_action_help(a), text) ? 3 : -1;
}

static void refilter(struct tui *t, const char *text, void *ctx)
{
    (void)t;
    struct tui_palette *p = ctx;
    p->n = p->sel = p->top = 0;
    p->chosen = false;
    for (int r = 0; r <= 3; r++)
        for (int a = 1; a < TUI_A_COUNT; a++)
            if (rank((enum tui_action)a, text ? text : "") == r)
                p->match[p->n++] = (enum tui_action)a;
}

static void run(struct tui *t, enum tui_action a)
{
    char how[48];
    snprintf(how, sizeof how, ":%s", tui_action_name(a));
    if (tui_action_group(a) == TUI_G_PROMPT) {
        char key[32];
        tui_action_key(&t->keys, a, key, sizeof key);
        tui_message(t, "%s answers the permission prompt (its key: %s); the palette never does",
                    how, key);
        return;
    }
    t->message[0] = '\0';
    if (!tui_act(t, a))
        tui_action_unhandled(t, how, a);
}

static void done(struct tui *t, const char *text, void *ctx)
{
    struct tui_palette *p = ctx;
    t->palette = NULL; /* closed before the action runs: it may open a line of its own */
    enum tui_action a = p->n ? p->match[p->sel] : TUI_A_NONE;
    bool chosen = p->chosen;
    free(p);
    if (!text || (!text[0] && !chosen))
        return;
    if (a == TUI_A_NONE) {
        char key[32];
        tui_action_key(&t->keys, TUI_A_PALETTE, key, sizeof key);
        tui_message(t, "unknown command ':%s': %s lists every command, Tab completes", text, key);
        return;
    }
    run(t, a);
}

/* The palette, while its line is the one open (another line that
 * replaced it left it behind: freed at the next :). */
static struct tui_palette *open_now(struct tui *t)
{
    return t->palette && t->input_active && t->input_ctx == t->palette ? t->palette : NULL;
}

void tui_palette_open(struct tui *t)
{
    tui_palette_free(t);
    struct tui_palette *p = sg_xcalloc(1, sizeof *p);
    t->palette = p;
    tui_input_live(t, ":", "", refilter, done, p);
    refilter(t, "", p);
}

/* Tab: the longest start the names matching by their start share, or
 * else the chosen name whole. */
static void complete(struct tui *t, struct tui_palette *p)
{
    if (!p->n)
        return;
    const char *first = NULL;
    size_t common = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *name = tui_action_name(p->match[i]);
        if (rank(p->match[i], t->input_buf) > 1)
            break;
        if (!first)
            first = name, common = strlen(name);
        while (common && strncmp(first, name, common))
            common--;
    }
    if (!first || common <= t->input_len)
        first = tui_action_name(p->match[p->sel]), common = strlen(first);
    if (common >= sizeof t->input_buf)
        return;
    memcpy(t->input_buf, first, common);
    t->input_buf[common] = '\0';
    t->input_len = common;
    refilter(t, t->input_buf, p);
}

bool tui_palette_key(struct tui *t, int key)
{
    struct tui_palette *p = open_now(t);
    if (!p)
        return false;
    if (key == '\t')
        complete(t, p);
    else if ((key == (TUI_KEY_FN | KEY_UP) || key == (TUI_KEY_FN | KEY_BTAB)) && p->sel)
        p->sel--, p->chosen = true;
    else if (key == (TUI_KEY_FN | KEY_DOWN) && p->sel + 1 < p->n)
        p->sel++, p->chosen = true;
    else if (key != (TUI_KEY_FN | KEY_UP) && key != (TUI_KEY_FN | KEY_DOWN) &&
             key != (TUI_KEY_FN | KEY_BTAB))
        return false;
    t->dirty = true;
    return true;
}

static void draw_entry(struct tui *t, int y, int cols, enum tui_action a, bool sel)
{
    bool prompt = tui_action_group(a) == TUI_G_PROMPT;
    attr_t at = tui_attr(t, sel ? TUI_R_SELECTED : prompt ? TUI_R_DIM : TUI_R_NORMAL);
    char keys[96];
    tui_keymap_describe(&t->keys, a, keys, sizeof keys);
    tui_fill(stdscr, y, 1, cols - 2, at);
    if (sel) /* the choice, also where colours do not show */
        tui_put(stdscr, y, 1, 1, "\xe2\x80\xba", 3, at | A_BOLD);
    int x = 2 + tui_putf(stdscr, y, 2, 15, at | A_BOLD, "%s", tui_action_name(a));
    x = x < 18 ? 18 : x + 1;
    x += tui_putf(stdscr, y, x, 14, at, "%s", keys[0] ? keys : "(no key)");
    x = x < 33 ? 33 : x + 1;
    tui_putf(stdscr, y, x, cols - 1 - x, at, "%s%s", prompt ? "in the prompt: " : "",
             tui_action_help(a));
}

void tui_palette_draw(struct tui *t)
{
    struct tui_palette *p = open_now(t);
    if (!p || LINES < 10 || COLS < 40)
        return;
    int room = LINES / 2 - 2;
    int rows = (int)(p->n < PALETTE_ROWS_MAX ? p->n : PALETTE_ROWS_MAX);
    rows = rows < room ? rows : room;
    rows = rows < 1 ? 1 : rows;
    if (p->sel < p->top)
        p->top = p->sel;
    if (p->sel >= p->top + (size_t)rows)
        p->top = p->sel - (size_t)rows + 1;
    int y0 = LINES - 1 - rows - 2;
    attr_t frame = tui_attr(t, TUI_R_HEADER);
    for (int y = y0; y < LINES - 1; y++)
        tui_fill(stdscr, y, 0, COLS, tui_attr(t, TUI_R_NORMAL));
    tui_box(stdscr, y0, 0, rows + 2, COLS, frame,
            "Commands: Tab completes  Up/Down choose  Enter runs  Esc closes");
    if (!p->n)
        tui_putf(stdscr, y0 + 1, 2, COLS - 4, tui_attr(t, TUI_R_DIM),
                 "no command matches \"%s\" (Enter says so; ^U clears)", t->input_buf);
    for (int i = 0; i < rows && p->top + (size_t)i < p->n; i++)
        draw_entry(t, y0 + 1 + i, COLS, p->match[p->top + (size_t)i], p->top + (size_t)i == p->sel);
    if (p->n > p->top + (size_t)rows)
        tui_putf(stdscr, LINES - 2, COLS - 20, 18, frame, " %zu more below ",
                 p->n - p->top - (size_t)rows);
}

void tui_palette_free(struct tui *t)
{
    free(t->palette);
    t->palette = NULL;
}
