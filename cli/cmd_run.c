/* skillgate run: a skill under the sandbox, events live, a trace at the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "audit.h"
#include "cli.h"
#include "homes.h"
#include "leftover.h"
#include "unshown.h"
#include "stopsig.h"
#include "runner.h"
#include "events.h"
#include "execprompt.h"
#include "refusals.h"
#include "parse.h"
#include "sanitize.h"
#include "skill.h"
#include "util.h"
#include "wrap.h"

extern char **environ;

/* A flood of identical events (a million refused mount calls: same kind,
 * message and data) is printed once, then counted: "repeated N more times" follows when the slot is
 * reused, every second while it goes on, and at the end. Every event is in
 * the trace's counts (violation_summary) either way. */
#define REPEAT_SLOTS 32
struct repeat {
    enum sg_event_kind kind;
    char *msg, *data;
    size_t len;
    unsigned long long more, told;
    int64_t last_ms, told_ms;
};

struct out_ctx {
    struct repeat rep[REPEAT_SLOTS];
    size_t nrep, nextrep;
    bool watch, json;
    bool tty_out, tty_err;
    bool copied; /* skillgate wrap: the output reached ours unchanged already */
    size_t blocked;
    /* context: fork: only the summary goes to the caller */
    bool fork;
    struct sg_buf results; /* "Result: ..." lines */
    char *last;            /* else the last stdout line */
    /* where the skill's ports were published, said again at the end */
    struct published {
        int port, host;
    } published[32];
    size_t npublished, published_more;
    struct sg_leftover left; /* caches and system-folder writes, one line at the end */
    bool no_terminal_note; /* a script given no input, from a terminal: said if it fails */
    const struct sg_skill *sk; /* for what its words name (unshown.h) */
};

/* Default mode: the skill's output as if it ran directly (raw bytes into a
 * pipe or file; sanitized lines on a terminal). */
static void print_plain(struct out_ctx *o, const struct sg_event *ev)
{
    if (o->fork && ev->kind == SG_EV_STDOUT) {
        static const char tag[] = "Result:";
        if (ev->message_len >= sizeof tag - 1 && !memcmp(ev->message, tag, sizeof tag - 1)) {
            const char *v = ev->message + sizeof tag - 1;
            size_t n = ev->message_len - (sizeof tag - 1);
            while (n && *v == ' ')
                v++, n--;
            sg_buf_append(&o->results, v, n);
            sg_buf_append(&o->results, "\n", 1);
        }
        free(o->last);
        o->last = sg_xstrndup(ev->message, ev->message_len);
        return; /* the full output stays in the trace */
    }
    if (ev->kind != SG_EV_STDOUT)
        fflush(stdout); /* what came before a stderr line or a prompt is shown before it */
    if ((ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR) && o->copied)
        return;
    if (ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR) {
        bool err = ev->kind == SG_EV_STDERR;
        FILE *f = err ? stderr : stdout;
        if (err ? o->tty_err : o->tty_out) {
            /* colours as colours where the terminal shows them; all else escaped */
            cleanup_free char *s =
                sg_color(f) ? sg_sanitize_colour(ev->message, ev->message_len, SG_SAN_KEEP_TAB)
                            : sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
            fprintf(f, "%s\n", s);
        } else {
            fwrite(ev->message, 1, ev->message_len, f);
            fputc('\n', f);
        }
        return;
    }
    /* where a page the skill serves is: the person's browser goes there;
     * which of the files the person named the skill sees */
    if (ev->kind == SG_EV_PORT_PUBLISHED || ev->kind == SG_EV_PATH_NAMED) {
        cleanup_free char *s = sg_sanitize(ev->message, ev->message_len, 0);
        fprintf(stderr, "skillgate: %s\n", s);
        return;
    }
    /* a write the private views took is no enforcement, but a person must
     * learn that the file the skill reports never reached this machine:
     * once, at the end, unless it is in a persistence or credential place */
    if (ev->kind == SG_EV_WRITE_DISCARDED && json_is_true(json_object_get(ev->data, "kept")))
        return; /* the skill's own home's cache, profile: in the trace, not on every run */
    if (sg_leftover_take(&o->left, ev)) {
        o->blocked += sg_event_severity(ev->kind) >= 2;
        return;
    }
    if (sg_event_severity(ev->kind) >= 2 || ev->kind == SG_EV_WRITE_DISCARDED) {
        o->blocked += sg_event_severity(ev->kind) >= 2;
        cleanup_free char *s = sg_sanitize(ev->message, ev->message_len, 0);
        /* an allowed host this machine could not reach was not blocked */
        bool upstream = json_is_true(json_object_get(ev->data, "upstream_failed"));
        fprintf(stderr, "skillgate: %s: %s\n", upstream ? "network" : sg_event_name(ev->kind),
                s);
    }
}

static void print_watch(struct out_ctx *o, const struct sg_event *ev)
{
    char clock[16];
    sg_format_clock(ev->wall_ms, clock);
    cleanup_free char *s = sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
    bool color = o->tty_out && sg_color(stdout);
    int sev = sg_event_severity(ev->kind);
    const char *c = !color ? "" : sev >= 3 ? "\033[1;31m" : sev == 2 ? "\033[33m" : sev == 1 ? "\033[36m" : "";
    printf("[%s] %s%-8s%s %s\n", clock, c, sg_event_label(ev->kind), color && *c ? "\033[0m" : "", s);
    if (sev >= 2)
        o->blocked++;
}

