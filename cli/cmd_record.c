/* skillgate record SKILL: run it with nothing of its network, writes or
 * programs granted in advance, so that each use is a request a person (or
 * --allow-all) answers and the trace sees; then the smallest manifest that
 * lets exactly that pass, and what it declares against what it used. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "cli.h"
#include "record.h"
#include "runner.h"
#include "sanitize.h"
#include "stopsig.h"
#include "util.h"

#define MAX_INPUTS 16

static void record_help(void)
{
    sg_command_usage(stdout, "record");
    printf("\nRuns the skill under full enforcement with none of its hosts, write paths or\n"
           "programs granted in advance: each use is a request that a person answers (on\n"
           "this terminal, or in `skillgate tui --attach`) or --allow-all allows, and the\n"
           "trace records it; every file or folder it opens is noted too. Then prints\n"
           "the smallest skillsandbox.yaml that lets exactly that pass with no prompt,\n"
           "and what the skill declares against what it used.\n\n"
           "  -i, --input JSON       input for one run; give it again for more runs, merged\n"
           "                         into one profile (default: one run with {})\n"
           "  -t, --timeout S        wall-clock limit of each run\n"
           "  -C, --cwd DIR          the skill's working folder (as for run)\n"
           "  -s, --script PATH      record this script of the skill, with the ARGs after\n"
           "                         SKILL (as for run --script)\n"
           "      --allow-all        allow every request, asking no one (said loudly)\n"
           "      --prompt tty|attached|deny  who answers (default: this terminal); deny\n"
           "                         learns only what the skill tries\n"
           "      --prompt-timeout S an unanswered prompt is a deny after S seconds (30)\n"
           "      --resolve NAME:PORT:ADDR[:PORT2], --allow-upstream ADDR  as for run\n"
           "      --write            replace the skill's skillsandbox.yaml with this one\n"
           "                         (after a yes on the terminal; a copy of the old one is\n"
           "                         kept as skillsandbox.yaml.bak; a file that does not\n"
           "                         validate is never left in place)\n"
           "      --yes              answer that question yes\n"
           "  -j, --json             the result as JSON (skillgate.record/1)\n"
           "\nExit status: 0, 1 when --write was refused or failed, 2 bad command line,\n"
           "126 the skill cannot run.\n");
}

struct rec_args {
    const char *inputs[MAX_INPUTS];
    size_t ninputs;
    const char *resolve[32], *upstream[16];
    size_t nresolve, nupstream;
    struct sg_run_request rq;
    bool json, write, yes, attached;
};

static int parse(int argc, char **argv, struct rec_args *a)
{
    enum { O_ALLOW_ALL = 256, O_PROMPT, O_PROMPT_TIMEOUT, O_RESOLVE, O_UPSTREAM, O_WRITE, O_YES };
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},           {"input", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, 't'},  {"cwd", required_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'j'},           {"allow-all", no_argument, NULL, O_ALLOW_ALL},
        {"script", required_argument, NULL, 's'},
        {"prompt", required_argument, NULL, O_PROMPT},
        {"prompt-timeout", required_argument, NULL, O_PROMPT_TIMEOUT},
        {"resolve", required_argument, NULL, O_RESOLVE},
        {"allow-upstream", required_argument, NULL, O_UPSTREAM},
        {"write", no_argument, NULL, O_WRITE},      {"yes", no_argument, NULL, O_YES},
        {0}};
    int c;
    long long v;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "hi:t:C:js:", opts)) != -1) {
        switch (c) {
        case 'h': record_help(); return SG_EXIT_OK;
        case 'i':
            if (a->ninputs == MAX_INPUTS) {
                fprintf(stderr, "skillgate: at most %d --input runs\n", MAX_INPUTS);
                return SG_EXIT_USAGE;
            }
            a->inputs[a->ninputs++] = optarg;
            break;
        case 't':
            if (sg_parse_ll(optarg, 1, 86400, &v) < 0) {
                fprintf(stderr, "skillgate: --timeout: 1 to 86400 seconds\n");
                return SG_EXIT_USAGE;
            }
            a->rq.timeout_s = v;
            break;
        case 'C': a->rq.work_dir = optarg; break;
        case 's': a->rq.script = optarg; break;
        case 'j': a->json = true; break;
        case O_ALLOW_ALL: a->rq.allow_all = true; break;
        case O_PROMPT:
            a->rq.pmode_set = true;
            if (!strcmp(optarg, "tty") || !strcmp(optarg, "attached")) {
                a->rq.pmode = SG_PERM_PROMPT;
                a->attached = optarg[0] == 'a';
            } else if (!strcmp(optarg, "deny")) {
                a->rq.pmode = SG_PERM_DENY_ALL;
            } else {
                fprintf(stderr, "skillgate: --prompt: tty, attached or deny\n");
                return SG_EXIT_USAGE;
            }
            break;
        case O_PROMPT_TIMEOUT:
            if (sg_parse_ll(optarg, 1, 3600, &v) < 0) {
                fprintf(stderr, "skillgate: --prompt-timeout: 1 to 3600 seconds\n");
                return SG_EXIT_USAGE;
            }
            a->rq.prompt_timeout = (int)v;
            break;
        case O_RESOLVE:
            if (a->nresolve == SG_ARRAY_LEN(a->resolve) || sg_runner_check_resolve(optarg) < 0) {
                fprintf(stderr, "skillgate: --resolve NAME:PORT:ADDR[:PORT2] (at most 32)\n");
                return SG_EXIT_USAGE;
            }
            a->resolve[a->nresolve++] = optarg;
            break;
        case O_UPSTREAM:
            if (a->nupstream == SG_ARRAY_LEN(a->upstream)) {
                fprintf(stderr, "skillgate: at most 16 --allow-upstream\n");
                return SG_EXIT_USAGE;
            }
            a->upstream[a->nupstream++] = optarg;
            break;
        case O_WRITE: a->write = true; break;
        case O_YES: a->yes = true; break;
        default: sg_command_usage(stderr, "record"); return SG_EXIT_USAGE;
        }
    }
    /* SKILL, then a script's arguments (after -- when one starts with -) */
    if (optind >= argc || (optind + 1 != argc && !a->rq.script)) {
        sg_command_usage(stderr, "record");
        return SG_EXIT_USAGE;
    }
    if (a->rq.script) {
        int first = optind + 1;
        if (first < argc && !strcmp(argv[first], "--"))
            first++;
        a->rq.args = argv + first;
        a->rq.nargs = (size_t)(argc - first);
    }
    if (!a->rq.allow_all && !a->rq.pmode_set) {
        int t = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (t < 0) {
            fprintf(stderr, "skillgate: record needs someone to answer the skill's requests: "
                            "run it on a terminal, or give --allow-all (each is allowed, "
                            "unchecked) or --prompt deny (it learns only what the skill "
                            "tries)\n");
            return SG_EXIT_USAGE;
        }
        close(t);
        a->rq.pmode = SG_PERM_PROMPT;
        a->rq.pmode_set = true;
    }
    if (!a->ninputs)
        a->inputs[a->ninputs++] = "{}";
    return -1;
}

