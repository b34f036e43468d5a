#include "lineprompt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sanitize.h"
#include "shellcmd.h"
#include "util.h"

#define ARM_MS 500 /* keys typed before the prompt was seen do not count */

/* ---- what every prompt shows of a command (lineprompt.h) ---- */

void sg_prompt_rows_add(struct sg_prompt_rows *rows, const char *label, const char *text)
{
    sg_grow(&rows->r, &rows->cap, rows->n + 1, sizeof *rows->r);
    rows->r[rows->n++] = (struct sg_prompt_row){sg_xstrdup(label), sg_sanitize_str(text, 0)};
}

void sg_prompt_rows_free(struct sg_prompt_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++)
        free(rows->r[i].label), free(rows->r[i].text);
    free(rows->r);
    *rows = (struct sg_prompt_rows){0};
}

static bool agent_bash(const struct sg_preq *q)
{
    return q->agent_tool[0] &&
           sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) == (int)SG_PT_BASH;
}

bool sg_prompt_is_command(const struct sg_preq *q)
{
    return q->tool == SG_PT_BASH && (!q->agent_tool[0] || agent_bash(q));
}

/* The rows of a line read as the shell reads it: each simple command with
 * the operator after it, numbered when there are several ("cmd 2"); label
 * names the line ("command", or "sh -c" for a row of its own above). */
static void line_rows(struct sg_prompt_rows *out, const char *label, const char *line)
{
    struct sg_shell sh;
    const char *why = NULL;
    if (sg_shell_parse(line, &sh, &why) < 0) {
        out->any_code = true; /* what it runs is not known */
        cleanup_free char *t = sg_xasprintf("cannot be read exactly (%s): as written, line "
                                            "by line:", why ? why : "?");
        sg_prompt_rows_add(out, label, t);
        size_t nl = 0;
        for (const char *p = line; *p; p++)
            nl += *p == '\n';
        const char *p = line;
        for (size_t i = 0;; i++) {
            size_t k = strcspn(p, "\n");
            cleanup_free char *l = sg_xstrndup(p, k);
            cleanup_free char *lab = nl ? sg_xasprintf("line %zu", i + 1) : sg_xstrdup("");
            sg_prompt_rows_add(out, lab, l);
            if (!p[k])
                break;
            p += k + 1;
        }
        return;
    }
    bool numbered = sh.n > 1 || strcmp(label, "command");
    if (strcmp(label, "command"))
        sg_prompt_rows_add(out, label, "runs, as the shell reads it:");
    for (size_t i = 0; i < sh.n; i++) {
        const struct sg_shell_cmd *c = &sh.cmds[i];
        cleanup_free char *w = sg_shell_join(c);
        const char *op = !strcmp(c->op, "\n") ? "(newline)" : c->op;
        cleanup_free char *t = sg_xasprintf("%s%s%s", w, op[0] ? "  " : "", op);
        cleanup_free char *lab = numbered ? sg_xasprintf("cmd %zu", i + 1) : sg_xstrdup(label);
        sg_prompt_rows_add(out, lab, t);
        out->any_code |= c->argc && sg_program_runs_any_code(c->argv[0]);
    }
    sg_shell_free(&sh);
}

/* A shell given -c (sh -c, bash -lc, sh -e -c): its script, else NULL.
 * Approximate, and only ever shown in addition to the argv itself. */
static const char *shell_script(const char *program, const struct sg_shell *sh)
{
    static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"};
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    bool shell = false;
    for (size_t i = 0; i < SG_ARRAY_LEN(shells); i++)
        shell |= !strcmp(base, shells[i]);
    if (!shell || sh->n != 1)
        return NULL;
    const struct sg_shell_cmd *c = &sh->cmds[0];
    bool dash_c = false;
    for (size_t i = 0; i < c->argc; i++) {
        const char *w = c->argv[i];
        if (w[0] != '-' || !strcmp(w, "-") || !strcmp(w, "--"))
            return dash_c ? w : NULL;
        if (w[1] != '-' && strchr(w, 'c'))
            dash_c = true;
        else if (!strcmp(w, "-o") || !strcmp(w, "+o"))
            i++; /* its option's name */
    }
    return NULL;
}

