#include "mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "config.h"
#include "discover.h"
#include "digest.h"
#include "homes.h"
#include "hook.h"
#include "lineprompt.h"
#include "loop.h"
#include "perm.h"
#include "refusals.h"
#include "resolve.h"
#include "runner.h"
#include "sanitize.h"
#include "skill.h"
#include "skilljson.h"
#include "util.h"

extern char **environ;

#define PROTOCOL_LATEST "2025-11-25"
static const char *const protocols[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

enum { E_PARSE = -32700, E_REQUEST = -32600, E_METHOD = -32601, E_PARAMS = -32602,
       E_INTERNAL = -32603 };

#define OUTPUT_KEPT (64 * 1024) /* of each stream, in a run_skill result */

/* ---- the tools: X(name, "description", "input schema (JSON)") ---- */
#define MCP_TOOLS(X)                                                                           \
    X(list_skills, "List the skills skillgate discovers (frontmatter only): name, "           \
      "description, path, risk, tools, problems.",                                             \
      "{\"type\":\"object\",\"properties\":{\"directory\":{\"type\":\"string\",\"description\":" \
      "\"a folder of skills; default: the usual places\"}},\"additionalProperties\":false}")    \
    X(validate_skill, "Validate a skill's manifests (SKILL.md, skillsandbox.yaml); every "    \
      "problem with its file, line and field.",                                                \
      "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":"      \
      "[\"path\"],\"additionalProperties\":false}")                                            \
    X(inspect_skill, "The resolved policy of a skill: tools and their risk, network, files, " \
      "environment, limits, entrypoint, each with where it was declared.",                     \
      "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":"      \
      "[\"path\"],\"additionalProperties\":false}")                                            \
    X(run_skill, "Run a skill under skillgate's sandbox with full enforcement. Undeclared "   \
      "risky requests go to a person (an attached skillgate TUI) or are denied. skill is an "  \
      "id or path from list_skills, or a folder. Returns the output, exit status, violations " \
      "with their classification, decisions, what was refused and how to allow it "           \
      "(refusals), and the trace.",                                                            \
      "{\"type\":\"object\",\"properties\":{\"skill\":{\"type\":\"string\",\"description\":"    \
      "\"the skill's folder\"},\"input\":{\"description\":\"JSON input (SKILL_INPUT)\"},"      \
      "\"timeout_seconds\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,"             \
      "\"description\":\"at most the manifest's own limit\"},\"script\":{\"type\":\"string\","   \
      "\"description\":\"run this script of the skill (scripts/x.py) instead of its "           \
      "entrypoint\"},\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":"  \
      "256,\"description\":\"the script's or module's arguments, as given; with neither, "   \
      "the entrypoint's, after the manifest's own\"},\"cwd\":{\"type\":\"string\","           \
      "\"description\":\"the working folder (absolute), shown read-only with all it holds. "  \
      "Inside the agent's project (the client's roots, else the server's folder) it is used; "  \
      "any other is a Read of it: a deny rule or nobody to ask refuses it. Writes there are "  \
      "asked for; default for a script or module: the server's\"},\"module\":{\"type\":"        \
      "\"string\",\"description\":\"run python -m MODULE as from the skill's folder (its "     \
      "folder first on sys.path), instead of the entrypoint; args are its arguments\"},"       \
      "\"env\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":32,"         \
      "\"description\":\"names of variables of the server's environment to pass for this "   \
      "run; a person approves each (or it is not run)\"},\"write\":{\"type\":\"array\","      \
      "\"items\":{\"type\":\"string\"},\"maxItems\":32,\"description\":\"absolute folders "   \
      "to make writable for this run; a person approves each (or it is not run)\"},"          \
      "\"skill_dir\":{\"type\":\"string\",\"description\":\"SkillSandbox's name for skill\"},"  \
      "\"dry_run\":{\"type\":\"boolean\",\"description\":\"SkillSandbox's; only false: its "  \
      "dry run turns sandbox layers off (see inspect_skill for the plan)\"}},"                \
      "\"required\":[\"skill\"],"                                                             \
      "\"additionalProperties\":false}")                                                       \
    X(check_tool_permission, "For instruction-only skills whose tools the agent runs "        \
      "itself: may this skill use this tool for this? Decided by the skill's allowed-tools, " \
      "rules, grants, or a person.",                                                           \
      "{\"type\":\"object\",\"properties\":{\"skill\":{\"type\":\"string\"},\"tool\":{\"type\":" \
      "\"string\"},\"description\":{\"type\":\"string\",\"description\":\"the program, path " \
      "or host\"}},\"required\":[\"skill\",\"tool\",\"description\"],"                         \
      "\"additionalProperties\":false}")

/* Each tool's title, hints (readOnly, destructive, idempotent, openWorld)
 * and the schema of its structuredContent: X(name, "title", ro, destr,
 * idem, open, "outputSchema") */
#define MCP_TOOL_META(X)                                                                       \
    X(list_skills, "List skills", 1, 0, 1, 0,                                                  \
      "{\"type\":\"object\",\"properties\":{\"schema\":{\"type\":\"string\"},\"skills\":"    \
      "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},\"required\":[\"skills\"]}")        \
    X(validate_skill, "Validate a skill", 1, 0, 1, 0,                                          \
      "{\"type\":\"object\",\"properties\":{\"valid\":{\"type\":\"boolean\"},\"runnable\":"     \
      "{\"type\":\"boolean\"},\"problems\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"  \
      "\"required\":[\"valid\",\"runnable\",\"problems\"]}")                                     \
    X(inspect_skill, "Inspect a skill's policy", 1, 0, 1, 0,                                   \
      "{\"type\":\"object\",\"properties\":{\"schema\":{\"type\":\"string\"},\"valid\":"       \
      "{\"type\":\"boolean\"},\"runnable\":{\"type\":\"boolean\"},\"tools\":{\"type\":"         \
      "\"object\"},\"problems\":{\"type\":\"array\"}},\"required\":[\"schema\",\"valid\","       \
      "\"problems\"]}")                                                                         \
    X(run_skill, "Run a skill in the sandbox", 0, 1, 0, 1,                                     \
      "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\"},\"exit_code\":"   \
      "{\"type\":[\"integer\",\"null\"]},\"output\":{\"type\":\"string\"},\"stderr\":{\"type\":" \
      "\"string\"},\"output_truncated\":{\"type\":\"boolean\"},\"violations\":{\"type\":"      \
      "\"object\"},\"decisions\":{\"type\":\"array\"},\"trace\":{\"type\":[\"string\","         \
      "\"null\"]},\"skill\":{\"type\":\"string\"},\"duration_ms\":{\"type\":\"integer\"},"      \
      "\"refusals\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"                 \
      "\"setup_failed_at\":{\"type\":\"string\"}},"                                          \
      "\"required\":[\"status\",\"exit_code\",\"output\",\"violations\",\"decisions\"]}")        \
    X(check_tool_permission, "Check a tool use", 1, 0, 0, 0,                                   \
      "{\"type\":\"object\",\"properties\":{\"decision\":{\"type\":\"string\",\"enum\":"       \
      "[\"allow\",\"deny\"]},\"decided_by\":{\"type\":\"string\"},\"reason\":{\"type\":"      \
      "\"string\"},\"skill\":{\"type\":\"string\"},\"tool\":{\"type\":\"string\"}},"            \
      "\"required\":[\"decision\",\"decided_by\",\"reason\"]}")

struct worker {
    pid_t pid;
    int fd;
    json_t *id;
    json_t *token;   /* the client's progressToken, or NULL */
    bool cancelled;  /* notifications/cancelled named it: no answer is sent */
    struct sg_buf out;
};

/* A call that came while every worker was busy: started, in order, as
 * workers finish. */
struct queued {
    json_t *id, *args, *token;
    char *traceparent; /* the client's _meta.traceparent, or NULL */
    bool run; /* run_skill, else check_tool_permission */
};

/* The client's roots (roots/list): not asked (it has no roots capability,
 * or nothing needed them yet), asked and not answered yet, answered, or
 * answered with an error or not in time (then the server's folder is the
 * project, as for a client without roots). */
enum roots_state { ROOTS_UNASKED, ROOTS_WAITING, ROOTS_ANSWERED, ROOTS_NONE };

struct server {
    int in, out;
    struct worker w[SG_MCP_MAX_WORKERS];
    struct queued q[SG_MCP_MAX_QUEUED]; /* a ring: qhead is the oldest */
    size_t qhead, nq;
    char *buf;
    size_t len;
    bool discarding, open_in;
    bool initialized; /* initialize answered: other requests may come */
    /* workers that answered and still send their OpenTelemetry spans (at
     * most the end wait): reaped later, never waited for before a reply */
    pid_t late[2 * SG_MCP_MAX_WORKERS];
    size_t nlate;
    /* the agent's project for run_skill's cwd: the client's roots, asked
     * once it is initialized and again when they change; a run_skill with
     * a cwd waits for the answer (SG_MCP_ROOTS_WAIT_MS at most) */
    bool client_roots;             /* it declared the roots capability */
    enum roots_state roots_state;
    unsigned roots_asked;          /* our requests' ids: "skillgate-roots-N" */
    int64_t roots_deadline;        /* CLOCK_MONOTONIC ms */
    char *roots[SG_MCP_MAX_ROOTS]; /* the answer's file:// URIs, as absolute paths */
    size_t nroots;
};

/* ---- replies ---- */

static void send_msg(struct server *s, json_t *m)
{
    char *t = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (!t)
        return;
    size_t n = strlen(t);
    t = sg_xrealloc(t, n + 1);
    t[n++] = '\n'; /* one write per message: no interleaving, no half lines */
    for (size_t off = 0; off < n;) {
        ssize_t w = write(s->out, t + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(t);
}

static void reply(struct server *s, json_t *id, json_t *result)
{
    send_msg(s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                          "result", result));
}

static void reply_error(struct server *s, json_t *id, int code, const char *msg)
{
    send_msg(s, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                          id ? id : json_null(), "error", "code", code, "message", msg));
}

/* A tools/call result: the JSON as text and as structured content. */
static json_t *tool_result(json_t *structured, bool is_error)
{
    char *text = json_dumps(structured, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_t *r = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
                          text ? text : "{}", "structuredContent", structured, "isError",
                          is_error);
    free(text);
    return r;
}

static json_t *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *tool_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *m = sg_xvasprintf(fmt, ap);
    va_end(ap);
    /* text only: structuredContent follows the tool's outputSchema, which
     * an error does not (clients check it when it is there) */
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", m, "isError", 1);
}

/* ---- the quick tools, answered in the server ---- */

/* The skill a tool's argument names: a folder, or an id list_skills
 * returned (resolve.h: the same reading as `skillgate run`'s). NULL with
 * *err the tool's answer when there is none. */
static struct sg_skill *load_skill(const char *arg, json_t **err)
{
    struct sg_skill *sk = NULL;
    bool path = false;
    struct sg_discovery d;
    int r = sg_skill_resolve(arg, NULL, &sk, &d, &path);
    size_t near = r == 0 || path ? SIZE_MAX : sg_discovery_nearest(&d, arg);
    cleanup_free char *nm = near == SIZE_MAX ? NULL : sg_sanitize_str(d.v[near].name, 0);
    cleanup_free char *hint = nm ? sg_xasprintf("; did you mean \"%s\"?", nm) : sg_xstrdup("");
    cleanup_free char *amb = r == -ENOTUNIQ ? sg_resolve_ambiguous(&d, arg) : NULL;
    sg_discovery_free(&d);
    if (r == 0)
        return sk;
    cleanup_free char *a = sg_sanitize_str(arg, 0);
    if (amb)
        *err = tool_error("%s", amb);
    else if (!path)
        *err = tool_error("%s is not a skill: no folder of that name here, and no skill with "
                          "that id where skills are kept (list_skills gives the ids and "
                          "paths run_skill takes)%s", a, hint);
    else
        *err = tool_error("%s is not a skill: %s", a,
                          r == -ENOENT || r == -ENODATA ? "no SKILL.md or skillsandbox.yaml there"
                                                        : strerror(-r));
    return NULL;
}

static json_t *do_list(const char *dir)
{
    struct sg_discovery d = {0};
    const char *dirs[1] = {dir};
    struct sg_discover_opts o = {.dirs = dir ? dirs : NULL, .ndirs = dir ? 1 : 0,
                                 .defaults = !dir};
    if (sg_discover(&o, &d) < 0 && dir) {
        sg_discovery_free(&d);
        return tool_error("%s: cannot be read as a folder of skills", dir);
    }
    json_t *j = sg_discovery_to_json(&d);
    size_t i;
    json_t *sk;
    json_array_foreach(json_object_get(j, "skills"), i, sk)
    {
        json_object_set(sk, "path", json_object_get(sk, "root"));
        json_object_set(sk, "risk", json_object_get(sk, "max_risk"));
    }
    sg_discovery_free(&d);
    return tool_result(j, false);
}

static json_t *do_validate(const char *path)
{
    json_t *err = NULL;
    struct sg_skill *sk = load_skill(path, &err);
    if (!sk)
        return err;
    json_t *j = json_pack("{s:b, s:b, s:o}", "valid", !sg_diags_count(&sk->diags, SG_ERROR),
                          "runnable", !sg_skill_has_errors(sk), "problems",
                          sg_diags_to_json(&sk->diags));
    sg_skill_free(sk);
    return tool_result(j, false);
}

static json_t *do_inspect(const char *path)
{
    json_t *err = NULL;
    struct sg_skill *sk = load_skill(path, &err);
    if (!sk)
        return err;
    char digest[SG_DIGEST_STRLEN] = "";
    if (sg_skill_digest(sk->root, digest, NULL) < 0)
        digest[0] = '\0';
    json_t *j = sg_skill_to_json(sk, digest[0] ? digest : NULL);
    sg_skill_free(sk);
    return tool_result(j, false);
}

/* ---- workers: runs and permission checks, one process each ---- */

/* The client went away (SIGTERM from the server): stop the run, but let
 * the runner write its trace and audit record. */
static volatile sig_atomic_t stop_requested, cancel_requested;

struct attach_ctx {
    struct sg_attach_fe fe;  /* the attached TUI (fd -1: none) */
    bool decided;            /* check_tool_permission: the answer came */
    enum sg_decision decision;
    struct sg_buf out, err;  /* run_skill: what the caller gets back */
    bool fork;
    struct sg_buf results;   /* context: fork: "Result:" lines */
    char *last;
    struct sg_runner *run;   /* run_skill's, stopped on SIGTERM, cancelled on SIGUSR1 */
    int progress_fd;         /* the result pipe, for progress lines; -1: none asked */
    int64_t progress_ms;     /* when the last one went */
    size_t enforcements;     /* so far */
    long long timeout_s;
};

static void attach_event(void *ctx, const struct sg_event *ev)
{
    struct attach_ctx *a = ctx;
    if (sg_event_severity(ev->kind) >= 2)
        a->enforcements++;
    if (ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR) {
        struct sg_buf *b = ev->kind == SG_EV_STDOUT ? &a->out : &a->err;
        sg_buf_append_line(b, ev->message, ev->message_len);
        static const char tag[] = "Result:";
        if (a->fork && ev->kind == SG_EV_STDOUT) {
            if (ev->message_len >= sizeof tag - 1 && !memcmp(ev->message, tag, sizeof tag - 1)) {
                const char *v = ev->message + sizeof tag - 1;
                size_t n = ev->message_len - (sizeof tag - 1);
                while (n && *v == ' ')
                    v++, n--;
                sg_buf_append(&a->results, v, n);
                sg_buf_append(&a->results, "\n", 1);
            }
            free(a->last);
            a->last = sg_xstrndup(ev->message, ev->message_len);
        }
    }
    sg_attach_fe_event(&a->fe, ev);
}

static void attach_show(void *ctx, const struct sg_perm_prompt *pr)
{
    struct attach_ctx *a = ctx;
    sg_attach_fe_show(&a->fe, pr);
}

/* The attached TUI's socket as a source of the run's loop (or of the
 * check's): its answers, and a stop request seen within 200 ms. */
static size_t attach_fds(void *ctx, struct pollfd *out, size_t max)
{
    struct attach_ctx *a = ctx;
    if (a->fe.fd < 0 || !max)
        return 0;
    out[0] = (struct pollfd){.fd = a->fe.fd, .events = POLLIN};
    return 1;
}

/* A progress line on the result pipe, at most once a second: the server
 * forwards it as notifications/progress to a client that gave a token. */
static void progress(struct attach_ctx *a)
{
    if (a->progress_fd < 0 || !a->run)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (a->progress_ms && now - a->progress_ms < 1000)
        return;
    a->progress_ms = now;
    struct sg_session_live live;
    sg_runner_live(a->run, &live);
    if (!live.started_ms)
        return;
    struct timespec wt;
    clock_gettime(CLOCK_REALTIME, &wt);
    int64_t wall = (int64_t)wt.tv_sec * 1000 + wt.tv_nsec / 1000000;
    double el = (double)(wall - live.started_ms - live.paused_ms) / 1000.0;
    json_t *p = json_pack("{s:f, s:I, s:s}", "progress", el < 0 ? 0.0 : el, "total",
                          (json_int_t)a->timeout_s, "message", "");
    cleanup_free char *msg = sg_xasprintf("%.1f s of %lld s%s; %zu enforcement%s so far",
                                          el < 0 ? 0.0 : el, a->timeout_s,
                                          live.paused ? ", waiting for a person" : "",
                                          a->enforcements, a->enforcements == 1 ? "" : "s");
    json_object_set_new(p, "message", json_string(msg));
    json_t *wrap = json_pack("{s:o}", "progress", p);
    cleanup_free char *line = json_dumps(wrap, JSON_COMPACT);
    json_decref(wrap);
    if (line) {
        size_t len = strlen(line);
        line[len] = '\n'; /* the dump's NUL becomes the line's end */
        ssize_t w = write(a->progress_fd, line, len + 1);
        (void)w;
    }
}

static void attach_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    struct attach_ctx *a = ctx;
    if (n && p[0].revents)
        sg_attach_fe_read(&a->fe);
    if (cancel_requested && a->run)
        sg_runner_cancel(a->run);
    else if (stop_requested && a->run)
        sg_runner_stop(a->run);
    progress(a);
}

static int attach_timeout(void *ctx)
{
    (void)ctx;
    return 200;
}

static void on_term(int sig)
{
    if (sig == SIGUSR1)
        cancel_requested = 1;
    stop_requested = 1;
}

static void emit_result(int fd, json_t *r)
{
    char *t = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    if (!t)
        return;
    size_t n = strlen(t);
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, t + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(t);
}

static json_t *kept(struct sg_buf *b)
{
    cleanup_free char *s = sg_sanitize(b->data ? b->data : "", b->len,
                                       SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB);
    return json_string(s);
}

/* Its strings into out (checked by script_args_ok), how many. */
static size_t strings_of(json_t *v, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(v) && n < max; i++)
        out[n++] = json_string_value(json_array_get(v, i));
    return n;
}