static void print_event(struct out_ctx *o, const struct sg_event *ev);
static void print_json(struct out_ctx *o, const struct sg_event *ev);

/* Each published port, for the end of the run. */
static void published_sink(void *ctx, const struct sg_event *ev)
{
    struct out_ctx *o = ctx;
    if (ev->kind != SG_EV_PORT_PUBLISHED)
        return;
    json_int_t port = json_integer_value(json_object_get(ev->data, "port"));
    json_int_t host = json_integer_value(json_object_get(ev->data, "host_port"));
    if (o->npublished < SG_ARRAY_LEN(o->published))
        o->published[o->npublished++] = (struct published){(int)port, (int)host};
    else
        o->published_more++;
}

/* Say how many more times r came since it was last said. */
static void tell_repeats(struct out_ctx *o, struct repeat *r, int64_t now)
{
    unsigned long long n = r->more - r->told;
    if (!n)
        return;
    cleanup_free char *text = sg_xasprintf("%.*s (repeated %llu more time%s)", (int)r->len,
                                           r->msg, n, n == 1 ? "" : "s");
    /* the event's own data (its reason, its address), and how many more */
    json_t *data = r->data && *r->data ? json_loads(r->data, 0, NULL) : NULL;
    if (!json_is_object(data)) {
        json_decref(data);
        data = json_object();
    }
    json_object_set_new(data, "repeated", json_integer((json_int_t)n));
    json_object_set_new(data, "repeated_total", json_integer((json_int_t)r->more));
    struct sg_event ev = {.kind = r->kind, .message = text, .message_len = strlen(text),
                          .wall_ms = r->last_ms, .data = data};
    r->told = r->more;
    r->told_ms = now;
    print_event(o, &ev);
    json_decref(ev.data);
}

/* true: ev repeats one printed already (same kind, message and data), and
 * is counted instead */
static bool repeats(struct out_ctx *o, const struct sg_event *ev)
{
    if (ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR)
        return false;
    cleanup_free char *data =
        ev->data ? json_dumps(ev->data, JSON_COMPACT | JSON_SORT_KEYS) : sg_xstrdup("");
    for (size_t i = 0; i < o->nrep; i++) {
        struct repeat *r = &o->rep[i];
        if (r->kind == ev->kind && r->len == ev->message_len &&
            !memcmp(r->msg, ev->message, r->len) && !strcmp(r->data ? r->data : "", data ? data : "")) {
            r->more++;
            r->last_ms = ev->wall_ms;
            if (ev->wall_ms - r->told_ms >= 1000)
                tell_repeats(o, r, ev->wall_ms);
            return true;
        }
    }
    struct repeat *r = &o->rep[o->nrep < REPEAT_SLOTS ? o->nrep++ : o->nextrep++ % REPEAT_SLOTS];
    tell_repeats(o, r, ev->wall_ms); /* what the slot held before */
    free(r->msg);
    free(r->data);
    *r = (struct repeat){.kind = ev->kind, .msg = sg_xstrndup(ev->message, ev->message_len),
                         .len = ev->message_len, .data = steal_pointer(&data),
                         .last_ms = ev->wall_ms, .told_ms = ev->wall_ms};
    return false;
}

static void tell_all_repeats(struct out_ctx *o)
{
    for (size_t i = 0; i < o->nrep; i++) {
        tell_repeats(o, &o->rep[i], o->rep[i].last_ms);
        free(o->rep[i].msg);
        free(o->rep[i].data);
    }
    o->nrep = 0;
}

static void json_sink(void *ctx, const struct sg_event *ev)
{
    struct out_ctx *o = ctx;
    if (repeats(o, ev))
        return;
    print_event(o, ev);
}

static void print_event(struct out_ctx *o, const struct sg_event *ev)
{
    if (o->json)
        print_json(o, ev);
    else if (o->watch)
        print_watch(o, ev);
    else
        print_plain(o, ev);
}

static void plain_sink(void *ctx, const struct sg_event *ev)
{
    struct out_ctx *o = ctx;
    if (!repeats(o, ev))
        print_plain(o, ev);
}

static void watch_sink(void *ctx, const struct sg_event *ev)
{
    struct out_ctx *o = ctx;
    if (!repeats(o, ev))
        print_watch(o, ev);
}

