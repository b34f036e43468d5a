/* Rules as people write them (Bash(git status:*), Write(/tmp/out/),
 * Fetch(*.example.com:443), Connect(/tmp/tmux-1000/default)), the names of tools and decisions, a policy
 * file's deny/ask/allow lists, and requests' fields set whole or marked
 * cut (sg_preq_put). */
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "policy.h"
#include "protected.h"
#include "shellcmd.h"
#include "skill.h"
#include "util.h"
#include "ynode.h"

bool sg_preq_put(struct sg_preq *q, char *dst, size_t n, const char *v)
{
    size_t l = strlen(v);
    if (l >= n) {
        q->cut = true;
        dst[0] = '\0'; /* never a prefix of it */
        return false;
    }
    memcpy(dst, v, l + 1);
    return true;
}

static const char *const tool_names[] = {
#define X(id, name) [SG_PT_##id] = name,
    SG_PERM_TOOLS(X)
#undef X
};

const char *sg_ptool_name(enum sg_ptool t)
{
    return tool_names[t];
}

bool sg_decision_allows(enum sg_decision d)
{
    return d == SG_DEC_ALLOW_ONCE || d == SG_DEC_ALLOW_RUN || d == SG_DEC_ALLOW_ALWAYS;
}

const char *sg_decision_name(enum sg_decision d)
{
    switch (d) {
    case SG_DEC_DENY: return "deny";
    case SG_DEC_ALLOW_ONCE: return "allow once";
    case SG_DEC_ALLOW_RUN: return "allow for this run";
    case SG_DEC_ALLOW_ALWAYS: return "always allow";
    case SG_DEC_DENY_ALWAYS: return "always deny";
    }
    return "deny";
}

/* ---- rules ---- */

/* The rule class of a tool as Claude Code names it: Bash, Write (and
 * Edit, MultiEdit, NotebookEdit, Delete), Fetch (and WebFetch); -1 for
 * every other tool. */
int sg_ptool_of_agent_tool(const char *name, size_t len)
{
    static const struct {
        const char *name;
        enum sg_ptool t;
    } map[] = {{"Bash", SG_PT_BASH},   {"Terminal", SG_PT_BASH},      {"Write", SG_PT_WRITE},
               {"Edit", SG_PT_WRITE},  {"MultiEdit", SG_PT_WRITE},    {"NotebookEdit", SG_PT_WRITE},
               {"Delete", SG_PT_WRITE}, {"Fetch", SG_PT_FETCH},       {"WebFetch", SG_PT_FETCH},
               {"Connect", SG_PT_CONNECT}};
    for (size_t i = 0; i < SG_ARRAY_LEN(map); i++)
        if (strlen(map[i].name) == len && !strncmp(name, map[i].name, len))
            return (int)map[i].t;
    return -1;
}

/* A rule with no parentheses: Bash (every command), Edit (every write),
 * WebSearch, mcp__server__tool or mcp__server (every tool of it). */