/* One run_skill call, as the client gave it (checked against the schema). */
struct run_call {
    const char *path, *input;
    long long timeout;
    const char *script, *cwd, *module;
    char *const *args;
    size_t nargs;
    const char *const *env, *const *write; /* names; absolute folders */
    size_t nenv, nwrite;
    int progress_fd; /* -1: no progress asked for */
    struct sg_span_ctx parent; /* the call's span: the run's root is its child */
    /* the client's roots, when it answered roots/list: the agent's project
     * (else the folder the server was started in) */
    bool from_roots;
    char *const *roots;
    size_t nroots;
};

static bool kept_by_person(const struct sg_skill *sk);
static void check_decided(void *ctx, enum sg_decision d);

/* Is real (a real path) in the agent's project: the client's roots when it
 * answered roots/list, else the folder the server was started in, each by
 * its real path? A folder that is /, a home or holds one is no project:
 * everything would be in it. *what says what the project is, in words
 * (caller frees). */
static bool in_project(const struct run_call *c, const char *real, char **what)
{
    char here[PATH_MAX];
    const char *one = getcwd(here, sizeof here) ? here : NULL;
    const char *const *from = c->from_roots ? (const char *const *)c->roots : &one;
    size_t n = c->from_roots ? c->nroots : one ? 1 : 0;
    struct sg_buf b;
    sg_buf_init(&b, 2048); /* words only: what does not fit is not said */
    sg_buf_printf(&b, "%s", c->from_roots ? "the client's roots" : "the folder skillgate serve "
                                                                   "was started in");
    bool in = false;
    struct sg_homes hs;
    sg_homes_get(&hs);
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *d = sg_path_target(from[i], NULL);
        struct stat st;
        bool ok = strcmp(d, "/") && stat(d, &st) == 0 && S_ISDIR(st.st_mode) &&
                  sg_homes_relation(&hs, d, NULL) == SG_HOME_NONE;
        cleanup_free char *clean = sg_sanitize_str(from[i], 0);
        sg_buf_printf(&b, "%s%s%s", i ? ", " : ": ", clean,
                      ok ? "" : " (not counted: missing, /, a home or above one)");
        in |= ok && sg_path_within(real, d);
    }
    sg_homes_free(&hs);
    if (!n)
        sg_buf_printf(&b, ": none");
    sg_buf_append(&b, "", 1);
    *what = sg_buf_steal(&b);
    return in;
}

