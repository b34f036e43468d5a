/* check_tool_permission: the decision for a tool an agent runs itself
 * (an instruction-only skill's, the MCP server's callers): allowed-tools,
 * the tool's risk, what the manifest declares, then the engine. */
#include "perm.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "perm_int.h"
#include "policy.h"
#include "sanitize.h"
#include "shellcmd.h"
#include "util.h"

/* Does the manifest declare exactly this use: a matching Bash(scope), a
 * declared host, a path under a declared write path? */
static bool scope_declares(const struct sg_policy *pol, const char *tool, const struct sg_preq *q)
{
    for (size_t i = 0; i < pol->ntools; i++) {
        const struct sg_tool *t = &pol->tools[i];
        /* only a scope declares a command: an unscoped Bash (or Write, or
         * Fetch) still asks, since the agent runs it outside any sandbox */
        /* permissions.programs declare what runs in the sandbox only: an
         * agent's command runs outside any (python3:* would be any code) */
        if (strcmp(t->name, tool) || !t->scope || t->sandboxed)
            continue;
        cleanup_free char *text = sg_xasprintf("Bash(%s)", t->scope);
        struct sg_prule r;
        const char *why;
        if (sg_prule_parse(text, SG_EFF_ALLOW, "manifest", &r, &why) == 0) {
            bool m = sg_prule_matches(&r, q);
            sg_prule_free(&r);
            if (m)
                return true;
        }
    }
    return false;
}

/* The path an agent names, as the kernel will find it (sg_path_target),
 * so that …/notes-writer/../../../.bashrc is ~/.bashrc to every rule. Read
 * whole, of any length: a result that does not fit marks q cut. */
char *sg_path_target(const char *path, const char *cwd)
{
    return sg_path_target_ex(path, cwd, NULL);
}

char *sg_path_target_ex(const char *path, const char *cwd, bool *unsure)
{
    if (unsure)
        *unsure = false;
    if (path[0] != '/' && !(cwd && cwd[0] == '/'))
        return sg_xstrdup(path);
    /* left to walk (todo) and walked (done, physical, "" for /), one
     * component at a time as the kernel does: a link is followed where it
     * stands, so a ".." after it climbs from its target, not lexically */
    char *todo = path[0] == '/' ? sg_xstrdup(path) : sg_xasprintf("%s/%s", cwd, path);
    struct sg_buf done;
    sg_buf_init(&done, SIZE_MAX / 2);
    sg_buf_append(&done, "", 1);
    done.len = 0;
    bool missing = false; /* from here on nothing exists: the rest is read as written */
    int links = 0;
    const char *p = todo;
    while (*p) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (!n)
            break;
        if (n == 1 && p[0] == '.') {
            p += n;
            continue;
        }
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            /* climbing out of what is not there yet: where it lands depends
             * on what is made first (a link, by the same line) */
            if (missing && unsure)
                *unsure = true;
            while (done.len && done.data[done.len - 1] != '/')
                done.len--;
            if (done.len)
                done.len--; /* the slash */
            done.data[done.len] = '\0';
            p += n;
            continue;
        }
        size_t keep = done.len;
        sg_buf_append(&done, "/", 1);
        sg_buf_append(&done, p, n);
        sg_buf_append(&done, "", 1);
        done.len--;
        p += n;
        struct stat st;
        if (missing || lstat(done.data, &st) < 0) {
            missing = true;
            continue;
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        if (sg_str_has_prefix(done.data, "/proc/") || sg_str_has_prefix(done.data, "/dev/")) {
            /* /proc/self/cwd, /dev/fd/3, /dev/stdin: the process that acts
             * on it is not this one, so its link here says nothing */
            if (unsure)
                *unsure = true;
            missing = true;
            continue;
        }
        char link[PATH_MAX];
        ssize_t ln = readlink(done.data, link, sizeof link - 1);
        if (ln <= 0 || ++links > 40) {
            missing = true; /* the kernel's ELOOP: nothing is reached */
            continue;
        }
        link[ln] = '\0';
        /* the link's text, then what was left, walked from the link's folder */
        char *next = sg_xasprintf("%s/%s", link, p);
        free(todo);
        todo = next;
        p = todo;
        done.len = link[0] == '/' ? 0 : keep;
        done.data[done.len] = '\0';
    }
    free(todo);
    char *out = done.len ? sg_xstrndup(done.data, done.len) : sg_xstrdup("/");
    sg_buf_free(&done);
    return out;
}