void sg_prompt_command_rows(const struct sg_preq *q, struct sg_prompt_rows *out)
{
    if (!sg_prompt_is_command(q))
        return;
    if (q->agent_tool[0]) { /* the agent's line: first word in subject, the rest in args */
        cleanup_free char *line =
            sg_xasprintf("%s%s%s", q->subject, q->args[0] ? " " : "", q->args);
        line_rows(out, "command", line);
        return;
    }
    sg_prompt_rows_add(out, "program", q->subject);
    out->any_code = sg_program_runs_any_code(q->subject);
    sg_prompt_rows_add(out, "argv", q->args[0] ? q->args : "(none)");
    struct sg_shell sh;
    const char *why = NULL;
    if (q->args[0] && sg_shell_parse(q->args, &sh, &why) == 0) {
        const char *script = shell_script(q->subject, &sh);
        if (script)
            line_rows(out, "sh -c", script);
        sg_shell_free(&sh);
    }
}

struct sg_lineprompt {
    int tty;
    struct sg_perm *perm;
    bool shown;       /* a prompt of ours waits on the terminal */
    uint64_t id;      /* the request it shows */
    bool confirming;  /* [A] was typed: the grant is confirmed with y */
    int64_t armed_ms;
    int esc;          /* inside an escape sequence (an arrow key): 1 after ESC, 2 after ESC [ */
    char *rule, *skill; /* of the request shown, sanitized (rule: one per line) */
    char *folder;       /* [f]'s rule: every write in the request's folder, or NULL */
    char *program;      /* [p]'s rule: the program with any arguments, or NULL */
    bool cut;           /* it cannot be shown whole: no allow */
};

/* ---- one key, no Enter ----
 *
 * While a prompt is shown the terminal is in cbreak mode (no line editing,
 * no echo; ^C still signals), so a key answers as it is pressed. The
 * settings are put back when the prompt is answered or settled, when the
 * prompt closes, at exit, and before a signal that stops or ends skillgate
 * takes effect (the handler puts them back, then does what was done before
 * for that signal: skillgate's own handler, or the default). SIGKILL alone
 * leaves the terminal as it was (`stty sane`). The state is the process's
 * one terminal, so it is static: a signal handler can reach it. */
static int raw_fd = -1;
static volatile sig_atomic_t raw_on; /* cbreak set, saved_tio to restore */
static struct termios saved_tio;
static const int raw_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
static struct sigaction raw_old[SG_ARRAY_LEN(raw_sigs)];
static bool raw_handlers;

static void raw_leave(void)
{
    if (raw_on && raw_fd >= 0)
        tcsetattr(raw_fd, TCSANOW, &saved_tio);
    raw_on = 0;
}

static void raw_enter(int fd)
{
    struct termios t;
    if (raw_on || tcgetattr(fd, &saved_tio) < 0)
        return; /* not a terminal: keys come a line at a time, each still read alone */
    t = saved_tio;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    raw_fd = fd;
    raw_on = 1;
    if (tcsetattr(fd, TCSANOW, &t) < 0)
        raw_on = 0;
}

static void raw_signal(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    bool was = raw_on;
    raw_leave();
    size_t i = 0;
    while (i < SG_ARRAY_LEN(raw_sigs) && raw_sigs[i] != sig)
        i++;
    const struct sigaction *o = &raw_old[i < SG_ARRAY_LEN(raw_sigs) ? i : 0];
    if (o->sa_flags & SA_SIGINFO) {
        o->sa_sigaction(sig, info, uc);
    } else if (o->sa_handler == SIG_DFL) {
        /* the default (end, or stop): with ours out of the way, at once */
        struct sigaction self;
        sigaction(sig, o, &self);
        sigset_t un;
        sigemptyset(&un);
        sigaddset(&un, sig);
        raise(sig);
        sigprocmask(SIG_UNBLOCK, &un, NULL);
        sigaction(sig, &self, NULL); /* here again only after a stop (SIGTSTP, then SIGCONT) */
        if (was && raw_fd >= 0)
            raw_enter(raw_fd);
    } else if (o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
    }
    errno = saved;
}

static void raw_install(void)
{
    static bool at;
    if (!at)
        at = atexit(raw_leave) == 0;
    if (raw_handlers)
        return;
    struct sigaction sa = {.sa_sigaction = raw_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < SG_ARRAY_LEN(raw_sigs); i++)
        sigaction(raw_sigs[i], &sa, &raw_old[i]);
    raw_handlers = true;
}