/* run_skill's cwd outside the agent's project: the skill would see that
 * folder, so it is the agent's Read of it, decided by the engine the hook
 * decides with: its policy file's rules (a deny or ask rule on anything
 * in the folder counts, as for a search of it), this skill's grants, the
 * permission program, a person (the attached TUI, else a terminal), else
 * refused. Every decision is an audit record. NULL: it may be shown; else
 * the tool error. */
/* The agent's policy file (the hook's, from the config: caller frees),
 * and the config's permission program into *program when asked. */
static char *agent_policy(char ***program)
{
    struct sg_config cfg;
    struct sg_diags d = {0};
    cleanup_free char *cfgpath = sg_config_default_path();
    if (sg_config_load(cfgpath, &cfg, &d) < 0)
        sg_config_free(&cfg);
    sg_diags_free(&d);
    char *policy = sg_hook_policy_path(&cfg);
    if (program)
        *program = sg_strv_dup(cfg.prompt_exec);
    sg_config_free(&cfg);
    return policy;
}

static json_t *cwd_asked(const struct sg_skill *sk, const struct sg_run_info *info,
                         const char *what, struct attach_ctx *a)
{
    char **program = NULL;
    cleanup_free char *policy = agent_policy(&program);
    struct sg_diags d = {0};
    char digest[SG_DIGEST_STRLEN] = "";
    if (sg_skill_digest(sk->root, digest, NULL) < 0)
        digest[0] = '\0';
    struct sg_perm_opts po = {.mode = SG_PERM_PROMPT, .policy_file = policy,
                              .skill = info->skill_name, .digest = digest,
                              .run_id = info->run_id, .timeout_s = 60, .program = program};
    cleanup_free char *dir = sg_sanitize_str(info->cwd, 0);
    struct sg_perm *perm = sg_perm_new(&po, &d);
    if (!perm) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("?");
        sg_diags_free(&d);
        sg_strv_free(program);
        return tool_error("run_skill's cwd %s is outside the agent's project (%s), and the "
                          "rules that decide it cannot be read: %s. Not run", dir, what, m);
    }
    sg_diags_free(&d);
    struct sg_lineprompt *lp = NULL;
    if (a->fe.fd >= 0)
        sg_perm_set_frontend(perm, attach_show, a);
    else if ((lp = sg_lineprompt_open()))
        sg_lineprompt_attach(lp, perm); /* else nobody to ask: refused */
    struct sg_preq *q = sg_xcalloc(1, sizeof *q);
    q->tool = SG_PT_WRITE; /* a reader's path (rules.h): its rules name it Read(...) */
    q->port = -1;
    q->run_option = true; /* a whole folder for the run: never the program's to decide */
    SG_PREQ_SET(q, agent_tool, "Read");
    SG_PREQ_SET(q, subject, info->cwd);
    SG_PREQ_SET(q, detail, "run_skill's cwd: the agent asks that the skill see this folder, "
                           "read-only, as its working folder; it is outside the agent's "
                           "project");
    /* what the folder holds is read too: a deny or ask rule on any of it
     * holds as for a search of the folder (rules.c: LS), before any allow */
    struct sg_preq *held = sg_xmalloc(sizeof *held);
    *held = *q;
    SG_PREQ_SET(held, agent_tool, "LS");
    char by[512];
    enum sg_effect lim = sg_perm_limits(perm, held, by, sizeof by);
    enum sg_decision dec = SG_DEC_DENY;
    a->decided = false;
    if (lim == SG_EFF_DENY) {
        sg_perm_record(perm, q, SG_DEC_DENY, by);
    } else if (sg_perm_request(perm, lim == SG_EFF_ASK ? held : q, check_decided, a, &dec) == 0) {
        const struct sg_loop_source src[] = {
            sg_perm_source(perm),
            {"attached TUI", attach_fds, attach_dispatch, attach_timeout, a},
        };
        while (!a->decided && !stop_requested)
            if (sg_loop_turn(src, SG_ARRAY_LEN(src), 1000) < 0)
                break;
        if (!a->decided)
            sg_perm_cancel_all(perm); /* the client went away: refused, and recorded */
        dec = a->decided ? a->decision : SG_DEC_DENY;
    }
    free(q), free(held);
    cleanup_free char *who = sg_sanitize_str(sg_perm_last_decided_by(perm), 0);
    sg_perm_free(perm); /* its records on disk */
    a->fe.perm = NULL;  /* the run's engine shows the next prompt */
    sg_lineprompt_close(lp);
    sg_strv_free(program);
    if (sg_decision_allows(dec))
        return NULL;
    cleanup_free char *cdir = sg_config_dir();
    cleanup_free char *where = policy ? sg_xstrdup(policy)
                                      : sg_xasprintf("%s/hook-policy.yaml", cdir ? cdir : "?");
    cleanup_free char *pol = sg_sanitize_str(where, 0);
    /* a deny rule or grant settles it: no allow is offered past it */
    bool ruled = sg_str_has_prefix(who, "rule ") || sg_str_has_prefix(who, "grant ");
    cleanup_free char *how = ruled ? sg_xstrdup("")
                                   : sg_xasprintf(", or have it allowed: a person in skillgate "
                                                  "tui --attach, or a rule Read(%s/**) in %s",
                                                  dir, pol);
    return tool_error("run_skill's cwd %s is outside the agent's project (%s). The skill "
                      "would see that folder, so it is a Read of it, and it was refused: %s. "
                      "Not run. Give a cwd inside the project%s",
                      dir, what, who[0] ? who : "denied", how);
}