static void canonical_path(struct sg_preq *q, char *field, size_t max, const char *path,
                           const char *cwd)
{
    bool unsure;
    cleanup_free char *t = sg_path_target_ex(path, cwd, &unsure);
    /* the agent's file tool may resolve the path lexically first (Node's
     * path.resolve) or hand it to the kernel as it is: where the two
     * readings reach different files, no rule decides */
    cleanup_free char *abs = path[0] == '/' || !cwd || cwd[0] != '/'
                                 ? sg_xstrdup(path) : sg_xasprintf("%s/%s", cwd, path);
    if (abs[0] == '/' && sg_path_normalize(abs) == 0) {
        cleanup_free char *lex = sg_path_target(abs, NULL);
        unsure |= strcmp(lex, t) != 0;
    }
    q->unsure |= unsure;
    sg_preq_put(q, field, max, t);
}

static bool declared(const struct sg_policy *pol, const char *tool, const struct sg_preq *q)
{
    if (q->tool == SG_PT_BASH) { /* every simple command of the line, read exactly */
        cleanup_free char *line = sg_agent_line(q);
        struct sg_shell sh;
        const char *why;
        if (sg_shell_parse(line, &sh, &why) < 0)
            return false;
        bool all = true;
        for (size_t i = 0; i < sh.n && all; i++) {
            struct sg_preq one;
            sg_agent_one_command(q, &sh.cmds[i], &one);
            all = scope_declares(pol, tool, &one);
        }
        sg_shell_free(&sh);
        return all;
    }
    if (q->tool == SG_PT_FETCH)
        for (size_t i = 0; i < pol->negress; i++) {
            const char *d = pol->egress[i].domain;
            size_t dl = strlen(d), n = strlen(q->subject);
            if (!strcmp(d, q->subject) ||
                (pol->egress[i].wildcard && n > dl - 1 && !strcmp(q->subject + n - (dl - 1), d + 1)))
                return true;
        }
    if (q->tool == SG_PT_WRITE)
        for (size_t i = 0; i < pol->nwrite; i++) {
            struct sg_preq *wq = sg_xcalloc(1, sizeof *wq);
            canonical_path(wq, wq->subject, sizeof wq->subject, pol->write[i].path, NULL);
            char w[sizeof wq->subject];
            memcpy(w, wq->subject, sizeof w);
            bool cut = wq->cut;
            free(wq);
            size_t n = strlen(w);
            if (cut || !n)
                continue;
            if (q->subject[0] == '/' && !strncmp(q->subject, w, n) &&
                (q->subject[n] == '/' || q->subject[n] == '\0' || !strcmp(w, "/")))
                return true;
        }
    return false;
}

/* "git status" -> program git, arguments status: the line as written,
 * whole (cut when it does not fit: then nothing matches it). */
static void split_line(const char *line, struct sg_preq *q)
{
    size_t w = strcspn(line, " \t");
    cleanup_free char *first = sg_xstrndup(line, w);
    SG_PREQ_SET(q, subject, first);
    SG_PREQ_SET(q, args, line[w] ? line + w + 1 : "");
}

void sg_agent_bash_preq(const char *line, const char *cwd, struct sg_preq *q)
{
    memset(q, 0, sizeof *q);
    q->tool = SG_PT_BASH;
    split_line(line, q);
    SG_PREQ_SET(q, agent_tool, "Bash");
    SG_PREQ_SET(q, detail, "the agent runs its Bash tool itself");
    if (cwd && cwd[0] == '/')
        canonical_path(q, q->cwd, sizeof q->cwd, cwd, NULL);
}

/* The request an agent's tool call is, in its canonical form: a command
 * line as written (each simple command is read exactly later), a path as
 * the kernel resolves it, a host and port. */
