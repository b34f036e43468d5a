/* skillgate hook: one Claude Code hook event in, one answer out (hook.h). */
#include "hook.h"
#include "hook_int.h"
#include "hookwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "attach.h"
#include "config.h"
#include "notifpath.h"
#include "shellcmd.h"
#include "skill.h"
#include "loop.h"
#include "perm.h"
#include "policy.h"
#include "runner.h"
#include "sanitize.h"
#include "seen.h"
#include "urlhost.h"
#include "util.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

char *sg_hook_url_host(const char *url, size_t len)
{
    char *host = NULL;
    const char *why;
    return sg_url_host(url, len, &host, &why) == 0 ? host : NULL;
}

/* A file tool's path: absolute, or relative to the agent's cwd. */
static char *file_path(const struct sg_hook_call *c, const char *key, const char **why)
{
    const char *p = str(c->input, key);
    if (!p || !*p) {
        *why = "the tool's input has no file path";
        return NULL;
    }
    if (p[0] == '~') { /* the tool may expand it, or not: two readings */
        *why = "a path starting with ~ (the tool may read it as your home)";
        return NULL;
    }
    if (p[0] == '/')
        return sg_xstrdup(p);
    if (!c->cwd[0]) {
        *why = "a relative file path and no absolute cwd to read it from";
        return NULL;
    }
    return sg_xasprintf("%s/%s", c->cwd, p);
}

void sg_hook_call_free(struct sg_hook_call *c)
{
    free(c->tool), free(c->session), free(c->cwd), free(c->tool_use_id);
    free(c->detail), free(c->summary);
    json_decref(c->input);
    memset(c, 0, sizeof *c);
}

static char *one_line(const char *s, size_t max)
{
    cleanup_free char *t = sg_sanitize_str(s, 0);
    size_t n = strlen(t);
    if (n <= max)
        return steal_pointer(&t);
    while (max && ((unsigned char)t[max] & 0xc0) == 0x80)
        max--; /* never half a character: the record's JSON must take it */
    return sg_xasprintf("%.*s…", (int)max, t);
}

int sg_hook_parse(const char *buf, size_t len, struct sg_hook_call *c, const char **why)
{
    memset(c, 0, sizeof *c);
    c->tool = sg_xstrdup("?"), c->session = sg_xstrdup(""), c->cwd = sg_xstrdup("");
    c->tool_use_id = sg_xstrdup(""), c->detail = sg_xstrdup(""), c->summary = sg_xstrdup("");
    json_error_t err;
    json_t *ev = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(ev)) {
        json_decref(ev);
        *why = "the event is not a JSON object";
        return -EINVAL;
    }
    const char *name = str(ev, "hook_event_name"), *tool = str(ev, "tool_name");
    json_t *input = json_object_get(ev, "tool_input");
    const char *sid = str(ev, "session_id"), *tuid = str(ev, "tool_use_id");
    if (sid)
        free(c->session), c->session = sg_xstrndup(sid, strnlen(sid, 256));
    if (str(ev, "cwd") && str(ev, "cwd")[0] == '/' && strlen(str(ev, "cwd")) < PATH_MAX)
        free(c->cwd), c->cwd = sg_xstrdup(str(ev, "cwd"));
    if (tuid)
        free(c->tool_use_id), c->tool_use_id = sg_xstrndup(tuid, strnlen(tuid, 256));
    if (tool && strlen(tool) <= 256)
        free(c->tool), c->tool = sg_xstrdup(tool);
    c->input = json_incref(input);
    bool pre = name && !strcmp(name, "PreToolUse");
    bool preq = name && !strcmp(name, "PermissionRequest");
    bool tool_ok = tool && *tool && strlen(tool) <= 256;
    json_decref(ev); /* name and tool are gone with it; c has copies */
    tool = c->tool;
    if (!pre && !preq) {
        *why = "not a PreToolUse or PermissionRequest event";
        return -EINVAL;
    }
    c->event = pre ? SG_HOOK_PRE_TOOL_USE : SG_HOOK_PERMISSION_REQUEST;
    if (!tool_ok) {
        *why = "tool_name is missing, or not a string of at most 256 bytes";
        return -EINVAL;
    }
    if (!json_is_object(input)) {
        *why = "tool_input is missing, or not an object";
        return -EINVAL;
    }
    cleanup_free char *canon = json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS);
    sg_sha256_text(canon ? canon : "", canon ? strlen(canon) : 0, c->input_digest);

    enum sg_tool_id id = sg_tool_lookup(tool);
    c->known = id != SG_TOOL_UNKNOWN;
    char *detail = NULL, *summary = NULL;
    *why = NULL;
    switch (id) {
    case SG_TOOL_BASH:
    case SG_TOOL_TERMINAL:
    case SG_TOOL_SLASHCOMMAND: {
        const char *cmd = str(input, "command");
        if (!cmd || !*cmd)
            *why = "the tool's input has no command";
        else
            detail = sg_xstrdup(cmd), summary = one_line(cmd, 300);
        break;
    }
    case SG_TOOL_WRITE:
    case SG_TOOL_EDIT:
    case SG_TOOL_MULTIEDIT:
    case SG_TOOL_DELETE:
    case SG_TOOL_NOTEBOOKEDIT:
        detail = file_path(c, id == SG_TOOL_NOTEBOOKEDIT ? "notebook_path" : "file_path", why);
        if (detail)
            summary = one_line(detail, 300);
        break;
    case SG_TOOL_FETCH:
    case SG_TOOL_WEBFETCH: {
        /* read as Node's WHATWG parser reads it (all its bytes: a NUL
         * inside is no end), or not at all: then Claude Code asks */
        json_t *u = json_object_get(input, "url");
        const char *url = json_string_value(u);
        detail = url ? sg_hook_url_host(url, json_string_length(u)) : NULL;
        if (!detail)
            *why = "the tool's url is not an http(s) URL with a host";
        else
            summary = one_line(url, 300);
        break;
    }
    case SG_TOOL_WEBSEARCH: {
        const char *q = str(input, "query");
        if (!q)
            *why = "the search has no query";
        else
            detail = sg_xstrdup(q), summary = one_line(q, 300);
        break;
    }
    case SG_TOOL_READ:
    case SG_TOOL_NOTEBOOKREAD:
    case SG_TOOL_GREP:
    case SG_TOOL_GLOB:
    case SG_TOOL_LS: {
        /* what a reader reads: its file, or the folder it searches (the
         * agent's cwd when none is named); a Glob pattern that climbs or
         * is absolute, the folder it starts from */
        const char *key = id == SG_TOOL_READ ? "file_path"
                          : id == SG_TOOL_NOTEBOOKREAD ? "notebook_path" : "path";
        const char *pat = id == SG_TOOL_GLOB ? str(input, "pattern") : NULL;
        cleanup_free char *from = NULL;
        if (pat && (pat[0] == '/' || strstr(pat, ".."))) {
            size_t fixed = strcspn(pat, "*?[{");
            while (fixed && pat[fixed - 1] != '/')
                fixed--;
            from = fixed ? sg_xstrndup(pat, fixed) : sg_xstrdup(".");
        }
        const char *p = str(input, key);
        if ((id == SG_TOOL_READ || id == SG_TOOL_NOTEBOOKREAD) && (!p || !*p)) {
            *why = "the tool's input has no file path";
            break;
        }
        if ((p && p[0] == '~') || (pat && pat[0] == '~')) {
            *why = "a path starting with ~ (the tool may read it as your home)";
            break;
        }
        const char *base = p && *p ? p : ".";
        cleanup_free char *joined = from && from[0] != '/' ? sg_xasprintf("%s/%s", base, from)
                                                            : NULL;
        const char *want = joined ? joined : from ? from : base;
        if (want[0] != '/' && !c->cwd[0]) {
            *why = "a relative path and no absolute cwd to read it from";
            break;
        }
        detail = want[0] == '/' ? sg_xstrdup(want) : sg_xasprintf("%s/%s", c->cwd, want);
        summary = one_line(p && *p ? p : pat ? pat : detail, 300);
        break;
    }
    default: {
        /* bookkeeping tools, an mcp__ tool, or one skillgate does not
         * know: the name and what it was given */
        const char *what = str(input, "file_path") ? str(input, "file_path")
                           : str(input, "pattern") ? str(input, "pattern")
                           : str(input, "path")    ? str(input, "path")
                           : str(input, "description") ? str(input, "description") : NULL;
        cleanup_free char *args = what ? NULL : json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS);
        summary = one_line(what ? what : args ? args : "", 300);
        detail = sg_xstrdup(id == SG_TOOL_MCP ? tool : "");
        break;
    }
    }
    if (*why) {
        free(detail), free(summary);
        return -EINVAL;
    }
    free(c->detail), c->detail = detail;
    free(c->summary), c->summary = summary;
    return 0;
}