static int parse_bare(const char *text, enum sg_effect eff, const char *source,
                      struct sg_prule *r, const char **why)
{
    int cls = sg_ptool_of_agent_tool(text, strlen(text));
    if (cls < 0) {
        enum sg_tool_id id = sg_tool_lookup(text);
        bool server = sg_str_has_prefix(text, "mcp__") && text[5] && !strstr(text + 5, "__") &&
                      strspn(text + 5, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-") == strlen(text + 5);
        if (id == SG_TOOL_UNKNOWN && !server) {
            *why = "a rule is Tool(pattern), e.g. Bash(git status:*), or a tool's name alone "
                   "(WebSearch, mcp__server__tool, mcp__server)";
            return -EINVAL;
        }
        r->agent = sg_xstrdup(text);
        r->tool = SG_PT_BASH; /* never compared: agent rules match by name */
    } else {
        r->tool = (enum sg_ptool)cls;
    }
    r->any = true;
    r->pattern = sg_xstrdup("*");
    r->effect = eff;
    r->text = sg_xstrdup(text);
    r->source = sg_xstrdup(source);
    return 0;
}

/* A tool that reads files by path (Read, Grep, Glob, LS, NotebookRead). */
static bool reads_paths(const char *name, size_t len)
{
    cleanup_free char *n = sg_xstrndup(name, len);
    enum sg_tool_id id = sg_tool_lookup(n);
    return id != SG_TOOL_UNKNOWN && id != SG_TOOL_MCP && sg_tool_caps(id) == SG_CAP_READ_ROOT;
}

/* A path pattern as rules keep it: //abs is /abs, ~/ is the home; a
 * relative one is the agent's project's and may not climb. */
static int path_pattern(char **pat, const char **why)
{
    if (sg_str_has_prefix(*pat, "//")) {
        memmove(*pat, *pat + 1, strlen(*pat)); /* Claude Code's //abs/path */
    } else if (sg_str_has_prefix(*pat, "~/")) {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
            *why = "~/ in a path pattern needs HOME";
            return -EINVAL;
        }
        char *abs = sg_xasprintf("%s%s", home, *pat + 1);
        free(*pat);
        *pat = abs;
    } else if ((*pat)[0] != '/' && (strstr(*pat, "..") || (*pat)[0] == '~')) {
        *why = "a path pattern is an absolute path or glob, ~/..., or relative to the "
               "agent's project (no ..)";
        return -EINVAL;
    }
    return 0;
}

/* Bash(PATTERN): one simple command as bash reads it, kept as its words. */
static int bash_pattern(struct sg_prule *r, char *pat, const char **why)
{
    size_t pl = strlen(pat);
    if (pl > 2 && !strcmp(pat + pl - 2, ":*")) {
        pat[pl - 2] = '\0';
        r->prefix = true;
    }
    struct sg_shell sh;
    const char *swhy;
    if (sg_shell_parse(pat, &sh, &swhy) < 0 || sh.n != 1 || sh.cmds[0].op[0]) {
        if (sh.n)
            sg_shell_free(&sh);
        *why = "a Bash rule is one command as bash reads it: no operators, $, globs, "
               "redirections or assignments (quote such characters)";
        return -EINVAL;
    }
    r->words = sh.cmds[0].argv;
    r->nwords = sh.cmds[0].argc;
    sh.cmds[0].argv = NULL, sh.cmds[0].argc = 0;
    sg_shell_free(&sh);
    return 0;
}