/* run_skill's args name files the skill is then shown (named.h): each the
 * agent's Read, which its Read deny and ask rules (the hook's policy file)
 * decide as for the cwd. NULL: none limits them; else the tool error. */
static json_t *args_refused(const struct run_call *c, const struct sg_run_info *info)
{
    if (!c->nargs)
        return NULL;
    char **paths = NULL;
    size_t n = sg_hook_arg_paths(c->args, c->nargs, info->cwd, &paths);
    cleanup_free char *policy = agent_policy(NULL);
    struct sg_diags d = {0};
    json_t *res = NULL;
    struct sg_perm_opts po = {.mode = SG_PERM_DENY_ALL, .policy_file = policy,
                              .skill = info->skill_name, .run_id = info->run_id};
    struct sg_perm *perm = n ? sg_perm_new(&po, &d) : NULL;
    if (n && !perm) {
        res = tool_error("run_skill's args name files the skill would be shown, and the rules "
                         "that decide reading them cannot be read. Not run");
    } else if (perm) {
        char by[512];
        const char *which = NULL;
        int e = sg_hook_read_limits(perm, paths, n, by, sizeof by, &which);
        if (e == SG_EFF_DENY || e == SG_EFF_ASK) {
            cleanup_free char *w = sg_sanitize_str(which, 0), *b = sg_sanitize_str(by, 0);
            res = tool_error("run_skill's args name %s, which the skill would be shown: a Read "
                             "of it, which %s %s. Not run", w, b,
                             e == SG_EFF_DENY ? "denies" : "asks about (run it yourself with "
                                                           "skillgate run)");
        }
    }
    sg_diags_free(&d);
    if (perm)
        sg_perm_free(perm);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return res;
}

/* The run, and run_skill's result: the output, the trace's facts, what was
 * refused and how to allow it. */
static json_t *run_to_result(struct sg_runner *run, const struct run_call *c,
                             struct attach_ctx *a)
{
    struct sg_event_bus bus = {0};
    sg_bus_subscribe(&bus, attach_event, a);
    a->run = run;
    /* no TUI attached: no fds, and the output is read in the larger batches */
    const struct sg_loop_source src = {"attached TUI", a->fe.fd >= 0 ? attach_fds : NULL,
                                       attach_dispatch, attach_timeout, a};
    /* an attached TUI decides; otherwise a terminal if there is one; else deny */
    struct sg_runner_opts o = {.show = a->fe.fd >= 0 ? attach_show : NULL, .show_ctx = a,
                               .sources = &src, .nsources = 1, .otel_parent = c->parent};
    struct sg_runner_out out;
    struct sg_diags d = {0};
    json_t *res;
    if (sg_runner_run(run, &bus, &o, &out, &d) < 0) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("bad policy file");
        res = tool_error("not run: %s", m);
    } else {
        json_t *doc = out.doc;
        json_t *output;
        if (a->fork) { /* context: fork gives the caller its summary */
            const char *sum = a->results.len ? a->results.data : a->last ? a->last : "";
            cleanup_free char *ss = sg_sanitize_str(sum, SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB);
            output = json_string(ss);
        } else {
            output = kept(&a->out);
        }
        json_t *j = json_pack("{s:O, s:O, s:o, s:o, s:b, s:O, s:O, s:s?}", "status",
                              json_object_get(doc, "status"), "exit_code",
                              json_object_get(doc, "exit_code"), "output", output, "stderr",
                              kept(&a->err), "output_truncated",
                              a->out.dropped || a->err.dropped, "violations",
                              json_object_get(doc, "violation_summary"), "decisions",
                              json_object_get(doc, "decisions"), "trace", out.trace_path);
        json_object_set(j, "skill", json_object_get(doc, "skill_name"));
        json_object_set(j, "duration_ms", json_object_get(doc, "duration_ms"));
        json_object_set(j, "end_reason", json_object_get(doc, "end_reason"));
        if (json_object_get(doc, "limit_note")) /* a limit that stopped it, or it died near */
            json_object_set(j, "limit_note", json_object_get(doc, "limit_note"));
        if (out.res.end == SG_END_SETUP_FAILED && out.res.failed_step[0]) {
            /* where the sandbox could not be built, and why (a folder that
             * changed since it was asked about, a path another user owns) */
            cleanup_free char *step = sg_sanitize_str(out.res.failed_step, 0);
            json_object_set_new(j, "setup_failed_at", json_string(step));
        }
        /* what was refused, once each, and the exact way to allow it (refusals.h) */
        json_t *refused = json_object_get(doc, "refusals");
        json_object_set(j, "refusals", refused ? refused : json_array());
        if (json_array_size(refused)) { /* said in the text too: a model reads that */
            cleanup_free char *t = sg_refusals_text(refused, NULL); /* an agent's next call names them */
            json_object_set_new(j, "refusals_text", json_string(t));
        }
        res = tool_result(j, false);
        if (a->fe.fd >= 0) {
            char oc[160];
            snprintf(oc, sizeof oc, "%s, exit %d", json_string_value(json_object_get(doc, "status")),
                     out.res.exit_code);
            sg_attach_send(a->fe.fd, json_pack("{s:s, s:s, s:s?}", "type", "end", "outcome", oc,
                                           "trace", out.trace_path));
        }
        sg_runner_out_free(&out);
    }
    sg_diags_free(&d);
    return res;
}

static json_t *worker_run(const struct run_call *c)
{
    const char *path = c->path;
    json_t *err = NULL;
    struct sg_skill *sk = load_skill(path, &err);
    if (!sk)
        return err;
    /* the agent names the folder: one it wrote would grant itself what its
     * manifest declares. A skill the person does not keep runs only when
     * its manifest asks for nothing beyond its own folder (issue 35); a
     * program it runs stays in the same sandbox, so Bash is no grant here */
    cleanup_free char *beyond = kept_by_person(sk) ? sg_xstrdup("")
                                                    : sg_skill_grants_beyond(sk, false);
    if (beyond[0]) {
        cleanup_free char *clean = sg_sanitize_str(beyond, 0);
        json_t *e = tool_error("%s is not a skill you keep (~/.claude/skills, skill_dirs in "
                               "skillgate's config, an enabled plugin), and its manifest asks "
                               "for more than its own folder (%s): not run. Install it where "
                               "you keep skills, or run it yourself with skillgate run",
                               sk->display, clean);
        sg_skill_free(sk);
        return e;
    }
    if (sg_skill_has_errors(sk)) {
        json_t *e = tool_result(json_pack("{s:s, s:o}", "error",
                                          "the skill has errors: it was not run", "problems",
                                          sg_diags_to_json(&sk->diags)),
                                true);
        sg_skill_free(sk);
        return e;
    }
    struct sg_run_request rq = {.front = SG_FRONT_AGENT, .input = c->input,
                                .timeout_s = c->timeout, .prompt_timeout = 60,
                                .script = c->script, .args = c->args, .nargs = c->nargs,
                                .work_dir = c->cwd, .module = c->module, .env = c->env,
                                .nenv = c->nenv, .write = c->write, .nwrite = c->nwrite};
    struct sg_runner *run = NULL;
    const char *why = NULL;
    if (sg_runner_new(sk, &rq, &run, &why) != 0) {
        json_t *e = tool_error("%s: %s", sk->display, why ? why : "cannot be run");
        sg_skill_free(sk);
        return e;
    }
    const struct sg_run_info *info = sg_runner_info(run);
    struct attach_ctx a = {.fe.fd = sg_attach_connect(), .fork = sk->policy.fork_context,
                           .progress_fd = c->progress_fd, .timeout_s = info->timeout_s};
    sg_buf_init(&a.out, OUTPUT_KEPT);
    sg_buf_init(&a.err, OUTPUT_KEPT);
    sg_buf_init(&a.results, OUTPUT_KEPT);
    if (a.fe.fd >= 0)
        sg_attach_send(a.fe.fd, json_pack("{s:s, s:s, s:s}", "type", "hello", "skill",
                                       info->skill_name, "run_id", info->run_id));
    /* a cwd the agent names outside its project is a Read of that folder */
    cleanup_free char *what = NULL;
    json_t *res = c->cwd && !in_project(c, info->cwd, &what) ? cwd_asked(sk, info, what, &a)
                                                             : NULL;
    if (!res)
        res = args_refused(c, info);
    if (!res)
        res = run_to_result(run, c, &a);
    else if (a.fe.fd >= 0)
        sg_attach_send(a.fe.fd, json_pack("{s:s, s:s}", "type", "end", "outcome",
                                          "not run: refused before it started"));
    if (a.fe.fd >= 0)
        close(a.fe.fd);
    sg_buf_free(&a.out), sg_buf_free(&a.err), sg_buf_free(&a.results);
    free(a.last);
    sg_runner_free(run);
    sg_skill_free(sk);
    return res;
}