json_t *sg_hook_answer(enum sg_hook_event ev, const char *decision, const char *reason,
                       json_t *updated)
{
    if (ev == SG_HOOK_PRE_TOOL_USE) {
        json_t *o = json_pack("{s:s, s:s, s:s}", "hookEventName", "PreToolUse",
                              "permissionDecision", decision, "permissionDecisionReason",
                              reason);
        /* with "ask", Claude Code's dialog shows (and runs) the updated input */
        if (updated && strcmp(decision, "deny"))
            json_object_set(o, "updatedInput", updated);
        json_decref(updated);
        return json_pack("{s:o}", "hookSpecificOutput", o);
    }
    /* PermissionRequest: allow or deny on the person's behalf; "ask" is no
     * decision, so Claude Code shows its own dialog */
    if (!strcmp(decision, "ask")) {
        json_decref(updated);
        return json_object();
    }
    json_t *d = json_pack("{s:s}", "behavior", decision);
    if (!strcmp(decision, "deny"))
        json_object_set_new(d, "message", json_string(reason));
    else if (updated)
        json_object_set(d, "updatedInput", updated);
    json_decref(updated);
    return json_pack("{s:{s:s, s:o}}", "hookSpecificOutput", "hookEventName",
                     "PermissionRequest", "decision", d);
}

/* ---- what the agent never changes by a rule ---- */

/* How a path stands to what steers the decisions, after resolution (the
 * file the kernel reaches, a link to nothing followed): skillgate's own
 * files (its rules, grants, session answers, audit log), Claude Code's
 * settings (where skillgate is its hook) in any project, and agents' own
 * folders (~/.claude and the like: tokens, settings). NULL for any other. */
struct guards {
    struct sg_own_dirs od;
    struct sg_agent_paths ap;
};

/* How t stands to what steers the decisions: one of them, inside one, or
 * (holds: a Bash word, where a copy or an extraction into a folder can
 * replace what lies below it) a folder holding one ("~", "~/.config"). */
static const char *protected_one(const struct guards *gd, const char *t, bool *own,
                                 bool skills_too, bool holds)
{
    if (t[0] != '/')
        return NULL;
    enum sg_own_rel rel = sg_own_dirs_relation(&gd->od, t, NULL);
    if (rel == SG_OWN_INSIDE) {
        *own = true;
        return "skillgate's own files (rules, grants, records): the agent never writes them";
    }
    const struct sg_agent_path *which = NULL;
    enum sg_agent_rel ar = sg_agent_paths_relation(&gd->ap, t, NULL, &which);
    if (ar == SG_AGENT_INSIDE) /* a skill kept there is run and read there */
        return skills_too || !sg_agent_path_in_skills(which, t)
                   ? "an AI agent's own folder (its login, its settings): only a person decides"
                   : NULL;
    /* a project's .claude (settings with its hooks, agents, commands) */
    if (strstr(t, "/.claude/") || sg_str_has_suffix(t, "/.claude"))
        return "Claude Code's folder (settings where skillgate is its hook, agents, "
               "commands): only a person decides";
    if (holds) {
        cleanup_free char *in = sg_xasprintf("%s/.claude", strcmp(t, "/") ? t : "");
        struct stat st;
        if (lstat(in, &st) == 0)
            return "a folder that holds a .claude folder (a copy or an extraction into it "
                   "can replace its settings): only a person decides";
    }
    if (holds && (rel == SG_OWN_CONTAINS || ar == SG_AGENT_HOLDS))
        return "a folder that holds skillgate's or an AI agent's own files (a copy or an "
               "extraction into it can replace them): only a person decides";
    return NULL;
}

/* path read both ways a program may read it: as the kernel walks it, and
 * with its ".." taken lexically first (Node's path.resolve); a ".." out
 * of what does not exist yet is asked (a link the line makes first).
 * *missing: what it names is not there (yet). */
static const char *protected_path(const struct guards *gd, const char *path, const char *cwd,
                                  bool *own, bool skills_too, bool holds, bool *missing)
{
    *own = false;
    bool unsure;
    cleanup_free char *t = sg_path_target_ex(path, cwd, &unsure);
    struct stat st;
    if (missing)
        *missing = t[0] == '/' && lstat(t, &st) < 0;
    const char *g = protected_one(gd, t, own, skills_too, holds);
    if (g || t[0] != '/')
        return g;
    cleanup_free char *abs = path[0] == '/' ? sg_xstrdup(path) : sg_xasprintf("%s/%s", cwd, path);
    if (sg_path_normalize(abs) == 0) {
        cleanup_free char *lex = sg_path_target(abs, NULL);
        g = protected_one(gd, lex, own, skills_too, holds);
    }
    if (!g && unsure)
        g = "a path skillgate cannot read as the program that acts on it will (a .. out of "
            "what is not there yet, /proc/self, /dev/fd): only a person decides";
    return g;
}

#define GUARD_CWDS 16

/* Every folder a relative word of the line may be read from: the agent's
 * cwd, and each folder a cd or pushd before it may have gone to (either
 * side of || may have run). false when a change cannot be followed (cd -,
 * popd, a CDPATH search, too many): then the line is asked. */