int sg_prule_parse(const char *text, enum sg_effect eff, const char *source, struct sg_prule *r,
                   const char **why)
{
    memset(r, 0, sizeof *r);
    r->port = -1;
    const char *open = strchr(text, '(');
    size_t len = strlen(text);
    if (!open && len)
        return parse_bare(text, eff, source, r, why);
    if (!open || len < 3 || text[len - 1] != ')') {
        *why = "a rule is Tool(pattern), e.g. Bash(git status:*)";
        return -EINVAL;
    }
    size_t tl = (size_t)(open - text);
    int t = sg_ptool_of_agent_tool(text, tl);
    bool reader = t < 0 && reads_paths(text, tl);
    if (t < 0 && !reader) {
        *why = "the tool must be Bash, Write (Edit), Fetch (WebFetch), Connect, Read (Grep, "
               "Glob, LS), or a tool's name alone";
        return -EINVAL;
    }
    r->tool = reader ? SG_PT_WRITE : (enum sg_ptool)t; /* a reader's: compared by name */
    cleanup_free char *pat = sg_xstrndup(open + 1, len - tl - 2);
    if (!*pat) {
        *why = "empty pattern";
        return -EINVAL;
    }
    if (reader) {
        r->agent = sg_xstrndup(text, tl);
        if (path_pattern(&pat, why) < 0) {
            free(steal_pointer(&r->agent));
            return -EINVAL;
        }
    } else if (r->tool == SG_PT_BASH) {
        if (bash_pattern(r, pat, why) < 0)
            return -EINVAL;
    } else if (r->tool == SG_PT_FETCH) {
        char *p = pat;
        if (sg_str_has_prefix(p, "domain:"))
            p += 7;
        char *colon = strrchr(p, ':');
        if (colon && !strchr(p, ']')) {
            long long v;
            if (sg_parse_ll(colon + 1, 1, 65535, &v) < 0) {
                *why = "a Fetch port must be 1-65535";
                return -EINVAL;
            }
            r->port = (int)v;
            *colon = '\0';
        }
        memmove(pat, p, strlen(p) + 1);
        for (char *c = pat; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        size_t hl = strlen(pat);
        if (hl > 1 && pat[hl - 1] == '.')
            pat[hl - 1] = '\0'; /* evil.test. is evil.test in DNS */
    } else if (r->tool == SG_PT_CONNECT && pat[0] != '/' && !sg_str_has_prefix(pat, "~/")) {
        *why = "a Connect pattern is a socket's absolute path or glob, or ~/...";
        return -EINVAL;
    } else if (path_pattern(&pat, why) < 0) {
        return -EINVAL;
    }
    r->pattern = steal_pointer(&pat);
    r->effect = eff;
    r->text = sg_xstrdup(text);
    r->source = sg_xstrdup(source);
    return 0;
}

void sg_prule_free(struct sg_prule *r)
{
    for (size_t i = 0; i < r->nwords; i++)
        free(r->words[i]);
    free(r->words);
    free(r->agent);
    free(r->pattern);
    free(r->text);
    free(r->source);
    memset(r, 0, sizeof *r);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A path pattern (absolute glob, dir/(all below), or relative to the agent's
 * project) against the canonical path of q. */
static bool path_matches(const char *pattern, const struct sg_preq *q)
{
    if (pattern[0] != '/') {
        /* Edit(src/...): relative to the agent's project, for its own
         * requests only (a skill's cwd is no project of the person's) */
        size_t cl = strlen(q->cwd);
        if (!q->agent_tool[0] || q->cwd[0] != '/' || strncmp(q->subject, q->cwd, cl) ||
            q->subject[cl] != '/')
            return false;
        cleanup_free char *full = sg_xasprintf("%s/%s", q->cwd, pattern);
        return path_matches(full, q);
    }
    size_t n = strlen(pattern);
    if (n >= 3 && !strcmp(pattern + n - 3, "/**"))
        return !strncmp(q->subject, pattern, n - 2) ||
               (!strncmp(q->subject, pattern, n - 3) && q->subject[n - 3] == '\0');
    return fnmatch(pattern, q->subject, FNM_PATHNAME) == 0;
}

/* A search (Grep, Glob, LS) of a folder that holds what pattern names:
 * a deny or ask rule on ~/.ssh holds for a Grep of ~. */
static bool searches_into(const char *pattern, const struct sg_preq *q)
{
    if (strcmp(q->agent_tool, "Grep") && strcmp(q->agent_tool, "Glob") &&
        strcmp(q->agent_tool, "LS"))
        return false;
    cleanup_free char *full = pattern[0] == '/' ? sg_xstrdup(pattern)
                              : q->cwd[0] == '/' ? sg_xasprintf("%s/%s", q->cwd, pattern)
                                                 : NULL;
    if (!full)
        return false;
    full[strcspn(full, "*?[")] = '\0'; /* the fixed part */
    size_t n = strlen(q->subject);
    return !strcmp(q->subject, "/") || (!strncmp(full, q->subject, n) && full[n] == '/');
}

/* The words of a request's arguments (q->args reads back exactly: quoted
 * shell words), or -EINVAL. */
static int arg_words(const struct sg_preq *q, struct sg_shell *sh)
{
    memset(sh, 0, sizeof *sh);
    if (!q->args[0])
        return 0;
    const char *why;
    if (sg_shell_parse(q->args, sh, &why) < 0)
        return -EINVAL;
    if (sh->n != 1) {
        sg_shell_free(sh);
        return -EINVAL;
    }
    return 0;
}

/* Two absolute paths to one file (/bin/touch and /usr/bin/touch). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a[0] == '/' && b[0] == '/' && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Bash(WORDS) and Bash(WORDS:*): the program (an absolute first word is
 * the resolved program, any other the name as scopes and the agent write
 * it), then every argument word for word; a prefix rule's words begin the
 * request's. Never on a request that did not fit. */
static bool bash_matches(const struct sg_prule *r, const struct sg_preq *q)
{
    if (q->cut || !r->nwords)
        return false;
    const char *w0 = r->words[0];
    const char *prog = w0[0] == '/' ? q->subject : q->name[0] ? q->name : base_name(q->subject);
    if (strcmp(w0, prog) && !(w0[0] == '/' && same_file(w0, prog)))
        return false;
    struct sg_shell sh;
    if (arg_words(q, &sh) < 0)
        return false; /* arguments that cannot be read back are matched by nothing */
    size_t nargs = sh.n ? sh.cmds[0].argc : 0, want = r->nwords - 1;
    bool m = r->prefix ? nargs >= want : nargs == want;
    for (size_t i = 0; m && i < want; i++)
        m = !strcmp(r->words[i + 1], sh.cmds[0].argv[i]);
    sg_shell_free(&sh);
    return m;
}

bool sg_prule_matches(const struct sg_prule *r, const struct sg_preq *q)
{
    if (q->cut || q->unsure)
        return false; /* a request that did not fit whole, or a path read two ways, is
                       * asked, never matched */
    if (r->agent) { /* WebSearch, mcp__server__tool, mcp__server: by the agent's name */
        size_t n = strlen(r->agent);
        if (!r->any) /* Read(path): every tool that reads files, on that path */
            return q->agent_tool[0] && reads_paths(q->agent_tool, strlen(q->agent_tool)) &&
                   q->subject[0] == '/' &&
                   (path_matches(r->pattern, q) ||
                    (r->effect != SG_EFF_ALLOW && searches_into(r->pattern, q)));
        return q->agent_tool[0] &&
               (!strcmp(q->agent_tool, r->agent) ||
                (sg_str_has_prefix(r->agent, "mcp__") && !strstr(r->agent + 5, "__") &&
                 !strncmp(q->agent_tool, r->agent, n) && !strncmp(q->agent_tool + n, "__", 2)));
    }
    if (r->tool != q->tool)
        return false;
    /* an agent's tool of no rule class (an mcp__ tool, WebSearch) is asked
     * as a command, but no Bash rule is about it */
    if (q->agent_tool[0] &&
        sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) != (int)r->tool)
        return false;
    if (r->any)
        return true;
    switch (q->tool) {
    case SG_PT_BASH:
        return bash_matches(r, q);
    case SG_PT_CONNECT:
    case SG_PT_WRITE:
        if (r->pattern[0] != '/' && q->tool == SG_PT_CONNECT)
            return false;
        return path_matches(r->pattern, q);
    case SG_PT_FETCH: {
        if (r->port >= 0 && r->port != q->port)
            return false;
        if (sg_str_has_prefix(r->pattern, "*.")) {
            size_t s = strlen(r->pattern) - 1, n = strlen(q->subject);
            return n > s && !strcmp(q->subject + n - s, r->pattern + 1);
        }
        return !strcmp(r->pattern, q->subject);
    }
    }
    return false;
}

bool sg_program_runs_any_code(const char *path)
{
    static const char *const any[] = {
        "sh",     "bash",   "dash",  "zsh",     "ksh",    "mksh",  "fish",  "csh",  "tcsh",
        "ash",    "busybox", "python", "perl",  "ruby",   "node",  "nodejs", "deno", "bun",
        "php",    "lua",    "luajit", "tclsh",  "wish",   "Rscript", "julia", "pwsh", "osascript",
        "env",    "xargs",  "sudo",  "doas",    "su",     "nohup", "timeout", "nice", "setsid",
        "awk",    "gawk",   "mawk",  "nawk",    "expect", "gdb",   "vim",   "vi",   "emacs",
        "make",   "docker", "podman", "npx",    "uvx",    "pipx",  "java",  "jshell"};
    const char *b = base_name(path);
    for (size_t i = 0; i < SG_ARRAY_LEN(any); i++) {
        size_t n = strlen(any[i]);
        /* python3, python3.12, perl5.36, lua5.4: a version after the name */
        if (!strncmp(b, any[i], n) && (!b[n] || (b[n] >= '0' && b[n] <= '9')))
            return true;
    }
    return false;
}

const char *sg_preq_protected(const struct sg_preq *q)
{
    if (q->tool != SG_PT_WRITE)
        return NULL;
    /* the names again at every look: a request that waits in the queue
     * can become protected meanwhile (a HEAD written makes a git folder) */
    if (q->protect)
        return q->protect;
    const char *w = q->host[0] ? sg_protected_path(q->host, NULL) : NULL;
    return w ? w : q->subject[0] == '/' ? sg_protected_path(q->subject, NULL) : NULL;
}

bool sg_prule_exact(const struct sg_prule *r)
{
    if (r->tool != SG_PT_WRITE || r->any || r->agent || !r->pattern)
        return false;
    for (const char *c = r->pattern; *c; c++) {
        if (*c == '\\' && c[1]) {
            c++;
            continue;
        }
        if (strchr("*?[", *c))
            return false;
    }
    return true;
}

/* Places where a file runs code later by itself, or changes who may log in. */
static const char *write_target_risk(const char *path, const char *home)
{
    const char *prot = sg_protected_path(path, NULL);
    if (prot)
        return prot;
    static const struct {
        const char *prefix, *why;
    } sys[] = {{"/etc/cron", "cron runs it"},           {"/var/spool/cron", "cron runs it"},
               {"/etc/sudoers", "it decides who is root"}, {"/etc/systemd", "systemd runs it"},
               {"/etc/profile", "every login shell runs it"}, {"/etc/", "a system file"},
               {"/usr/", "a system file"},            {"/bin/", "a system program"},
               {"/sbin/", "a system program"},        {"/lib", "a system library"},
               {"/boot/", "the boot files"},          {"/root/", "root's home"},
               {"/var/", "system state"},             {"/opt/", "installed software"}};
    for (size_t i = 0; i < SG_ARRAY_LEN(sys) && !sg_str_has_prefix(path, "/var/tmp/"); i++)
        if (sg_str_has_prefix(path, sys[i].prefix))
            return sys[i].why;
    if (strstr(path, "/.git/hooks/"))
        return "git runs it on your next commit";
    static const struct {
        const char *rel, *why;
    } mine[] = {{".bashrc", "every shell you open runs it"},
                {".bash_profile", "your login shell runs it"},
                {".bash_login", "your login shell runs it"},
                {".profile", "your login shell runs it"},
                {".zshrc", "every shell you open runs it"},
                {".zshenv", "every zsh runs it"},
                {".zprofile", "your login shell runs it"},
                {".config/fish/", "fish runs it"},
                {".config/autostart/", "your desktop starts it at login"},
                {".config/systemd/", "systemd starts it for you"},
                {".ssh/", "it decides who logs in as you"},
                {".gnupg/", "your keys"},
                {".local/bin/", "a program on your PATH"},
                {".aws/", "your cloud credentials"},
                {".kube/", "your cluster credentials"},
                {".docker/", "your registry credentials"},
                {".npmrc", "npm runs and trusts it"},
                {".gitconfig", "git runs what it names"},
                {".config/skillgate/", "skillgate's own config"}};
    size_t hl = home ? strlen(home) : 0;
    if (hl > 1 && !strncmp(path, home, hl) && path[hl] == '/')
        for (size_t i = 0; i < SG_ARRAY_LEN(mine); i++) {
            const char *rel = mine[i].rel, *in = path + hl + 1;
            /* a folder (trailing /): anything in it; a file: that file */
            if (sg_str_has_suffix(rel, "/") ? sg_str_has_prefix(in, rel) : !strcmp(in, rel))
                return mine[i].why;
        }
    return NULL;
}

enum sg_risk_level sg_preq_risk(const struct sg_preq *q, const char *home, char *why, size_t n)
{
    why[0] = '\0';
    switch (q->tool) {
    case SG_PT_BASH:
        if (sg_program_runs_any_code(q->subject))
            snprintf(why, n, "a shell or interpreter: it runs any code");
        return SG_RL_HIGH;
    case SG_PT_WRITE: {
        const char *w = q->protect ? q->protect
                                   : write_target_risk(q->host[0] ? q->host : q->subject, home);
        if (w) {
            snprintf(why, n, "%s", w);
            return SG_RL_HIGH;
        }
        return SG_RL_MEDIUM;
    }
    case SG_PT_FETCH: return SG_RL_MEDIUM;
    case SG_PT_CONNECT:
        snprintf(why, n, "a daemon outside the sandbox acts for the skill, with its own rights");
        return SG_RL_HIGH;
    }
    return SG_RL_HIGH;
}

/* path with the characters a path pattern reads (* ? [ \\) escaped: a
 * kept rule names this file, never a glob of it. Caller frees. */
static char *literal_path(const char *path)
{
    struct sg_buf b;
    sg_buf_init(&b, SIZE_MAX / 2);
    for (const char *c = path; *c; c++) {
        if (strchr("*?[\\", *c))
            sg_buf_append(&b, "\\", 1);
        sg_buf_append(&b, c, 1);
    }
    sg_buf_append(&b, "", 1);
    return sg_buf_steal(&b);
}

char *sg_preq_rule(const struct sg_preq *q)
{
    /* a reader's: that path, for that tool */
    if (q->agent_tool[0] && reads_paths(q->agent_tool, strlen(q->agent_tool)) &&
        q->subject[0] == '/') {
        cleanup_free char *lit = literal_path(q->subject);
        return sg_xasprintf("%s(%s)", q->agent_tool, lit);
    }
    /* an agent's tool of no rule class: the rule is its name */
    if (q->agent_tool[0] && sg_ptool_of_agent_tool(q->agent_tool, strlen(q->agent_tool)) < 0)
        return sg_xstrdup(q->agent_tool);
    switch (q->tool) {
    case SG_PT_BASH: {
        /* exactly the command that was shown: the program (as the agent
         * wrote it, or the resolved path a skill ran) and every argument,
         * quoted so the rule reads back as these words and no others */
        struct sg_buf b;
        sg_buf_init(&b, SIZE_MAX / 2);
        sg_buf_append(&b, "Bash(", 5);
        sg_shell_quote(&b, q->agent_tool[0] && q->name[0] ? q->name : q->subject, true);
        if (q->args[0]) {
            sg_buf_append(&b, " ", 1);
            sg_buf_append(&b, q->args, strlen(q->args));
        }
        sg_buf_append(&b, ")", 1);
        return sg_buf_steal(&b);
    }
    case SG_PT_WRITE: {
        cleanup_free char *lit = literal_path(q->subject);
        return sg_xasprintf("Write(%s)", lit);
    }
    case SG_PT_FETCH:
        return q->port > 0 ? sg_xasprintf("Fetch(%s:%d)", q->subject, q->port)
                           : sg_xasprintf("Fetch(%s)", q->subject);
    case SG_PT_CONNECT: {
        cleanup_free char *lit = literal_path(q->subject);
        return sg_xasprintf("Connect(%s)", lit);
    }
    }
    return sg_xstrdup("?");
}

void sg_rules_add(struct sg_prule **rules, size_t *n, const struct sg_prule *r)
{
    *rules = sg_xrealloc(*rules, (*n + 1) * sizeof **rules);
    (*rules)[(*n)++] = *r;
}

/* Read a policy file into a tree (capped like a manifest). Its rules
 * decide what runs unasked, so, like grants.yaml, it is read only when it
 * and its folder are the user's own (or root's) and nobody else may write
 * them; unlike grants (only allows), an untrusted policy is not skipped
 * (its deny rules would go with it) but refused: *err -EPERM. */
static struct sg_ynode *load_yaml(const char *path, struct sg_diags *d, int *err)
{
    cleanup_free char *buf = NULL, *why = NULL;
    size_t len = 0;
    *err = sg_read_private_file(path, SG_MANIFEST_MAX, &buf, &len, &why);
    if (*err == -EPERM) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL,
                    "not used: %s (chmod go-w it and its folder, or own them)", why);
        return NULL;
    }
    if (*err < 0) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s",
                    *err == -EFBIG || *err == -EINVAL ? "not a regular file under 256 KiB"
                                                      : strerror(-*err));
        return NULL;
    }
    if (!buf)
        return NULL; /* no such file */
    struct sg_ynode *root = NULL;
    if (sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        *err = -EINVAL;
    return root;
}

