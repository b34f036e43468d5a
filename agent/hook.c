/* skillgate hook: one Claude Code hook event in, one answer out (hook.h). */
#include "hook.h"
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

/* ---- a skill's script, run by the agent: into the sandbox ---- */

static const char *base_of(const char *w)
{
    return strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
}

/* python, python3, python3.N: a Python 3 (python2 is not what run starts) */
static bool python_name(const char *b)
{
    if (!strcmp(b, "python") || !strcmp(b, "python3"))
        return true;
    return !strncmp(b, "python3.", 8) && b[8] && strspn(b + 8, "0123456789") == strlen(b + 8);
}

static bool interpreter(const char *w)
{
    static const char *const known[] = {"bash", "sh", "node", "perl", "ruby"};
    const char *b = base_of(w);
    for (size_t i = 0; i < SG_ARRAY_LEN(known); i++)
        if (!strcmp(b, known[i]))
            return true;
    return python_name(b);
}

/* The script's word in a command that runs one: INTERPRETER SCRIPT (1),
 * uv run [--] [python] SCRIPT; 0 for any other command. */
static size_t script_at(const struct sg_shell_cmd *c)
{
    if (c->argc >= 2 && interpreter(c->argv[0]))
        return 1;
    if (c->argc < 3 || strcmp(base_of(c->argv[0]), "uv") || strcmp(c->argv[1], "run"))
        return 0;
    size_t k = 2;
    if (!strcmp(c->argv[k], "--"))
        k++;
    if (k + 1 < c->argc && python_name(c->argv[k]) && !strchr(c->argv[k], '/'))
        k++;
    return k < c->argc && c->argv[k][0] != '-' ? k : 0;
}

static void quoted(struct sg_buf *b, const char *w)
{
    sg_shell_quote(b, w, false);
}

/* The folder with a SKILL.md that holds path (at most 6 levels up), or NULL. */
static char *skill_root_of(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 6; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return NULL;
        *slash = '\0';
        cleanup_free char *md = sg_xasprintf("%s/SKILL.md", dir);
        if (access(md, F_OK) == 0)
            return sg_xstrdup(dir);
    }
    return NULL;
}

/* Does the line name a skill's folder or a file in one (a word with a /,
 * quotes aside, a leading ~/ read as the home)? Then a line that is not
 * rewritten says why. */
static bool names_a_skill_file(const char *line, const char *cwd)
{
    cleanup_free char *copy = sg_xstrdup(line);
    const char *home = secure_getenv("HOME");
    for (char *sv, *w = strtok_r(copy, " \t\n;&|()<>", &sv); w;
         w = strtok_r(NULL, " \t\n;&|()<>", &sv)) {
        w += strspn(w, "'\"");
        w[strcspn(w, "'\"")] = '\0';
        bool tilde = w[0] == '~' && w[1] == '/' && home && home[0] == '/';
        if (!strchr(w, '/') || (w[0] != '/' && !tilde && cwd[0] != '/'))
            continue;
        cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w)
                                 : tilde     ? sg_xasprintf("%s%s", home, w + 1)
                                             : sg_xasprintf("%s/%s", cwd, w);
        cleanup_free char *real = sg_path_real(abs);
        cleanup_free char *root = skill_root_of(real);
        cleanup_free char *md = sg_xasprintf("%s/SKILL.md", real); /* a cd into one */
        if (root || access(md, F_OK) == 0)
            return true;
    }
    return false;
}

/* A program's name looked up in the hook's PATH (Claude Code's, which its
 * Bash tool's shell inherits), as bash finds it; NULL when none. */
