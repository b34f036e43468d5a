/* The permission prompt: a modal over every screen, drawn by skillgate in
 * its own colours, never from the skill's bytes (which only ever appear
 * sanitized, inside the output pane). Deny is the default; Enter never
 * allows; keys typed before it opened are flushed and keys in its first
 * ARM_MS are ignored; "always" shows the rule and asks to confirm; a
 * countdown shows when silence becomes a deny (the engine's deadline). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perm.h"
#include "tui.h"
#include "util.h"

#define ARM_MS 500

struct tui_prompt_state {
    bool active, confirming, details;
    struct sg_perm *perm;
    struct sg_preq q;
    char skill[128], why[160], rule[4200];
    size_t queued;
    int64_t shown_ms, deadline_ms, armed_ms;
    unsigned ignored;
};

/* The engine's deadlines are CLOCK_MONOTONIC: so is every time here. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tui_prompt_init(struct tui *t)
{
    t->prompt = sg_xcalloc(1, sizeof *t->prompt);
}

void tui_prompt_free(struct tui *t)
{
    free(t->prompt);
    t->prompt = NULL;
}

bool tui_prompt_active(const struct tui *t)
{
    return t->prompt && t->prompt->active;
}

void tui_prompt_show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct tui *t = ctx;
    struct tui_prompt_state *s = t->prompt;
    t->dirty = true;
    if (!pr) {
        s->active = false;
        s->perm = NULL;
        return;
    }
    bool fresh = !s->active || pr->shown_ms != s->shown_ms;
    s->perm = pr->perm;
    s->q = *pr->q;
    snprintf(s->skill, sizeof s->skill, "%s", pr->skill);
    snprintf(s->why, sizeof s->why, "%s", pr->why);
    snprintf(s->rule, sizeof s->rule, "%s", pr->rule);
    s->queued = pr->queued;
    s->deadline_ms = pr->deadline_ms;
    if (fresh) {
        s->shown_ms = pr->shown_ms;
        s->armed_ms = mono_ms() + ARM_MS;
        s->confirming = s->details = false;
        s->ignored = 0;
        if (!t->script)
            flushinp(); /* typeahead is not an answer */
        t->input_active = false; /* a half-typed search is not an answer either */
        beep();
    }
    s->active = true;
}

int tui_prompt_timeout(const struct tui *t)
{
    if (!tui_prompt_active(t))
        return -1;
    int64_t now = mono_ms();
    if (now < t->prompt->armed_ms)
        return (int)(t->prompt->armed_ms - now);
    return (int)(1000 - (t->prompt->deadline_ms - now) % 1000);
}

void tui_prompt_key(struct tui *t, int key)
{
    struct tui_prompt_state *s = t->prompt;
    if (mono_ms() < s->armed_ms) {
        s->ignored++;
        return;
    }
    if (s->confirming) {
        s->confirming = false;
        if (key == 'y' || key == 'Y')
            sg_perm_answer(s->perm, SG_DEC_ALLOW_ALWAYS);
        else
            tui_message(t, "not saved; the request still waits");
        return;
    }
    switch (tui_keymap_lookup(&t->keys, key, TUI_G_PROMPT)) {
    case TUI_A_P_ONCE: sg_perm_answer(s->perm, SG_DEC_ALLOW_ONCE); break;
    case TUI_A_P_RUN: sg_perm_answer(s->perm, SG_DEC_ALLOW_RUN); break;
    case TUI_A_P_ALWAYS: s->confirming = true; break;
    case TUI_A_P_DENY: sg_perm_answer(s->perm, SG_DEC_DENY); break;
    case TUI_A_P_DENY_ALWAYS: sg_perm_answer(s->perm, SG_DEC_DENY_ALWAYS); break;
    case TUI_A_P_DETAILS: s->details = !s->details; break;
    default:
        if (key == (TUI_KEY_FN | KEY_RESIZE))
            t->resized = true;
        else
            tui_message(t, "the prompt takes a, r, A, d, D or ? (Enter never allows)");
    }
}

struct lines {
    const char *label[16];
    char value[16][4300];
    enum tui_role role[16];
    int n;
};

static void add(struct lines *l, const char *label, enum tui_role role, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(struct lines *l, const char *label, enum tui_role role, const char *fmt, ...)
{
    if (l->n >= 16)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->value[l->n], sizeof l->value[l->n], fmt, ap);
    va_end(ap);
    l->label[l->n] = label;
    l->role[l->n++] = role;
}