static void check_decided(void *ctx, enum sg_decision d)
{
    struct attach_ctx *a = ctx;
    a->decided = true;
    a->decision = d;
}

/* Is sk a skill the person keeps: found where the person keeps skills
 * (~/.claude/skills, config.yaml's skill_dirs, ~/.agents/skills,
 * ~/.openclaw/skills, enabled plugins), by its real folder? Never the
 * server's current folder's (project, nested, workspace skills): the agent
 * writes there. One discovery, capped as every discovery is. */
static bool kept_by_person(const struct sg_skill *sk)
{
    cleanup_free char *mine = realpath(sk->root, NULL);
    if (!mine)
        return false;
    struct sg_discover_opts o = {.defaults = true, .persons_only = true};
    struct sg_discovery d;
    sg_discover(&o, &d);
    bool kept = false;
    for (size_t i = 0; i < d.n && !kept; i++) {
        if (d.v[i].source == SG_SRC_PROJECT || d.v[i].source == SG_SRC_NESTED ||
            d.v[i].source == SG_SRC_WORKSPACE || d.v[i].source == SG_SRC_CLI)
            continue;
        cleanup_free char *real = realpath(d.v[i].skill->root, NULL);
        kept = real && !strcmp(real, mine);
    }
    sg_discovery_free(&d);
    return kept;
}

static json_t *worker_check(const char *path, const char *tool, const char *what)
{
    json_t *err = NULL;
    struct sg_skill *sk = load_skill(path, &err);
    if (!sk)
        return err;
    /* the agent names the folder: one it just wrote would allow itself
     * whatever its allowed-tools and declarations say (issue 35, item 10).
     * Any other folder is judged as no manifest at all: rules, grants and a
     * person decide (a low-risk tool is allowed, as without a skill). */
    bool kept = kept_by_person(sk);
    struct sg_policy none;
    sg_policy_init(&none);
    const struct sg_policy *pol = kept ? &sk->policy : &none;
    char digest[SG_DIGEST_STRLEN] = "";
    if (sg_skill_digest(sk->root, digest, NULL) < 0)
        digest[0] = '\0';
    struct attach_ctx a = {.fe.fd = sg_attach_connect()};
    const char *name = sk->name ? sk->name : sk->dirname;
    struct sg_perm_opts po = {.mode = SG_PERM_PROMPT, .skill = name, .digest = digest,
                              .run_id = "check", .timeout_s = 60};
    struct sg_diags d = {0};
    struct sg_perm *perm = sg_perm_new(&po, &d);
    if (!perm) {
        cleanup_free char *m = d.n ? sg_diag_format(&d.v[0]) : sg_xstrdup("?");
        sg_diags_free(&d);
        sg_policy_free(&none);
        sg_skill_free(sk);
        return tool_error("%s", m);
    }
    sg_diags_free(&d);
    struct sg_lineprompt *lp = NULL;
    if (a.fe.fd >= 0) {
        sg_perm_set_frontend(perm, attach_show, &a);
        sg_attach_send(a.fe.fd, json_pack("{s:s, s:s, s:s}", "type", "hello", "skill", name,
                                       "run_id", "permission check"));
    } else if ((lp = sg_lineprompt_open())) {
        sg_lineprompt_attach(lp, perm); /* else nobody to ask: denied */
    }
    enum sg_decision dec = SG_DEC_DENY;
    bool outright = false;
    int r = sg_check_tool_permission(perm, pol, tool, what, NULL, check_decided, &a, &dec,
                                 &outright);
    if (r == 0) { /* a person decides: the attached TUI or the terminal */
        const struct sg_loop_source src[] = {
            sg_perm_source(perm),
            {"attached TUI", attach_fds, attach_dispatch, attach_timeout, &a},
        };
        while (!a.decided && !stop_requested)
            if (sg_loop_turn(src, SG_ARRAY_LEN(src), 1000) < 0)
                break;
        dec = a.decided ? a.decision : SG_DEC_DENY;
    }
    const char *by = sg_perm_last_decided_by(perm);
    bool no_tool = outright && strstr(by, "not a known tool");
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "decision",
                          sg_decision_allows(dec) ? "allow" : "deny", "decided_by",
                          no_tool ? by : outright ? "allowed-tools" : by[0] ? by : "low-risk tool",
                          "reason",
                          no_tool ? "PermissionDenied: not a tool name (a known tool, or mcp__server__tool)"
                          : outright ? "PermissionDenied: the skill's allowed-tools do not list it"
                          : sg_decision_allows(dec) ? "allowed" : "denied",
                          "skill", name, "tool", tool);
    json_object_set_new(j, "manifest",
                        json_string(kept ? "used: a skill you keep"
                                         : "not used: not a skill found where you keep skills "
                                           "(~/.claude/skills, skill_dirs, ~/.agents/skills, "
                                           "~/.openclaw/skills, plugins), so its allowed-tools "
                                           "and declarations count for nothing"));
    if (a.fe.fd >= 0) {
        sg_attach_send(a.fe.fd, json_pack("{s:s, s:s}", "type", "end", "outcome",
                                       sg_decision_allows(dec) ? "allowed" : "denied"));
        close(a.fe.fd);
    }
    sg_perm_free(perm);
    sg_lineprompt_close(lp);
    sg_policy_free(&none);
    sg_skill_free(sk);
    return tool_result(j, false);
}

/* The worker's OpenTelemetry span for its call (MCP's semantic
 * conventions: "tools/call NAME", a server span), child of the client's
 * _meta.traceparent when it sent a valid one. The worker starts the
 * exporter itself (the server forks workers, and a fork has no exporter
 * thread); NULL when export is off. */
static struct sg_span *worker_span(const char *tool, const char *traceparent)
{
    char why[256];
    if (sg_runner_otel_start(why, sizeof why) <= 0) {
        if (sg_otel_off_why()) /* the server's stderr: its log */
            fprintf(stderr, "skillgate serve: OpenTelemetry export off: %s\n", sg_otel_off_why());
        return NULL;
    }
    struct sg_span_ctx parent = {0};
    if (traceparent)
        sg_traceparent_parse(traceparent, strlen(traceparent), &parent);
    cleanup_free char *name = sg_xasprintf("tools/call %s", tool);
    struct sg_span *sp = sg_span_begin(name, &parent, SG_SPAN_SERVER, 0);
    sg_span_cstr(sp, "mcp.method.name", "tools/call");
    sg_span_cstr(sp, "gen_ai.tool.name", tool);
    sg_span_cstr(sp, "gen_ai.operation.name", "execute_tool");
    return sp;
}

/* The call's span ends with its result (isError as its status); the
 * worker's spans get the end wait to leave before it exits. */
static void worker_span_end(struct sg_span *sp, json_t *r)
{
    if (!sp)
        return;
    bool err = json_is_true(json_object_get(r, "isError"));
    json_t *sc = json_object_get(r, "structuredContent");
    const char *dec = json_string_value(json_object_get(sc, "decision"));
    if (dec)
        sg_span_cstr(sp, "sandbox.decision", dec);
    if (json_string_value(json_object_get(sc, "status")))
        sg_span_cstr(sp, "sandbox.status", json_string_value(json_object_get(sc, "status")));
    sg_span_set_status(sp, err ? SG_STATUS_ERROR : SG_STATUS_UNSET, err ? "tool error" : NULL);
    sg_span_end(sp, 0);
    sg_otel_shutdown(SG_OTEL_END_WAIT_MS);
}