static void on_stop_signal(void *ctx, int signo)
{
    sg_runner_interrupt(ctx, signo);
}

/* One run of the skill under the recording policy; its trace, or NULL. */
static json_t *one_run(const struct sg_skill *sk, struct rec_args *a, size_t k, bool *stopped)
{
    struct sg_run_request rq = a->rq;
    rq.front = SG_FRONT_CLI;
    rq.observe_reads = true;
    rq.input = a->inputs[k];
    rq.host_env = environ;
    rq.resolve = a->resolve;
    rq.nresolve = a->nresolve;
    rq.allow_upstream = a->upstream;
    rq.nallow_upstream = a->nupstream;
    struct sg_runner *run = NULL;
    const char *why = NULL;
    struct sg_attach_fe fe = {.fd = a->attached ? sg_attach_connect() : -1};
    if (sg_runner_new(sk, &rq, &run, &why) != 0) {
        fprintf(stderr, "skillgate: %s: %s\n", sk->display, why);
        if (fe.fd >= 0)
            close(fe.fd);
        return NULL;
    }
    const struct sg_run_info *info = sg_runner_info(run);
    struct sg_event_bus bus = {0};
    if (fe.fd >= 0) {
        sg_attach_send(fe.fd, json_pack("{s:s, s:s, s:s}", "type", "hello", "skill",
                                        info->skill_name, "run_id", "a recording run"));
        sg_bus_subscribe(&bus, sg_attach_fe_event, &fe);
    }
    const struct sg_loop_source srcs[] = {
        sg_stopsig_source(on_stop_signal, run),
        {"attached TUI", sg_attach_fe_pollfds, sg_attach_fe_dispatch, NULL, &fe},
    };
    struct sg_runner_opts rop = {.sources = srcs, .nsources = SG_ARRAY_LEN(srcs),
                                 .show = fe.fd >= 0 ? sg_attach_fe_show : NULL, .show_ctx = &fe};
    struct sg_runner_out rout;
    struct sg_diags pd = {0};
    json_t *doc = NULL;
    if (sg_runner_run(run, &bus, &rop, &rout, &pd) == 0) {
        doc = json_incref(rout.doc);
        cleanup_free char *in = sg_sanitize_str(a->inputs[k], 0);
        fprintf(stderr, "skillgate: record run %zu of %zu (input %s): %s (exit %d) in %lld ms%s%s\n",
                k + 1, a->ninputs, in, json_string_value(json_object_get(doc, "status")),
                rout.res.exit_code, (long long)(rout.res.ended_ms - rout.res.started_ms),
                rout.trace_path ? "; trace " : "", rout.trace_path ? rout.trace_path : "");
        const char *st = json_string_value(json_object_get(doc, "status"));
        *stopped = st && !strcmp(st, "interrupted");
        if (fe.fd >= 0)
            sg_attach_send(fe.fd, json_pack("{s:s, s:s, s:s?}", "type", "end", "outcome",
                                            st ? st : "?", "trace", rout.trace_path));
        sg_runner_out_free(&rout);
    }
    sg_print_diags(stderr, &pd);
    sg_diags_free(&pd);
    sg_runner_free(run);
    if (fe.fd >= 0)
        close(fe.fd);
    return doc;
}