void tui_prompt_draw(struct tui *t)
{
    struct tui_prompt_state *s = t->prompt;
    const struct sg_preq *q = &s->q;
    static struct lines l;
    l.n = 0;
    const char *what = q->tool == SG_PT_BASH   ? "run a program"
                       : q->tool == SG_PT_FETCH ? "reach a host"
                                                : "write a file";
    const char *risk = q->tool == SG_PT_BASH ? "Bash, high risk" : q->tool == SG_PT_FETCH
                                                                       ? "Fetch, medium risk"
                                                                       : "Write, medium risk";
    enum tui_role rr = q->tool == SG_PT_BASH ? TUI_R_RISK_HIGH : TUI_R_RISK_MEDIUM;
    if (q->tool == SG_PT_BASH) {
        add(&l, "program", TUI_R_PROMPT, "%s", q->subject);
        add(&l, "argv", TUI_R_PROMPT, "%s", q->args[0] ? q->args : "(none)");
        add(&l, "cwd", TUI_R_PROMPT, "%s", q->cwd[0] ? q->cwd : "?");
    } else if (q->tool == SG_PT_FETCH) {
        add(&l, "host", TUI_R_PROMPT, "%s", q->subject);
        if (q->port > 0)
            add(&l, "port", TUI_R_PROMPT, "%d", q->port);
    } else {
        add(&l, "path", TUI_R_PROMPT, "%s", q->subject);
        add(&l, "call", TUI_R_PROMPT, "%s", q->args);
    }
    if (q->detail[0])
        add(&l, "note", TUI_R_PROMPT, "%s", q->detail);
    add(&l, "why", TUI_R_PROMPT, "%s", s->why);
    add(&l, "always", TUI_R_PROMPT, "saves %s (for this version of %s)", s->rule, s->skill);
    if (s->details) {
        add(&l, "", TUI_R_PROMPT, "%s", "");
        add(&l, "decides", TUI_R_PROMPT, "%s",
            q->tool == SG_PT_WRITE ? "skillgate opens exactly this path itself if you allow"
            : q->tool == SG_PT_FETCH ? "the sandbox's proxy lets this name through if you allow"
                                     : "the program runs inside the sandbox if you allow; files "
                                       "and network stay confined");
        add(&l, "queue", TUI_R_PROMPT, "%zu request%s waiting, this one first", s->queued,
            s->queued == 1 ? "" : "s");
        if (s->ignored)
            add(&l, "ignored", TUI_R_PROMPT, "%u key%s typed as it opened", s->ignored,
                s->ignored == 1 ? "" : "s");
    }
    int w = COLS - 4 < 78 ? COLS - 4 : 78;
    int h = l.n + 7;
    if (h > LINES - 2)
        h = LINES - 2;
    int y = (LINES - h) / 2, x = (COLS - w) / 2;
    attr_t a = tui_attr(t, TUI_R_PROMPT), ta = tui_attr(t, TUI_R_PROMPT_TITLE);
    for (int r = 0; r < h; r++)
        tui_fill(stdscr, y + r, x, w, a);
    char title[96];
    if (s->queued > 1)
        snprintf(title, sizeof title, "skillgate: permission request (1 of %zu)", s->queued);
    else
        snprintf(title, sizeof title, "skillgate: permission request");
    tui_box(stdscr, y, x, h, w, ta, title);
    int row = y + 1;
    int c = tui_putf(stdscr, row, x + 2, w - 4, ta, "%s asks to %s  ", s->skill, what);
    tui_putf(stdscr, row++, x + 2 + c, w - 4 - c, tui_attr(t, rr) | A_REVERSE, " %s ", risk);
    row++;
    for (int i = 0; i < l.n && row < y + h - 3; i++, row++) {
        tui_putf(stdscr, row, x + 2, 9, ta, "%s", l.label[i]);
        tui_put(stdscr, row, x + 11, w - 13, l.value[i], strlen(l.value[i]), tui_attr(t, l.role[i]));
    }
    row = y + h - 3;
    if (s->confirming) {
        tui_putf(stdscr, row, x + 2, w - 4, ta, "Save the grant %s? y saves, any other key goes back",
                 s->rule);
    } else {
        char k[7][24];
        static const enum tui_action acts[] = {TUI_A_P_ONCE, TUI_A_P_RUN, TUI_A_P_ALWAYS,
                                               TUI_A_P_DENY, TUI_A_P_DENY_ALWAYS, TUI_A_P_DETAILS};
        for (size_t i = 0; i < SG_ARRAY_LEN(acts); i++)
            tui_keymap_describe(&t->keys, acts[i], k[i], sizeof k[i]);
        tui_putf(stdscr, row, x + 2, w - 4, ta,
                 "[%s] once  [%s] this run  [%s] always  [%s] deny  [%s] always deny  [%s] more",
                 k[0], k[1], k[2], k[3], k[4], k[5]);
    }
    int64_t left = s->deadline_ms - mono_ms();
    bool armed = mono_ms() >= s->armed_ms;
    tui_putf(stdscr, row + 1, x + 2, w - 4, a, "%s deny in %lld s. Enter never allows.",
             armed ? "Silence is a" : "Keys wait a moment (typeahead is ignored).",
             (long long)(left > 0 ? (left + 999) / 1000 : 0));
}
