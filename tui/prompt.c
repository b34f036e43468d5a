/* The permission prompt: a modal over every screen, drawn by skillgate in
 * its own colours, never from the skill's bytes (which only ever appear
 * sanitized, inside the output pane). Deny is the default; Enter never
 * allows; keys typed before it opened are flushed and keys in its first
 * ARM_MS are ignored; "always" shows the rule and asks to confirm; a
 * countdown shows when silence becomes a deny (the engine's deadline).
 *
 * Nothing of the request is elided: a command is shown whole, one simple
 * command a row as the shell will read it (lineprompt.h), and what does
 * not fit the box scrolls (the move keys). Allow is taken only once every
 * row has been on screen; a request that cannot be shown whole (cut: a
 * field did not fit) is said to be so and can only be denied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "lineprompt.h"
#include "perm.h"
#include "sanitize.h"
#include "tui.h"
#include "util.h"

#define ARM_MS 500

struct tui_prompt_state {
    bool active, confirming, details;
    enum sg_decision confirm_dec; /* what y saves: allow always or deny always */
    /* e while confirming: the rule to keep, narrowed (or widened) by hand */
    bool editing;
    char edit[SG_PREQ_ARGS_MAX + 8400]; /* the longest rule a request keeps fits */
    size_t edit_len;
    char custom[SG_PREQ_ARGS_MAX + 8400];           /* the edited rule, checked; "" none */
    struct sg_perm *perm;
    void (*remote)(void *ctx, enum sg_decision d); /* an attached run's prompt */
    void *remote_ctx;
    struct sg_preq q;
    char *skill, *why, *rule;     /* rule: one per line (an agent's line keeps several) */
    struct sg_prompt_rows cmd;    /* the command's rows (lineprompt.h) */
    int top;                      /* the first body row on screen */
    int rows_n, avail;            /* of the last frame: body rows, and how many fit */
    unsigned char *seen;          /* per body row: it has been on screen */
    int seen_n, seen_w;           /* the layout seen[] is of */
    int unseen_from, unseen_to;   /* rows (1-based) not yet on screen; 0 when none */
    bool session; /* "r" keeps it for the agent's session, not a run */
    size_t queued;
    int64_t shown_ms, deadline_ms, armed_ms;
    uint64_t id; /* the engine's id of the request on screen: the answer names it */
    unsigned ignored;
    bool answered;        /* the person answered the request on screen */
    /* ^C or x: "stop the run?" asked over the prompt (the run screen's own
     * question, whose answer stop_answered passes on); then, once yes,
     * what still comes before the run is over is denied with it, unseen */
    bool stop_asked, stopping;
    uint64_t stop_id;       /* the request on screen when the stop was asked */
    tui_input_done stop_done;
    void *stop_ctx;
    bool drawn_armed;     /* what the last frame showed */
    long long drawn_secs;
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

static void forget(struct tui_prompt_state *s)
{
    free(s->skill), free(s->why), free(s->rule);
    s->skill = s->why = s->rule = NULL;
    sg_prompt_rows_free(&s->cmd);
}

/* What has been on screen is the person's: kept while the same request
 * stays (the queue's counter changes), forgotten for the next. */
static void forget_seen(struct tui_prompt_state *s)
{
    free(s->seen);
    s->seen = NULL;
    s->seen_n = 0;
}

void tui_prompt_free(struct tui *t)
{
    if (t->prompt)
        forget(t->prompt), forget_seen(t->prompt);
    free(t->prompt);
    t->prompt = NULL;
}

bool tui_prompt_active(const struct tui *t)
{
    return t->prompt && t->prompt->active && !(t->prompt->stopping && t->running);
}