static bool follow_cd(const struct sg_shell_cmd *cmd, char **cwds, size_t *n)
{
    const char *b = cmd->argv[0];
    if (strcmp(b, "cd") && strcmp(b, "pushd") && strcmp(b, "popd") && strcmp(b, "chdir"))
        return true;
    if (!strcmp(b, "popd"))
        return false;
    const char *to = NULL;
    bool physical = false; /* cd -P: the kernel's reading only */
    for (size_t k = 1; k < cmd->argc && !to; k++)
        if (!strcmp(cmd->argv[k], "--") && k + 1 < cmd->argc)
            to = cmd->argv[k + 1];
        else if (cmd->argv[k][0] != '-' || !cmd->argv[k][1])
            to = cmd->argv[k];
        else
            physical |= strchr(cmd->argv[k], 'P') != NULL;
    const char *home = secure_getenv("HOME"), *cdpath = secure_getenv("CDPATH");
    if (!to)
        to = home;
    if (!to || !strcmp(to, "-") || (to[0] != '/' && to[0] != '.' && cdpath && *cdpath))
        return false;
    /* bash's cd reads .. lexically (l/.. is where l is, not its target's
     * parent) and the kernel physically: both landings count */
    size_t had = *n;
    for (size_t i = 0; i < had; i++) {
        if (*n + 2 > GUARD_CWDS)
            return false;
        cwds[(*n)++] = sg_path_target(to, cwds[i]);
        char *lex = to[0] == '/' ? sg_xstrdup(to) : sg_xasprintf("%s/%s", cwds[i], to);
        if (!physical && lex[0] == '/' && sg_path_normalize(lex) == 0)
            cwds[(*n)++] = lex;
        else
            free(lex);
    }
    return true;
}

static bool listed_in(const char *prog, const char *const *list, size_t n)
{
    const char *b = sg_hook_base_of(prog);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(b, list[i]))
            return true;
    return false;
}

/* Programs that may make a link (ln, cp -s or -a, an archive or a
 * checkout holding one), or run any code. */
static bool makes_links(const char *prog)
{
    static const char *const progs[] = {"ln", "link", "cp", "mv", "tar", "bsdtar", "unzip",
                                        "cpio", "7z", "pax", "rsync", "git", "install"};
    return listed_in(prog, progs, SG_ARRAY_LEN(progs)) || sg_program_runs_any_code(prog);
}

/* Programs that write through the paths they are given. */
static bool writes_paths(const char *prog)
{
    static const char *const progs[] = {
        "cp", "mv", "install", "ln", "link", "tee", "dd", "rsync", "tar", "bsdtar", "unzip",
        "cpio", "7z", "pax", "sed", "truncate", "touch", "sort", "split", "csplit", "patch",
        "chmod", "chown", "chgrp", "mkdir", "rm", "rmdir", "shred", "mktemp"};
    return listed_in(prog, progs, SG_ARRAY_LEN(progs)) || sg_program_runs_any_code(prog);
}

/* Programs that write into the folder they run in without naming it: an
 * archive extracted, a checkout, a patch. */
static bool writes_cwd(const struct sg_shell_cmd *cmd)
{
    const char *b = sg_hook_base_of(cmd->argv[0]);
    const char *first = NULL; /* the first word that is no option */
    bool dash_x = false, extract = false;
    for (size_t k = 1; k < cmd->argc; k++) {
        const char *w = cmd->argv[k];
        if (w[0] == '-' && w[1] != '-')
            dash_x |= strchr(w, 'x') != NULL || strchr(w, 'i') != NULL;
        extract |= !strcmp(w, "--extract") || !strcmp(w, "--get") ||
                   !strcmp(w, "--read") || sg_str_has_prefix(w, "--directory");
        if (!first && w[0] != '-')
            first = w;
    }
    if (!strcmp(b, "tar") || !strcmp(b, "bsdtar")) /* tar x, tar -xf, tar --extract */
        return dash_x || extract || (cmd->argc > 1 && cmd->argv[1][0] != '-' &&
                                     strchr(cmd->argv[1], 'x'));
    if (!strcmp(b, "cpio") || !strcmp(b, "pax"))
        return dash_x || extract || strstr(b, "pax");
    if (!strcmp(b, "unzip") || !strcmp(b, "patch"))
        return true;
    if (!strcmp(b, "7z"))
        return first && (!strcmp(first, "x") || !strcmp(first, "e"));
    if (!strcmp(b, "git")) { /* the subcommands that write the work tree */
        static const char *const sub[] = {"checkout", "switch", "restore", "reset", "stash",
                                          "pull", "merge", "rebase", "apply", "am",
                                          "cherry-pick", "revert", "clone", "worktree", "read-tree",
                                          "checkout-index", "submodule"};
        /* git -c ... / -C DIR come first: any word may be the subcommand */
        for (size_t k = 1; k < cmd->argc; k++)
            for (size_t i = 0; i < SG_ARRAY_LEN(sub); i++)
                if (!strcmp(cmd->argv[k], sub[i]))
                    return true;
    }
    return false;
}

/* ln [-s] TARGET... LINK (or -t DIR): a relative TARGET is read from the
 * link's folder, not the cwd. */
static const char *guard_ln(const struct guards *gd, const struct sg_shell_cmd *cmd,
                            const char *cwd)
{
    if (strcmp(sg_hook_base_of(cmd->argv[0]), "ln") && strcmp(sg_hook_base_of(cmd->argv[0]), "cp"))
        return NULL;
    const char *words[SG_SHELL_MAX_WORDS], *dir = NULL;
    size_t nw = 0;
    bool opts = true;
    for (size_t k = 1; k < cmd->argc; k++) {
        const char *w = cmd->argv[k];
        if (opts && !strcmp(w, "--"))
            opts = false;
        else if (opts && sg_str_has_prefix(w, "--target-directory="))
            dir = w + 19;
        else if (opts && !strcmp(w, "-t") && k + 1 < cmd->argc)
            dir = cmd->argv[++k];
        else if (opts && w[0] == '-' && w[1])
            continue;
        else if (nw < SG_ARRAY_LEN(words))
            words[nw++] = w;
    }
    if (!dir && nw >= 2)
        dir = words[--nw]; /* the last: the link, or the folder it goes in */
    if (!dir)
        return NULL;
    cleanup_free char *linkpath = sg_path_target(dir, cwd);
    struct stat st;
    cleanup_free char *from = stat(linkpath, &st) == 0 && S_ISDIR(st.st_mode)
                                  ? sg_xstrdup(linkpath)
                                  : sg_xstrndup(linkpath, (size_t)(strrchr(linkpath, '/') -
                                                                   linkpath));
    for (size_t i = 0; i < nw; i++) {
        bool own;
        const char *g = protected_path(gd, words[i], from[0] ? from : "/", &own, true, true,
                                       NULL);
        if (g)
            return g;
    }
    return NULL;
}

/* Whether w, read from cwd both ways (the kernel's, and with its ..
 * taken lexically first), is inside root: a rewritten run's skill, which
 * its sandbox shows read-only unless its manifest (vetted, or asked)
 * grants it. */
static bool inside_root(const char *w, const char *cwd, const char *root)
{
    cleanup_free char *t = sg_path_target(w, cwd);
    cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w) : sg_xasprintf("%s/%s", cwd, w);
    if (t[0] != '/' || sg_path_normalize(abs) < 0)
        return false;
    cleanup_free char *lex = sg_path_target(abs, NULL);
    return sg_path_within(t, root) && sg_path_within(lex, root);
}

/* A write by a file tool to a protected path is denied outright (own
 * files) or always asked in Claude Code (no rule or grant allows it). A
 * Bash line is read as the shell will read it, and every word of it (the
 * value of --opt=PATH and of=PATH, and of -tPATH, included) that names a
 * protected path or a folder holding one, read from the agent's cwd and
 * from every folder a cd before it may have gone to, makes the line
 * asked: cp, mv, tee, dd, tar -C, install -t; so does ln's target read
 * from the link's folder, and a later writer's path that is not there yet
 * after a command that makes links. A line with a redirection cannot be
 * read exactly: it is asked anyway. The one word exempt is an
 * interpreter's script, so the person's skills in ~/.claude/skills run.
 * NULL when nothing names one. */