int sg_rules_load(const char *path, struct sg_prule **rules, size_t *n, struct sg_diags *d)
{
    int err;
    struct sg_ynode *root = load_yaml(path, d, &err);
    if (err)
        return err;
    if (!root) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "no such policy file");
        return -ENOENT;
    }
    static const struct {
        const char *key;
        enum sg_effect eff;
    } parts[] = {{"deny", SG_EFF_DENY}, {"ask", SG_EFF_ASK}, {"allow", SG_EFF_ALLOW}};
    int r = 0;
    for (size_t k = 0; k + 1 < root->n; k += 2) {
        const struct sg_ynode *key = root->kids[k], *v = root->kids[k + 1];
        size_t i;
        for (i = 0; i < SG_ARRAY_LEN(parts); i++)
            if (!strcmp(key->str, parts[i].key))
                break;
        if (i == SG_ARRAY_LEN(parts)) {
            sg_diag_add(d, SG_WARNING, path, key->line, key->col, key->str, "unknown key, ignored");
            continue;
        }
        if (v->type != SG_Y_SEQ) {
            sg_diag_add(d, SG_ERROR, path, v->line, v->col, key->str, "must be a list of rules");
            r = -EINVAL;
            continue;
        }
        for (size_t j = 0; j < v->n; j++) {
            const struct sg_ynode *it = v->kids[j];
            struct sg_prule rule;
            const char *why;
            cleanup_free char *src = sg_xasprintf("%s:%d", path, it->line);
            if (it->type != SG_Y_SCALAR ||
                sg_prule_parse(it->str, parts[i].eff, src, &rule, &why) < 0) {
                sg_diag_add(d, SG_ERROR, path, it->line, it->col, key->str, "%s",
                            it->type == SG_Y_SCALAR ? why : "must be a rule string");
                r = -EINVAL;
                continue;
            }
            sg_rules_add(rules, n, &rule);
        }
    }
    sg_ynode_free(root);
    return r;
}