void tui_prompt_show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct tui *t = ctx;
    struct tui_prompt_state *s = t->prompt;
    t->dirty = true;
    if (s->active && !s->answered && (!pr || pr->id != s->id)) {
        /* a prompt never just vanishes: say who decided it instead */
        const char *by = s->perm ? sg_perm_last_decided_by(s->perm) : NULL;
        tui_message(t, "decided without you, %s: %s %.200s", by && *by ? by : "the run ended",
                    sg_ptool_name(s->q.tool), s->q.subject);
    }
    if (!pr) {
        s->active = false;
        s->perm = NULL;
        s->remote = NULL;
        return;
    }
    bool fresh = !s->active || pr->id != s->id || pr->shown_ms != s->shown_ms;
    s->id = pr->id;
    s->perm = pr->perm;
    s->remote = NULL;
    s->q = *pr->q;
    forget(s);
    s->skill = sg_xstrdup(pr->skill ? pr->skill : "");
    s->session = pr->session;
    s->why = sg_xstrdup(pr->why ? pr->why : "");
    s->rule = sg_xstrdup(pr->rule ? pr->rule : "");
    sg_prompt_command_rows(&s->q, &s->cmd);
    s->queued = pr->queued;
    s->deadline_ms = pr->deadline_ms;
    if (fresh && s->stopping && t->running) {
        s->answered = true; /* the run is being stopped: the end denies it */
    } else if (fresh) {
        s->shown_ms = pr->shown_ms;
        s->armed_ms = mono_ms() + ARM_MS;
        s->confirming = s->details = s->answered = s->editing = false;
        s->top = 0;
        forget_seen(s);
        s->rows_n = s->unseen_from = s->unseen_to = 1; /* until it is drawn: nothing seen */
        s->custom[0] = '\0';
        s->ignored = 0;
        if (!t->script && !s->stop_asked)
            flushinp(); /* typeahead is not an answer (a y to "Stop the run?" is kept) */
        if (!s->stop_asked) {
            t->input_active = false; /* a half-typed search is not an answer either */
            beep();
        }
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

void tui_prompt_show_remote(struct tui *t, const struct sg_perm_prompt *pr,
                            struct sg_prompt_rows *rows,
                            void (*answer)(void *ctx, enum sg_decision d), void *ctx)
{
    tui_prompt_show(t, pr);
    if (pr) {
        /* the run read the command from its raw bytes: its rows, not ours
         * from the sanitized text */
        sg_prompt_rows_free(&t->prompt->cmd);
        t->prompt->cmd = *rows;
        *rows = (struct sg_prompt_rows){0};
        t->prompt->remote = answer;
        t->prompt->remote_ctx = ctx;
    }
    sg_prompt_rows_free(rows);
}

static void answer(struct tui_prompt_state *s, enum sg_decision d)
{
    s->answered = true;
    if (s->remote) {
        void (*fn)(void *, enum sg_decision) = s->remote;
        void *ctx = s->remote_ctx;
        s->active = false; /* the run says what comes next */
        s->remote = NULL;
        fn(ctx, d);
    } else {
        sg_perm_answer_id(s->perm, s->id, d);
    }
}

/* f: every write in the request's folder, for the rest of this run (a
 * skill's outputs: the first is asked, the rest follow). */
static void answer_folder(struct tui *t, struct tui_prompt_state *s)
{
    cleanup_free char *rule =
        s->remote ? NULL : sg_preq_folder_rule(&s->q, sg_invoking_home());
    if (!rule) {
        char why[256];
        if (!s->remote && !sg_preq_folder_offered(&s->q, sg_invoking_home(), why, sizeof why) &&
            why[0])
            tui_message(t, "f (its folder, this run) is not offered for this place: %s", why);
        else
            tui_message(t, "%s", s->remote ? "an agent's run takes a, r, A, d or D"
                                           : "f is for a skill's Write: its folder, for this run");
        return;
    }
    const char *why;
    s->answered = true;
    if (sg_perm_answer_rule(s->perm, s->id, SG_DEC_ALLOW_RUN, rule, &why) < 0) {
        s->answered = false;
        if (why)
            tui_message(t, "%s", why);
    } else {
        tui_message(t, "this folder, this run; .git/config, .git/hooks, .envrc and the like "
                       "in it are still asked on their own");
    }
}

/* p: the program with any arguments, and the programs of root's it and
 * its children run, for the rest of this run (exec.h) */
static void answer_program(struct tui *t, struct tui_prompt_state *s)
{
    cleanup_free char *rule = s->remote ? NULL : sg_preq_program_rule(&s->q);
    if (!rule) {
        tui_message(t, "%s", s->remote ? "an agent's run takes a, r, A, d or D"
                                       : "p is for a skill's program that is no shell or "
                                         "interpreter (those run any code)");
        return;
    }
    const char *why;
    s->answered = true;
    if (sg_perm_answer_program(s->perm, s->id, &why) < 0) {
        s->answered = false;
        if (why)
            tui_message(t, "%s", why);
    } else {
        tui_message(t, "%s (any arguments) and the system's programs it runs, this run; a "
                       "shell fed code, a file of the skill's or yours, and what they write or "
                       "reach are still asked", rule);
    }
}

/* What e offers first: a program with exactly these arguments (the
 * default keeps the program with any); a Write or Fetch rule as it is, to
 * edit into a glob or a port. */
static char *narrower(struct tui_prompt_state *s)
{
    const struct sg_preq *q = &s->q;
    if (q->tool == SG_PT_BASH && !q->agent_tool[0]) {
        const char *name = q->name[0] ? q->name : strrchr(q->subject, '/') ? strrchr(q->subject, '/') + 1 : q->subject;
        return sg_xasprintf("Bash(%s%s%s)", name, q->args[0] ? " " : "", q->args);
    }
    return sg_xstrdup(s->rule);
}

/* Keys while the rule is being edited: Enter checks it (it must parse and
 * cover this request) and goes back to the y/N question with it; Esc goes
 * back without it. Enter never allows here either. */
static void edit_key(struct tui *t, struct tui_prompt_state *s, int key)
{
    if (key == 27 || key == 3) {
        s->editing = false;
        return;
    }
    if (key == '\n') {
        s->edit[s->edit_len] = '\0';
        struct sg_prule r;
        const char *why = NULL;
        int rc = sg_prule_parse(s->edit, s->confirm_dec == SG_DEC_DENY_ALWAYS ? SG_EFF_DENY
                                                                            : SG_EFF_ALLOW,
                                "grant", &r, &why);
        bool covers = rc == 0 && sg_prule_matches(&r, &s->q);
        if (rc == 0)
            sg_prule_free(&r);
        if (rc < 0 || !covers) {
            tui_message(t, "not that rule: %s", rc < 0 ? why : "it does not cover this request");
            return;
        }
        snprintf(s->custom, sizeof s->custom, "%s", s->edit);
        s->editing = false;
        return;
    }
    if (key == (TUI_KEY_FN | KEY_BACKSPACE) || key == 127 || key == 8) {
        while (s->edit_len && ((unsigned char)s->edit[s->edit_len - 1] & 0xc0) == 0x80)
            s->edit_len--;
        if (s->edit_len)
            s->edit_len--;
    } else if (key == 21) {
        s->edit_len = 0;
    } else if (key >= 32 && !(key & TUI_KEY_FN) && key != 127) {
        char u[8];
        mbstate_t st = {0};
        size_t k = wcrtomb(u, (wchar_t)key, &st);
        if (k != (size_t)-1 && s->edit_len + k < sizeof s->edit)
            memcpy(s->edit + s->edit_len, u, k), s->edit_len += k;
    }
    s->edit[s->edit_len] = '\0';
}

/* The move keys scroll the prompt's rows (whatever else is on screen). */
static bool scroll_key(struct tui *t, struct tui_prompt_state *s, int key)
{
    int page = s->avail > 1 ? s->avail - 1 : 1, last = s->rows_n - s->avail;
    switch (tui_keymap_lookup(&t->keys, key, TUI_G_MOVE)) {
    case TUI_A_UP: s->top--; break;
    case TUI_A_DOWN: s->top++; break;
    case TUI_A_PAGE_UP: s->top -= page; break;
    case TUI_A_PAGE_DOWN: s->top += page; break;
    case TUI_A_HOME: s->top = 0; break;
    case TUI_A_END: s->top = last; break;
    default: return false;
    }
    if (s->top > last)
        s->top = last;
    if (s->top < 0)
        s->top = 0;
    t->dirty = true;
    return true;
}

/* Why an allow (or a rule kept forever) is not taken now, or NULL. */
static const char *no_allow(struct tui *t, struct tui_prompt_state *s, bool deny_always)
{
    if (s->q.cut)
        return "no allow: this request is too long to be shown whole; it can only be denied";
    if (s->unseen_from && !deny_always) {
        tui_message(t, "read it all first: rows %d-%d of %d have not been on screen (Down, "
                       "PgDn, End scroll)", s->unseen_from, s->unseen_to, s->rows_n);
        return "";
    }
    return NULL;
}

/* The first key bound to a, as the help names it ("" when none is). */
static void first_key(const struct tui *t, enum tui_action a, char *out, size_t n)
{
    tui_keymap_describe(&t->keys, a, out, n);
    out[strcspn(out, " ")] = '\0';
}

/* "x or ^C" (or "^C" alone when the stop key is unbound) */
static void stop_keys(const struct tui *t, char *out, size_t n)
{
    char k[24];
    first_key(t, TUI_A_DELETE, k, sizeof k);
    snprintf(out, n, "%s%s^C", k, k[0] ? " or " : "");
}

/* y to "stop the run?" asked over the prompt: the run screen's own answer
 * stops the run, and the sandbox is killed at once; the request that was
 * on screen when the stop was asked is denied in the person's name when
 * the run ends and what waits behind it "the run ended" (never now: a deny
 * answered before every process is dead woke the skill, which ran on).
 * Anything else: back to the prompt, which still waits. */
static void stop_answered(struct tui *t, const char *text, void *ctx)
{
    struct tui_prompt_state *s = t->prompt;
    (void)ctx;
    tui_input_done done = s->stop_done;
    void *dctx = s->stop_ctx;
    s->stop_asked = false;
    s->stop_done = NULL;
    bool yes = text && (text[0] == 'y' || text[0] == 'Y');
    struct sg_perm *perm = yes && s->active && !s->remote ? s->perm : NULL;
    if (perm)
        s->stopping = s->answered = true;
    if (done)
        done(t, text, dctx);
    if (perm) { /* the request on screen when the person asked to stop */
        sg_perm_deny_at_end(perm, s->stop_id);
        tui_run_stop_now(t);
    }
}

/* ^C or x with a request open: stopping is always possible. A run of
 * ours asks first (the run screen's question, taken over to say what
 * becomes of the requests); an agent's request is denied (its run is
 * the agent's to stop). */
static void ask_stop(struct tui *t, struct tui_prompt_state *s)
{
    struct tui_view *v = &t->views[TUI_S_RUN];
    s->confirming = false;
    if (s->remote || !t->running || !v->ops->request(t, v, TUI_A_DELETE) || !t->input_active ||
        !t->input_confirm) {
        bool remote = s->remote != NULL;
        answer(s, SG_DEC_DENY);
        tui_message(t, "%s", remote ? "denied; an agent's run is stopped by its agent, not here"
                                    : "denied");
        return;
    }
    s->stop_asked = true;
    s->stop_id = s->id;
    s->stop_done = t->input_done;
    s->stop_ctx = t->input_ctx;
    t->input_done = stop_answered;
    t->input_ctx = NULL;
    if (s->queued > 1)
        snprintf(t->input_label, sizeof t->input_label,
                 "Stop the run (this request and %zu waiting denied, all killed)? y/N ",
                 s->queued - 1);
    else
        snprintf(t->input_label, sizeof t->input_label,
                 "Stop the run (this request denied, every process killed)? y/N ");
}

/* Keys that stop or leave, while a request is open: ^C and the run's
 * stop key (x) stop; the leave key (q) says how. A key the prompt itself
 * is bound to (keys: in the config) stays the prompt's. */
static bool leave_key(struct tui *t, struct tui_prompt_state *s, int key)
{
    if (s->editing || (key != 3 && tui_keymap_lookup(&t->keys, key, TUI_G_PROMPT)))
        return false;
    if (key == 3 || tui_keymap_lookup(&t->keys, key, TUI_G_VIEW) == TUI_A_DELETE) {
        ask_stop(t, s);
        return true;
    }
    if (tui_keymap_lookup(&t->keys, key, TUI_G_GLOBAL) != TUI_A_QUIT)
        return false;
    char deny[24], stop[40], quit[24];
    first_key(t, TUI_A_P_DENY, deny, sizeof deny);
    first_key(t, TUI_A_QUIT, quit, sizeof quit);
    stop_keys(t, stop, sizeof stop);
    if (s->remote)
        tui_message(t, "a request waits: %s denies it (an agent's run is its agent's to stop), "
                       "then %s leaves", deny, quit);
    else
        tui_message(t, "a request waits: %s denies it, %s stops the run, then %s leaves", deny,
                    stop, quit);
    return true;
}

void tui_prompt_key(struct tui *t, int key)
{
    struct tui_prompt_state *s = t->prompt;
    if (leave_key(t, s, key))
        return; /* armed or not: it only asks, or denies */
    if (mono_ms() < s->armed_ms) {
        s->ignored++;
        return;
    }
    t->message[0] = '\0';
    if (s->editing) {
        edit_key(t, s, key);
        return;
    }
    if (s->confirming) {
        if (scroll_key(t, s, key))
            return; /* the rule(s) above may need reading */
        if (key == 'e' && !s->remote) {
            cleanup_free char *r = s->custom[0] ? sg_xstrdup(s->custom) : narrower(s);
            if (strchr(r, '\n') || strlen(r) >= sizeof s->edit) {
                tui_message(t, "%s: y keeps %s as shown", strchr(r, '\n')
                                ? "one rule per command" : "too long to edit here",
                            strchr(r, '\n') ? "them" : "it");
                return;
            }
            s->editing = true;
            snprintf(s->edit, sizeof s->edit, "%s", r);
            s->edit_len = strlen(s->edit);
            return;
        }
        if (key == 'e')
            tui_message(t, "an agent's run keeps the rule shown; narrow it with a rule of "
                           "your own (--policy)");
        s->confirming = false;
        if ((key == 'y' || key == 'Y') && s->custom[0]) {
            const char *why;
            s->answered = true;
            if (sg_perm_answer_rule(s->perm, s->id, s->confirm_dec, s->custom, &why) < 0)
                s->answered = false; /* settled meanwhile: the engine says by whom */
        } else if (key == 'y' || key == 'Y') {
            answer(s, s->confirm_dec);
        }
        return; /* anything else: back to the question, which still waits */
    }
    enum tui_action act = tui_keymap_lookup(&t->keys, key, TUI_G_PROMPT);
    if (act == TUI_A_P_ONCE || act == TUI_A_P_RUN || act == TUI_A_P_ALWAYS ||
        act == TUI_A_P_FOLDER || act == TUI_A_P_PROGRAM || act == TUI_A_P_DENY_ALWAYS) {
        const char *why = no_allow(t, s, act == TUI_A_P_DENY_ALWAYS);
        if (why && act == TUI_A_P_DENY_ALWAYS && s->q.cut)
            why = "no rule kept: this request is not shown whole (d denies it)";
        if (why) {
            if (why[0])
                tui_message(t, "%s", why);
            return;
        }
    }
    switch (act) {
    case TUI_A_P_ONCE: answer(s, SG_DEC_ALLOW_ONCE); break;
    case TUI_A_P_RUN: answer(s, SG_DEC_ALLOW_RUN); break;
    case TUI_A_P_FOLDER: answer_folder(t, s); break;
    case TUI_A_P_PROGRAM: answer_program(t, s); break;
    /* a rule kept forever, either way, is shown and confirmed first */
    case TUI_A_P_ALWAYS: s->confirming = true, s->confirm_dec = SG_DEC_ALLOW_ALWAYS; break;
    case TUI_A_P_DENY: answer(s, SG_DEC_DENY); break;
    case TUI_A_P_DENY_ALWAYS: s->confirming = true, s->confirm_dec = SG_DEC_DENY_ALWAYS; break;
    case TUI_A_P_DETAILS: s->details = !s->details; break;
    default:
        if (key == (TUI_KEY_FN | KEY_RESIZE))
            t->resized = true;
        else if (!scroll_key(t, s, key))
            tui_message(t, "%s; %s", s->q.cut ? "the prompt takes d or ? here (no allow: it is "
                                                "not shown whole)"
                                              : "the prompt takes a, r, A, d, D or ? (Enter "
                                                "never allows); the move keys scroll it",
                        s->remote ? "x or ^C denies" : "x or ^C stops the run");
    }
}

/* The prompt's rows: a label and a value, the value wrapped by cell width
 * (words stay whole where they can), every row of it kept: the box
 * scrolls, it never elides. */
struct rows {
    struct {
        const char *label;
        char *text;
        bool alert; /* drawn in the high-risk colour */
    } *r;
    int n;
    size_t cap;
};

static void add_row(struct rows *r, const char *label, char *text, bool alert)
{
    sg_grow(&r->r, &r->cap, (size_t)r->n + 1, sizeof *r->r);
    r->r[r->n].label = label;
    r->r[r->n].alert = alert;
    r->r[r->n++].text = text;
}

static void add_wrapped_as(struct rows *r, const char *label, const char *value, int width,
                           bool alert)
{
    cleanup_free char *san = sg_sanitize_str(value, 0);
    const char *p = san, *start = san, *space = NULL;
    int cells = 0, space_cells = 0, nc = 0;
    mbstate_t st = {0};
    if (width < 1)
        width = 1;
    while (*p) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, p, strlen(p), &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
            k = 1, wc = L'?';
        int cw = wcwidth(wc);
        if (cw < 0)
            cw = 1;
        if (cells + cw > width && p > start) {
            if (space && space > start) { /* at the last space: words stay whole */
                add_row(r, nc++ ? "" : label, sg_xstrndup(start, (size_t)(space - start)), alert);
                cells -= space_cells + 1;
                start = space + 1;
            } else { /* a path, or a word wider than the row: at the edge */
                add_row(r, nc++ ? "" : label, sg_xstrndup(start, (size_t)(p - start)), alert);
                start = p;
                cells = 0;
            }
            space = NULL;
        }
        if (*p == ' ')
            space = p, space_cells = cells;
        cells += cw;
        p += k;
    }
    if (*start || !nc)
        add_row(r, nc ? "" : label, sg_xstrdup(start), alert);
}