static void raw_uninstall(void)
{
    raw_leave();
    raw_fd = -1;
    if (!raw_handlers)
        return;
    for (size_t i = 0; i < SG_ARRAY_LEN(raw_sigs); i++)
        sigaction(raw_sigs[i], &raw_old[i], NULL);
    raw_handlers = false;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void say(struct sg_lineprompt *lp, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(lp->tty, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w, n -= (size_t)w;
    }
}

/* Everything about the request, whole: the terminal wraps the lines and
 * keeps what scrolled away. One row of ours per line, labelled. */
static void row(struct sg_buf *b, const char *label, const char *text)
{
    sg_buf_printf(b, "\n  %-8s %s", label[0] ? label : "", text);
}

static void draw(struct sg_lineprompt *lp, const struct sg_perm_prompt *pr)
{
    const struct sg_preq *q = pr->q;
    cleanup_free char *subj = sg_sanitize_str(q->subject, 0);
    cleanup_free char *cwd = sg_sanitize_str(q->cwd, 0);
    cleanup_free char *host = sg_sanitize_str(q->host, 0);
    char rwhy[160];
    enum sg_risk_level lvl = sg_preq_risk(q, sg_invoking_home(), rwhy, sizeof rwhy);
    const char *risk = lvl == SG_RL_HIGH ? "high" : lvl == SG_RL_MEDIUM ? "medium" : "low";
    struct sg_buf b;
    sg_buf_init(&b, 4u << 20); /* far above any request's rows (16 KiB, escaped) */
    const char *what = q->tool == SG_PT_BASH      ? "run a program"
                       : q->tool == SG_PT_FETCH   ? "reach a host"
                       : q->tool == SG_PT_CONNECT ? "connect to a host socket"
                                                  : "write a file";
    sg_buf_printf(&b, "\n\033[0m--- skillgate: %s asks to %s (%s, %s risk)", lp->skill, what,
                  sg_ptool_name(q->tool), risk);
    if (q->cut)
        row(&b, "NOTE", SG_PROMPT_CUT_NOTICE);
    if (q->agent_tool[0]) {
        cleanup_free char *at = sg_sanitize_str(q->agent_tool, 0);
        row(&b, "tool:", at);
    }
    if (sg_prompt_is_command(q)) {
        struct sg_prompt_rows rows = {0};
        sg_prompt_command_rows(q, &rows);
        for (size_t i = 0; i < rows.n; i++) {
            cleanup_free char *l = sg_xasprintf("%s%s", rows.r[i].label,
                                                rows.r[i].label[0] ? ":" : "");
            row(&b, l, rows.r[i].text);
        }
        sg_prompt_rows_free(&rows);
        if (q->cwd[0])
            row(&b, "cwd:", cwd);
    } else if (q->tool == SG_PT_BASH) { /* an agent's other tool, asked as Bash */
        cleanup_free char *in = sg_sanitize_str(q->args[0] ? q->args : "(none)", 0);
        row(&b, "input:", in);
    } else if (q->tool == SG_PT_FETCH) {
        row(&b, "host:", subj);
        if (q->port > 0)
            sg_buf_printf(&b, "  port %d", q->port);
    } else if (q->tool == SG_PT_CONNECT) {
        row(&b, "socket:", subj);
    } else {
        row(&b, "path:", subj);
        row(&b, "on host:", host[0] ? host : "this very path (the real file, not a copy)");
    }
    if (rwhy[0])
        row(&b, "risk:", rwhy);
    if (q->detail[0]) { /* built from paths and an agent's tool name: theirs too */
        cleanup_free char *note = sg_sanitize_str(q->detail, 0);
        row(&b, "note:", note);
    }
    cleanup_free char *why = sg_sanitize_str(pr->why, 0);
    row(&b, "why:", why);
    int secs = (int)((pr->deadline_ms - pr->shown_ms + 500) / 1000);
    lp->cut = q->cut;
    if (!lp->cut) { /* the rule(s) [A] keeps, each on its own line */
        row(&b, "always:", strchr(lp->rule, '\n') ? "[A] saves these rules:" : "[A] saves");
        for (const char *r = lp->rule;;) {
            size_t k = strcspn(r, "\n");
            sg_buf_printf(&b, "\n    %.*s", (int)k, r);
            if (!r[k])
                break;
            r += k + 1;
        }
    }
    if (b.dropped) /* never: the cap is far above; but then it is not all shown */
        lp->cut = true;
    if (!lp->cut && lp->program) {
        cleanup_free char *t = sg_sanitize_str(lp->program, 0);
        row(&b, "program:", "[p] allows for this run");
        sg_buf_printf(&b, "\n    %s (any arguments)\n    and the system's programs it and "
                          "its children run, each recorded; still asked:\n    a shell or "
                          "interpreter fed code, a file of the skill's or yours, what it\n    "
                          "writes or reaches; none when the skill's code could be in it (its "
                          "own\n    children, LD_PRELOAD and the like)", t);
    }
    if (lp->cut)
        sg_buf_printf(&b, "\n  press d to deny  (no allow: it cannot be shown whole; deny in %d s)",
                      secs);
    else
        sg_buf_printf(&b, "\n  press a key, no Enter: [a] allow once  [r] for this run  %s%s[A] always  "
                          "[d] deny  [D] always deny   (Enter alone never allows; deny in %d s)",
                      lp->folder ? "[f] this folder, this run  " : "",
                      lp->program ? "[p] this program, this run  " : "", secs);
    sg_buf_printf(&b, "%s\n> ", pr->queued > 1 ? "\n  (more requests are waiting)" : "");
    cleanup_free char *text = sg_buf_steal(&b);
    sg_buf_free(&b);
    tcflush(lp->tty, TCIFLUSH); /* typeahead is not an answer */
    say(lp, text);
}

/* sg_perm_show_fn: the head of the queue changed (or only its counter). */
static void show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct sg_lineprompt *lp = ctx;
    if (lp->shown && (!pr || pr->id != lp->id)) { /* settled without us: the deadline, the end */
        cleanup_free char *by = sg_sanitize_str(sg_perm_last_decided_by(lp->perm), 0);
        cleanup_free char *t = sg_xasprintf("  -> denied (%s)\n", by);
        say(lp, t);
        lp->shown = false;
        raw_leave();
    }
    if (!pr || lp->shown)
        return; /* nothing waits, or only the number waiting changed */
    free(lp->rule), free(lp->skill), free(lp->folder), free(lp->program);
    lp->folder = sg_preq_folder_rule(pr->q, sg_invoking_home());
    lp->program = sg_preq_program_rule(pr->q);
    lp->rule = sg_sanitize_str(pr->rule, SG_SAN_KEEP_NEWLINE);
    lp->skill = sg_sanitize_str(pr->skill, 0);
    lp->perm = pr->perm;
    lp->id = pr->id;
    raw_enter(lp->tty);
    draw(lp, pr);
    lp->shown = true;
    lp->confirming = false;
    lp->armed_ms = now_ms() + ARM_MS;
    lp->esc = 0;
}