static char *on_path(const char *name)
{
    const char *path = secure_getenv("PATH");
    if (!path || strchr(name, '/'))
        return NULL;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        cleanup_free char *c = n ? sg_xasprintf("%.*s/%s", (int)n, p, name) : NULL;
        struct stat st;
        if (c && c[0] == '/' && stat(c, &st) == 0 && S_ISREG(st.st_mode) && access(c, X_OK) == 0)
            return steal_pointer(&c);
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* Where skillgate run finds a bare name (plan.c): the first of these. */
static char *run_finds(const char *name)
{
    return sg_run_path_find(name);
}

/* Two programs are one when both are found and are the same file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* A program that is a script itself (#!): a version manager's shim. */
static bool a_script(const char *prog)
{
    char head[2] = {0};
    int fd = open(prog, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t r = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0)
        close(fd);
    return r == 2 && head[0] == '#' && head[1] == '!';
}

/* A program in a Python virtual environment's bin/ (a pyvenv.cfg above). */
static bool in_venv(const char *prog)
{
    cleanup_free char *dir = sg_xstrdup(prog);
    for (int up = 0; up < 2; up++) {
        char *sl = strrchr(dir, '/');
        if (!sl)
            return false;
        *sl = '\0';
    }
    cleanup_free char *cfg = sg_xasprintf("%s/pyvenv.cfg", dir);
    return access(cfg, F_OK) == 0;
}

/* What a script starts with: skillgate run's choice (plan.c's
 * script_command: python3, bash or node by the name's ending, else the #!
 * line), or the kernel's (the #! line only). */
struct starts_with {
    char *name;     /* the program's name (a #! env's argument), NULL when none */
    char *path;     /* its file as found, NULL when none is */
    bool by_ending; /* run's, by the ending: --python replaces a python3 */
    bool shebang;   /* there is a usable #! line */
    bool env;       /* #!/usr/bin/env NAME: name is looked up */
    bool option;    /* the #! line passes an option: nothing here can say it */
};

static void starts_with(const char *abs, bool run, struct starts_with *s)
{
    memset(s, 0, sizeof *s);
    const char *by_name = run ? sg_script_interpreter(abs) : NULL;
    if (by_name) {
        s->name = sg_xstrdup(by_name);
        s->path = run_finds(by_name);
        s->by_ending = true;
        return;
    }
    char head[SG_SHEBANG_MAX], prog[PATH_MAX], arg[SG_SHEBANG_MAX + 1];
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    ssize_t r = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0)
        close(fd);
    if (r <= 0 || sg_shebang_parse(head, (size_t)r, prog, sizeof prog, arg, sizeof arg) < 0)
        return;
    s->shebang = true;
    if (!strcmp(base_of(prog), "env") && arg[0] && arg[0] != '-' && !strchr(arg, ' ')) {
        s->name = sg_xstrdup(arg);
        s->env = true;
        s->path = run ? run_finds(arg) : on_path(arg); /* the sandbox's PATH, or the shell's */
        return;
    }
    s->name = sg_xstrdup(base_of(prog));
    s->path = sg_xstrdup(prog);
    s->option = arg[0] != '\0';
}

/* Whether skillgate run starts the script (abs) with the program the
 * agent's line does (word, or the script itself when NULL), read in the
 * folder where: NULL when it does, with *py the --python that keeps the
 * agent's Python (NULL: run's own, the same) and *note what differs and
 * is said; else why not (caller frees). */
static char *same_program(const char *word, const char *abs, const char *rel, const char *where,
                          char **py, char **note)
{
    struct starts_with run, agent;
    starts_with(abs, true, &run);
    cleanup_free char *run_path = run.path, *agent_path = NULL;
    cleanup_free char *run_name_owned __attribute__((unused)) = run.name; /* freed at return */
    cleanup_free char *agent_name = NULL;
    const char *aname;
    if (word) {
        aname = base_of(word);
        agent_path = word[0] == '/' ? sg_xstrdup(word)
                     : strchr(word, '/') ? sg_xasprintf("%s/%s", where, word) : on_path(word);
    } else {
        starts_with(abs, false, &agent);
        agent_name = agent.name;
        if (access(abs, X_OK) < 0)
            return free(agent.path), sg_xasprintf("%s is not executable: as written it does not "
                                                  "run", rel);
        if (!agent.shebang || agent.option)
            return free(agent.path), sg_xasprintf("%s has %s: skillgate run cannot start it "
                                                  "the same way", rel, agent.shebang
                                                  ? "an option on its #! line" : "no #! line");
        aname = agent.name, agent_path = agent.path;
        word = agent.env || !agent.path ? agent.name : agent.path;
    }
    if (run.option)
        return sg_xasprintf("%s has an option on its #! line, which skillgate run would drop", rel);
    if (!run.name)
        return sg_xasprintf("skillgate run cannot tell what runs %s (no .py, .sh or .js ending, "
                            "no #! line)", rel);
    if (python_name(aname) && python_name(run.name) && run.by_ending) {
        /* the agent's Python kept: a venv's has the packages the script needs */
        if (strchr(word, '/')) {
            if (!agent_path || access(agent_path, X_OK) < 0)
                return sg_xasprintf("the Python %s is not a program here", word);
            *py = sg_xstrdup(word);
        } else if (!agent_path && strcmp(aname, "python") && strcmp(aname, "python3")) {
            return sg_xasprintf("%s is not on the PATH skillgate sees", aname);
        } else if (agent_path && a_script(agent_path)) {
            /* a shim (pyenv, asdf) finds its Python in a home the sandbox hides */
            if (!same_file(agent_path, run_path))
                *note = sg_xasprintf("%s on PATH is a shim (%s): skillgate run uses %s", aname,
                                     agent_path, run_path ? run_path : "python3");
        } else if (agent_path && (in_venv(agent_path) || secure_getenv("VIRTUAL_ENV") ||
                                  !same_file(agent_path, run_path))) {
            *py = sg_xstrdup(agent_path); /* what bash would start, not run's python3 */
        }
        return NULL;
    }
    if (!strcmp(aname, "sh") && !strcmp(run.name, "bash") && run.by_ending && run_path) {
        *note = sg_xasprintf("skillgate runs a .sh with bash (%s), the agent named sh", run_path);
        return NULL;
    }
    bool same_name = !strcmp(aname, run.name) || (python_name(aname) && python_name(run.name));
    if (same_name && same_file(agent_path, run_path))
        return NULL;
    return sg_xasprintf("the line runs %s with %s, skillgate run would start %s (%s): it keeps "
                        "only a Python the agent names (--python)", rel,
                        agent_path ? agent_path : word, run_path ? run_path : run.name,
                        run.by_ending ? "by the script's name" : "by its #! line");
}