/* --write: the new manifest in place of the old, only if it validates. */
static int write_manifest(const struct sg_skill *sk, const char *text, bool yes)
{
    cleanup_free char *path = sg_xasprintf("%s/skillsandbox.yaml", sk->root);
    cleanup_free char *shown = sg_sanitize_str(path, 0);
    if (!yes) {
        FILE *tty = fopen("/dev/tty", "r+");
        if (!tty) {
            fprintf(stderr, "skillgate: --write asks before it replaces %s: no terminal to ask "
                            "on (--yes answers yes)\n", shown);
            return SG_EXIT_INVALID;
        }
        fprintf(tty, "Replace %s with the manifest above? y/N ", shown);
        fflush(tty);
        char line[16] = "";
        bool ok = fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y');
        fclose(tty);
        if (!ok) {
            fprintf(stderr, "skillgate: %s left as it was\n", shown);
            return SG_EXIT_INVALID;
        }
    }
    cleanup_free char *old = NULL;
    size_t oldlen = 0;
    struct stat st;
    bool had = lstat(path, &st) == 0;
    int r = had && !S_ISREG(st.st_mode) ? -EINVAL
            : had ? sg_read_file_capped(path, 1u << 20, &old, &oldlen)
                  : 0;
    if (r < 0) { /* never replace what could not be kept */
        fprintf(stderr, "skillgate: %s is left as it was: %s\n", shown,
                r == -EINVAL ? "it is not a regular file" : strerror(-r));
        return SG_EXIT_INVALID;
    }
    mode_t mode = had ? st.st_mode & 0777 : 0644;
    cleanup_free char *bak = sg_xasprintf("%s.bak", path);
    r = had ? sg_write_file_atomic(bak, old, mode) : 0;
    if (r < 0) {
        fprintf(stderr, "skillgate: cannot keep a copy of %s: %s\n", shown, strerror(-r));
        return SG_EXIT_INVALID;
    }
    r = sg_write_file_atomic(path, text, mode);
    if (r < 0) {
        fprintf(stderr, "skillgate: cannot write %s: %s\n", shown, strerror(-r));
        return SG_EXIT_INVALID;
    }
    struct sg_skill *again = NULL;
    if (sg_skill_load(sk->root, &again) < 0 || sg_diags_blocking(&again->diags)) {
        if (again)
            sg_print_diags(stderr, &again->diags);
        if (had)
            sg_write_file_atomic(path, old, mode);
        else
            unlink(path);
        fprintf(stderr, "skillgate: the written manifest does not validate: %s is left as it "
                        "was\n", shown);
        sg_skill_free(again);
        return SG_EXIT_INVALID;
    }
    sg_skill_free(again);
    fprintf(stderr, "skillgate: wrote %s%s\n", shown, had ? " (the old one: .bak beside it)" : "");
    return SG_EXIT_OK;
}