static void answer(struct sg_lineprompt *lp, enum sg_decision d)
{
    lp->shown = false;
    raw_leave(); /* the terminal is the person's again (and the next prompt's, if one waits) */
    say(lp, sg_decision_allows(d) ? "  -> allowed\n" : "  -> denied\n");
    sg_perm_answer_id(lp->perm, lp->id, d); /* the next request is shown from in here */
}

/* A key of the answer to [A]: y saves; Enter is not an answer; any other
 * key is no. */
static void on_confirm_key(struct sg_lineprompt *lp, char k)
{
    if (k == '\r' || k == '\n')
        return;
    if (k == 'y' || k == 'Y') {
        say(lp, "y");
        answer(lp, SG_DEC_ALLOW_ALWAYS);
        return;
    }
    lp->confirming = false;
    say(lp, "\n  not saved. press a, r, A, d or D> ");
}

/* One key pressed (or, when the terminal could not be put in cbreak mode,
 * one byte of a line): the keys of the prompt answer it at once, every
 * other one (Enter, a letter, an arrow key's sequence) is ignored. */
static void on_key(struct sg_lineprompt *lp, char k)
{
    if (lp->confirming) {
        on_confirm_key(lp, k);
        return;
    }
    if (lp->cut && strchr("arfpAD", k)) {
        say(lp, "\n  this request cannot be shown whole: it can only be denied. press d> ");
        return;
    }
    switch (k) {
    case 'a': answer(lp, SG_DEC_ALLOW_ONCE); return;
    case 'r': answer(lp, SG_DEC_ALLOW_RUN); return;
    case 'd': answer(lp, SG_DEC_DENY); return;
    case 'D': answer(lp, SG_DEC_DENY_ALWAYS); return;
    case 'f': {
        const char *why = NULL;
        if (!lp->folder)
            return;
        lp->shown = false;
        raw_leave();
        cleanup_free char *t = sg_sanitize_str(lp->folder, 0);
        cleanup_free char *said =
            sg_xasprintf("  -> allowed for this run: %s\n     (not what git, shells and editors "
                         "run from it: .git/config, .git/hooks, .envrc, .vscode ... are asked on "
                         "their own)\n", t);
        say(lp, said);
        if (sg_perm_answer_rule(lp->perm, lp->id, SG_DEC_ALLOW_RUN, lp->folder, &why) < 0) {
            cleanup_free char *no = sg_xasprintf("  -> not taken: %s\n", why ? why : "settled");
            say(lp, no);
        }
        return;
    }
    case 'p': {
        const char *why = NULL;
        if (!lp->program)
            return;
        lp->shown = false;
        raw_leave();
        cleanup_free char *t = sg_sanitize_str(lp->program, 0);
        cleanup_free char *said = sg_xasprintf("  -> allowed for this run: %s and the programs "
                                               "of root's it runs\n", t);
        say(lp, said);
        if (sg_perm_answer_program(lp->perm, lp->id, &why) < 0) {
            cleanup_free char *no = sg_xasprintf("  -> not taken: %s\n", why ? why : "settled");
            say(lp, no);
        }
        return;
    }
    case 'A': {
        bool several = strchr(lp->rule, '\n') != NULL;
        cleanup_free char *t =
            several ? sg_xasprintf("A\n  save the grants above for this version of %s? press y "
                                   "to save, any other key not to> ", lp->skill)
                    : sg_xasprintf("A\n  save the grant %s for this version of %s? press y to "
                                   "save, any other key not to> ", lp->rule, lp->skill);
        lp->confirming = true;
        say(lp, t);
        return;
    }
    default:
        return;
    }
}