/* ---- deny and ask rules see the program however it is reached ---- */

static const struct sg_prule *limit_view(const struct sg_prule *rules, size_t n,
                                         const struct sg_preq *q, enum sg_effect eff, int depth,
                                         bool *unknown);

/* The file bash runs for a program name, through PATH (caller frees), or
 * NULL. */
static char *path_lookup(const char *name)
{
    const char *path = getenv("PATH");
    for (const char *d = path ? path : ""; *d;) {
        const char *e = strchrnul(d, ':');
        char *cand = sg_xasprintf("%.*s/%s", (int)(e - d), d, name);
        struct stat st;
        if (cand[0] == '/' && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
            access(cand, X_OK) == 0)
            return cand;
        free(cand);
        d = *e ? e + 1 : e;
    }
    return NULL;
}

/* q narrowed to the command words[0..] (as written), checked. */
static const struct sg_prule *limit_words(const struct sg_prule *rules, size_t n,
                                          const struct sg_preq *q, char *const *words,
                                          size_t nw, enum sg_effect eff, int depth,
                                          bool *unknown)
{
    struct sg_preq *v = sg_xmalloc(sizeof *v);
    *v = *q;
    v->cut = false;
    struct sg_shell_cmd rest = {.argv = (char **)words + 1, .argc = nw - 1};
    cleanup_free char *args = sg_shell_join(&rest);
    SG_PREQ_SET(v, subject, words[0]);
    SG_PREQ_SET(v, name, words[0]);
    SG_PREQ_SET(v, args, args);
    const struct sg_prule *hit = NULL;
    if (v->cut)
        *unknown = true;
    else
        hit = limit_view(rules, n, v, eff, depth + 1, unknown);
    free(v);
    return hit;
}