static void print_json(struct out_ctx *o, const struct sg_event *ev)
{
    char iso[32];
    sg_format_iso(ev->wall_ms, iso);
    if ((ev->kind == SG_EV_STDOUT || ev->kind == SG_EV_STDERR) && !ev->data) {
        /* the same line json_dumps gives, formatted here: packing and
         * dumping each output line was a third of the broker's time for the
         * first MiB of a flood (a 4 KiB line of NULs is 16 KiB escaped) */
        cleanup_free char *m = sg_sanitize_json(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
        printf("{\"timestamp\":\"%s\",\"kind\":\"%s\",\"message\":%s,\"data\":null}\n", iso,
               sg_event_name(ev->kind), m);
        return; /* severity 0: nothing blocked */
    }
    cleanup_free char *s = sg_sanitize(ev->message, ev->message_len, SG_SAN_KEEP_TAB);
    json_t *j = json_pack("{s:s, s:s, s:s}", "timestamp", iso, "kind", sg_event_name(ev->kind),
                          "message", s);
    json_object_set(j, "data", ev->data ? ev->data : json_null());
    char *line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (line) {
        puts(line);
        free(line);
    }
    json_decref(j);
    if (sg_event_severity(ev->kind) >= 2)
        o->blocked++;
}

/* The printers above write into a 64 KiB stdout buffer that is flushed
 * each time the session loop is about to wait: a flood goes out in large
 * writes instead of one per line (1,000,000 lines to a terminal took 3.4x
 * seq's time that way), and nothing printed waits past the loop's next
 * sleep. */
static void flush_dispatch(void *ctx, const struct pollfd *p, size_t n)
{
    (void)ctx, (void)p, (void)n;
}

/* Called before each wait of the loop: the flush. */
static int flush_timeout(void *ctx)
{
    struct out_ctx *o = ctx;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    int64_t now = (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
    bool pending = false;
    for (size_t i = 0; o && i < o->nrep; i++) { /* a flood that goes on is told each second */
        struct repeat *r = &o->rep[i];
        if (r->more > r->told && now - r->told_ms >= 1000)
            tell_repeats(o, r, now);
        pending |= r->more > r->told;
    }
    fflush(stdout);
    return pending ? 1000 : -1;
}

static char *read_input_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct sg_buf b;
    sg_buf_init(&b, 64 * 1024);
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0)
        if (sg_buf_append(&b, chunk, (size_t)n) < 0)
            break;
    close(fd);
    if (b.dropped) {
        sg_buf_free(&b);
        errno = E2BIG;
        return NULL;
    }
    return sg_buf_steal(&b);
}

static void run_help(void)
{
    sg_command_usage(stdout, "run");
    printf("\n  -i, --input JSON       input for the skill (SKILL_INPUT, stdin); default {}\n"
           "  -I, --input-file FILE  the same from a file (at most 64 KiB)\n"
           "  -t, --timeout S        wall-clock limit in seconds (default: the manifest's)\n"
           "      --memory MB        memory limit of the run (default: the manifest's\n"
           "                         memory_mb, else 256)\n"
           "  -o, --trace-out FILE   also write the trace here\n"
           "  -w, --watch            events as they happen: [HH:MM:SS.mmm] KIND message\n"
           "  -j, --json             one JSON event per line on stdout\n"
           "  -n, --dry-run          print the plan; never execute the skill\n"
           "  -s, --script PATH      run this script of the skill (scripts/x.py) instead of\n"
           "                         its entrypoint, with the ARGs after SKILL or --\n"
           "  -C, --cwd DIR          the skill's working folder, shown read-only (writes\n"
           "                         there are asked for); a script's default: this folder\n"
           "      --python PATH      the Python to use: a virtual environment's folder or a\n"
           "                         program; default: an active VIRTUAL_ENV, else python3\n"
           "  -m, --module M         run `python -m M` as from the skill's folder (its\n"
           "                         folder first on sys.path), in the working folder,\n"
           "                         with the ARGs after SKILL or --\n"
           "      --env NAME         pass the variable NAME from this environment into the\n"
           "                         sandbox for this run (the name only, never a value;\n"
           "                         recorded in the trace and audit log); repeatable\n"
           "      --write DIR        make the folder DIR writable for this run (its real\n"
           "                         path; never /, your home or skillgate's own\n"
           "                         folders); repeatable\n"
           "      --no-records       run even if the trace and audit record cannot be kept\n"
           "      --fresh-home       start from an empty home: drop what the skill's own\n"
           "                         home kept from its earlier runs (caches, profiles)\n"
           "      --allow-degraded   run without Landlock where the kernel lacks it\n"
           "      --prompt tty|deny  ask on the terminal (the default when there is one;\n"
           "                         OpenSkills' CliPermissionCallback) or deny all that\n"
           "                         is undeclared (the default otherwise: DenyAll)\n"
           "      --prompt 'exec:PROGRAM [ARG...]'  your program decides first (OpenSkills'\n"
           "                         custom callback): a JSON request on its stdin, a JSON\n"
           "                         answer on its stdout; \"ask\" goes on to the terminal\n"
           "      --prompt attached  ask in `skillgate tui --attach` when one listens\n"
           "                         (the agent hook's sandboxed runs), else as without it\n"
           "      --policy FILE      rules only (deny/ask/allow lists), no person asked\n"
           "                         unless --prompt tty is given too\n"
           "      --prompt-timeout S an unanswered prompt is a deny after S seconds (30)\n"
           "      --allow-all        allow every undeclared request: no sandbox for them\n"
           "      --allow-upstream ADDR  let the proxy reach this loopback, private or\n"
           "                         metadata address, or one of this machine's own\n"
           "                         (refused however it is declared)\n"
           "      --resolve NAME:PORT:ADDR[:PORT2]  connect NAME:PORT to ADDR (and PORT2)\n"
           "                         instead of what DNS says, like curl's --resolve\n"
           "      --publish [HOSTPORT:]PORT  publish the skill's PORT (declared or not) on\n"
           "                         this machine's 127.0.0.1:HOSTPORT, like docker's\n"
           "                         -p 127.0.0.1:HOSTPORT:PORT; without HOSTPORT (and for\n"
           "                         every other published port) the kernel picks one,\n"
           "                         said as \"the skill's :PORT is at URL\"; a HOSTPORT\n"
           "                         another process holds, or one skillgate's own\n"
           "                         settings point at, is refused, never moved; repeatable\n"
           "\nExit status: the skill's own; 124 timeout, 125 sandbox setup failed,\n"
           "126 refused (invalid or nothing to run), 127 entrypoint not executable,\n"
           "128+N killed by signal N, or stopped by skillgate's own SIGINT (130),\n"
           "SIGHUP (129) or SIGTERM (143); 74 the run's records could not be kept\n"
           "(refused before, or failed after: its journal stays for the next start);\n"
           "2 bad command line.\n");
}