static int start_worker(struct server *s, json_t *id, const char *tool, json_t *args,
                        json_t *token, const char *traceparent)
{
    size_t slot = SG_MCP_MAX_WORKERS;
    for (size_t i = 0; i < SG_MCP_MAX_WORKERS; i++)
        if (!s->w[i].pid) {
            slot = i;
            break;
        }
    if (slot == SG_MCP_MAX_WORKERS)
        return -EBUSY;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return -errno;
    }
    if (pid == 0) {
        /* the protocol's stdin and stdout are the server's alone */
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        dup2(nul, 0), dup2(nul, 1);
        signal(SIGPIPE, SIG_IGN);
        struct sigaction sa = {.sa_handler = on_term};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL); /* notifications/cancelled */
        json_t *r;
        struct sg_span *sp = worker_span(tool, traceparent);
        if (!strcmp(tool, "run_skill")) {
            json_t *in = json_object_get(args, "input");
            cleanup_free char *input = !in          ? sg_xstrdup("{}")
                                       : json_is_string(in) ? sg_xstrdup(json_string_value(in))
                                                            : json_dumps(in, JSON_COMPACT | JSON_ENCODE_ANY);
            json_t *av = json_object_get(args, "args");
            size_t na = json_array_size(av);
            cleanup_free char **argv_ = sg_xcalloc(na + 1, sizeof *argv_);
            for (size_t i = 0; i < na; i++)
                argv_[i] = (char *)json_string_value(json_array_get(av, i));
            const char *env_[32], *write_[32];
            size_t ne = strings_of(json_object_get(args, "env"), env_, SG_ARRAY_LEN(env_));
            size_t nw = strings_of(json_object_get(args, "write"), write_, SG_ARRAY_LEN(write_));
            struct run_call rc = {
                .path = json_string_value(json_object_get(args, "skill")), .input = input,
                .timeout = json_integer_value(json_object_get(args, "timeout_seconds")),
                .script = json_string_value(json_object_get(args, "script")), .args = argv_,
                .nargs = na, .cwd = json_string_value(json_object_get(args, "cwd")),
                .module = json_string_value(json_object_get(args, "module")), .env = env_,
                .nenv = ne, .write = write_, .nwrite = nw, .progress_fd = token ? p[1] : -1,
                .parent = sg_span_context(sp), .from_roots = s->roots_state == ROOTS_ANSWERED,
                .roots = s->roots, .nroots = s->nroots};
            r = worker_run(&rc);
        } else {
            r = worker_check(json_string_value(json_object_get(args, "skill")),
                             json_string_value(json_object_get(args, "tool")),
                             json_string_value(json_object_get(args, "description")));
        }
        /* the answer first: the client never waits for the collector */
        json_t *keep = json_incref(r);
        emit_result(p[1], r);
        close(p[1]);
        worker_span_end(sp, keep);
        json_decref(keep);
        _exit(0);
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    s->w[slot] = (struct worker){.pid = pid, .fd = p[0], .id = json_incref(id),
                                 .token = token ? json_incref(token) : NULL};
    sg_buf_init(&s->w[slot].out, 8u << 20);
    return 0;
}

static void reap_late(struct server *s)
{
    for (size_t i = 0; i < s->nlate;)
        if (waitpid(s->late[i], NULL, WNOHANG) != 0)
            s->late[i] = s->late[--s->nlate];
        else
            i++;
}

static void finish_worker(struct server *s, struct worker *w)
{
    int st = 0;
    json_error_t je;
    json_t *r = w->out.data ? json_loadb(w->out.data, w->out.len, 0, &je) : NULL;
    reap_late(s);
    if (!r || waitpid(w->pid, &st, WNOHANG) != 0) {
        if (!r) /* no answer: its end says why */
            waitpid(w->pid, &st, 0);
    } else if (s->nlate < SG_ARRAY_LEN(s->late)) {
        s->late[s->nlate++] = w->pid;
    } else {
        waitpid(w->pid, &st, 0);
    }
    if (w->cancelled) /* the client took it back: no answer (its records are written) */
        json_decref(r);
    else if (r)
        reply(s, w->id, r);
    else
        reply(s, w->id, tool_error("the worker failed (%s %d) before it could answer",
                                   WIFSIGNALED(st) ? "signal" : "exit",
                                   WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)));
    close(w->fd);
    json_decref(w->id);
    json_decref(w->token);
    sg_buf_free(&w->out);
    memset(w, 0, sizeof *w);
}

static void queued_free(struct queued *c)
{
    json_decref(c->id), json_decref(c->args), json_decref(c->token);
    free(c->traceparent);
    memset(c, 0, sizeof *c);
}

/* Workers are free: the oldest waiting calls start. */
static void start_queued(struct server *s)
{
    while (s->nq && s->roots_state != ROOTS_WAITING) {
        struct queued *c = &s->q[s->qhead];
        int r = start_worker(s, c->id, c->run ? "run_skill" : "check_tool_permission", c->args,
                             c->token, c->traceparent);
        if (r == -EBUSY)
            return;
        if (r < 0)
            reply(s, c->id, tool_error("cannot start it now: %s", strerror(-r)));
        queued_free(c);
        s->qhead = (s->qhead + 1) % SG_MCP_MAX_QUEUED;
        s->nq--;
    }
}

/* ---- the client's roots: the agent's project ---- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The absolute path a root's file:// URI names (RFC 8089: no host, or
 * localhost; percent escapes decoded), or NULL for any other URI, one with
 * a query or a fragment, a NUL, or a path longer than PATH_MAX: such a
 * root is no part of the project (a cwd there is asked). Caller frees. */
static char *file_uri_path(const char *uri)
{
    if (strncasecmp(uri, "file://", 7))
        return NULL;
    const char *p = uri + 7;
    if (!strncasecmp(p, "localhost/", 10))
        p += 9;
    size_t n = strlen(p);
    if (p[0] != '/' || strpbrk(p, "?#") || n >= PATH_MAX)
        return NULL;
    char *out = sg_xmalloc(n + 1), *o = out;
    for (; *p; p++) {
        int hi = *p == '%' ? hex_digit(p[1]) : 0, lo = hi >= 0 && *p == '%' ? hex_digit(p[2]) : 0;
        if (*p == '%' && (hi < 0 || lo < 0 || (hi == 0 && lo == 0))) {
            free(out);
            return NULL;
        }
        *o++ = *p == '%' ? (char)(hi * 16 + lo) : *p;
        p += *p == '%' ? 2 : 0;
    }
    *o = '\0';
    return out;
}

static void roots_clear(struct server *s)
{
    for (size_t i = 0; i < s->nroots; i++)
        free(s->roots[i]);
    s->nroots = 0;
}

/* roots/list to the client; run_skill calls with a cwd wait for it. */
static void roots_ask(struct server *s)
{
    char id[40];
    snprintf(id, sizeof id, "skillgate-roots-%u", ++s->roots_asked);
    send_msg(s, json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", id, "method", "roots/list"));
    s->roots_state = ROOTS_WAITING;
    s->roots_deadline = mono_ms() + SG_MCP_ROOTS_WAIT_MS;
}

/* A response to us: the answer to our latest roots/list (an older one's,
 * asked before the roots changed, is ignored). An error answer, or none in
 * time, leaves the server's folder the project; an answer that is no list
 * of roots is an empty one (nothing is the project: every cwd is asked). */
static void roots_answered(struct server *s, json_t *m)
{
    char id[40];
    snprintf(id, sizeof id, "skillgate-roots-%u", s->roots_asked);
    const char *got = json_string_value(json_object_get(m, "id"));
    if (!s->roots_asked || !got || strcmp(got, id))
        return;
    roots_clear(s);
    json_t *res = json_object_get(m, "result");
    s->roots_state = res ? ROOTS_ANSWERED : ROOTS_NONE;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(res, "roots"), i, r)
    {
        const char *uri = json_string_value(json_object_get(r, "uri"));
        char *path = uri ? file_uri_path(uri) : NULL;
        if (path && s->nroots < SG_MCP_MAX_ROOTS)
            s->roots[s->nroots++] = path;
        else
            free(path);
    }
    start_queued(s);
}

/* Must this call wait for the client's roots before it starts? A
 * run_skill that names a cwd, while they are asked (or first needed). */
static bool wait_for_roots(struct server *s, bool run, json_t *args)
{
    if (!run || !json_object_get(args, "cwd") || !s->client_roots)
        return false;
    if (s->roots_state == ROOTS_UNASKED)
        roots_ask(s);
    return s->roots_state == ROOTS_WAITING;
}

/* ---- requests ---- */

static bool str_arg(json_t *args, const char *key, bool required, const char **out)
{
    json_t *v = json_object_get(args, key);
    *out = json_string_value(v);
    return v ? json_is_string(v) && **out : !required;
}

/* An array of at most max strings (absolute paths with abs). */
static bool strings_ok(json_t *v, size_t max, bool abs)
{
    if (!json_is_array(v) || json_array_size(v) > max)
        return false;
    size_t i;
    json_t *a;
    json_array_foreach(v, i, a)
    {
        if (!json_is_string(a) || (abs && json_string_value(a)[0] != '/'))
            return false;
    }
    return true;
}

/* run_skill's script or module, args (strings, only with one of them),
 * cwd and write (absolute), env (names): as the schema says. */
static bool script_args_ok(json_t *args)
{
    json_t *sc = json_object_get(args, "script"), *av = json_object_get(args, "args"),
           *cwd = json_object_get(args, "cwd"), *mod = json_object_get(args, "module"),
           *env = json_object_get(args, "env"), *wr = json_object_get(args, "write");
    if ((sc && !json_is_string(sc)) || (mod && !json_is_string(mod)) ||
        (cwd && (!json_is_string(cwd) || json_string_value(cwd)[0] != '/')))
        return false;
    if ((env && !strings_ok(env, 32, false)) || (wr && !strings_ok(wr, 32, true)))
        return false;
    /* args go to the script, the module, or (SkillSandbox's meaning) the
     * entrypoint after the manifest's own */
    return !av || strings_ok(av, 256, false);
}

/* SkillSandbox's run_skill arguments: skill_dir is skill (the same checks
 * follow); dry_run false is its default, and dry_run true, which there runs
 * the skill with its network, filesystem and seccomp layers off, is
 * refused (no call turns a layer off). NULL and *args set to a copy to use
 * (the caller decrefs it), else a tool error. */