static void agent_request(struct sg_preq *q, enum sg_tool_id id, const char *tool,
                          const char *detail, const char *cwd)
{
    unsigned caps = sg_tool_caps(id);
    q->tool = id == SG_TOOL_MCP || !caps ? SG_PT_BASH /* asked as a command */
              : (caps & SG_CAP_NETWORK)   ? SG_PT_FETCH
              : (caps & SG_CAP_EXEC)      ? SG_PT_BASH
                                          : SG_PT_WRITE; /* a writer's path, or a reader's */
    if (cwd && cwd[0] == '/') /* Edit(src/...) is relative to it */
        canonical_path(q, q->cwd, sizeof q->cwd, cwd, NULL);
    if (q->tool == SG_PT_BASH && (caps & SG_CAP_EXEC)) {
        split_line(detail, q);
    } else if (q->tool == SG_PT_BASH) { /* an mcp__ tool, or one of no class: its name */
        SG_PREQ_SET(q, subject, detail);
    } else if (q->tool == SG_PT_FETCH) { /* host, or host:port */
        SG_PREQ_SET(q, subject, detail);
        char *colon = strrchr(q->subject, ':');
        long long port;
        if (colon && !strchr(q->subject, ']') && sg_parse_ll(colon + 1, 1, 65535, &port) == 0) {
            *colon = '\0';
            q->port = (int)port;
        }
        size_t hl = strlen(q->subject);
        if (hl > 1 && q->subject[hl - 1] == '.')
            q->subject[hl - 1] = '\0'; /* evil.test. is evil.test in DNS */
    } else if (*detail) { /* every rule sees the path the kernel would */
        canonical_path(q, q->subject, sizeof q->subject, detail, q->cwd);
    }
    cleanup_free char *d = sg_xasprintf("the agent runs its %s tool itself", tool);
    SG_PREQ_SET(q, detail, d);
    SG_PREQ_SET(q, agent_tool, tool);
}

static int decided_now(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                       const char *by, enum sg_decision *dec)
{
    *dec = d;
    sg_perm_audit(p, q, d, by, 0);
    return 1;
}

/* One pipeline, read top to bottom: the request as received, its
 * canonical form, the deny and ask rules (before any default allow), the
 * manifest's allowed-tools, then the defaults (a low-risk tool, a use the
 * manifest declares), then allow rules, grants, a person or the mode. */
int sg_check_tool_permission(struct sg_perm *p, const struct sg_policy *pol, const char *tool,
                             const char *detail, const char *cwd, sg_perm_cont cont, void *ctx,
                             enum sg_decision *dec, bool *denied_outright)
{
    *denied_outright = false;
    enum sg_tool_id id = sg_tool_lookup(tool);
    struct sg_preq *q = sg_xcalloc(1, sizeof *q);
    int r;
    if (id == SG_TOOL_UNKNOWN) {
        /* not a tool's name: escapes, spaces, a forged prompt. Refused
         * before a byte of it reaches a terminal or a record unsanitized */
        q->tool = SG_PT_BASH;
        cleanup_free char *t = sg_sanitize_str(tool, 0);
        SG_PREQ_SET(q, agent_tool, "?");
        SG_PREQ_SET(q, subject, t);
        *denied_outright = true;
        r = decided_now(p, q, SG_DEC_DENY, "PermissionDenied: not a known tool or mcp__ name",
                        dec);
        goto out;
    }
    agent_request(q, id, tool, detail ? detail : "", cwd);
    /* deny and ask rules first: no default allows past them */
    char by[512];
    enum sg_effect limit = sg_perm_limits(p, q, by, sizeof by);
    if (limit == SG_EFF_DENY) {
        r = decided_now(p, q, SG_DEC_DENY, by, dec);
        goto out;
    }
    bool listed = !pol->tools_restricted;
    for (size_t i = 0; i < pol->ntools && !listed; i++)
        listed = !strcmp(pol->tools[i].name, tool);
    if (!listed) {
        *denied_outright = true;
        r = decided_now(p, q, SG_DEC_DENY, "PermissionDenied: not in allowed-tools", dec);
        goto out;
    }
    if (limit == SG_EFF_ALLOW && sg_tool_risk(id) == SG_RISK_LOW) {
        r = decided_now(p, q, SG_DEC_ALLOW_ONCE, "low-risk tool", dec);
        goto out;
    }
    if (limit == SG_EFF_ALLOW && !q->cut && declared(pol, tool, q)) {
        r = decided_now(p, q, SG_DEC_ALLOW_ONCE, "declared in the manifest", dec);
        goto out;
    }
    r = sg_perm_request(p, q, cont, ctx, dec);
out:
    free(q);
    return r;
}