static const char *guarded(const struct sg_hook_call *c, const char *root, bool *deny)
{
    enum sg_tool_id id = sg_tool_lookup(c->tool);
    int cls = sg_ptool_of_agent_tool(c->tool, strlen(c->tool));
    *deny = false;
    if (id == SG_TOOL_UNKNOWN || (cls != SG_PT_WRITE && cls != SG_PT_BASH))
        return NULL;
    struct sg_shell sh = {0};
    const char *why;
    /* ~/ read as the rewrite reads it; a line no rule reads (sg_shell_parse)
     * is asked later anyway */
    if (cls == SG_PT_WRITE ? c->detail[0] != '/'
                           : sg_shell_parse_home(c->detail, secure_getenv("HOME"), &sh, &why) < 0)
        return NULL; /* a Bash line not read exactly is never allowed by a rule: asked */
    struct guards gd;
    sg_own_dirs_get(&gd.od);
    sg_agent_paths_get(&gd.ap);
    const char *g = NULL;
    bool own = false, maker = false;
    if (cls == SG_PT_WRITE) {
        g = protected_path(&gd, c->detail, NULL, &own, true, false, NULL);
        *deny = g && own;
    }
    char *cwds[GUARD_CWDS];
    size_t ncwd = 0;
    cwds[ncwd++] = sg_xstrdup(c->cwd);
    for (size_t i = 0; i < sh.n && !g; i++) {
        const struct sg_shell_cmd *cmd = &sh.cmds[i];
        bool writer = writes_paths(cmd->argv[0]);
        /* the words exempt from the skills folders: a script's (run there,
         * read there), and the folder a cd goes to (it writes nothing; what
         * comes after is read from there) */
        size_t script = sg_hook_script_at(cmd);
        size_t cd_to = strcmp(cmd->argv[0], "cd") ? 0
                       : cmd->argc >= 3 && !strcmp(cmd->argv[1], "--") ? 2 : 1;
        /* an archive or a checkout writes into the folder it runs in */
        for (size_t d = 0; d < ncwd && !g && writes_cwd(cmd); d++)
            g = protected_path(&gd, ".", cwds[d], &own, true, true, NULL);
        for (size_t k = 1; k < cmd->argc && !g; k++) {
            const char *w = cmd->argv[k], *eq = strchr(w, '=');
            bool skills_too = k != script && k != cd_to, missing = false;
            for (size_t d = 0; d < ncwd && !g; d++) {
                bool in_root = root && skills_too && inside_root(w, cwds[d], root);
                g = protected_path(&gd, w, cwds[d], &own, skills_too && !in_root, true,
                                   &missing);
                if (!g && eq && eq[1])
                    g = protected_path(&gd, eq + 1, cwds[d], &own, true, true, NULL);
                if (!g && w[0] == '-' && w[1] && w[1] != '-' && w[2]) /* -tDIR, -C/dir */
                    g = protected_path(&gd, w + 2, cwds[d], &own, true, true, NULL);
                if (!g && maker && writer && missing && !strstr(w, "://"))
                    g = "a path that is not there yet, after a command of the same line "
                        "that may make a link: only a person decides";
            }
        }
        for (size_t d = 0; d < ncwd && !g; d++) /* ln's targets, from the link's folder */
            g = guard_ln(&gd, cmd, cwds[d]);
        maker |= makes_links(cmd->argv[0]);
        if (!g && !follow_cd(cmd, cwds, &ncwd))
            g = "the line changes folder in a way skillgate cannot follow (cd -, popd, "
                "CDPATH): only a person decides";
    }
    for (size_t d = 0; d < ncwd; d++)
        free(cwds[d]);
    sg_shell_free(&sh);
    sg_own_dirs_free(&gd.od);
    sg_agent_paths_free(&gd.ap);
    return g;
}

/* ---- the run of one event ---- */

static volatile sig_atomic_t stopped;

static void on_term(int sig)
{
    (void)sig;
    stopped = 1;
}

/* stdin, up to the cap; past it the rest is drained (bounded) so Claude
 * Code's write never fails, and *over is set. */
static char *read_event(size_t *len, bool *over)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_HOOK_INPUT_MAX);
    char chunk[65536];
    size_t total = 0;
    *over = false;
    for (;;) {
        ssize_t n = read(0, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        total += (size_t)n;
        if (total > SG_HOOK_INPUT_MAX) {
            *over = true;
            if (total > 16 * (size_t)SG_HOOK_INPUT_MAX)
                break;
            continue;
        }
        sg_buf_append(&b, chunk, (size_t)n);
    }
    *len = b.len;
    return b.data ? b.data : sg_xstrdup("");
}

struct hook_state {
    bool decided;
    enum sg_decision dec;
    struct sg_attach_fe fe;
};

static void decided(void *ctx, enum sg_decision d)
{
    struct hook_state *s = ctx;
    s->decided = true;
    s->dec = d;
}

/* The session's "for this session" answers: <runtime>/hook-sessions/<sha>. */
static char *session_file(const char *session)
{
    if (!session[0])
        return NULL;
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text(session, strlen(session), d);
    cleanup_free char *rt = sg_runtime_dir();
    return sg_xasprintf("%s/hook-sessions/%.24s", rt, d + 7);
}

static void session_load(struct sg_perm *perm, const char *path)
{
    cleanup_free char *buf = NULL;
    size_t len = 0;
    if (!path || sg_read_file_capped(path, 1 << 20, &buf, &len) < 0 || !buf)
        return;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = '\0';
        if (*line)
            sg_perm_add_session_rule(perm, line);
    }
}

static void session_save(const char *path, const char *rule)
{
    if (!path || !rule || strchr(rule, '\n') || sg_mkdir_parent(path, 0700) < 0)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    cleanup_free char *line = sg_xasprintf("%s\n", rule);
    sg_write_all(fd, line, strlen(line));
    close(fd);
}