int cmd_record(int argc, char **argv)
{
    struct rec_args a = {0};
    int st = parse(argc, argv, &a);
    if (st >= 0)
        return st;
    struct sg_skill *sk = NULL;
    if ((st = sg_load_skill_arg(argv[optind], a.rq.work_dir, &sk)) != 0)
        return st;
    if (sg_skill_has_errors(sk))
        sg_print_diags(stderr, &sk->diags);
    /* the recording policy for the runs (record.h); then the declared one
     * back for the comparison */
    struct sg_record_hold hold;
    sg_record_policy(sk, &hold);
    if (a.rq.allow_all)
        fprintf(stderr, "skillgate: WARNING: --allow-all: every request of this recording is "
                        "allowed without asking anyone, on your machine\n");
    json_t *docs[MAX_INPUTS] = {0};
    size_t ndocs = 0;
    bool stopped = false;
    sg_stopsig_install();
    for (size_t k = 0; k < a.ninputs && !stopped; k++) {
        json_t *d = one_run(sk, &a, k, &stopped);
        if (d)
            docs[ndocs++] = d;
    }
    sg_record_policy_restore(sk, &hold);
    if (!ndocs) {
        sg_skill_free(sk);
        return SG_RUN_REFUSED;
    }
    json_t *profile = sg_record_profile(docs, ndocs);
    if (a.rq.allow_all)
        json_object_set_new(profile, "allow_all", json_true());
    char *manifest = sg_record_manifest(sk, profile);
    json_t *cmp = sg_record_compare(sk, profile);
    int rc = SG_EXIT_OK;
    if (a.json) {
        json_t *j = json_pack("{s:s, s:O, s:s?, s:O}", "schema", "skillgate.record/1", "profile",
                              profile, "manifest", manifest, "compare", cmp);
        sg_print_json(stdout, j);
        json_decref(j);
    } else {
        cleanup_free char *text = sg_record_compare_text(cmp);
        printf("%s\n%s", manifest ? manifest : "", text);
        if (a.rq.allow_all)
            printf("\nWARNING: recorded with --allow-all: every request above was allowed "
                   "without anyone checking it.\n");
        if (json_is_true(json_object_get(profile, "incomplete")))
            printf("\nNOTE: a run did not complete: what it would have done next is not in "
                   "this profile.\n");
    }
    fflush(stdout);
    if (a.write && manifest)
        rc = write_manifest(sk, manifest, a.yes);
    free(manifest);
    json_decref(cmp);
    json_decref(profile);
    for (size_t i = 0; i < ndocs; i++)
        json_decref(docs[i]);
    sg_skill_free(sk);
    return rc;
}