/* What the command line asked for. */
struct run_args {
    struct sg_run_request rq;
    struct out_ctx *oc;
    const char *trace_out;
    char *input_buf;
    bool dry;
    bool wrap;            /* skillgate wrap: a command, not a skill (wrap.h) */
    const char *settings; /* wrap --settings FILE */
    bool attached; /* --prompt attached: prompts to `skillgate tui --attach` */
    char *prog[SG_PPROG_ARGS_MAX + 1];     /* --prompt exec:'s words */
    const char *resolve[32];
    const char *upstream[16];
    const char *env[32];
    const char *write[32];
    const char *publish[32];
};

/* --env and --write: repeatable, up to a limit. */
static int add_listed(const char **v, size_t max, size_t *n, const char *opt)
{
    if (*n >= max) {
        fprintf(stderr, "skillgate: %s at most %zu times\n", opt, max);
        return SG_EXIT_USAGE;
    }
    v[(*n)++] = optarg;
    return -1;
}

/* --prompt tty|deny|attached|exec:PROGRAM */
static int prompt_option(struct run_args *a)
{
    if (!strncmp(optarg, "exec:", 5)) { /* words split on blanks: no shell reads them */
        size_t n = 0;
        char *save = NULL; /* argv's own string, cut in place: it lives as long */
        for (char *w = strtok_r(optarg + 5, " \t", &save); w;
             w = strtok_r(NULL, " \t", &save)) {
            if (n == SG_PPROG_ARGS_MAX) {
                fprintf(stderr, "skillgate: --prompt exec: %d words at most\n",
                        SG_PPROG_ARGS_MAX);
                return SG_EXIT_USAGE;
            }
            a->prog[n++] = w;
        }
        a->prog[n] = NULL;
        if (!n) {
            fprintf(stderr, "skillgate: --prompt exec: names no program\n");
            return SG_EXIT_USAGE;
        }
        if (strchr(a->prog[0], '/') && a->prog[0][0] != '/') {
            fprintf(stderr, "skillgate: --prompt exec: the program must be an absolute "
                            "path or a name on PATH\n");
            return SG_EXIT_USAGE;
        }
        a->rq.prompt_program = a->prog;
        a->rq.pmode = SG_PERM_PROMPT;
        a->rq.pmode_set = true;
        return -1;
    }
    if (strcmp(optarg, "tty") && strcmp(optarg, "deny") && strcmp(optarg, "attached")) {
        fprintf(stderr, "skillgate: --prompt is tty, deny, attached or exec:PROGRAM\n");
        return SG_EXIT_USAGE;
    }
    a->rq.prompt_program = NULL;
    a->attached = !strcmp(optarg, "attached");
    a->rq.not_a_look = a->attached; /* the agent hook's rewrite runs it so */
    if (!a->attached) { /* attached: a TUI if one listens, else as without --prompt */
        a->rq.pmode = !strcmp(optarg, "tty") ? SG_PERM_PROMPT : SG_PERM_DENY_ALL;
        a->rq.pmode_set = true;
    }
    return -1;
}