static void emit(json_t *answer)
{
    cleanup_free char *s = json_dumps(answer, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(answer);
    if (s) {
        size_t n = strlen(s);
        s[n] = '\n'; /* the NUL becomes the line's end */
        sg_write_all(1, s, n + 1);
    }
}

/* "ask", said on stderr too, without deciding anything. */
static int ask_unread(enum sg_hook_event ev, const char *why)
{
    cleanup_free char *r = sg_xasprintf("skillgate: %s; Claude Code asks instead", why);
    fprintf(stderr, "%s\n", r);
    emit(sg_hook_answer(ev, "ask", r, NULL));
    return 0;
}

char *sg_hook_policy_path(const struct sg_config *cfg)
{
    if (cfg->hook_policy)
        return sg_xstrdup(cfg->hook_policy);
    cleanup_free char *dir = sg_config_dir();
    char *p = sg_xasprintf("%s/hook-policy.yaml", dir);
    if (access(p, F_OK) < 0)
        return free(p), NULL;
    return p;
}

/* One event's run: what was read, the engine, the decision as it forms. */
struct hook_run {
    struct sg_hook_call c;
    int pr;                 /* sg_hook_parse's: < 0, the event could not be read */
    const char *why;        /* why not */
    bool rewrite;
    bool sandbox;           /* hook.sandbox_bash: the agent's Bash under skillgate wrap */
    struct sg_hook_wrap wr; /* a Bash line sandboxed, or why not */
    struct sg_perm *perm;
    char *sfile;            /* the session's kept answers */
    struct hook_state st;
    char *tool;             /* sanitized */
    enum sg_decision dec;
    const char *guard;
    bool guard_deny;
    struct sg_hook_rewrite rw; /* a skill's script's run, rewritten or why not */
    bool venv_shown;           /* the question showed the agent's environment whole */
    bool venv_vetted;          /* an "always" answer vetted it (sg_hook_venv_vet) */
    bool names_skill;          /* the line names a skill's file, not rewritten */
    char *policy;              /* the rules' file (where an allow rule goes) */
    bool otel_in_config;       /* config.yaml has an otel: endpoint */
    char **program;            /* hook.prompt_exec: decides before the attached TUI */
};

/* The config, the engine (NULL and the answer given when the policy is
 * broken), the session's answers, the attached TUI. */
static struct sg_perm *hook_open(struct hook_run *h, json_t *extra)
{
    struct sg_config cfg;
    struct sg_diags d = {0};
    cleanup_free char *cfgpath = sg_config_default_path();
    sg_config_load(cfgpath, &cfg, &d);
    sg_diags_free(&d);
    cleanup_free char *policy = sg_hook_policy_path(&cfg);
    if (policy)
        h->policy = sg_xstrdup(policy);
    else {
        cleanup_free char *dir = sg_config_dir();
        h->policy = sg_xasprintf("%s/hook-policy.yaml", dir);
    }
    int prompt_s = cfg.hook_prompt_s ? (int)cfg.hook_prompt_s : SG_HOOK_PROMPT_S;
    h->sandbox = h->rewrite && cfg.hook_sandbox_bash;
    h->rewrite = h->rewrite && !cfg.hook_no_rewrite;
    for (size_t i = 0; i < cfg.notel; i++)
        h->otel_in_config |= strstr(cfg.otel_keys[i], "ENDPOINT") != NULL;
    h->program = sg_strv_dup(cfg.hook_prompt_exec);
    sg_config_free(&cfg);
    cleanup_free char *sess = sg_sanitize_str(h->c.session, 0);
    cleanup_free char *run_id = sg_xasprintf("hook:%.64s", sess[0] ? sess : "no-session");
    struct sg_perm_opts po = {.mode = SG_PERM_PROMPT, .policy_file = policy,
                              .skill = "claude-code", .digest = "agent", .run_id = run_id,
                              .timeout_s = prompt_s, .defer_without_frontend = true,
                              .session = true, .audit_extra = extra, .program = h->program};
    struct sg_perm *perm = sg_perm_new(&po, &d);
    if (!perm) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("a broken policy");
        sg_diags_free(&d);
        cleanup_free char *w = sg_xasprintf("its policy file is broken (%s)", m);
        ask_unread(h->c.event, w);
        return NULL;
    }
    sg_diags_free(&d);
    h->sfile = session_file(h->c.session);
    session_load(perm, h->sfile);
    /* what could not be read is never shown as a request, nor matched by
     * a rule: Claude Code asks */
    h->st.fe.fd = h->pr < 0 ? -1 : sg_attach_connect();
    if (h->st.fe.fd >= 0) {
        cleanup_free char *cwd = sg_sanitize_str(h->c.cwd, 0);
        sg_perm_set_frontend(perm, sg_attach_fe_show, &h->st.fe);
        sg_attach_send(h->st.fe.fd,
                       json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "type", "hello",
                                 "skill", "Claude Code", "run_id", "agent", "agent", "tool",
                                 h->tool, "summary", h->c.summary, "session_id", sess, "cwd",
                                 cwd));
    }
    return perm;
}

int sg_hook_read_limits(struct sg_perm *perm, char *const *paths, size_t n, char *by,
                        size_t bylen, const char **which)
{
    enum sg_effect worst = SG_EFF_ALLOW;
    for (size_t i = 0; i < n && worst != SG_EFF_DENY; i++) {
        /* the file and where it really is: a link in the project to a
         * denied file is a Read of that file */
        cleanup_free char *real = realpath(paths[i], NULL);
        const char *both[] = {paths[i], real};
        for (size_t j = 0; j < 2 && both[j] && worst != SG_EFF_DENY; j++) {
            struct sg_preq *q = sg_xcalloc(1, sizeof *q);
            q->tool = SG_PT_WRITE; /* a reader's path (rules.h): its rules name it Read(...) */
            q->port = -1;
            SG_PREQ_SET(q, agent_tool, "Read");
            SG_PREQ_SET(q, subject, both[j]);
            char b[512];
            enum sg_effect e = sg_perm_rule_limits(perm, q, b, sizeof b);
            free(q);
            if (e == SG_EFF_DENY || (e == SG_EFF_ASK && worst != SG_EFF_ASK)) {
                worst = e;
                snprintf(by, bylen, "%s", b);
                *which = paths[i];
            }
        }
    }
    return worst;
}

/* One run of a skill's script, rewritten to run in the sandbox: allowed
 * outright only for a skill the person vetted and that no deny or ask rule
 * limits; a deny rule denies it as any command; else it is asked (a
 * person, or Claude Code's dialog showing the sandboxed command), with why
 * and what its manifest asks for. */
static int decide_rewrite(struct hook_run *h)
{
    struct sg_preq *bq = sg_xmalloc(sizeof *bq);
    sg_agent_bash_preq(h->rw.line, h->c.cwd, bq); /* its words, ~ read as the home */
    char lby[512];
    enum sg_effect lim = sg_perm_rule_limits(h->perm, bq, lby, sizeof lby);
    int r;
    bool outright;
    /* the files its arguments name are shown to the skill (named.h): the
     * agent's Read of each, which its Read rules decide as its own would */
    char rby[512];
    const char *which = NULL;
    enum sg_effect rlim = lim == SG_EFF_DENY ? SG_EFF_ALLOW
                          : (enum sg_effect)sg_hook_read_limits(h->perm, h->rw.named,
                                                                h->rw.nnamed, rby, sizeof rby,
                                                                &which);
    if (rlim == SG_EFF_DENY) {
        free(steal_pointer(&h->rw.command));
        cleanup_free char *w = sg_xasprintf("%s names %s, which the skill would be shown: a "
                                            "Read of it, denied by %s", h->rw.line, which, rby);
        sg_perm_record(h->perm, bq, SG_DEC_DENY, w);
        h->dec = SG_DEC_DENY;
        free(bq);
        return 1;
    }
    if (rlim == SG_EFF_ASK && lim != SG_EFF_ASK) {
        lim = SG_EFF_ASK;
        snprintf(lby, sizeof lby, "it names %.200s, which the skill would be shown: %.250s",
                 which, rby);
    }
    if (lim == SG_EFF_DENY) {
        free(steal_pointer(&h->rw.command));
        r = sg_check_tool_permission(h->perm, &(struct sg_policy){0}, h->c.tool, h->rw.line,
                                     h->c.cwd, decided, &h->st, &h->dec, &outright);
    } else if (lim == SG_EFF_ALLOW && h->rw.vet.vetted && !h->rw.beyond) {
        cleanup_free char *w = sg_xasprintf("sandboxed: rewritten to %s (%s)", h->rw.command,
                                            h->rw.vet.why);
        sg_perm_record(h->perm, bq, SG_DEC_ALLOW_ONCE, w);
        h->dec = SG_DEC_ALLOW_ONCE;
        r = 1;
    } else {
        cleanup_free char *dt = sg_xasprintf("a skill's script, to run sandboxed; %s; its "
                                             "manifest: %s", lim == SG_EFF_ASK ? lby
                                             : h->rw.beyond ? h->rw.beyond
                                                            : h->rw.vet.why, h->rw.vet.risky);
        bool was_cut = bq->cut;
        if (!SG_PREQ_SET(bq, detail, dt)) { /* beside the request, not decided on */
            bq->cut = was_cut;
            snprintf(bq->detail, sizeof bq->detail, "%.200s … (skillgate inspect shows all)",
                     dt);
        }
        /* no line grant outlives what it was given on (the skill's digest, the
         * venv's): "always" keeps none here, it vets the venv shown */
        bq->answer_only = true;
        if (h->rw.venv.dir && h->rw.venv.digest[0]) { /* "always" vets only what was shown */
            cleanup_free char *shown = sg_hook_venv_shown(&h->rw.venv);
            h->venv_shown = strstr(bq->detail, shown) != NULL;
        }
        r = sg_perm_request(h->perm, bq, decided, &h->st, &h->dec);
    }
    free(bq);
    return r;
}