static size_t pollfds(void *ctx, struct pollfd *out, size_t max)
{
    struct sg_lineprompt *lp = ctx;
    if (!lp->shown || max < 1)
        return 0;
    out[0] = (struct pollfd){.fd = lp->tty, .events = POLLIN};
    return 1;
}

static void dispatch(void *ctx, const struct pollfd *pfds, size_t n)
{
    struct sg_lineprompt *lp = ctx;
    if (!lp->shown || !n || !(pfds[0].revents & (POLLIN | POLLHUP)))
        return;
    char buf[128];
    ssize_t r = read(lp->tty, buf, sizeof buf);
    bool armed = now_ms() >= lp->armed_ms;
    for (ssize_t i = 0; i < r && lp->shown; i++) {
        unsigned char c = (unsigned char)buf[i];
        /* an arrow or function key is ESC [ ... final (or ESC O x): none of
         * its bytes is a key of ours ("ESC [ A" is not [A]) */
        if (lp->esc == 1) {
            lp->esc = c == '[' || c == 'O' ? 2 : 0;
            continue;
        }
        if (lp->esc == 2) {
            lp->esc = c >= 0x40 && c <= 0x7e ? 0 : 2;
            continue;
        }
        if (c == 0x1b) {
            lp->esc = 1;
            continue;
        }
        if (armed)
            on_key(lp, (char)c);
    }
    lp->esc = 0; /* a sequence comes in one read; a lone ESC does not eat the next key */
}

struct sg_lineprompt *sg_lineprompt_open(void)
{
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (tty < 0)
        return NULL;
    struct sg_lineprompt *lp = sg_xcalloc(1, sizeof *lp);
    lp->tty = tty;
    return lp;
}

void sg_lineprompt_attach(struct sg_lineprompt *lp, struct sg_perm *perm)
{
    lp->perm = perm;
    raw_install();
    sg_perm_set_frontend(perm, show, lp);
    sg_perm_set_frontend_fds(perm, pollfds, dispatch);
}

void sg_lineprompt_close(struct sg_lineprompt *lp)
{
    if (!lp)
        return;
    raw_uninstall();
    close(lp->tty);
    free(lp->rule), free(lp->skill), free(lp->folder), free(lp->program);
    free(lp);
}
