/* check_tool_permission: the decision for a tool an agent runs itself
 * (an instruction-only skill's, the MCP server's callers): allowed-tools,
 * the tool's risk, what the manifest declares, then the engine. */
#include "perm.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "notifpath.h"
#include "perm_int.h"
#include "policy.h"
#include "sanitize.h"
#include "shellcmd.h"
#include "util.h"

/* An agent's command line as it wrote it (check_tool_permission puts the
 * first word in subject, the rest in args). */
char *sg_agent_line(const struct sg_preq *q)
{
    return sg_xasprintf("%s%s%s", q->subject, q->args[0] ? " " : "", q->args);
}

/* q, narrowed to one simple command c of the agent's line. */
void sg_agent_one_command(const struct sg_preq *q, const struct sg_shell_cmd *c,
                          struct sg_preq *out)
{
    *out = *q;
    snprintf(out->subject, sizeof out->subject, "%s", c->argv[0]);
    /* the program as written: ./ls or /tmp/ls is not the ls a scope names */
    snprintf(out->name, sizeof out->name, "%s", c->argv[0]);
    struct sg_shell_cmd rest = {.argv = c->argv + 1, .argc = c->argc - 1};
    cleanup_free char *args = sg_shell_join(&rest);
    snprintf(out->args, sizeof out->args, "%s", args);
}

/* Does the manifest declare exactly this use: a matching Bash(scope), a
 * declared host, a path under a declared write path? */
static bool scope_declares(const struct sg_policy *pol, const char *tool, const struct sg_preq *q)
{
    for (size_t i = 0; i < pol->ntools; i++) {
        const struct sg_tool *t = &pol->tools[i];
        /* only a scope declares a command: an unscoped Bash (or Write, or
         * Fetch) still asks, since the agent runs it outside any sandbox */
        if (strcmp(t->name, tool) || !t->scope)
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

/* The path an agent names, as the kernel will find it: normalized, and
 * every existing part resolved (symlinks included), so that
 * …/notes-writer/../../../.bashrc is ~/.bashrc to every rule. A relative
 * path stays as it is: no rule or declared path (absolute) matches it. */
static void canonical_path(char *path, size_t max)
{
    if (path[0] != '/' || sg_path_normalize(path) < 0)
        return; /* ".." first, lexically: a part that does not exist yet cannot climb */
    cleanup_free char *real = sg_path_real(path);
    if (strlen(real) < max)
        memcpy(path, real, strlen(real) + 1);
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
            char w[PATH_MAX];
            snprintf(w, sizeof w, "%s", pol->write[i].path);
            canonical_path(w, sizeof w);
            size_t n = strlen(w);
            if (q->subject[0] == '/' && !strncmp(q->subject, w, n) &&
                (q->subject[n] == '/' || q->subject[n] == '\0' || !strcmp(w, "/")))
                return true;
        }
    return false;
}

static void split_line(const char *line, struct sg_preq *q)
{
    size_t w = strcspn(line, " \t");
    snprintf(q->subject, sizeof q->subject, "%.*s", (int)w, line);
    snprintf(q->args, sizeof q->args, "%s", line[w] ? line + w + 1 : "");
}

void sg_agent_bash_preq(const char *line, const char *cwd, struct sg_preq *q)
{
    memset(q, 0, sizeof *q);
    q->tool = SG_PT_BASH;
    split_line(line, q);
    snprintf(q->agent_tool, sizeof q->agent_tool, "Bash");
    snprintf(q->detail, sizeof q->detail, "the agent runs its Bash tool itself");
    if (cwd && cwd[0] == '/') {
        snprintf(q->cwd, sizeof q->cwd, "%s", cwd);
        canonical_path(q->cwd, sizeof q->cwd);
    }
}

int sg_check_tool_permission(struct sg_perm *p, const struct sg_policy *pol, const char *tool,
                             const char *detail, const char *cwd, sg_perm_cont cont, void *ctx,
                             enum sg_decision *dec, bool *denied_outright)
{
    *denied_outright = false;
    enum sg_tool_id id = sg_tool_lookup(tool);
    if (id == SG_TOOL_UNKNOWN) {
        /* not a tool's name: escapes, spaces, a forged prompt. Refused
         * before a byte of it reaches a terminal or a record unsanitized */
        struct sg_preq q = {.tool = SG_PT_BASH};
        cleanup_free char *t = sg_sanitize_str(tool, 0);
        snprintf(q.agent_tool, sizeof q.agent_tool, "?");
        snprintf(q.subject, sizeof q.subject, "%s", t);
        *denied_outright = true;
        *dec = SG_DEC_DENY;
        sg_perm_audit(p, &q, *dec, "PermissionDenied: not a known tool or mcp__ name", 0);
        return 1;
    }
    unsigned caps = sg_tool_caps(id);
    struct sg_preq q = {0};
    q.tool = id == SG_TOOL_MCP || !caps ? SG_PT_BASH /* asked as a command */
             : (caps & SG_CAP_NETWORK)   ? SG_PT_FETCH
             : (caps & SG_CAP_EXEC)      ? SG_PT_BASH
                                         : SG_PT_WRITE;
    detail = detail ? detail : "";
    if (q.tool == SG_PT_BASH) { /* "git status" -> program git, arguments status */
        split_line(detail, &q);
    } else if (q.tool == SG_PT_FETCH) { /* host, or host:port */
        snprintf(q.subject, sizeof q.subject, "%s", detail);
        char *colon = strrchr(q.subject, ':');
        long long port;
        if (colon && !strchr(q.subject, ']') && sg_parse_ll(colon + 1, 1, 65535, &port) == 0) {
            *colon = '\0';
            q.port = (int)port;
        }
    } else {
        snprintf(q.subject, sizeof q.subject, "%s", detail);
        if (q.tool == SG_PT_WRITE) /* every rule sees the path the kernel would */
            canonical_path(q.subject, sizeof q.subject);
    }
    if (cwd && cwd[0] == '/') { /* Edit(src/...) is relative to it */
        snprintf(q.cwd, sizeof q.cwd, "%s", cwd);
        canonical_path(q.cwd, sizeof q.cwd);
    }
    snprintf(q.detail, sizeof q.detail, "the agent runs its %s tool itself", tool);
    snprintf(q.agent_tool, sizeof q.agent_tool, "%s", tool);
    if (pol->tools_restricted) {
        bool listed = false;
        for (size_t i = 0; i < pol->ntools; i++)
            listed |= !strcmp(pol->tools[i].name, tool);
        if (!listed) {
            *denied_outright = true;
            *dec = SG_DEC_DENY;
            sg_perm_audit(p, &q, *dec, "PermissionDenied: not in allowed-tools", 0);
            return 1;
        }
    }
    if (sg_tool_risk(id) == SG_RISK_LOW) {
        *dec = SG_DEC_ALLOW_ONCE;
        sg_perm_audit(p, &q, *dec, "low-risk tool", 0);
        return 1;
    }
    if (declared(pol, tool, &q)) {
        *dec = SG_DEC_ALLOW_ONCE;
        sg_perm_audit(p, &q, *dec, "declared in the manifest", 0);
        return 1;
    }
    return sg_perm_request(p, &q, cont, ctx, dec);
}