/* A Bash line with the sandbox on (hookwrap.h): a deny rule that names it
 * on its face denies it; else it runs under skillgate wrap, allowed, where
 * every execve meets the rules; a line that would run outside any sandbox
 * is asked. */
static int decide_sandboxed(struct hook_run *h)
{
    struct sg_preq *bq = sg_xmalloc(sizeof *bq);
    sg_agent_bash_preq(h->c.detail, h->c.cwd, bq);
    char lby[512];
    int r = 1;
    bool outright;
    if (sg_perm_rule_limits(h->perm, bq, lby, sizeof lby) == SG_EFF_DENY) {
        free(steal_pointer(&h->wr.command));
        r = sg_check_tool_permission(h->perm, &(struct sg_policy){0}, h->c.tool, h->c.detail,
                                     h->c.cwd, decided, &h->st, &h->dec, &outright);
    } else if (h->wr.command) {
        cleanup_free char *w = sg_xasprintf("sandboxed: %s", h->wr.note);
        sg_perm_record(h->perm, bq, SG_DEC_ALLOW_ONCE, w);
        h->dec = SG_DEC_ALLOW_ONCE;
    } else { /* outside every sandbox: a person says so, in Claude Code's dialog; no rule */
        sg_perm_defer(h->perm, bq, h->wr.ask);
        h->dec = SG_DEC_DENY;
    }
    free(bq);
    return r;
}

/* Decide the call: the guard, the rewrite, what could not be read, a tool
 * skillgate does not know, then the pipeline every front end shares
 * (sg_check_tool_permission). 1: decided; 0: a person will answer. */
static int decide(struct hook_run *h)
{
    if (h->pr == 0 && h->rewrite && !strcmp(h->c.tool, "Bash")) {
        char self[PATH_MAX];
        ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
        self[sl > 0 ? sl : 0] = '\0';
        if (sl > 0)
            sg_hook_rewrite(h->c.detail, h->c.cwd, self, &h->rw);
        else
            h->rw.why_not = sg_xstrdup("skillgate cannot tell where it is");
    }
    if (h->pr == 0 && h->sandbox && !h->rw.command && !strcmp(h->c.tool, "Bash")) {
        char self[PATH_MAX];
        ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
        self[sl > 0 ? sl : 0] = '\0';
        sg_hook_wrap_line(h->c.detail, h->c.input, h->c.cwd, self, h->policy, &h->wr);
        if (sl > 0 && (h->wr.command || h->wr.ask))
            return decide_sandboxed(h);
        free(steal_pointer(&h->wr.command)); /* Claude Code's sandbox runs it */
    }
    /* a rewritten run's words inside its own skill's folder reach only
     * what its sandbox shows */
    h->guard = h->pr == 0 ? guarded(&h->c, h->rw.command ? h->rw.root : NULL, &h->guard_deny)
                          : NULL;
    if (h->guard)
        free(steal_pointer(&h->rw.command));
    if (h->guard && !h->guard_deny && !strcmp(h->c.tool, "Bash")) {
        /* a guard asks; a deny rule on the line still denies it */
        struct sg_preq *lq = sg_xmalloc(sizeof *lq);
        sg_agent_bash_preq(h->c.detail, h->c.cwd, lq);
        char lby[512];
        if (sg_perm_limits(h->perm, lq, lby, sizeof lby) == SG_EFF_DENY)
            h->guard = NULL;
        free(lq);
    }
    if (h->pr == 0 && h->rewrite && !h->guard && !strcmp(h->c.tool, "Bash"))
        h->names_skill = !h->rw.command && (h->rw.by_hand ||
                                            sg_hook_names_skill_file(h->c.detail, h->c.cwd));
    if (h->rw.command)
        return decide_rewrite(h);
    struct sg_preq *q = sg_xcalloc(1, sizeof *q);
    q->tool = SG_PT_BASH;
    SG_PREQ_SET(q, agent_tool, h->tool);
    SG_PREQ_SET(q, subject, h->tool);
    SG_PREQ_SET(q, args, h->c.summary);
    int r = 1;
    bool outright;
    if (h->guard) {
        q->tool = SG_PT_WRITE;
        SG_PREQ_SET(q, subject, h->c.detail);
        if (h->guard_deny)
            sg_perm_record(h->perm, q, SG_DEC_DENY, h->guard);
        else
            sg_perm_defer(h->perm, q, h->guard);
        h->dec = SG_DEC_DENY;
    } else if (h->pr < 0) {
        cleanup_free char *w = sg_xasprintf("unreadable event: %s", h->why);
        sg_perm_defer(h->perm, q, w);
    } else if (!h->c.known) {
        /* a tool skillgate does not know: only a rule naming it, or a
         * person in the TUI, else Claude Code's prompt */
        SG_PREQ_SET(q, detail, "a tool skillgate does not know");
        r = sg_perm_request(h->perm, q, decided, &h->st, &h->dec);
    } else {
        r = sg_check_tool_permission(h->perm, &(struct sg_policy){0}, h->c.tool, h->c.detail,
                                     h->c.cwd, decided, &h->st, &h->dec, &outright);
    }
    free(q);
    return r;
}

/* The rule lines that would allow the call, in Claude Code's syntax (one
 * exact Bash rule per simple command: a line is allowed when each is), or
 * NULL with *why when no rule can. Caller frees. */