static json_t *skillsandbox_aliases(json_t **args)
{
    json_t *dir = json_object_get(*args, "skill_dir"), *dry = json_object_get(*args, "dry_run");
    json_t *skill = json_object_get(*args, "skill");
    if (dir && !json_is_string(dir))
        return tool_error("run_skill's skill_dir (SkillSandbox's name for skill) must be a "
                          "string");
    if (dir && skill && !json_equal(dir, skill))
        return tool_error("run_skill got both skill and skill_dir (SkillSandbox's name for "
                          "it), naming different skills: give one");
    if (dry && !json_is_boolean(dry))
        return tool_error("run_skill's dry_run must be true or false");
    if (json_is_true(dry))
        return tool_error("run_skill's dry_run: true is refused. SkillSandbox's dry run still "
                          "runs the skill, with its network, filesystem and seccomp layers "
                          "off; skillgate turns no layer off for a call. Leave dry_run out to "
                          "run it in the whole sandbox, or call inspect_skill to see what it "
                          "would get without running it");
    *args = json_copy(*args);
    if (dir) {
        json_object_set(*args, "skill", dir);
        json_object_del(*args, "skill_dir");
    }
    json_object_del(*args, "dry_run");
    return NULL;
}

static void tools_call(struct server *s, json_t *id, json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    if (!name) {
        reply_error(s, id, E_PARAMS, "tools/call needs params.name");
        return;
    }
    if (args && !json_is_object(args)) {
        reply_error(s, id, E_PARAMS, "arguments must be an object");
        return;
    }
    json_t *none = json_object();
    if (!args)
        args = none;
    const char *a, *b, *c;
    /* no argument beyond the schema: nothing can weaken enforcement */
    static const char *const allowed[][12] = {{"list_skills", "directory"},
                                              {"validate_skill", "path"},
                                              {"inspect_skill", "path"},
                                              {"run_skill", "skill", "input", "timeout_seconds",
                                               "script", "args", "cwd", "module", "env",
                                               "write", "skill_dir", "dry_run"},
                                             {"check_tool_permission", "skill", "tool",
                                              "description"}};
    int which = -1;
    for (int i = 0; i < (int)SG_ARRAY_LEN(allowed); i++)
        if (!strcmp(name, allowed[i][0]))
            which = i;
    if (which < 0) {
        cleanup_free char *m = sg_xasprintf("Unknown tool: %s", name);
        reply_error(s, id, E_PARAMS, m);
        json_decref(none);
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        bool ok = false;
        for (int k = 1; k < 12 && allowed[which][k]; k++)
            ok |= !strcmp(key, allowed[which][k]);
        if (!ok) { /* a tool result with isError: a model can correct itself */
            reply(s, id, tool_error("%s takes no argument '%s' (see its inputSchema)", name, key));
            json_decref(none);
            return;
        }
    }
    bool ok = true;
    json_t *aliased = NULL;
    if (!strcmp(name, "run_skill")) {
        json_t *a2 = args, *err = skillsandbox_aliases(&a2);
        if (err) {
            reply(s, id, err);
            json_decref(none);
            return;
        }
        args = aliased = a2;
    }
    if (!strcmp(name, "list_skills")) {
        if ((ok = str_arg(args, "directory", false, &a)))
            reply(s, id, do_list(a));
    } else if (!strcmp(name, "validate_skill")) {
        if ((ok = str_arg(args, "path", true, &a)))
            reply(s, id, do_validate(a));
    } else if (!strcmp(name, "inspect_skill")) {
        if ((ok = str_arg(args, "path", true, &a)))
            reply(s, id, do_inspect(a));
    } else {
        bool run = !strcmp(name, "run_skill");
        json_t *to = json_object_get(args, "timeout_seconds");
        ok = run ? str_arg(args, "skill", true, &a) &&
                       (!to || (json_is_integer(to) && json_integer_value(to) >= 1 &&
                                json_integer_value(to) <= 86400))
                 : str_arg(args, "skill", true, &a) && str_arg(args, "tool", true, &b) &&
                       str_arg(args, "description", true, &c);
        if (ok && run)
            ok = script_args_ok(args);
        json_t *in = json_object_get(args, "input");
        if (ok && run && in && json_is_string(in)) {
            json_error_t je;
            json_t *parsed = json_loads(json_string_value(in), JSON_DECODE_ANY, &je);
            ok = parsed != NULL;
            json_decref(parsed);
        }
        if (ok) {
            json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
            if (token && !json_is_string(token) && !json_is_integer(token))
                token = NULL;
            /* W3C trace context in _meta, as MCP's OpenTelemetry conventions
             * carry it: read by sg_traceparent_parse (its size capped) */
            const char *tp =
                json_string_value(json_object_get(json_object_get(params, "_meta"), "traceparent"));
            /* a cwd is judged against the client's roots: it waits for them */
            int r = wait_for_roots(s, run, args) ? -EBUSY
                                                 : start_worker(s, id, name, args,
                                                                run ? token : NULL, tp);
            if (r == -EBUSY && s->nq < SG_MCP_MAX_QUEUED) {
                s->q[(s->qhead + s->nq++) % SG_MCP_MAX_QUEUED] = (struct queued){
                    .id = json_incref(id), .args = json_incref(args),
                    .token = run && token ? json_incref(token) : NULL, .run = run,
                    .traceparent = tp ? sg_xstrdup(tp) : NULL};
                r = 0;
            }
            if (r == -EBUSY)
                reply(s, id, tool_error("cannot start it now: too many at once (%d running, "
                                        "%d waiting)",
                                        SG_MCP_MAX_WORKERS, SG_MCP_MAX_QUEUED));
            else if (r < 0)
                reply(s, id, tool_error("cannot start it now: %s", strerror(-r)));
        }
    }
    if (!ok)
        reply(s, id, tool_error("invalid arguments for %s (see its inputSchema)", name));
    json_decref(aliased);
    json_decref(none);
}

static void add_meta(json_t *tool, const char *title, int ro, int destr, int idem, int open,
                     json_t *out_schema)
{
    json_object_set_new(tool, "title", json_string(title));
    json_object_set_new(tool, "outputSchema", out_schema);
    json_object_set_new(tool, "annotations",
                        json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", title, "readOnlyHint", ro,
                                  "destructiveHint", destr, "idempotentHint", idem,
                                  "openWorldHint", open));
}

static json_t *tools_list(void)
{
    json_t *tools = json_array();
    json_error_t je;
#define X(nm, desc, schema)                                                                   \
    json_array_append_new(tools, json_pack("{s:s, s:s, s:o}", "name", #nm, "description", desc, \
                                           "inputSchema", json_loads(schema, 0, &je)));
    MCP_TOOLS(X)
#undef X
    size_t i = 0;
#define X(nm, title, ro, destr, idem, open, out)                                               \
    add_meta(json_array_get(tools, i++), title, ro, destr, idem, open, json_loads(out, 0, &je));
    MCP_TOOL_META(X)
#undef X
    return json_pack("{s:o}", "tools", tools);
}