/* Is root in one of the person's own skills folders (~/.claude/skills,
 * ~/.claude/plugins, or the same under CLAUDE_CONFIG_DIR)? A project's
 * .claude/skills, or any folder with a SKILL.md, is what a repository or
 * a download brings: not the person's. */
static bool in_personal_skills(const char *root)
{
    const char *home = secure_getenv("HOME"), *ccd = secure_getenv("CLAUDE_CONFIG_DIR");
    cleanup_free char *base = ccd && ccd[0] == '/' ? sg_xstrdup(ccd)
                              : home && home[0] == '/' ? sg_xasprintf("%s/.claude", home)
                                                       : NULL;
    if (!base)
        return false;
    static const char *const areas[] = {"skills", "plugins"};
    for (size_t i = 0; i < SG_ARRAY_LEN(areas); i++) {
        cleanup_free char *a = sg_xasprintf("%s/%s", base, areas[i]);
        cleanup_free char *real = sg_path_real(a);
        size_t n = strlen(real);
        if (!strncmp(root, real, n) && root[n] == '/')
            return true;
    }
    return false;
}

/* Has a person vetted the skill at root: kept in their own skills folder,
 * its manifests and its code (the content digest) as they last looked at
 * them (a run, the Skills screen)? */
static void vet_skill(const struct sg_skill *sk, const char *root, struct sg_hook_vet *v)
{
    cleanup_free char *asks = sg_skill_grants_beyond(sk, true);
    v->risky = sg_sanitize_str(asks[0] ? asks : "nothing beyond its own folder", 0);
    struct sg_seen seen;
    v->installed = in_personal_skills(root);
    if (!v->installed) {
        v->why = sg_xasprintf("not one of your installed skills (~/.claude/skills): a "
                              "repository or a download can put a SKILL.md anywhere");
    } else if (sg_seen_compare_code(sk, &seen) < 0 || seen.state == SG_SEEN_NEW) {
        v->why = sg_xstrdup("installed, but you have not looked at it yet (skillgate run, "
                            "or the Skills screen)");
    } else if (seen.state == SG_SEEN_CHANGED) {
        v->why = sg_xasprintf("its manifest changed since you looked at it (%s)", seen.when);
    } else if (!seen.code_same) { /* a pull, or the agent, swapped a script */
        v->why = sg_xasprintf("its code changed since you looked at it (%s)", seen.when);
    } else {
        v->vetted = true;
        v->why = sg_xasprintf("installed in your skills and unchanged since you looked at it "
                              "(%s)", seen.when);
    }
}

void sg_hook_vet_free(struct sg_hook_vet *v)
{
    free(v->why), free(v->risky);
    memset(v, 0, sizeof *v);
}