static char *allow_rules(const struct hook_run *h, const char **why)
{
    enum sg_tool_id id = sg_tool_lookup(h->c.tool);
    int cls = sg_ptool_of_agent_tool(h->c.tool, strlen(h->c.tool));
    cleanup_free char *raw = NULL;
    if (cls == SG_PT_BASH) {
        struct sg_shell sh;
        if (sg_shell_parse(h->c.detail, &sh, why) < 0)
            return NULL; /* why: what cannot be read */
        struct sg_buf b;
        sg_buf_init(&b, SG_SHELL_MAX * 2);
        for (size_t i = 0; i < sh.n; i++) {
            const char *a0 = sh.cmds[i].argv[0];
            if (!strcmp(a0, "cd") || !strcmp(a0, "pushd") || !strcmp(a0, "popd")) {
                *why = "it changes folder, and each command is read where the rule would not "
                       "be";
                break;
            }
            cleanup_free char *j = sg_shell_join(&sh.cmds[i]);
            sg_buf_printf(&b, "%s\"Bash(%s)\"", i ? ", " : "", j);
        }
        sg_shell_free(&sh);
        raw = b.data && !b.dropped && !*why ? sg_buf_steal(&b) : NULL;
        sg_buf_free(&b);
        if (!raw)
            return *why = *why ? *why : "the command is too long to name here", NULL;
    } else if (cls == SG_PT_WRITE) {
        raw = sg_xasprintf("\"Edit(/%s)\"", h->c.detail); /* //abs: an absolute path */
    } else if (id == SG_TOOL_FETCH || id == SG_TOOL_WEBFETCH) {
        const char *colon = strrchr(h->c.detail, ':'), *br = strrchr(h->c.detail, ']');
        size_t n = colon && (!br || colon > br) ? (size_t)(colon - h->c.detail)
                                                : strlen(h->c.detail);
        raw = sg_xasprintf("\"%s(domain:%.*s)\"", h->c.tool, (int)n, h->c.detail);
    } else {
        raw = sg_xasprintf("\"%s\"", h->c.tool);
    }
    return one_line(raw, 600);
}

/* How to allow what was asked or denied: the rule line and where it goes,
 * or the TUI when no rule can. */
static char *how_to_allow(const struct hook_run *h, bool denied_by_rule)
{
    const char *why = NULL;
    cleanup_free char *rules = allow_rules(h, &why);
    cleanup_free char *pol = sg_sanitize_str(h->policy, 0);
    if (denied_by_rule && rules)
        return sg_xasprintf("to allow it, take that deny rule out of its file (or narrow it) and "
                            "add %s under allow: in %s", rules, pol);
    if (denied_by_rule)
        return sg_xasprintf("to allow it, take that deny rule out of its file (or narrow it); "
                            "then no rule can allow it (%s): answer it in skillgate tui --attach, "
                            "or in Claude Code's prompt", why);
    if (!rules)
        return sg_xasprintf("no rule can allow it (%s): answer it in skillgate tui --attach, "
                            "or in Claude Code's prompt", why);
    return sg_xasprintf("to allow it, add %s under allow: in %s (or answer it in skillgate tui "
                        "--attach)", rules, pol);
}

/* The reason for a skill's script rewritten: allowed, or asked and why. */
static char *rewrite_reason(const struct hook_run *h, const char *decision, const char *by)
{
    const struct sg_hook_rewrite *rw = &h->rw;
    cleanup_free char *note = rw->note ? sg_xasprintf(" (%s)", rw->note) : sg_xstrdup("");
    if (!strcmp(decision, "allow"))
        return sg_xasprintf("skillgate: a skill's script (%s): it runs in skillgate's sandbox "
                            "(%s)%s%s%s%s", by, rw->command, note,
                            h->venv_vetted ? "; the Python environment " : "",
                            h->venv_vetted ? rw->venv.dir : "",
                            h->venv_vetted ? " is vetted as it is now"
                            : rw->venv.vetted ? " (with the Python environment you vetted, "
                                                "unchanged)" : "");
    if (rw->vet.vetted && rw->beyond)
        return sg_xasprintf("skillgate: a skill's script you vetted, asked: %s. Approving runs "
                            "it in skillgate's sandbox (%s)%s", rw->beyond, rw->command, note);
    if (rw->vet.vetted)
        return sg_xasprintf("skillgate: a skill's script, asked (%s); approving runs it in "
                            "skillgate's sandbox (%s)%s", by, rw->command, note);
    const char *how = !rw->vet.installed
                          ? "install it in ~/.claude/skills and look at it"
                          : "look at it";
    return sg_xasprintf("skillgate: a skill's script you have not vetted (%s); its manifest "
                        "asks for: %s. Approving runs it in skillgate's sandbox (%s)%s. To have "
                        "it allowed without a question, %s (%s on a terminal, or the Skills "
                        "screen of skillgate tui)", rw->vet.why, rw->vet.risky, rw->command, note,
                        how, rw->by_hand ? rw->by_hand : "skillgate run");
}

/* The reason Claude Code shows, and the input it runs (the rewrite's):
 * what was decided, on what (tool, command, path or host), why, and how
 * to allow what was not. */
static char *hook_reason(struct hook_run *h, const char *decision, const char *by,
                         bool deferred, json_t **updated)
{
    char *reason;
    *updated = NULL;
    if (h->pr < 0) { /* said on stderr too: the input was not what it should be */
        reason = sg_xasprintf("skillgate: %s; Claude Code asks instead", h->why);
        fprintf(stderr, "%s\n", reason);
        return reason;
    }
    if (h->guard) {
        /* a line that runs a skill's script says why it was not rewritten */
        bool skill = h->rw.why_not && (h->rw.by_hand || sg_hook_names_skill_file(h->c.detail,
                                                                           h->c.cwd));
        cleanup_free char *no = skill ? sg_sanitize_str(h->rw.why_not, 0) : NULL;
        return sg_xasprintf("skillgate: %s %s: %s%s%s%s", h->tool, h->c.summary, h->guard,
                            h->guard_deny ? "" : " (no rule or grant can allow it: answer "
                                                 "Claude Code's prompt yourself)",
                            no ? "; not rewritten into skillgate's sandbox: " : "",
                            no ? no : "");
    }
    if (h->wr.command && strcmp(decision, "deny")) {
        /* the same input, the line under skillgate wrap (and Claude Code's
         * own sandbox off for it, when it is on: one sandbox, not two) */
        *updated = json_deep_copy(h->c.input);
        json_object_set_new(*updated, "command", json_string(h->wr.command));
        if (h->wr.off_claude)
            json_object_set_new(*updated, "dangerouslyDisableSandbox", json_true());
        return sg_xasprintf("skillgate: %s (%s): deny and ask rules apply to each program it "
                            "runs; writes outside the working folder and hosts are asked",
                            h->wr.note, h->wr.command);
    }
    if (h->wr.ask && deferred)
        return sg_xasprintf("skillgate: %s %s: %s; no rule allows that: answer Claude Code's "
                            "prompt yourself", h->tool, h->c.summary, h->wr.ask);
    if (h->rw.command && strcmp(decision, "deny")) {
        /* the same input, with the command that runs it sandboxed: allowed,
         * or shown so in Claude Code's own dialog */
        *updated = json_deep_copy(h->c.input);
        json_object_set_new(*updated, "command", json_string(h->rw.command));
        /* the agent's own "sandbox off" is no part of what the person saw */
        json_object_del(*updated, "dangerouslyDisableSandbox");
        return rewrite_reason(h, decision, by);
    }
    bool allowed = !deferred && sg_decision_allows(h->dec);
    cleanup_free char *how = allowed ? NULL
                             : how_to_allow(h, !deferred && sg_str_has_prefix(by, "rule "));
    reason = deferred ? sg_xasprintf("skillgate: no rule or grant decides %s %s, and no "
                                     "skillgate TUI is attached (skillgate tui --attach) to "
                                     "ask a person; %s", h->tool, h->c.summary, how)
             : allowed ? sg_xasprintf("skillgate: allowed (%s)", by)
                       : sg_xasprintf("skillgate: denied %s %s (%s); %s", h->tool,
                                      h->c.summary, by, how);
    if (h->names_skill) {
        cleanup_free char *no = sg_sanitize_str(h->rw.why_not ? h->rw.why_not : "", 0);
        cleanup_free char *hand = h->rw.by_hand ? sg_sanitize_str(h->rw.by_hand, 0) : NULL;
        char *r2 = sg_xasprintf("%s; it names a skill's file but is not run in skillgate's "
                                "sandbox: %s%s%s", reason, no, hand ? "; to run it sandboxed: "
                                : "", hand ? hand : "");
        free(reason);
        reason = r2;
    }
    return reason;
}