static void add_wrapped(struct rows *r, const char *label, const char *value, int width)
{
    add_wrapped_as(r, label, value, width, false);
}

static void rows_free(struct rows *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->r[i].text);
    free(r->r);
    *r = (struct rows){0};
}

void tui_prompt_tick(struct tui *t)
{
    struct tui_prompt_state *s = t->prompt;
    if (s && s->stopping && !t->running)
        s->stopping = false; /* that run is over */
    if (!s || !s->active)
        return;
    int64_t now = mono_ms();
    long long secs = (s->deadline_ms - now + 999) / 1000;
    bool armed = now >= s->armed_ms;
    if (armed != s->drawn_armed || secs != s->drawn_secs)
        t->dirty = true; /* the arming and each second of the countdown are shown */
}

/* The request's rows: what it is (a command one simple command a row),
 * the risk, why, the rules an answer keeps, and with ? more. */
static void request_rows(struct tui_prompt_state *s, struct rows *lp, int vw, bool agent,
                         bool other, bool any_code, const char *risk_why)
{
    const struct sg_preq *q = &s->q;
    struct rows l = *lp;
    char port[16];
    if (q->cut)
        add_wrapped_as(&l, "NOT ALL", SG_PROMPT_CUT_NOTICE, vw, true);
    if (agent)
        add_wrapped(&l, "tool", q->agent_tool, vw);
    if (other && q->tool == SG_PT_WRITE) { /* a reader's (Read, LS): its path, as the line
                                             * prompt shows it */
        add_wrapped(&l, "path", q->subject, vw);
    } else if (other) {
        add_wrapped(&l, "input", q->args[0] ? q->args : "(none)", vw);
    } else if (q->tool == SG_PT_BASH) {
        /* whole, and as the shell will read it: one simple command a row */
        for (size_t i = 0; i < s->cmd.n; i++)
            add_wrapped(&l, s->cmd.r[i].label, s->cmd.r[i].text, vw);
        if (q->cwd[0])
            add_wrapped(&l, "cwd", q->cwd, vw);
    } else if (q->tool == SG_PT_FETCH) {
        add_wrapped(&l, "host", q->subject, vw);
        snprintf(port, sizeof port, "%d", q->port);
        if (q->port > 0)
            add_wrapped(&l, "port", port, vw);
    } else if (q->tool == SG_PT_CONNECT) {
        add_wrapped(&l, "socket", q->subject, vw);
    } else {
        add_wrapped(&l, "path", q->subject, vw);
        /* yes writes the real file on this machine, not a copy in the sandbox */
        cleanup_free char *real = q->host[0] && strcmp(q->host, q->subject)
                                      ? sg_xasprintf("%s (the real file on this machine)", q->host)
                                      : sg_xstrdup("this path itself: the real file, not a copy "
                                                   "in the sandbox");
        add_wrapped(&l, "on host", real, vw);
        add_wrapped(&l, "call", q->args, vw);
    }
    if (risk_why[0])
        add_wrapped(&l, "risk", risk_why, vw);
    if (q->detail[0])
        add_wrapped(&l, "note", q->detail, vw);
    add_wrapped(&l, "why", s->why, vw);
    /* the rule(s) "always" keeps, each on its own row (one per command of
     * an agent's line); none for what cannot be allowed */
    bool several = strchr(s->rule, '\n') != NULL;
    const char *rule1 = several ? (q->agent_tool[0] ? "these rules" : "these grants") : s->rule;
    cleanup_free char *al =
        !s->rule[0] ? sg_xstrdup("keeps no rule: the same is asked again next time")
        : agent    ? sg_xasprintf("saves %s for %s, every session%s", rule1, s->skill,
                                  any_code ? ": any code, forever" : "")
        : any_code ? sg_xasprintf("saves %s for this version of %s: any code, forever", rule1,
                                  s->skill)
                   : sg_xasprintf("saves %s for this version of %s", rule1, s->skill);
    if (!q->cut)
        add_wrapped(&l, "always", al, vw);
    for (const char *r = s->rule; several && !q->cut;) {
        size_t k = strcspn(r, "\n");
        cleanup_free char *one = sg_xstrndup(r, k);
        add_wrapped(&l, "", one, vw);
        if (!r[k])
            break;
        r += k + 1;
    }
    if (s->custom[0])
        add_wrapped(&l, "keeps", s->custom, vw);
    if (s->details) {
        add_wrapped(&l, "if yes",
                    agent ? "the agent does it itself, outside any sandbox"
                    : q->tool == SG_PT_WRITE ? "skillgate opens exactly this path itself"
                    : q->tool == SG_PT_FETCH ? "the sandbox's proxy lets this name through"
                    : q->tool == SG_PT_CONNECT ? "skillgate connects the skill to this very "
                                                 "socket; the daemon behind it acts outside "
                                                 "the sandbox"
                                             : "the program runs inside the same sandbox: files "
                                               "and network stay confined", vw);
        char qn[64];
        snprintf(qn, sizeof qn, "%zu waiting, this one first", s->queued);
        add_wrapped(&l, "queue", qn, vw);
        if (s->ignored) {
            snprintf(qn, sizeof qn, "%u key%s typed as it opened", s->ignored,
                     s->ignored == 1 ? "" : "s");
            add_wrapped(&l, "ignored", qn, vw);
        }
    }
    *lp = l;
}