/* The folder at or above dir holding name (a file or folder), or NULL. */
static char *up_from(const char *dir, const char *name)
{
    cleanup_free char *d = sg_xstrdup(dir);
    for (int up = 0; up < 64; up++) {
        char *c = sg_xasprintf("%s/%s", strcmp(d, "/") ? d : "", name);
        if (access(c, F_OK) == 0)
            return free(c), sg_xstrdup(d);
        free(c);
        char *sl = strrchr(d, '/');
        if (!sl || !strcmp(d, "/"))
            return NULL;
        if (sl == d)
            sl[1] = '\0'; /* up to / */
        else
            *sl = '\0';
    }
    return NULL;
}

/* `uv run SCRIPT.py` (or `uv run python SCRIPT.py`) in the folder where:
 * the environment uv would run it in, as --python in *py; NULL, or why
 * uv's run cannot be said as skillgate's (caller frees). */
static char *uv_python(const char *abs, const char *rel, const char *where, char **py)
{
    if (!sg_str_has_suffix(abs, ".py"))
        return sg_xasprintf("uv runs %s as a command, not a Python script", rel);
    static const char advice[] = "make the environment, then run skillgate run SKILL --python "
                                 "ENV --script SCRIPT";
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (sg_read_file_capped(abs, 1 << 20, &text, &len) == 0 && text &&
        (sg_str_has_prefix(text, "# /// script\n") || strstr(text, "\n# /// script\n")))
        return sg_xasprintf("uv run would first install the dependencies %s declares (its "
                            "# /// script block) into an environment of its own, which "
                            "skillgate run cannot do: %s", rel, advice);
    cleanup_free char *project = up_from(where, "pyproject.toml");
    if (project)
        return sg_xasprintf("uv run in a project (%s/pyproject.toml) first syncs the project's "
                            "environment, which skillgate run cannot do: uv sync, then "
                            "skillgate run SKILL --python %s/.venv --script SCRIPT", project,
                            project);
    const char *venv = secure_getenv("VIRTUAL_ENV"), *conda = secure_getenv("CONDA_PREFIX");
    if (venv && venv[0] == '/') {
        *py = sg_xstrdup(venv);
        return NULL;
    }
    if (conda && *conda)
        return sg_xasprintf("uv run would use the Conda environment %s: %s", conda, advice);
    cleanup_free char *holder = up_from(where, ".venv/pyvenv.cfg");
    if (holder) {
        *py = sg_xasprintf("%s/.venv", strcmp(holder, "/") ? holder : "");
        return NULL;
    }
    return sg_xasprintf("uv run here picks a Python itself (no environment is active or in "
                        ".venv: one uv manages, or the first on PATH), which skillgate cannot "
                        "tell: %s", advice);
}

/* A .. anywhere in a path (bash's cd reads it as written, the kernel
 * through links: two places). */
static bool has_dotdot(const char *p)
{
    return !strcmp(p, "..") || sg_str_has_prefix(p, "../") || strstr(p, "/../") ||
           sg_str_has_suffix(p, "/..");
}

/* The agent's line as a script's run: [cd DIR &&] RUNNER SCRIPT ARGS. */
struct script_line {
    const struct sg_shell_cmd *run;
    const char *cd; /* the cd's folder as bash reads it, NULL when none */
    char *where;    /* the folder the script runs in (absolute) */
    size_t at;      /* the script's word in run */
};

