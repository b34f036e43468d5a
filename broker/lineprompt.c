#include "lineprompt.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sanitize.h"
#include "util.h"

#define ARM_MS 500 /* keys typed before the prompt was seen do not count */

struct sg_lineprompt {
    int tty;
    struct sg_perm *perm;
    bool shown;       /* a prompt of ours waits on the terminal */
    uint64_t id;      /* the request it shows */
    bool confirming;  /* [A] was typed: the grant is confirmed with y */
    int64_t armed_ms;
    char line[256];
    size_t linelen;
    char *rule, *skill; /* of the request shown, sanitized */
};

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
        if (w <= 0)
            return;
        s += w, n -= (size_t)w;
    }
}

static void draw(struct sg_lineprompt *lp, const struct sg_perm_prompt *pr)
{
    const struct sg_preq *q = pr->q;
    cleanup_free char *subj = sg_sanitize_str(q->subject, 0);
    cleanup_free char *args = sg_sanitize_str(q->args, 0);
    cleanup_free char *cwd = sg_sanitize_str(q->cwd, 0);
    char what[8400], rwhy[160];
    enum sg_risk_level lvl = sg_preq_risk(q, sg_invoking_home(), rwhy, sizeof rwhy);
    const char *risk = lvl == SG_RL_HIGH ? "high" : lvl == SG_RL_MEDIUM ? "medium" : "low";
    cleanup_free char *host = sg_sanitize_str(q->host, 0);
    if (q->tool == SG_PT_BASH)
        snprintf(what, sizeof what, "run a program (Bash, %s risk)\n  program: %s\n  argv:    %s\n"
                 "  cwd:     %s", risk, subj, args, cwd);
    else if (q->tool == SG_PT_FETCH)
        snprintf(what, sizeof what, "reach a host (Fetch, %s risk)\n  host:    %s%s%.0d", risk, subj,
                 q->port > 0 ? "  port " : "", q->port > 0 ? q->port : 0);
    else if (q->tool == SG_PT_CONNECT)
        snprintf(what, sizeof what, "connect to a host socket (Connect, %s risk)\n  socket:  %s",
                 risk, subj);
    else
        snprintf(what, sizeof what, "write a file (Write, %s risk)\n  path:    %s\n  on host: %s",
                 risk, subj, host[0] ? host : "this very path (the real file, not a copy)");
    if (rwhy[0]) {
        size_t wl = strlen(what);
        snprintf(what + wl, sizeof what - wl, "\n  risk:    %s", rwhy);
    }
    if (q->detail[0]) { /* built from paths and an agent's tool name: theirs too */
        cleanup_free char *note = sg_sanitize_str(q->detail, 0);
        size_t wl = strlen(what);
        snprintf(what + wl, sizeof what - wl, "\n  note:    %s", note);
    }
    cleanup_free char *why = sg_sanitize_str(pr->why, 0);
    cleanup_free char *text = sg_xasprintf(
        "\n\033[0m--- skillgate: %s asks to %s\n  why:     %s\n  [a] allow once  [r] for this run  [A] always (saves %s)\n"
        "  [d] deny  [D] always deny   (Enter alone never allows; deny in %d s)%s\n> ",
        lp->skill, what, why, lp->rule, (int)((pr->deadline_ms - pr->shown_ms + 500) / 1000),
        pr->queued > 1 ? "\n  (more requests are waiting)" : "");
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
    }
    if (!pr || lp->shown)
        return; /* nothing waits, or only the number waiting changed */
    free(lp->rule), free(lp->skill);
    lp->rule = sg_sanitize_str(pr->rule, 0);
    lp->skill = sg_sanitize_str(pr->skill, 0);
    lp->perm = pr->perm;
    lp->id = pr->id;
    draw(lp, pr);
    lp->shown = true;
    lp->confirming = false;
    lp->armed_ms = now_ms() + ARM_MS;
    lp->linelen = 0;
}

static void answer(struct sg_lineprompt *lp, enum sg_decision d)
{
    lp->shown = false;
    say(lp, sg_decision_allows(d) ? "  -> allowed\n" : "  -> denied\n");
    sg_perm_answer_id(lp->perm, lp->id, d); /* the next request is shown from in here */
}

static void on_line(struct sg_lineprompt *lp, const char *l)
{
    while (*l == ' ' || *l == '\t')
        l++;
    if (lp->confirming) {
        if (*l == 'y' || *l == 'Y')
            answer(lp, SG_DEC_ALLOW_ALWAYS);
        else {
            lp->confirming = false;
            say(lp, "  not saved. [a/r/A/d/D]> ");
        }
        return;
    }
    switch (*l) {
    case 'a': answer(lp, SG_DEC_ALLOW_ONCE); return;
    case 'r': answer(lp, SG_DEC_ALLOW_RUN); return;
    case 'd': answer(lp, SG_DEC_DENY); return;
    case 'D': answer(lp, SG_DEC_DENY_ALWAYS); return;
    case 'A': {
        cleanup_free char *t = sg_xasprintf("  save the grant %s for this version of %s? [y/N]> ",
                                            lp->rule, lp->skill);
        lp->confirming = true;
        say(lp, t);
        return;
    }
    default:
        say(lp, "  a, r, A, d or D (Enter alone never allows)> ");
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
        if (buf[i] == '\n' || buf[i] == '\r') {
            lp->line[lp->linelen] = '\0';
            if (armed)
                on_line(lp, lp->line);
            lp->linelen = 0;
        } else if (lp->linelen + 1 < sizeof lp->line) {
            lp->line[lp->linelen++] = buf[i];
        }
    }
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
    sg_perm_set_frontend(perm, show, lp);
    sg_perm_set_frontend_fds(perm, pollfds, dispatch);
}

void sg_lineprompt_close(struct sg_lineprompt *lp)
{
    if (!lp)
        return;
    close(lp->tty);
    free(lp->rule), free(lp->skill);
    free(lp);
}