/* Which body rows have been on screen (allow waits for all of them). */
static void track_seen(struct tui_prompt_state *s, int n, int avail, int vw)
{
    if (s->seen_n != n || s->seen_w != vw) { /* another layout: what was seen is again to see */
        free(s->seen);
        s->seen = sg_xcalloc((size_t)n + 1, 1);
        s->seen_n = n;
        s->seen_w = vw;
    }
    for (int i = s->top; i < s->top + avail && i < n; i++)
        s->seen[i] = 1;
    s->unseen_from = s->unseen_to = 0;
    for (int i = 0; i < n; i++)
        if (!s->seen[i]) {
            if (!s->unseen_from)
                s->unseen_from = i + 1;
            s->unseen_to = i + 1;
        }
}

/* The line of keys (or the rule being edited, or the question of
 * "always"), and the countdown. */
static void draw_footer(struct tui *t, struct tui_prompt_state *s, int y, int x, int w, int h,
                        bool any_code)
{
    const struct sg_preq *q = &s->q;
    attr_t a = tui_attr(t, TUI_R_PROMPT), ta = tui_attr(t, TUI_R_PROMPT_TITLE);
    int row;
    row = y + h - 3;
    if (s->stop_asked) { /* the question itself is on the status line */
        tui_putf(stdscr, row, x + 2, w - 4, ta | A_BOLD,
                 "Stop the run? y stops it, any other key goes back to this request");
    } else if (s->editing) {
        /* the end of what is typed stays in view */
        int lw = tui_putf(stdscr, row, x + 2, w - 4, ta, "rule: ");
        const char *e = s->edit;
        while (*e && tui_width(e, strlen(e)) > w - 6 - lw)
            e++;
        int ew = tui_put(stdscr, row, x + 2 + lw, w - 5 - lw, e, strlen(e), a);
        tui_put(stdscr, row, x + 2 + lw + ew, 1, "_", 1, a | A_BLINK);
    } else if (s->confirming) {
        /* the rule when it fits; else it is the one the rows above show */
        const char *how = s->confirm_dec == SG_DEC_DENY_ALWAYS ? "Always deny" : "Always allow";
        const char *rule = s->custom[0] ? s->custom : s->rule;
        const char *keys = s->remote ? "y saves it, other keys go back"
                                     : "y saves it, e narrows it, other keys go back";
        cleanup_free char *ask = sg_xasprintf("%s %s? %s", how, rule, keys);
        if (tui_width(ask, strlen(ask)) > w - 4 || strchr(rule, '\n')) {
            free(ask);
            ask = sg_xasprintf("%s (the rule%s above)? %s", how, strchr(rule, '\n') ? "s" : "",
                               keys);
        }
        if (any_code && s->confirm_dec == SG_DEC_ALLOW_ALWAYS && !s->custom[0]) {
            free(ask);
            ask = sg_xasprintf("ANY code, forever? y saves it, e narrows it, other keys back");
        }
        tui_put(stdscr, row, x + 2, w - 4, ask, strlen(ask), ta);
    } else {
        char k[8][24];
        static const enum tui_action acts[] = {TUI_A_P_ONCE, TUI_A_P_RUN, TUI_A_P_ALWAYS,
                                               TUI_A_P_DENY, TUI_A_P_DENY_ALWAYS, TUI_A_P_DETAILS,
                                               TUI_A_P_FOLDER, TUI_A_P_PROGRAM};
        cleanup_free char *folder =
            s->remote ? NULL : sg_preq_folder_rule(q, sg_invoking_home());
        cleanup_free char *program = s->remote || folder ? NULL : sg_preq_program_rule(q);
        for (size_t i = 0; i < SG_ARRAY_LEN(acts); i++)
            tui_keymap_describe(&t->keys, acts[i], k[i], sizeof k[i]);
        bool is_program = program != NULL;
        if (program) { /* the same place: one of the two is offered */
            folder = steal_pointer(&program);
            snprintf(k[6], sizeof k[6], "%s", k[7]);
        }
        if (q->cut) /* nothing to allow: the keys that deny, and why */
            tui_putf(stdscr, row, x + 2, w - 4, ta | A_BOLD,
                     "NO ALLOW: not shown whole.  %s deny  %s more", k[3], k[5]);
        else if (s->unseen_from) /* allow comes once it has all been on screen */
            tui_putf(stdscr, row, x + 2, w - 4, ta,
                     "read all %d rows to allow (%d-%d not yet)  %s deny  %s never  %s more",
                     s->rows_n, s->unseen_from, s->unseen_to, k[3], k[4], k[5]);
        else
            tui_putf(stdscr, row, x + 2, w - 4, ta,
                     "%s once  %s %s  %s%s%s%s always  %s deny  %s never  %s more", k[0], k[1],
                     s->session ? "session" : "run", folder ? k[6] : "",
                     !folder                   ? ""
                     : is_program              ? " program, any args, +what it runs, this "
                                               : " folder, this ",
                     folder ? (s->session ? "session  " : "run  ") : "",
                     k[2], k[3], k[4], k[5]);
    }
    int64_t now = mono_ms();
    long long secs = (s->deadline_ms - now + 999) / 1000;
    if (secs < 0)
        secs = 0;
    bool armed = now >= s->armed_ms;
    s->drawn_armed = armed;
    s->drawn_secs = secs;
    char stop[64] = ""; /* once armed, how to stop */
    if (armed && !s->remote) {
        stop_keys(t, stop, sizeof stop - 20);
        snprintf(stop + strlen(stop), 20, " stops the run.");
    }
    if (s->editing)
        tui_putf(stdscr, row + 1, x + 2, w - 4, a,
                 "Deny in %lld s. Enter keeps the rule (it must cover this), Esc goes back.", secs);
    else
        tui_putf(stdscr, row + 1, x + 2, w - 4, a, "%sDeny in %lld s. Enter never allows.%s%s",
                 armed ? "" : "Keys are ignored for a moment. ", secs, stop[0] ? " " : "", stop);
}