/* NULL with l filled, or why the line is no such run (caller frees). */
static char *read_line(const struct sg_shell *sh, const char *cwd, struct script_line *l)
{
    memset(l, 0, sizeof *l);
    if (sh->n == 2 && !strcmp(sh->cmds[0].argv[0], "cd")) {
        const struct sg_shell_cmd *c = &sh->cmds[0];
        if (strcmp(c->op, "&&"))
            return sg_xstrdup("a cd and the run not joined by && (the run would go on where "
                              "the cd failed)");
        l->cd = c->argc == 2 ? c->argv[1]
                : c->argc == 3 && !strcmp(c->argv[1], "--") ? c->argv[2] : NULL;
        const char *cdpath = secure_getenv("CDPATH");
        if (!l->cd || !l->cd[0] || !strcmp(l->cd, "-"))
            return sg_xstrdup("a cd with options, or to no folder or the last one (cd -)");
        if (l->cd[0] != '/' && l->cd[0] != '.' && cdpath && *cdpath)
            return sg_xstrdup("a cd that CDPATH may lead elsewhere");
        if (has_dotdot(l->cd))
            return sg_xstrdup("a cd with .. (bash reads it as written, the kernel through "
                              "links)");
    } else if (sh->n != 1) {
        return sg_xstrdup("more than one command (only [cd DIR &&] INTERPRETER SCRIPT ARGS "
                          "is rewritten)");
    }
    l->run = &sh->cmds[sh->n - 1];
    if (!strcmp(l->run->op, "&"))
        return sg_xstrdup("it runs in the background (&)");
    const char *a0 = l->run->argv[0];
    l->at = script_at(l->run);
    if (!l->at && l->run->argc >= 2 && (interpreter(a0) || !strcmp(base_of(a0), "uv")))
        return sg_xasprintf("an option before the script (%s %s ...): skillgate run cannot "
                            "pass it", a0, l->run->argv[1]);
    if (!l->at && !strchr(a0, '/'))
        return sg_xasprintf("%s is not what skillgate rewrites (python, python3, python3.N, uv "
                            "run, bash, sh, node, perl, ruby, or the script's own path)", a0);
    if (l->at && l->run->argv[l->at][0] == '-')
        return sg_xasprintf("an option before the script (%s): skillgate run cannot pass it",
                            l->run->argv[l->at]);
    const char *to = l->cd ? l->cd : cwd;
    l->where = to[0] == '/' ? sg_xstrdup(to) : cwd[0] == '/' ? sg_xasprintf("%s/%s", cwd, to)
                                                             : NULL;
    if (!l->where)
        return sg_xstrdup("a relative path and no cwd to read it from");
    return NULL;
}

/* The rewritten line: [cd DIR &&] SELF run ROOT --prompt attached
 * [--python PY] --script REL -- ARGS, or NULL when too long. */
static char *rewritten(const struct script_line *l, const char *self, const char *root,
                       const char *rel, const char *py)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_SHELL_MAX * 2);
    if (l->cd) {
        sg_buf_append(&b, l->cd[0] == '-' ? "cd -- " : "cd ", l->cd[0] == '-' ? 6 : 3);
        quoted(&b, l->cd);
        sg_buf_append(&b, " && ", 4);
    }
    sg_shell_quote(&b, self, true);
    sg_buf_append(&b, " run ", 5);
    quoted(&b, root);
    sg_buf_append(&b, " --prompt attached", 18);
    if (py) {
        sg_buf_append(&b, " --python ", 10);
        quoted(&b, py);
    }
    sg_buf_append(&b, " --script ", 10);
    quoted(&b, rel);
    sg_buf_append(&b, " --", 3);
    for (size_t i = l->at + 1; i < l->run->argc; i++) {
        sg_buf_append(&b, " ", 1);
        quoted(&b, l->run->argv[i]);
    }
    char *out = b.dropped ? NULL : sg_buf_steal(&b);
    sg_buf_free(&b);
    return out;
}

/* What the run holds beyond the skill the person vetted, or NULL: a
 * Python the agent names (its own program, or an environment whose
 * packages run as code with the skill's grants), or a working folder a cd
 * in the line picks outside the skill. Caller frees. */
static char *beyond_the_skill(const struct script_line *l, const char *root, const char *py)
{
    if (py) {
        cleanup_free char *abs = py[0] == '/' ? sg_xstrdup(py) : sg_xasprintf("%s/%s", l->where,
                                                                              py);
        cleanup_free char *sys = run_finds("python3");
        struct stat st;
        bool plain = stat(abs, &st) == 0 && S_ISREG(st.st_mode) && !in_venv(abs) &&
                     same_file(abs, sys);
        if (!plain)
            return sg_xasprintf("the agent names its own Python (%s): vetting the skill does "
                                "not vet it, nor its environment's packages, which run as code "
                                "with the skill's grants", py);
    }
    cleanup_free char *where = l->cd ? sg_path_real(l->where) : NULL;
    if (where && !sg_path_within(where, root))
        return sg_xasprintf("the line's cd makes %s the skill's working folder (shown to it "
                            "read-only), a folder you did not choose", where);
    return NULL;
}

