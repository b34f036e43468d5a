/* skillgate hook: one Claude Code hook event in, one answer out (hook.h). */
#include "hook.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "config.h"
#include "notifpath.h"
#include "shellcmd.h"
#include "skill.h"
#include "loop.h"
#include "perm.h"
#include "policy.h"
#include "sanitize.h"
#include "util.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

char *sg_hook_url_host(const char *url)
{
    int port;
    const char *p;
    if (!strncasecmp(url, "https://", 8))
        port = 443, p = url + 8;
    else if (!strncasecmp(url, "http://", 7))
        port = 80, p = url + 7;
    else
        return NULL;
    size_t auth = strcspn(p, "/?#");
    /* user:pass@host: the host is after the last @ of the authority */
    const char *at = NULL;
    for (size_t i = 0; i < auth; i++)
        if (p[i] == '@')
            at = p + i;
    if (at) {
        auth -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    size_t hl;
    if (p[0] == '[') { /* [2001:db8::1]:8443 */
        const char *close = memchr(p, ']', auth);
        if (!close)
            return NULL;
        hl = (size_t)(close - p) + 1;
    } else {
        hl = strcspn(p, ":/?#");
        hl = hl < auth ? hl : auth;
    }
    if (!hl || hl > 253 + 2)
        return NULL;
    if (hl < auth) {
        if (p[hl] != ':')
            return NULL;
        long long v;
        cleanup_free char *ps = sg_xstrndup(p + hl + 1, auth - hl - 1);
        if (sg_parse_ll(ps, 1, 65535, &v) < 0)
            return NULL;
        port = (int)v;
    }
    char *host = sg_xasprintf("%.*s:%d", (int)hl, p, port);
    for (char *c = host; *c; c++) {
        if ((unsigned char)*c < 0x21 || *c == '\\')
            return free(host), NULL;
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    }
    return host;
}

/* A file tool's path: absolute, or relative to the agent's cwd. */
static char *file_path(const struct sg_hook_call *c, const char *key, const char **why)
{
    const char *p = str(c->input, key);
    if (!p || !*p) {
        *why = "the tool's input has no file path";
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
        const char *url = str(input, "url");
        detail = url ? sg_hook_url_host(url) : NULL;
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
    default: {
        /* read-only and bookkeeping tools, an mcp__ tool, or one skillgate
         * does not know: the name and what it was given */
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
        if (updated && !strcmp(decision, "allow"))
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

static bool interpreter(const char *w)
{
    static const char *const known[] = {"python", "python3", "bash", "sh", "node", "perl",
                                        "ruby"};
    const char *b = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
    for (size_t i = 0; i < SG_ARRAY_LEN(known); i++) {
        size_t n = strlen(known[i]);
        /* python3.12: a version after the name */
        if (!strncmp(b, known[i], n) && (!b[n] || (b[n] == '.' && b[n + 1] >= '0' &&
                                                  b[n + 1] <= '9' && !strcmp(known[i], "python3"))))
            return true;
    }
    return false;
}

/* A word a shell passes through as it is: no quoting is needed to write
 * it again. */
static bool plain(const char *w)
{
    return *w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "_-./,:=@%+") == strlen(w);
}

static void quoted(struct sg_buf *b, const char *w)
{
    if (plain(w)) {
        sg_buf_append(b, w, strlen(w));
        return;
    }
    sg_buf_append(b, "'", 1);
    for (const char *c = w; *c; c++)
        if (*c == '\'')
            sg_buf_append(b, "'\\''", 4);
        else
            sg_buf_append(b, c, 1);
    sg_buf_append(b, "'", 1);
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

/* Does the line name a file in a skill's folder (a word with a /, quotes
 * aside)? Then a line that is not rewritten says why. */
static bool names_a_skill_file(const char *line, const char *cwd)
{
    cleanup_free char *copy = sg_xstrdup(line);
    for (char *sv, *w = strtok_r(copy, " \t\n;&|()<>", &sv); w;
         w = strtok_r(NULL, " \t\n;&|()<>", &sv)) {
        w += strspn(w, "'\"");
        w[strcspn(w, "'\"")] = '\0';
        if (!strchr(w, '/') || (w[0] != '/' && cwd[0] != '/'))
            continue;
        cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w) : sg_xasprintf("%s/%s", cwd, w);
        cleanup_free char *real = sg_path_real(abs);
        cleanup_free char *root = skill_root_of(real);
        if (root)
            return true;
    }
    return false;
}

const char *sg_hook_rewrite(const char *command, const char *cwd, const char *self, char **out)
{
    *out = NULL;
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse(command, &sh, &why) < 0)
        return why;
    const char *no = NULL;
    cleanup_free char *script = NULL, *root = NULL;
    size_t first_arg = 0;
    if (sh.n != 1)
        no = "more than one command";
    else if (sh.cmds[0].argc >= 2 && interpreter(sh.cmds[0].argv[0]))
        script = sg_xstrdup(sh.cmds[0].argv[1]), first_arg = 2;
    else if (sh.cmds[0].argc >= 1 && strchr(sh.cmds[0].argv[0], '/'))
        script = sg_xstrdup(sh.cmds[0].argv[0]), first_arg = 1;
    else
        no = "not an interpreter and a script";
    if (!no && script[0] == '-')
        no = "an option before the script (only INTERPRETER SCRIPT ARGS is rewritten)";
    else if (!no && script[0] != '/' && cwd[0] != '/')
        no = "a relative script and no cwd";
    if (!no) {
        char *abs = script[0] == '/' ? sg_xstrdup(script) : sg_xasprintf("%s/%s", cwd, script);
        free(script);
        script = sg_path_real(abs);
        free(abs);
        root = skill_root_of(script); /* the nearest folder above with a SKILL.md */
        struct stat st;
        if (!root)
            no = "the script is in no skill's folder";
        else if (stat(script, &st) < 0 || !S_ISREG(st.st_mode))
            no = "the script is no file";
    }
    struct sg_skill *sk = NULL;
    if (!no && (sg_skill_load(root, &sk) < 0 || !sk || sg_diags_blocking(&sk->diags)))
        no = "the skill does not load";
    sg_skill_free(sk);
    for (size_t i = first_arg; !no && i < sh.cmds[0].argc; i++)
        if (sh.cmds[0].argv[i][0] == '\0')
            no = "an empty argument";
    if (!no) {
        struct sg_buf b;
        sg_buf_init(&b, SG_SHELL_MAX * 2);
        quoted(&b, self);
        sg_buf_append(&b, " run ", 5);
        quoted(&b, root);
        sg_buf_append(&b, " --prompt attached --script ", 28);
        quoted(&b, script + strlen(root) + 1);
        sg_buf_append(&b, " --", 3);
        for (size_t i = first_arg; i < sh.cmds[0].argc; i++) {
            sg_buf_append(&b, " ", 1);
            quoted(&b, sh.cmds[0].argv[i]);
        }
        if (b.dropped)
            no = "too long";
        *out = no ? NULL : sg_buf_steal(&b);
        sg_buf_free(&b);
    }
    sg_shell_free(&sh);
    return no;
}

/* ---- what the agent never changes by a rule ---- */

/* A write to skillgate's own files (its rules, grants, session answers,
 * audit log) or to the settings that make it Claude Code's hook would let
 * the agent lift its own guard: the first is denied outright, the second
 * always asked in Claude Code (no rule or grant allows it). NULL for any
 * other path. */
static const char *guarded(const struct sg_hook_call *c, bool *deny)
{
    enum sg_tool_id id = sg_tool_lookup(c->tool);
    int cls = sg_ptool_of_agent_tool(c->tool, strlen(c->tool));
    if (cls != SG_PT_WRITE || id == SG_TOOL_UNKNOWN || c->detail[0] != '/')
        return NULL;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", c->detail);
    if (sg_path_normalize(path) < 0)
        return NULL;
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    enum sg_own_rel rel = sg_own_dirs_relation(&own, path, NULL);
    sg_own_dirs_free(&own);
    if (rel == SG_OWN_INSIDE) {
        *deny = true;
        return "skillgate's own files (rules, grants, records): the agent never writes them";
    }
    const char *b = strrchr(path, '/') + 1;
    size_t n = strlen(path);
    if ((!strcmp(b, "settings.json") || !strcmp(b, "settings.local.json")) &&
        n > strlen(b) + 8 && !strncmp(path + n - strlen(b) - 9, "/.claude/", 9)) {
        *deny = false;
        return "Claude Code's settings, where skillgate is its hook: only a person decides";
    }
    return NULL;
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

/* The policy file: the config's hook.policy, else hook-policy.yaml beside
 * it when there is one. */
static char *policy_path(const struct sg_config *cfg)
{
    if (cfg->hook_policy)
        return sg_xstrdup(cfg->hook_policy);
    cleanup_free char *dir = sg_config_dir();
    char *p = sg_xasprintf("%s/hook-policy.yaml", dir);
    if (access(p, F_OK) < 0)
        return free(p), NULL;
    return p;
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
    struct sg_hook_call c;
    const char *why = NULL;
    int pr = sg_hook_parse(over ? "" : buf, over ? 0 : len, &c, &why);
    if (over)
        why = "the event is over " SG_STR(SG_HOOK_INPUT_MB) " MiB, not read";

    struct sg_config cfg;
    struct sg_diags d = {0};
    cleanup_free char *cfgpath = sg_config_default_path();
    sg_config_load(cfgpath, &cfg, &d);
    sg_diags_free(&d);
    cleanup_free char *policy = policy_path(&cfg);
    int prompt_s = cfg.hook_prompt_s ? (int)cfg.hook_prompt_s : SG_HOOK_PROMPT_S;
    rewrite = rewrite && !cfg.hook_no_rewrite;
    sg_config_free(&cfg);

    cleanup_free char *tool = sg_sanitize_str(c.tool, 0);
    cleanup_free char *sess = sg_sanitize_str(c.session, 0);
    cleanup_free char *cwd = sg_sanitize_str(c.cwd, 0);
    cleanup_free char *tuid = sg_sanitize_str(c.tool_use_id, 0);
    json_t *extra = json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}", "agent", "name",
                              "claude-code", "hook_event",
                              c.event == SG_HOOK_PRE_TOOL_USE ? "PreToolUse" : "PermissionRequest",
                              "session_id", sess, "cwd", cwd, "tool_use_id", tuid,
                              "input_sha256", c.input_digest, "summary", c.summary);
    cleanup_free char *run_id = sg_xasprintf("hook:%.64s", sess[0] ? sess : "no-session");
    struct sg_perm_opts po = {.mode = SG_PERM_PROMPT, .policy_file = policy,
                              .skill = "claude-code", .digest = "agent", .run_id = run_id,
                              .timeout_s = prompt_s, .defer_without_frontend = true,
                              .session = true, .audit_extra = extra};
    struct sg_perm *perm = sg_perm_new(&po, &d);
    if (!perm) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("a broken policy");
        sg_diags_free(&d);
        json_decref(extra);
        cleanup_free char *w = sg_xasprintf("its policy file is broken (%s)", m);
        enum sg_hook_event ev = c.event;
        sg_hook_call_free(&c);
        return ask_unread(ev, w);
    }
    sg_diags_free(&d);
    cleanup_free char *sfile = session_file(c.session);
    session_load(perm, sfile);

    /* what could not be read is never shown as a request, nor matched by
     * a rule: Claude Code asks */
    struct hook_state st = {.fe.fd = pr < 0 ? -1 : sg_attach_connect()};
    if (st.fe.fd >= 0) {
        sg_perm_set_frontend(perm, sg_attach_fe_show, &st.fe);
        sg_attach_send(st.fe.fd,
                       json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "type", "hello",
                                 "skill", "Claude Code", "run_id", "agent", "agent", "tool", tool,
                                 "summary", c.summary, "session_id", sess, "cwd", cwd));
    }

    enum sg_decision dec = SG_DEC_DENY;
    bool outright = false;
    int r;
    /* one run of a skill's script: allowed, rewritten to run in the
     * sandbox, unless a deny rule says no to the command as written */
    cleanup_free char *rewritten = NULL, *not_sandboxed = NULL;
    if (pr == 0 && rewrite && (!strcmp(c.tool, "Bash"))) {
        char self[PATH_MAX];
        ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
        self[sl > 0 ? sl : 0] = '\0';
        const char *no = sl > 0 ? sg_hook_rewrite(c.detail, c.cwd, self, &rewritten)
                                : "skillgate cannot tell where it is";
        if (!rewritten && names_a_skill_file(c.detail, c.cwd))
            not_sandboxed = sg_xasprintf("; it names a skill's file but is not run in "
                                         "skillgate's sandbox: %s", no);
    }
    if (rewritten) {
        struct sg_preq bq;
        sg_agent_bash_preq(c.detail, c.cwd, &bq);
        char rby[512];
        if (sg_perm_peek(perm, &bq, rby, sizeof rby) == SG_EFF_DENY) {
            free(rewritten);
            rewritten = NULL;
        } else {
            cleanup_free char *w = sg_xasprintf("sandboxed: rewritten to %s", rewritten);
            sg_perm_record(perm, &bq, SG_DEC_ALLOW_ONCE, w);
        }
    }
    struct sg_preq q = {.tool = SG_PT_BASH};
    snprintf(q.agent_tool, sizeof q.agent_tool, "%s", tool);
    snprintf(q.subject, sizeof q.subject, "%s", tool);
    snprintf(q.args, sizeof q.args, "%s", c.summary);
    bool guard_deny = false;
    const char *guard = pr == 0 ? guarded(&c, &guard_deny) : NULL;
    if (rewritten) {
        dec = SG_DEC_ALLOW_ONCE;
        r = 1;
    } else if (guard) {
        struct sg_preq gq = q;
        snprintf(gq.subject, sizeof gq.subject, "%s", c.detail);
        gq.tool = SG_PT_WRITE;
        if (guard_deny)
            sg_perm_record(perm, &gq, SG_DEC_DENY, guard);
        else
            sg_perm_defer(perm, &gq, guard);
        dec = SG_DEC_DENY;
        r = 1;
    } else if (pr < 0) {
        cleanup_free char *w = sg_xasprintf("unreadable event: %s", why);
        sg_perm_defer(perm, &q, w);
        r = 1;
    } else if (!c.known) {
        /* a tool skillgate does not know: only a rule naming it, or a
         * person in the TUI, else Claude Code's prompt */
        snprintf(q.detail, sizeof q.detail, "a tool skillgate does not know");
        r = sg_perm_request(perm, &q, decided, &st, &dec);
    } else {
        struct sg_policy none = {0};
        r = sg_check_tool_permission(perm, &none, c.tool, c.detail, c.cwd, decided, &st, &dec,
                                     &outright);
    }
    if (r == 0) {
        const struct sg_loop_source src[] = {
            sg_perm_source(perm),
            {"attached TUI", sg_attach_fe_pollfds, sg_attach_fe_dispatch, NULL, &st.fe},
        };
        while (!st.decided && !stopped)
            if (sg_loop_turn(src, SG_ARRAY_LEN(src), 1000) < 0)
                break;
        dec = st.decided ? st.dec : SG_DEC_DENY;
    }
    bool deferred = sg_perm_deferred(perm);
    const char *said = sg_perm_last_decided_by(perm);
    cleanup_free char *by = sg_xstrdup(stopped && !st.decided
                                           ? "skillgate was stopped before anyone answered"
                                       : said[0]                 ? said
                                       : sg_decision_allows(dec) ? "low-risk tool"
                                                                 : "denied");
    const char *const *kept;
    size_t nkept = sg_perm_session_rules(perm, &kept);
    for (size_t i = 0; dec == SG_DEC_ALLOW_RUN && i < nkept; i++)
        session_save(sfile, kept[i]);
    const char *decision = deferred ? "ask" : sg_decision_allows(dec) ? "allow" : "deny";
    cleanup_free char *reason =
        deferred ? sg_xasprintf("skillgate: no rule or grant decides %s %s, and no skillgate TUI "
                                "is attached (skillgate tui --attach) to ask a person",
                                tool, c.summary)
                 : sg_xasprintf("skillgate: %s (%s)",
                                sg_decision_allows(dec) ? "allowed" : "denied", by);
    if (st.fe.fd >= 0) {
        cleanup_free char *oc = sg_xasprintf("%s (%s)", deferred ? "asked in Claude Code"
                                             : sg_decision_allows(dec) ? "allowed" : "denied",
                                             by);
        sg_attach_send(st.fe.fd, json_pack("{s:s, s:s}", "type", "end", "outcome", oc));
        close(st.fe.fd);
    }
    sg_perm_free(perm); /* every record on disk before Claude Code goes on */
    json_decref(extra);
    enum sg_hook_event ev = c.event;
    json_t *input_of = json_incref(c.input);
    sg_hook_call_free(&c);
    if (pr < 0) { /* said on stderr too: the input was not what it should be */
        free(reason);
        reason = sg_xasprintf("skillgate: %s; Claude Code asks instead", why);
        fprintf(stderr, "%s\n", reason);
    }
    json_t *updated = NULL;
    if (guard) {
        free(reason);
        reason = sg_xasprintf("skillgate: %s", guard);
    }
    if (not_sandboxed) {
        char *r2 = sg_xasprintf("%s%s", reason, not_sandboxed);
        free(reason);
        reason = r2;
    }
    if (rewritten) { /* the same input, with the command that runs it sandboxed */
        updated = json_deep_copy(input_of);
        json_object_set_new(updated, "command", json_string(rewritten));
        free(reason);
        reason = sg_xasprintf("skillgate: a skill's script: it runs in skillgate's sandbox "
                              "(%s)", rewritten);
    }
    json_decref(input_of);
    emit(sg_hook_answer(ev, decision, reason, updated));
    return 0;
}