/* -1: go on; else the exit status */
static int run_option(struct run_args *a, int c)
{
    long long v;
    unsigned char bin[16];
    switch (c) {
    case 'h':
        if (a->wrap)
            sg_wrap_help();
        else
            run_help();
        return SG_EXIT_OK;
    case 'S':
        if (!a->wrap)
            break;
        a->settings = optarg;
        return -1;
    case 'i':
        a->rq.input = optarg;
        return -1;
    case 's':
        a->rq.script = optarg;
        return -1;
    case 'C':
        a->rq.work_dir = optarg;
        return -1;
    case 'Y':
        a->rq.python = optarg;
        return -1;
    case 'm':
        a->rq.module = optarg;
        return -1;
    case 'E':
        return add_listed(a->env, SG_ARRAY_LEN(a->env), &a->rq.nenv, "--env");
    case 'W':
        return add_listed(a->write, SG_ARRAY_LEN(a->write), &a->rq.nwrite, "--write");
    case 'p':
        if (sg_runner_check_publish(optarg) < 0) {
            fprintf(stderr, "skillgate: --publish takes [HOSTPORT:]PORT, each from 1024 to "
                            "65535 (always on this machine's 127.0.0.1): %s\n", optarg);
            return SG_EXIT_USAGE;
        }
        return add_listed(a->publish, SG_ARRAY_LEN(a->publish), &a->rq.npublish, "--publish");
    case 'N':
        a->rq.no_records = true;
        return -1;
    case 'F':
        a->rq.fresh_home = true;
        return -1;
    case 'I':
        free(a->input_buf);
        a->input_buf = read_input_file(optarg);
        if (!a->input_buf) {
            fprintf(stderr, "skillgate: %s: %s\n", optarg, strerror(errno));
            return SG_EXIT_USAGE;
        }
        a->rq.input = a->input_buf;
        return -1;
    case 't':
        if (sg_parse_ll(optarg, 1, 86400, &v) < 0) {
            fprintf(stderr, "skillgate: --timeout takes whole seconds, 1..86400\n");
            return SG_EXIT_USAGE;
        }
        a->rq.timeout_s = v;
        return -1;
    case 'M':
        if (sg_parse_ll(optarg, 16, 65536, &v) < 0) {
            fprintf(stderr, "skillgate: --memory takes megabytes, 16..65536\n");
            return SG_EXIT_USAGE;
        }
        a->rq.memory_mb = v;
        return -1;
    case 'o':
        a->trace_out = optarg;
        return -1;
    case 'w':
        a->oc->watch = true;
        return -1;
    case 'j':
        a->oc->json = true;
        return -1;
    case 'n':
        a->dry = true;
        a->rq.dry_run = true;
        return -1;
    case 'D':
        a->rq.allow_degraded = true;
        return -1;
    case 'P':
        return prompt_option(a);
    case 'Q':
        a->rq.policy_file = optarg;
        return -1;
    case 'T':
        if (sg_parse_ll(optarg, 1, 3600, &v) < 0) {
            fprintf(stderr, "skillgate: --prompt-timeout takes seconds, 1..3600\n");
            return SG_EXIT_USAGE;
        }
        a->rq.prompt_timeout = (int)v;
        return -1;
    case 'A':
        a->rq.allow_all = true;
        return -1;
    case 'U':
        if (a->rq.nallow_upstream >= SG_ARRAY_LEN(a->upstream) ||
            (inet_pton(AF_INET, optarg, bin) != 1 && inet_pton(AF_INET6, optarg, bin) != 1)) {
            fprintf(stderr, "skillgate: --allow-upstream takes a numeric address (v4 or v6), "
                            "at most %zu times\n", SG_ARRAY_LEN(a->upstream));
            return SG_EXIT_USAGE;
        }
        a->upstream[a->rq.nallow_upstream++] = optarg;
        return -1;
    case 'R':
        if (a->rq.nresolve >= SG_ARRAY_LEN(a->resolve) || sg_runner_check_resolve(optarg) < 0) {
            fprintf(stderr, "skillgate: --resolve takes NAME:PORT:ADDR[:PORT2] with a "
                            "numeric ADDR ([v6] in brackets), at most %zu times\n",
                    SG_ARRAY_LEN(a->resolve));
            return SG_EXIT_USAGE;
        }
        a->resolve[a->rq.nresolve++] = optarg;
        return -1;
    default:
        break;
    }
    sg_command_usage(stderr, a->wrap ? "wrap" : "run");
    return SG_EXIT_USAGE;
}

/* An option run does not know after --script or -m is most often the
 * script's own (`-m scripts.x --skill-name y`): say where -- goes. */
static void script_option_hint(const struct run_args *a, int argc, char **argv)
{
    const char *what = a->rq.module ? "-m" : "--script";
    const char *name = a->rq.module ? a->rq.module : a->rq.script;
    if (a->wrap || !name || optind < 1 || optind > argc || argv[optind - 1][0] != '-')
        return;
    cleanup_free char *opt = sg_sanitize_str(argv[optind - 1], 0);
    cleanup_free char *shown = sg_sanitize_str(name, 0);
    fprintf(stderr, "skillgate: %s is not an option of run; if it is the script's own, put -- "
                    "before the script's arguments: skillgate run SKILL %s %s -- %s ...\n",
            opt, what, shown, opt);
}