void tui_prompt_draw(struct tui *t)
{
    struct tui_prompt_state *s = t->prompt;
    const struct sg_preq *q = &s->q;
    int w = COLS >= 100 ? (COLS - 4 < 110 ? COLS - 4 : 110) : COLS;
    int x = (COLS - w) / 2, vw = w - 13;
    struct rows l = {0};
    bool agent = q->agent_tool[0] != '\0'; /* the agent runs it itself (the hook) */
    bool other = agent && sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) < 0;
    const char *what = other                   ? "use a tool"
                       : q->tool == SG_PT_BASH  ? "run a program"
                       : q->tool == SG_PT_FETCH ? "reach a host"
                       : q->tool == SG_PT_CONNECT ? "connect to a host socket"
                                                : "write a file";
    /* the risk weighs what it reaches: /etc/cron.d is not the skill's folder */
    char risk_why[160];
    enum sg_risk_level lvl = sg_preq_risk(q, sg_invoking_home(), risk_why, sizeof risk_why);
    char risk[48];
    /* a reader's request (an agent's Read, LS) travels as a Write's path:
     * it is named as what it is */
    snprintf(risk, sizeof risk, "%.20s, %s risk",
             other && q->tool == SG_PT_WRITE ? q->agent_tool : sg_ptool_name(q->tool),
             lvl == SG_RL_HIGH ? "high" : lvl == SG_RL_MEDIUM ? "medium" : "low");
    enum tui_role rr = lvl == SG_RL_HIGH     ? TUI_R_RISK_HIGH
                       : lvl == SG_RL_MEDIUM ? TUI_R_RISK_MEDIUM
                                             : TUI_R_RISK_LOW;
    /* any command of it that runs whatever code it is given */
    bool any_code = q->tool == SG_PT_BASH &&
                    (s->cmd.any_code || sg_program_runs_any_code(q->subject));
    request_rows(s, &l, vw, agent, other, any_code, risk_why);
    int h = l.n + 6;
    if (h > LINES - 2)
        h = LINES - 2;
    int y = (LINES - h) / 2;
    /* the body: rows y+2 .. y+h-5; one that does not fit scrolls, and the
     * row under it says where it is */
    int avail = h - 6 > 0 ? h - 6 : 0;
    if (vw < 8)
        avail = 0; /* too narrow to show anything: nothing counts as seen */
    if (s->top > l.n - avail)
        s->top = l.n - avail;
    if (s->top < 0)
        s->top = 0;
    s->rows_n = l.n;
    s->avail = avail;
    track_seen(s, l.n, avail, vw);
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
    for (int i = s->top; i < l.n && i < s->top + avail; i++, row++) {
        attr_t la = l.r[i].alert ? tui_attr(t, TUI_R_RISK_HIGH) | A_REVERSE : ta;
        tui_putf(stdscr, row, x + 2, 9, la, "%s", l.r[i].label);
        tui_put(stdscr, row, x + 11, vw, l.r[i].text, strlen(l.r[i].text),
                l.r[i].alert ? tui_attr(t, TUI_R_RISK_HIGH) : a);
    }
    if (l.n > avail && h >= 4) {
        char k[4][24];
        static const enum tui_action mv[] = {TUI_A_DOWN, TUI_A_UP, TUI_A_PAGE_DOWN, TUI_A_END};
        for (size_t i = 0; i < SG_ARRAY_LEN(mv); i++)
            tui_keymap_describe(&t->keys, mv[i], k[i], sizeof k[i]);
        if (avail)
            tui_putf(stdscr, y + h - 4, x + 2, w - 4, ta | A_REVERSE,
                     " rows %d-%d of %d%s: %s / %s scroll, %s page, %s end ", s->top + 1,
                     s->top + avail, l.n, s->unseen_from ? ", more below" : "", k[0], k[1],
                     k[2], k[3]);
        else
            tui_putf(stdscr, y + h - 4 > y ? y + h - 4 : y, x + 2, w - 4, ta | A_REVERSE,
                     " the terminal is too small to show this request: enlarge it ");
    }
    rows_free(&l);
    draw_footer(t, s, y, x, w, h, any_code);
}