static const struct sg_prule *limit_view(const struct sg_prule *rules, size_t n,
                                         const struct sg_preq *q, enum sg_effect eff, int depth,
                                         bool *unknown)
{
    for (size_t i = 0; i < n; i++)
        if (rules[i].effect == eff && sg_prule_matches(&rules[i], q))
            return &rules[i];
    if (q->tool != SG_PT_BASH)
        return NULL;
    if (q->cut || depth > 6) {
        *unknown = true;
        return NULL;
    }
    const char *prog = q->name[0] ? q->name : q->subject;
    const struct sg_prule *hit = NULL;
    cleanup_free char *found = q->agent_tool[0] && !strchr(prog, '/') ? path_lookup(prog) : NULL;
    if (found) { /* touch: also the /usr/bin/touch bash finds, for Bash(/usr/bin/touch:*) */
        struct sg_preq *v = sg_xmalloc(sizeof *v);
        *v = *q;
        SG_PREQ_SET(v, subject, found);
        for (size_t i = 0; i < n && !hit; i++)
            if (rules[i].effect == eff && rules[i].words && rules[i].words[0][0] == '/' &&
                sg_prule_matches(&rules[i], v))
                hit = &rules[i];
        free(v);
        if (hit)
            return hit;
    }
    if (strchr(prog, '/')) { /* /usr/bin/touch, ./touch: also touch */
        struct sg_preq *v = sg_xmalloc(sizeof *v);
        *v = *q;
        SG_PREQ_SET(v, name, base_name(prog));
        for (size_t i = 0; i < n && !hit; i++)
            if (rules[i].effect == eff && rules[i].words && rules[i].words[0][0] != '/' &&
                sg_prule_matches(&rules[i], v))
                hit = &rules[i];
        free(v);
        if (hit)
            return hit;
    }
    struct sg_shell sh;
    if (arg_words(q, &sh) < 0) {
        *unknown = true;
        return NULL;
    }
    size_t argc = 1 + (sh.n ? sh.cmds[0].argc : 0), at;
    char **argv = sg_xcalloc(argc + 1, sizeof *argv);
    argv[0] = (char *)prog;
    for (size_t i = 1; i < argc; i++)
        argv[i] = sh.cmds[0].argv[i - 1];
    switch (sg_shell_launches(argv, argc, &at)) {
    case SG_LAUNCH_NONE:
        break;
    case SG_LAUNCH_UNKNOWN:
        *unknown = true;
        break;
    case SG_LAUNCH_INNER:
        hit = limit_words(rules, n, q, argv + at, argc - at, eff, depth, unknown);
        break;
    case SG_LAUNCH_SHELL: {
        struct sg_shell in;
        const char *why;
        if (sg_shell_parse(argv[at], &in, &why) < 0) {
            *unknown = true;
            break;
        }
        for (size_t c = 0; c < in.n && !hit; c++)
            hit = limit_words(rules, n, q, in.cmds[c].argv, in.cmds[c].argc, eff, depth, unknown);
        sg_shell_free(&in);
        break;
    }
    }
    free(argv);
    sg_shell_free(&sh);
    return hit;
}

const struct sg_prule *sg_rules_limit(const struct sg_prule *rules, size_t n,
                                      const struct sg_preq *q, enum sg_effect eff,
                                      bool *unknown)
{
    bool hidden = false;
    const struct sg_prule *hit = limit_view(rules, n, q, eff, 0, &hidden);
    *unknown = false;
    if (!hit && hidden) /* only where a Bash rule of this effect could have named it */
        for (size_t i = 0; i < n && !*unknown; i++)
            *unknown = rules[i].effect == eff && rules[i].tool == SG_PT_BASH && !rules[i].agent;
    return hit;
}