static int parse_run_args(int argc, char **argv, struct run_args *a)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},        {"input", required_argument, NULL, 'i'},
        {"input-file", required_argument, NULL, 'I'}, {"timeout", required_argument, NULL, 't'},
        {"trace-out", required_argument, NULL, 'o'}, {"watch", no_argument, NULL, 'w'},
        {"json", no_argument, NULL, 'j'},         {"dry-run", no_argument, NULL, 'n'},
        {"allow-degraded", no_argument, NULL, 'D'}, {"resolve", required_argument, NULL, 'R'},
        {"allow-upstream", required_argument, NULL, 'U'},
        {"prompt", required_argument, NULL, 'P'}, {"policy", required_argument, NULL, 'Q'},
        {"prompt-timeout", required_argument, NULL, 'T'}, {"allow-all", no_argument, NULL, 'A'},
        {"script", required_argument, NULL, 's'}, {"cwd", required_argument, NULL, 'C'},
        {"python", required_argument, NULL, 'Y'}, {"no-records", no_argument, NULL, 'N'},
        {"module", required_argument, NULL, 'm'}, {"env", required_argument, NULL, 'E'},
        {"write", required_argument, NULL, 'W'}, {"publish", required_argument, NULL, 'p'},
        {"settings", required_argument, NULL, 'S'}, {"fresh-home", no_argument, NULL, 'F'},
        {"memory", required_argument, NULL, 'M'},
        {0},
    };
    int c, st;
    optind = 1;
    a->rq.resolve = a->resolve;
    a->rq.allow_upstream = a->upstream;
    a->rq.env = a->env;
    a->rq.write = a->write;
    a->rq.publish = a->publish;
    /* wrap: options end at the command's name (its own options are its) */
    while ((c = sg_getopt(argc, argv, a->wrap ? "+ht:o:wjnDC:" : "hi:I:t:o:wjnDs:C:m:", opts)) !=
           -1) {
        if (c == '?')
            script_option_hint(a, argc, argv);
        if ((st = run_option(a, c)) >= 0)
            return st;
    }
    if (a->wrap) {
        if (optind >= argc || (a->oc->watch && a->oc->json) || a->rq.script || a->rq.module ||
            a->rq.input || a->rq.python) {
            sg_command_usage(stderr, "wrap");
            return SG_EXIT_USAGE;
        }
        a->rq.args = argv + optind;
        a->rq.nargs = (size_t)(argc - optind);
        return -1;
    }
    /* SKILL, then a script's arguments (after -- when one starts with -) */
    if (optind >= argc || (optind != argc - 1 && !a->rq.script && !a->rq.module) ||
        (a->oc->watch && a->oc->json)) {
        sg_command_usage(stderr, "run");
        return SG_EXIT_USAGE;
    }
    a->rq.args = argv + optind + 1;
    a->rq.nargs = (size_t)(argc - optind - 1);
    if (a->rq.input) {
        json_error_t je;
        json_t *j = json_loads(a->rq.input, JSON_DECODE_ANY, &je);
        if (!j) {
            fprintf(stderr, "skillgate: the input is not JSON: %s (column %d)\n", je.text,
                    je.column);
            return SG_EXIT_USAGE;
        }
        json_decref(j);
    }
    return -1;
}

/* What went wrong writing the records, then the one-line summary. */
static void print_outcome(struct out_ctx *oc, const struct sg_run_info *info,
                          const struct sg_runner_out *rout, const char *trace_out)
{
    if (rout->trace_err < 0)
        fprintf(stderr, "skillgate: cannot write the trace: %s\n", strerror(-rout->trace_err));
    if (trace_out && rout->trace_err2 < 0)
        fprintf(stderr, "skillgate: %s: cannot write the trace: %s\n", trace_out,
                rout->trace_err2 == -EPERM ? "inside the skill's folder"
                                           : strerror(-rout->trace_err2));
    if (rout->audit_err < 0) {
        cleanup_free char *ap = sg_audit_path();
        fprintf(stderr, "skillgate: cannot append to the audit log %s: %s\n", ap,
                strerror(-rout->audit_err));
    }
    if (rout->journal_path)
        fprintf(stderr, "skillgate: the run's journal stays in %s: the next start of skillgate "
                        "writes the missing records from it\n", rout->journal_path);
    json_t *ot = json_object_get(rout->doc, "otel");
    json_int_t lost_spans = json_integer_value(json_object_get(ot, "spans_dropped"));
    if (lost_spans > 0 || json_integer_value(json_object_get(ot, "failed_requests")) > 0)
        fprintf(stderr, "skillgate: OpenTelemetry: %lld span%s of this run not delivered to %s "
                        "(%s); the trace has them all\n", (long long)lost_spans,
                lost_spans == 1 ? "" : "s",
                json_string_value(json_object_get(ot, "endpoint")),
                json_string_value(json_object_get(ot, "last_error"))
                    ? json_string_value(json_object_get(ot, "last_error"))
                    : "still on the way when the run ended");
    if (oc->fork) {
        /* a forked context returns its summary: Result lines, else the last line */
        const char *sum = oc->results.len ? oc->results.data : oc->last ? oc->last : "";
        cleanup_free char *s = oc->tty_out
                                   ? sg_sanitize_str(sum, SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB)
                                   : sg_xstrdup(sum);
        fputs(s, stdout);
        if (!oc->results.len && oc->last)
            fputc('\n', stdout);
    }
    json_t *refused = json_object_get(rout->doc, "refusals");
    if (oc->json && !json_array_size(refused))
        return; /* skill_completed stays the last line */
    if (oc->json) { /* after skill_completed: what was refused, and how to allow it */
        char iso[32];
        sg_format_iso(rout->res.ended_ms, iso);
        /* an attack's refusals say no way to allow them (refusals.h) */
        json_t *j = json_pack("{s:s, s:s, s:s, s:{s:O}}", "timestamp", iso, "kind", "refusals",
                              "message",
                              "refused requests, each with how to allow it unless it was part of "
                              "an attack: see data",
                              "data", "refusals", refused ? refused : json_array());
        char *line = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)
                       : NULL;
        if (line)
            puts(line);
        free(line);
        json_decref(j);
        return;
    }
    const struct sg_run_result *res = &rout->res;
    json_t *doc = rout->doc;
    json_t *vs = json_object_get(doc, "violation_summary");
    json_int_t total = json_integer_value(json_object_get(vs, "total_enforcements"));
    /* a wrapped command's stderr is its own: skillgate adds a word only
     * when it stopped something (or was asked to tell it all) */
    if (oc->copied && !total && !json_array_size(refused) && !info->degraded &&
        res->exit_code != SG_RUN_TIMEOUT && !res->limit_note[0])
        return;
    cleanup_free char *written = rout->trace_path ? sg_home_short(rout->trace_path,
                                                                  sg_invoking_home())
                                                  : NULL;
    FILE *f = oc->watch ? stdout : stderr;
    fprintf(f, "skillgate: %s %s (exit %d) in %lld ms; %lld enforcement%s, max severity %s%s%s\n",
            info->skill_name, json_string_value(json_object_get(doc, "status")), res->exit_code,
            (long long)(res->ended_ms - res->started_ms), (long long)total, total == 1 ? "" : "s",
            json_string_value(json_object_get(vs, "max_severity")), written ? "; trace " : "",
            written ? written : "");
    if (res->limit_note[0])
        fprintf(f, "skillgate: %s\n", res->limit_note);
    if (info->degraded)
        fprintf(f, "skillgate: DEGRADED run: Landlock was not used\n");
    if (info->allow_all)
        fprintf(f, "skillgate: WARNING: run with --allow-all: undeclared requests were not "
                   "checked by anyone\n");
    for (size_t i = 0; i < oc->npublished; i++)
        fprintf(f, "skillgate: the skill's :%d was at http://127.0.0.1:%d/ (closed with the run)\n",
                oc->published[i].port, oc->published[i].host);
    if (oc->published_more)
        fprintf(f, "skillgate: and %zu more published ports (the trace lists them)\n",
                oc->published_more);
    sg_leftover_print(f, &oc->left);
    if (res->end == SG_END_EXITED && res->exit_code != 0 && oc->sk)
        sg_unshown_print(f, oc->sk, info->cwd);
    if (oc->no_terminal_note && res->end == SG_END_EXITED && res->exit_code != 0)
        fprintf(f, "skillgate: the script had no terminal and its stdin was empty (end of "
                   "file): a skill never reads yours, so a question it asked there got no "
                   "answer; what it needs goes in its arguments, or as JSON with --input\n");
    json_t *rest = sg_leftover_refusals(&oc->left, refused);
    cleanup_free char *text = sg_refusals_text(rest, sg_invoking_home());
    json_decref(rest);
    for (const char *l = text, *e; *l; l = e + 1) { /* each line said as skillgate's */
        e = strchr(l, '\n');
        fprintf(f, "skillgate: %.*s\n", (int)(e - l), l);
    }
}