/* The decision as an OpenTelemetry span (after the answer is out: the
 * agent never waits for the collector; at most the end wait before this
 * process exits), child of the TRACEPARENT the agent gives its hooks. */
static void hook_span(const struct hook_run *h, uint64_t t0, const char *decision,
                      const char *by)
{
    /* the agent waits for the hook to exit, not only for its answer: the
     * span leaves from a child of its own, on its own session, with no
     * descriptor of the agent's (a collector that hangs holds nobody) */
    if (!secure_getenv("OTEL_EXPORTER_OTLP_ENDPOINT") &&
        !secure_getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") && !h->otel_in_config)
        return;
    pid_t pid = fork();
    if (pid != 0)
        return;
    setsid();
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nul >= 0)
        dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
    char why[256];
    if (sg_runner_otel_start(why, sizeof why) <= 0)
        _exit(0);
    struct sg_span_ctx parent = {0};
    const char *tp = secure_getenv("TRACEPARENT");
    if (tp)
        sg_traceparent_parse(tp, strlen(tp), &parent);
    struct sg_span *sp = sg_span_begin("sandbox.hook.decision", &parent, SG_SPAN_SERVER, t0);
    sg_span_cstr(sp, "sandbox.hook.event",
                 h->c.event == SG_HOOK_PRE_TOOL_USE ? "PreToolUse" : "PermissionRequest");
    sg_span_cstr(sp, "sandbox.hook.tool", h->tool);
    sg_span_cstr(sp, "sandbox.hook.summary", h->c.summary);
    sg_span_cstr(sp, "sandbox.decision", decision);
    sg_span_cstr(sp, "sandbox.decided_by", by);
    sg_span_cstr(sp, "sandbox.hook.session_id", h->c.session);
    sg_span_bool(sp, "sandbox.enforcement", true);
    if (!strcmp(decision, "deny"))
        sg_span_set_status(sp, SG_STATUS_ERROR, "blocked");
    sg_span_end(sp, 0);
    sg_otel_shutdown(SG_OTEL_END_WAIT_MS);
    _exit(0);
}

/* "always" to a rewritten script's question that showed the agent's
 * Python environment, not vetted: that environment, as it was when shown
 * (its digest then), is vetted for the next runs. */
static void vet_venv(struct hook_run *h, bool deferred)
{
    const struct sg_hook_venv *v = &h->rw.venv;
    if (deferred || h->dec != SG_DEC_ALLOW_ALWAYS || !h->rw.command || !h->venv_shown ||
        !v->dir || !v->digest[0] || v->vetted)
        return;
    int e = sg_hook_venv_vet(v);
    if (e < 0)
        fprintf(stderr, "skillgate: the environment %s could not be kept as vetted: %s\n",
                v->dir, strerror(-e));
    h->venv_vetted = e == 0;
}

int sg_hook_main(bool rewrite)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    size_t len;
    bool over;
    cleanup_free char *buf = read_event(&len, &over);
    struct hook_run h = {.rewrite = rewrite, .dec = SG_DEC_DENY};
    uint64_t t0 = sg_otel_now_ns();
    h.pr = sg_hook_parse(over ? "" : buf, over ? 0 : len, &h.c, &h.why);
    if (over)
        h.why = "the event is over " SG_STR(SG_HOOK_INPUT_MB) " MiB, not read";
    h.tool = sg_sanitize_str(h.c.tool, 0);
    cleanup_free char *sess = sg_sanitize_str(h.c.session, 0);
    cleanup_free char *cwd = sg_sanitize_str(h.c.cwd, 0);
    cleanup_free char *tuid = sg_sanitize_str(h.c.tool_use_id, 0);
    json_t *extra = json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}", "agent", "name",
                              "claude-code", "hook_event",
                              h.c.event == SG_HOOK_PRE_TOOL_USE ? "PreToolUse"
                                                                : "PermissionRequest",
                              "session_id", sess, "cwd", cwd, "tool_use_id", tuid,
                              "input_sha256", h.c.input_digest, "summary", h.c.summary);
    h.perm = hook_open(&h, extra);
    if (!h.perm) {
        json_decref(extra);
        sg_hook_call_free(&h.c);
        free(h.tool), free(h.policy), sg_strv_free(h.program);
        return 0;
    }
    if (decide(&h) == 0) {
        const struct sg_loop_source src[] = {
            sg_perm_source(h.perm),
            {"attached TUI", sg_attach_fe_pollfds, sg_attach_fe_dispatch, NULL, &h.st.fe},
        };
        while (!h.st.decided && !stopped)
            if (sg_loop_turn(src, SG_ARRAY_LEN(src), 1000) < 0)
                break;
        h.dec = h.st.decided ? h.st.dec : SG_DEC_DENY;
    }
    bool deferred = sg_perm_deferred(h.perm);
    const char *said = sg_perm_last_decided_by(h.perm);
    cleanup_free char *by = sg_xstrdup(stopped && !h.st.decided
                                           ? "skillgate was stopped before anyone answered"
                                       : said[0]                   ? said
                                       : sg_decision_allows(h.dec) ? "low-risk tool"
                                                                   : "denied");
    const char *const *kept;
    size_t nkept = sg_perm_session_rules(h.perm, &kept);
    for (size_t i = 0; h.dec == SG_DEC_ALLOW_RUN && i < nkept; i++)
        session_save(h.sfile, kept[i]);
    const char *decision = deferred ? "ask" : sg_decision_allows(h.dec) ? "allow" : "deny";
    vet_venv(&h, deferred);
    if (h.st.fe.fd >= 0) {
        cleanup_free char *oc = sg_xasprintf("%s (%s)", deferred ? "asked in Claude Code"
                                             : sg_decision_allows(h.dec) ? "allowed" : "denied",
                                             by);
        sg_attach_send(h.st.fe.fd, json_pack("{s:s, s:s}", "type", "end", "outcome", oc));
        close(h.st.fe.fd);
    }
    sg_perm_free(h.perm); /* every record on disk before Claude Code goes on */
    json_decref(extra);
    json_t *updated;
    cleanup_free char *reason = hook_reason(&h, decision, by, deferred, &updated);
    emit(sg_hook_answer(h.c.event, decision, reason, updated));
    /* the answer is whole: the agent reads to the end of stdout, and never
     * waits for the collector */
    close(1);
    hook_span(&h, t0, decision, by);
    sg_hook_rewrite_free(&h.rw);
    sg_hook_wrap_free(&h.wr);
    free(h.policy), free(h.sfile), free(h.tool), sg_strv_free(h.program);
    sg_hook_call_free(&h.c);
    return 0;
}