static void handle(struct server *s, const char *line, size_t len)
{
    json_error_t je;
    json_t *m = json_loadb(line, len, JSON_DECODE_ANY, &je);
    if (!m) {
        cleanup_free char *msg = sg_xasprintf("Parse error: %s", je.text);
        reply_error(s, NULL, E_PARSE, msg);
        return;
    }
    json_t *id = json_object_get(m, "id");
    const char *method = json_string_value(json_object_get(m, "method"));
    const char *ver = json_string_value(json_object_get(m, "jsonrpc"));
    if (!json_is_object(m) || !ver || strcmp(ver, "2.0") ||
        (id && !json_is_string(id) && !json_is_integer(id))) {
        reply_error(s, json_is_object(m) && (json_is_string(id) || json_is_integer(id)) ? id : NULL,
                    E_REQUEST, json_is_array(m) ? "Invalid Request: batches are not supported"
                                                : "Invalid Request: not a JSON-RPC 2.0 message");
        json_decref(m);
        return;
    }
    json_t *mv = json_object_get(m, "method");
    if (mv && !method) { /* a method that is no string: no request at all */
        reply_error(s, json_is_string(id) || json_is_integer(id) ? id : NULL, E_REQUEST,
                    "Invalid Request: method must be a string");
        json_decref(m);
        return;
    }
    if (!method) { /* a response to us (roots/list's, else ignored); neither: refused */
        if (!json_object_get(m, "result") && !json_object_get(m, "error"))
            reply_error(s, id, E_REQUEST, "Invalid Request: no method, result or error");
        else
            roots_answered(s, m);
        json_decref(m);
        return;
    }
    json_t *params = json_object_get(m, "params");
    if (!id) { /* notifications need no answer; cancelled stops the run it names */
        /* the roots, once the client is ready for our requests, and anew
         * when they change (an answer to an older ask is then ignored) */
        if (s->client_roots && s->initialized &&
            ((!strcmp(method, "notifications/initialized") && s->roots_state == ROOTS_UNASKED) ||
             !strcmp(method, "notifications/roots/list_changed")))
            roots_ask(s);
        json_t *rid = json_object_get(params, "requestId");
        for (size_t i = 0; rid && !strcmp(method, "notifications/cancelled") &&
                           i < SG_MCP_MAX_WORKERS; i++)
            if (s->w[i].pid && !s->w[i].cancelled && json_equal(s->w[i].id, rid)) {
                s->w[i].cancelled = true;
                kill(s->w[i].pid, SIGUSR1);
            }
        /* one still waiting is dropped: it never ran, and gets no answer */
        for (size_t i = 0, k = 0; rid && !strcmp(method, "notifications/cancelled") && i < s->nq;
             i++) {
            struct queued *c = &s->q[(s->qhead + i) % SG_MCP_MAX_QUEUED];
            if (json_equal(c->id, rid))
                queued_free(c);
            else
                s->q[(s->qhead + k++) % SG_MCP_MAX_QUEUED] = *c;
            if (i + 1 == s->nq)
                s->nq = k;
        }
        json_decref(m);
        return;
    }
    /* the lifecycle: initialize once, first; only ping before it */
    if (!strcmp(method, "initialize") && s->initialized) {
        reply_error(s, id, E_REQUEST, "Invalid Request: already initialized");
        json_decref(m);
        return;
    }
    if (strcmp(method, "initialize") && strcmp(method, "ping") && !s->initialized) {
        reply_error(s, id, E_REQUEST, "Invalid Request: initialize first");
        json_decref(m);
        return;
    }
    if (!strcmp(method, "initialize")) {
        s->initialized = true;
        s->client_roots =
            json_is_object(json_object_get(json_object_get(params, "capabilities"), "roots"));
        const char *want = json_string_value(json_object_get(params, "protocolVersion"));
        const char *ver_ok = PROTOCOL_LATEST;
        for (size_t i = 0; want && i < SG_ARRAY_LEN(protocols); i++)
            if (!strcmp(want, protocols[i]))
                ver_ok = protocols[i];
        reply(s, id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
                               ver_ok, "capabilities", "tools", "listChanged", 0, "serverInfo",
                               "name", "skillgate", "title", "skillgate", "version", SG_VERSION,
                               "instructions",
                               "Run agent skills through run_skill: each runs in skillgate's "
                               "sandbox, and what its manifest does not declare is denied or "
                               "asked of a person. Use check_tool_permission before running a "
                               "tool yourself for an instruction-only skill."));
    } else if (!strcmp(method, "ping")) {
        reply(s, id, json_object());
    } else if (!strcmp(method, "tools/list")) {
        reply(s, id, tools_list());
    } else if (!strcmp(method, "tools/call")) {
        if (params && !json_is_object(params))
            reply_error(s, id, E_PARAMS, "params must be an object");
        else
            tools_call(s, id, params);
    } else {
        cleanup_free char *msg = sg_xasprintf("Method not found: %s", method);
        reply_error(s, id, E_METHOD, msg);
    }
    json_decref(m);
}

/* Bytes from stdin: whole lines are messages; a line over the cap is
 * refused whole (one error) and the server carries on. */
static int read_input(struct server *s)
{
    ssize_t n = read(s->in, s->buf + s->len, SG_MCP_MESSAGE_MAX + 1 - s->len);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : -1;
    if (n == 0)
        return -1;
    s->len += (size_t)n;
    char *start = s->buf, *nl;
    while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf)))) {
        size_t l = (size_t)(nl - start);
        if (s->discarding)
            s->discarding = false;
        else if (l && start[strspn(start, " \t\r")] != '\n')
            handle(s, start, l); /* blank lines are no messages */
        start = nl + 1;
    }
    size_t left = s->len - (size_t)(start - s->buf);
    memmove(s->buf, start, left);
    s->len = left;
    if (s->len > SG_MCP_MESSAGE_MAX) {
        if (!s->discarding)
            reply_error(s, NULL, E_REQUEST, "Invalid Request: message too large (over 4 MiB)");
        s->discarding = true;
        s->len = 0;
    }
    return 0;
}

/* The server's loop: its workers' result pipes, then the client's stdin. */
static size_t workers_fds(void *c, struct pollfd *p, size_t max)
{
    struct server *s = c;
    size_t n = 0;
    for (size_t i = 0; i < SG_MCP_MAX_WORKERS && n < max; i++)
        if (s->w[i].pid)
            p[n++] = (struct pollfd){.fd = s->w[i].fd, .events = POLLIN};
    return n;
}

/* Whole lines before the result are progress: notifications/progress with
 * the client's token (the result itself ends without a newline). */
static void forward_progress(struct server *s, struct worker *w)
{
    char *nl;
    while (w->out.data && (nl = memchr(w->out.data, '\n', w->out.len))) {
        size_t l = (size_t)(nl - w->out.data);
        json_t *m = json_loadb(w->out.data, l, 0, NULL);
        json_t *p = json_object_get(m, "progress");
        if (p && w->token && !w->cancelled) {
            json_object_set(p, "progressToken", w->token);
            send_msg(s, json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
                                  "notifications/progress", "params", p));
        }
        json_decref(m);
        memmove(w->out.data, nl + 1, w->out.len - l - 1);
        w->out.len -= l + 1;
    }
}

static void workers_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct server *s = c;
    for (size_t k = 0; k < n; k++) {
        if (!p[k].revents)
            continue;
        for (size_t i = 0; i < SG_MCP_MAX_WORKERS; i++) {
            struct worker *w = &s->w[i];
            if (!w->pid || w->fd != p[k].fd)
                continue;
            char buf[65536];
            ssize_t r = read(w->fd, buf, sizeof buf);
            if (r > 0) {
                sg_buf_append(&w->out, buf, (size_t)r);
                forward_progress(s, w);
            } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                finish_worker(s, w);
                start_queued(s);
            }
            break;
        }
    }
}

static size_t input_fds(void *c, struct pollfd *p, size_t max)
{
    struct server *s = c;
    if (!s->open_in || !max)
        return 0;
    p[0] = (struct pollfd){.fd = s->in, .events = POLLIN};
    return 1;
}

static void input_dispatch(void *c, const struct pollfd *p, size_t n)
{
    struct server *s = c;
    if (n && p[0].revents && read_input(s) < 0)
        s->open_in = false;
    if (s->roots_state == ROOTS_WAITING && mono_ms() >= s->roots_deadline) {
        s->roots_state = ROOTS_NONE; /* no answer in time: the server's folder */
        start_queued(s);
    }
}

/* The wait for the client's roots ends by itself. */
static int input_timeout(void *c)
{
    struct server *s = c;
    if (s->roots_state != ROOTS_WAITING)
        return -1;
    int64_t left = s->roots_deadline - mono_ms();
    return left <= 0 ? 0 : (int)left;
}

int sg_mcp_serve(int in, int out)
{
    struct server s = {.in = in, .out = out, .open_in = true};
    s.buf = sg_xmalloc(SG_MCP_MESSAGE_MAX + 1);
    signal(SIGPIPE, SIG_IGN);
    fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
    const struct sg_loop_source src[] = {
        {"workers", workers_fds, workers_dispatch, NULL, &s},
        {"client", input_fds, input_dispatch, input_timeout, &s},
    };
    while (s.open_in)
        if (sg_loop_turn(src, SG_ARRAY_LEN(src), -1) < 0)
            break;
    /* stdin closed: the client is gone, so are its runs; each is stopped and
     * still leaves its trace and audit record (10 s at most, then killed) */
    for (size_t i = 0; i < SG_MCP_MAX_WORKERS; i++)
        if (s.w[i].pid)
            kill(s.w[i].pid, SIGTERM);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < SG_MCP_MAX_WORKERS; i++) {
        if (!s.w[i].pid)
            continue;
        for (;;) {
            if (waitpid(s.w[i].pid, NULL, WNOHANG) != 0)
                break;
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - t0.tv_sec >= 10) {
                kill(s.w[i].pid, SIGKILL);
                waitpid(s.w[i].pid, NULL, 0);
                break;
            }
            usleep(20000);
        }
        close(s.w[i].fd);
        json_decref(s.w[i].id);
        sg_buf_free(&s.w[i].out);
    }
    for (size_t i = 0; i < s.nlate; i++) /* each within its end wait, or killed */
        for (int k = 0;; k++) {
            if (waitpid(s.late[i], NULL, WNOHANG) != 0)
                break;
            if (k == 150) {
                kill(s.late[i], SIGKILL);
                waitpid(s.late[i], NULL, 0);
                break;
            }
            usleep(20000);
        }
    while (s.nq) { /* the client is gone: what waited never runs */
        queued_free(&s.q[s.qhead]);
        s.qhead = (s.qhead + 1) % SG_MCP_MAX_QUEUED;
        s.nq--;
    }
    roots_clear(&s);
    free(s.buf);
    return 0;
}