/* SIGINT, SIGTERM, SIGHUP: the run stops and its records are written. */
static void on_stop_signal(void *ctx, int signo)
{
    struct sg_runner *run = ctx;
    sg_runner_interrupt(run, signo);
}

/* The exit status: the skill's, unless its records could not be written. */
static int run_status(const struct sg_runner_out *rout)
{
    bool lost = rout->trace_err < 0 || rout->audit_err < 0;
    return lost && !rout->no_records ? SG_RUN_NO_RECORDS : rout->res.exit_code;
}

/* skillgate wrap: the command as a skill (wrap.h), its output passed on
 * unchanged where it is no terminal, its stdin its own; what the settings
 * did not apply is said first. 0, or the exit status. */
static int wrap_load(struct run_args *a, struct sg_wrap *w, struct sg_skill **sk)
{
    cleanup_free char *why = NULL;
    int e = sg_wrap_prepare(a->rq.work_dir, a->rq.args, a->rq.nargs, a->settings, environ, w,
                            &why);
    if (e < 0) {
        cleanup_free char *t = sg_sanitize_str(why, 0);
        fprintf(stderr, "skillgate: wrap: %s\n", t);
        return e == -ENOENT ? SG_RUN_EXEC_FAILED : SG_RUN_REFUSED;
    }
    /* what your settings asked and did not get, always; what every call
     * would repeat, where a person reads it (the command's stderr is its own) */
    for (size_t i = 0; i < w->nnotes; i++) {
        cleanup_free char *t = sg_sanitize_str(w->notes[i], 0);
        fprintf(stderr, "skillgate: %s\n", t);
    }
    if (w->env_note && (a->oc->tty_err || a->oc->watch)) {
        cleanup_free char *t = sg_sanitize_str(w->env_note, 0);
        fprintf(stderr, "skillgate: %s\n", t);
    }
    *sk = w->sk;
    a->rq.wrap = true;
    a->rq.input = "";
    a->rq.args = NULL, a->rq.nargs = 0; /* the skill's entrypoint holds them */
    a->rq.work_dir = w->cwd;
    a->rq.masks = w->masks;
    a->rq.nmasks = w->nmasks;
    /* passed on as it is, unless a terminal shows it (then sanitized, as run's) */
    a->rq.copy_output = a->oc->copied = !a->oc->watch && !a->oc->json && !a->oc->tty_out &&
                                        !a->oc->tty_err;
    return 0;
}