/* The line's words joined again (~ read as the home), for the rules. */
static char *line_as_read(const struct sg_shell *sh)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_SHELL_MAX * 2);
    for (size_t i = 0; i < sh->n; i++) {
        cleanup_free char *j = sg_shell_join(&sh->cmds[i]);
        sg_buf_printf(&b, "%s%s%s", j, sh->cmds[i].op[0] ? " " : "", sh->cmds[i].op);
        if (sh->cmds[i].op[0] && i + 1 < sh->n)
            sg_buf_append(&b, " ", 1);
    }
    char *out = sg_buf_steal(&b);
    sg_buf_free(&b);
    return out;
}

void sg_hook_rewrite_free(struct sg_hook_rewrite *rw)
{
    free(rw->command), free(rw->why_not), free(rw->by_hand), free(rw->note);
    free(rw->root), free(rw->line), free(rw->beyond);
    sg_hook_vet_free(&rw->vet);
    memset(rw, 0, sizeof *rw);
}

int sg_hook_rewrite(const char *command, const char *cwd, const char *self,
                    struct sg_hook_rewrite *rw)
{
    memset(rw, 0, sizeof *rw);
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse_home(command, secure_getenv("HOME"), &sh, &why) < 0) {
        rw->why_not = sg_xasprintf("skillgate cannot read the line exactly (%s)", why);
        return -EINVAL;
    }
    struct script_line l;
    cleanup_free char *script = NULL, *root = NULL, *py = NULL;
    char *no = read_line(&sh, cwd, &l);
    const char *w = no ? NULL : l.run->argv[l.at];
    if (!no) {
        cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w) : sg_xasprintf("%s/%s", l.where, w);
        script = sg_path_real(abs);
        root = skill_root_of(script); /* the nearest folder above with a SKILL.md */
        struct stat st;
        if (!root)
            no = sg_xasprintf("%s is in no skill's folder (none above it has a SKILL.md)", w);
        else if (stat(script, &st) < 0 || !S_ISREG(st.st_mode))
            no = sg_xasprintf("%s is no file", w);
    }
    const char *rel = root ? script + strlen(root) + 1 : NULL;
    if (root) {
        struct sg_buf b;
        sg_buf_init(&b, SG_SHELL_MAX);
        sg_buf_append(&b, "skillgate run ", 14);
        quoted(&b, root);
        sg_buf_append(&b, " --script ", 10);
        quoted(&b, rel);
        rw->by_hand = sg_buf_steal(&b);
        sg_buf_free(&b);
    }
    if (!no && !strcmp(base_of(l.run->argv[0]), "uv"))
        no = uv_python(script, rel, l.where, &py);
    else if (!no)
        no = same_program(l.at ? l.run->argv[0] : NULL, script, rel, l.where, &py, &rw->note);
    for (size_t i = l.at + 1; !no && i < l.run->argc; i++)
        if (l.run->argv[i][0] == '\0')
            no = sg_xstrdup("an empty argument");
    struct sg_skill *sk = NULL;
    if (!no && (sg_skill_load(root, &sk) < 0 || !sk || sg_diags_blocking(&sk->diags)))
        no = sg_xstrdup("the skill does not load (skillgate validate says why)");
    if (!no)
        vet_skill(sk, root, &rw->vet);
    sg_skill_free(sk);
    if (!no && !(rw->command = rewritten(&l, self, root, rel, py)))
        no = sg_xstrdup("too long");
    if (!no) {
        rw->root = sg_xstrdup(root);
        rw->line = line_as_read(&sh);
        rw->beyond = beyond_the_skill(&l, root, py);
    }
    if (no)
        sg_hook_vet_free(&rw->vet);
    rw->why_not = no;
    free(l.where);
    sg_shell_free(&sh);
    return no ? -EINVAL : 0;
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
    const char *b = base_of(prog);
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
    const char *b = base_of(cmd->argv[0]);
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
    if (strcmp(base_of(cmd->argv[0]), "ln") && strcmp(base_of(cmd->argv[0]), "cp"))
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
        size_t script = script_at(cmd);
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
    enum sg_effect lim = sg_perm_limits(h->perm, bq, lby, sizeof lby);
    int r;
    bool outright;
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
    if (sg_perm_limits(h->perm, bq, lby, sizeof lby) == SG_EFF_DENY) {
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
                                            names_a_skill_file(h->c.detail, h->c.cwd));
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
                            "(%s)%s", by, rw->command, note);
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
        bool skill = h->rw.why_not && (h->rw.by_hand || names_a_skill_file(h->c.detail,
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