int sg_run_front(int argc, char **argv, bool wrap)
{
    struct out_ctx oc = {.tty_out = isatty(1), .tty_err = isatty(2)};
    struct run_args a = {.rq = {.front = SG_FRONT_CLI, .host_env = environ}, .oc = &oc,
                         .wrap = wrap};
    int st = parse_run_args(argc, argv, &a);
    if (st >= 0) {
        free(a.input_buf);
        return st;
    }
    struct sg_skill *sk = NULL;
    struct sg_wrap w = {0};
    sg_homes_hold(); /* the load's checks and the plan read the accounts' homes once */
    if ((st = wrap ? wrap_load(&a, &w, &sk) : sg_load_skill_arg(argv[optind], a.rq.work_dir, &sk)) != 0) {
        sg_homes_release();
        free(a.input_buf);
        return st;
    }
    if (wrap)
        w.sk = NULL; /* sk is this function's now */
    if (sg_skill_has_errors(sk))
        sg_print_diags(stderr, &sk->diags);
    struct sg_runner *run = NULL;
    const char *why = NULL;
    /* --prompt attached: the run shown, and its prompts asked, in the TUI */
    struct sg_attach_fe fe = {.fd = a.attached && !a.dry ? sg_attach_connect() : -1};
    /* with --policy too: its rules first, then the person in the TUI */
    if (fe.fd >= 0 && !a.rq.allow_all) {
        a.rq.pmode = SG_PERM_PROMPT;
        a.rq.pmode_set = true;
    }
    st = sg_runner_new(sk, &a.rq, &run, &why);
    sg_homes_release();
    if (sg_otel_off_why()) /* telemetry settings never stop a run: said, and off */
        fprintf(stderr, "skillgate: OpenTelemetry export off: %s\n", sg_otel_off_why());
    if (st != 0) {
        if (fe.fd >= 0)
            close(fe.fd);
        if (sg_skill_has_errors(sk))
            fprintf(stderr, "skillgate: %s\n", why);
        else
            fprintf(stderr, "skillgate: %s: %s\n", sk->display, why);
        sg_skill_free(sk);
        sg_wrap_free(&w);
        free(a.input_buf);
        return st;
    }
    const struct sg_run_info *info = sg_runner_info(run);
    oc.no_terminal_note = (a.rq.script || a.rq.module) && !a.rq.input && isatty(0);
    oc.sk = wrap ? NULL : sk; /* a wrapped command's words are not a skill's */
    if (a.dry) {
        sg_runner_print_plan(run, stdout);
        sg_runner_free(run);
        sg_skill_free(sk);
        sg_wrap_free(&w);
        free(a.input_buf);
        return SG_EXIT_OK;
    }
    for (const char *const *n = info->notes; n && *n; n++) {
        cleanup_free char *t = sg_sanitize_str(*n, 0);
        fprintf(stderr, "skillgate: %s\n", t);
    }
    if (info->allow_all)
        fprintf(stderr, "skillgate: WARNING: --allow-all: every undeclared request of %s will be "
                        "allowed without asking anyone\n", info->skill_name);
    struct sg_event_bus bus = {0};
    sg_bus_subscribe(&bus, oc.watch ? watch_sink : oc.json ? json_sink : plain_sink, &oc);
    sg_bus_subscribe(&bus, published_sink, &oc);
    oc.fork = sk->policy.fork_context && !oc.watch && !oc.json;
    sg_buf_init(&oc.results, 64 * 1024);
    struct sg_diags pd = {0};
    static char outbuf[64 * 1024];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    sg_stopsig_install();
    if (fe.fd >= 0) {
        sg_attach_send(fe.fd, json_pack("{s:s, s:s, s:s}", "type", "hello", "skill",
                                        info->skill_name, "run_id", "an agent's sandboxed run"));
        sg_bus_subscribe(&bus, sg_attach_fe_event, &fe);
    }
    const struct sg_loop_source srcs[] = {
        sg_stopsig_source(on_stop_signal, run),
        {"stdout flush", NULL, flush_dispatch, flush_timeout, &oc},
        {"attached TUI", sg_attach_fe_pollfds, sg_attach_fe_dispatch, NULL, &fe},
    };
    struct sg_runner_opts rop = {.trace_out = a.trace_out, .sources = srcs,
                                 .nsources = SG_ARRAY_LEN(srcs),
                                 .show = fe.fd >= 0 ? sg_attach_fe_show : NULL,
                                 .show_ctx = &fe};
    struct sg_runner_out rout;
    int r = sg_runner_run(run, &bus, &rop, &rout, &pd);
    tell_all_repeats(&oc);
    fflush(stdout); /* the skill's last output comes before skillgate's summary */
    sg_print_diags(stderr, &pd);
    sg_diags_free(&pd);
    int exit_code = r == -EINVAL ? SG_EXIT_USAGE : SG_RUN_NO_RECORDS;
    if (r == 0) {
        print_outcome(&oc, info, &rout, a.trace_out);
        exit_code = run_status(&rout);
        if (fe.fd >= 0) {
            char ocs[160];
            snprintf(ocs, sizeof ocs, "%s, exit %d",
                     json_string_value(json_object_get(rout.doc, "status")) ?: "?",
                     rout.res.exit_code);
            sg_attach_send(fe.fd, json_pack("{s:s, s:s, s:s?}", "type", "end", "outcome", ocs,
                                            "trace", rout.trace_path));
        }
        sg_runner_out_free(&rout);
    }
    if (fe.fd >= 0)
        close(fe.fd);
    sg_buf_free(&oc.results);
    sg_leftover_free(&oc.left);
    free(oc.last);
    sg_runner_free(run);
    sg_skill_free(sk);
    sg_wrap_free(&w);
    free(a.input_buf);
    return exit_code;
}

int cmd_run(int argc, char **argv)
{
    return sg_run_front(argc, argv, false);
}
