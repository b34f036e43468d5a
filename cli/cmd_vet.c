/* skillgate vet PATH... and vet merge DIR... (issue 53): many skills vetted
 * side by side (--jobs), a deterministic slice of them (--shard I/N) so
 * that N CI runners split one registry, and their parts joined into one
 * report. One skill's vetting is cli/vetskill.c; the records, verdicts and
 * the merge are records/vet.c; the HTML and SARIF records/vetreport.c.
 *
 * Each skill is vetted in a worker process of its own (a crash or a leak
 * in one is its alone; the parent only counts), whose output goes to
 * OUT/logs/KEY.log. The vetting's state (its runs' audit log, a trace
 * folder that keeps one trace) is OUT/state and its configuration an
 * empty OUT/config: the person's grants, rules and settings never decide a
 * vetting run, and the traces a report names are OUT/traces/KEY-N.json. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "digest.h"
#include "discover.h"
#include "sanitize.h"
#include "skill.h"
#include "stopsig.h"
#include "util.h"
#include "vet.h"
#include "vetreport.h"
#include "vetskill.h"

#define VET_JOBS_MAX 64
#define VET_ROOTS_MAX 64

struct vet_item {
    struct sg_skill *skill; /* borrowed from the discovery, or owned (a root that is a skill) */
    bool owned;
    char *rel;
};

struct vet_args {
    const char *roots[VET_ROOTS_MAX];
    size_t nroots;
    const char *out, *rev, *against;
    long long jobs, shard_i, shard_n;
    bool quiet, json;
    struct sg_vet_opts o;
};

static volatile sig_atomic_t vet_stop;

static void on_vet_signal(int signo)
{
    vet_stop = signo;
}

static void vet_help(void)
{
    printf("usage: skillgate vet PATH... [--out DIR] [--jobs N] [--shard I/N] [--rev REV]\n"
           "                     [--timeout S] [--max-runs N] [--static] [--against OLD] [--json]\n"
           "       skillgate vet merge DIR... [--html F] [--sarif F] [--json F] [--against OLD]\n\n"
           "Vet every skill under PATH (a skill, a folder of skills in any layout, a git\n"
           "repository: --rev names a commit) by what its text says and what its code does:\n"
           "each runnable it ships runs in the sandbox with nobody to ask, decoy credentials\n"
           "and no network. A verdict per skill (malicious, needs_review, clean) with the\n"
           "evidence, in OUT/skills/*.json (default OUT: ./vet-out).\n\n"
           "  --jobs N       skills vetted side by side (default 1)\n"
           "  --shard I/N    only the I-th of N slices (by each skill's path)\n"
           "  --timeout S    each run's time bound in seconds (default 15)\n"
           "  --max-runs N   runnables run per skill (default %d)\n"
           "  --static       no run: the static pass only\n"
           "  --against OLD  name what changed since an earlier vetting (its --out folder\n"
           "                 or merged --json file)\n"
           "merge joins shard folders into one report: --html, --sarif (SARIF 2.1.0), --json.\n",
           SG_VET_RUNS_DEFAULT);
}

/* ---- the vetting's own folders ---- */

static int vet_folders(const char *out, char **why)
{
    static const char *const subs[] = {"skills", "traces", "work", "logs", "state",
                                       "config/skillgate"};
    for (size_t i = 0; i < SG_ARRAY_LEN(subs); i++) {
        cleanup_free char *d = sg_xasprintf("%s/%s", out, subs[i]);
        int e = sg_mkdir_p(d, 0755, (uid_t)-1, (gid_t)-1);
        if (e < 0)
            return *why = sg_xasprintf("%s: %s", d, strerror(-e)), e;
    }
    cleanup_free char *cfg = sg_xasprintf("%s/config/skillgate/config.yaml", out);
    int e = sg_write_file_atomic(cfg, "# skillgate vet's own: the traces are kept in ../../traces\n"
                                      "trace_keep: 1\n", 0644);
    if (e < 0)
        return *why = sg_xasprintf("%s: %s", cfg, strerror(-e)), e;
    cleanup_free char *st = sg_xasprintf("%s/state", out);
    cleanup_free char *cf = sg_xasprintf("%s/config", out);
    setenv("XDG_STATE_HOME", st, 1);
    setenv("XDG_CONFIG_HOME", cf, 1);
    return 0;
}

/* ---- a git repository's commit, written out ---- */

static int spawn_into(char *const argv[], int in, int out, const char *index)
{
    pid_t pid = fork();
    if (pid == 0) {
        if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) ||
            (index && setenv("GIT_INDEX_FILE", index, 1) < 0))
            _exit(127);
        int keep[] = {0, 1, 2};
        sg_close_all_but(keep, 3);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static int wait_ok(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* The files of repo's commit rev, written into dest as a checkout of it
 * writes them: read into an index of the vetting's own (never the
 * repository's), then checked out from it under dest. Not `git archive`:
 * it honours the tree's own .gitattributes, where a skill's
 * `scripts/<all> export-ignore` (or export-subst) would leave its code out of
 * what is vetted while every clone of the repository has it. */
static int export_rev(const char *repo, const char *rev, const char *dest, char **why)
{
    if (sg_mkdir_p(dest, 0755, (uid_t)-1, (gid_t)-1) < 0)
        return *why = sg_xasprintf("%s: %s", dest, strerror(errno)), -errno;
    cleanup_free char *index = sg_xasprintf("%s.index", dest);
    cleanup_free char *prefix = sg_xasprintf("%s/", dest);
    char *read[] = {"git", "-C", (char *)repo, "-c", "core.fsmonitor=false", "read-tree",
                    "--end-of-options", (char *)rev, NULL};
    char *out[] = {"git", "-C", (char *)repo, "-c", "core.fsmonitor=false", "checkout-index",
                   "-a", "-f", "--prefix", prefix, NULL};
    (void)unlink(index);
    pid_t g = spawn_into(read, -1, -1, index);
    int e = g > 0 ? wait_ok(g) : -errno;
    if (e == 0) {
        g = spawn_into(out, -1, -1, index);
        e = g > 0 ? wait_ok(g) : -errno;
    }
    (void)unlink(index);
    if (e < 0) {
        cleanup_free char *r = sg_sanitize_str(repo, 0), *v = sg_sanitize_str(rev, 0);
        *why = sg_xasprintf("%s: git could not write out %s (is it a git repository with that "
                            "commit?)",
                            r, v);
        return -EIO;
    }
    return 0;
}

/* ---- the skills under the roots ---- */

static void add_item(struct vet_item **v, size_t *n, size_t *cap, struct sg_skill *sk,
                     bool owned, const char *rel)
{
    sg_grow(v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = (struct vet_item){.skill = sk, .owned = owned, .rel = sg_xstrdup(rel)};
}

/* rel of root below base ("." for base itself), with prefix/ when given. */
static char *rel_of(const char *root, const char *base, const char *prefix)
{
    size_t n = strlen(base);
    const char *r = !strncmp(root, base, n) && root[n] == '/' ? root + n + 1
                    : !strcmp(root, base)                    ? "."
                                                             : root;
    return prefix ? sg_xasprintf("%s/%s", prefix, r) : sg_xstrdup(r);
}

static int find_skills(const char *root, const char *prefix, struct sg_discovery *d,
                       struct vet_item **v, size_t *n, size_t *cap, char **why)
{
    cleanup_free char *real = realpath(root, NULL);
    if (!real)
        return *why = sg_xasprintf("%s: %s", root, strerror(errno)), -errno;
    struct sg_skill *sk = NULL;
    if (sg_skill_load(real, &sk) == 0) { /* a skill: by its folder's name */
        add_item(v, n, cap, sk, true, prefix ? prefix : sk->dirname);
        return 0;
    }
    const char *dirs[] = {real};
    struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1};
    sg_discover(&o, d);
    sg_print_diags(stderr, &d->diags); /* places it could not look in, said */
    for (size_t i = 0; i < d->n; i++) {
        const char *sr = d->v[i].skill->root;
        size_t rn = strlen(real);
        if (strncmp(sr, real, rn) || sr[rn] != '/') { /* a link in the registry leading out */
            cleanup_free char *shown = sg_sanitize_str(d->v[i].skill->display, 0);
            cleanup_free char *to = sg_sanitize_str(sr, 0);
            fprintf(stderr, "skillgate: vet: %s leads out of %s (to %s): not vetted\n", shown,
                    root, to);
            continue;
        }
        cleanup_free char *rel = rel_of(sr, real, prefix);
        add_item(v, n, cap, d->v[i].skill, false, rel);
    }
    return 0;
}

static int item_cmp(const void *a, const void *b)
{
    return strcmp(((const struct vet_item *)a)->rel, ((const struct vet_item *)b)->rel);
}

/* Is rel in shard i of n (1-based)? By the first 8 bytes of its SHA-256:
 * the same slice on every runner, whatever order it found them in. */
static bool in_shard(const char *rel, long long i, long long n)
{
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text(rel, strlen(rel), d);
    char hex[17];
    memcpy(hex, d + strlen("sha256:"), 16);
    hex[16] = '\0';
    uint64_t h = strtoull(hex, NULL, 16);
    return (long long)(h % (uint64_t)n) == i - 1;
}

/* ---- the workers ---- */

struct vet_tally {
    size_t done, n, failed, verdicts[SG_VET_VERDICT_COUNT];
};

/* A skill ClawHub published: its folder holds ClawHub's _meta.json (owner
 * and slug), as `clawhub install` leaves it. Such a skill is judged by
 * OpenClaw's rules, as OpenClaw loads it (its line reading, its names). */
#define VET_META_MAX (64 * 1024)
static bool clawhub_published(const char *root)
{
    cleanup_free char *path = sg_xasprintf("%s/_meta.json", root);
    cleanup_free char *buf = NULL;
    size_t len = 0;
    if (sg_read_file_capped(path, VET_META_MAX, &buf, &len) < 0)
        return false;
    json_t *j = json_loadb(buf, len, 0, NULL);
    bool yes = json_is_string(json_object_get(j, "owner")) &&
               json_is_string(json_object_get(j, "slug"));
    json_decref(j);
    return yes;
}

/* The skill as its ecosystem reads it: ClawHub's by OpenClaw's rules. */
static void as_its_ecosystem_reads_it(struct vet_item *it)
{
    struct sg_skill *sk = NULL;
    if (!clawhub_published(it->skill->root) ||
        sg_skill_load_found(it->skill->root, "published on ClawHub (_meta.json)", &sk) < 0)
        return;
    if (it->owned)
        sg_skill_free(it->skill);
    it->skill = sk;
    it->owned = true;
}

/* In the worker: its output to OUT/logs/KEY.log, the vetting, the exit
 * status the verdict is (10: no record). */
static void worker(struct vet_item *it, const struct vet_args *a)
{
    char key[17];
    sg_vet_key(it->rel, key);
    cleanup_free char *log = sg_xasprintf("%s/logs/%s.log", a->o.out, key);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sg_stopsig_install();
    as_its_ecosystem_reads_it(it);
    cleanup_free char *why = NULL;
    int v = sg_vet_skill(it->skill, it->rel, &a->o, &why);
    if (v < 0)
        fprintf(stderr, "skillgate: vet: %s\n", why ? why : strerror(-v));
    fflush(NULL);
    _exit(v < 0 ? 10 : v);
}

static void said(const struct vet_args *a, struct vet_tally *t, const char *rel, int status)
{
    int v = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    t->done++;
    if (v >= 0 && v < SG_VET_VERDICT_COUNT)
        t->verdicts[v]++;
    else
        t->failed++;
    if (a->quiet)
        return;
    cleanup_free char *shown = sg_sanitize_str(rel, 0);
    fprintf(stderr, "[%zu/%zu] %s: %s\n", t->done, t->n, shown,
            v >= 0 && v < SG_VET_VERDICT_COUNT
                ? sg_vet_verdict_name((enum sg_vet_verdict)v)
                : WIFSIGNALED(status) ? "the vetting process was killed" : "no record (see its log)");
}

struct slot {
    pid_t pid;
    const char *rel;
};

/* A worker that ended without a record (it failed, it was killed): the
 * skill still has one, needs review, so that no report leaves it out. */
static void not_vetted(const struct vet_args *a, const char *rel, int status)
{
    char key[17];
    sg_vet_key(rel, key);
    cleanup_free char *path = sg_xasprintf("%s/skills/%s.json", a->o.out, key);
    struct stat st;
    if (lstat(path, &st) == 0)
        return; /* it wrote one before it ended */
    cleanup_free char *why =
        WIFSIGNALED(status)
            ? sg_xasprintf("its vetting was killed (signal %d): see logs/%s.log", WTERMSIG(status),
                           key)
            : sg_xasprintf("its vetting failed: see logs/%s.log", key);
    json_t *rec = sg_vet_not_vetted(rel, why);
    cleanup_free char *text = json_dumps(rec, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    json_decref(rec);
    if (!text || sg_write_file_atomic(path, text, 0644) < 0)
        fprintf(stderr, "skillgate: vet: %s: %s\n", path, strerror(errno));
}

static void reap_one(const struct vet_args *a, struct slot *slots, size_t nslots,
                     struct vet_tally *t)
{
    int st;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0) {
        if (errno == EINTR && vet_stop)
            for (size_t i = 0; i < nslots; i++)
                if (slots[i].pid > 0)
                    kill(slots[i].pid, SIGTERM);
        return;
    }
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].pid == pid) {
            said(a, t, slots[i].rel, st);
            if (!WIFEXITED(st) || WEXITSTATUS(st) >= SG_VET_VERDICT_COUNT)
                not_vetted(a, slots[i].rel, st);
            slots[i].pid = 0;
        }
}

static size_t busy(const struct slot *slots, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += slots[i].pid > 0;
    return k;
}

static void run_workers(struct vet_item *items, size_t n, const struct vet_args *a,
                        struct vet_tally *t)
{
    struct slot slots[VET_JOBS_MAX] = {{0}};
    size_t nslots = (size_t)a->jobs, next = 0;
    t->n = n;
    while ((next < n && !vet_stop) || busy(slots, nslots)) {
        if (next < n && !vet_stop && busy(slots, nslots) < nslots) {
            size_t s = 0;
            while (slots[s].pid > 0)
                s++;
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0)
                worker(&items[next], a);
            if (pid > 0)
                slots[s] = (struct slot){.pid = pid, .rel = items[next].rel};
            next++;
            continue;
        }
        reap_one(a, slots, nslots, t);
    }
}

/* ---- the shard's summary ---- */

static long long wall_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000LL + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static json_t *summary(const struct vet_args *a, const struct vet_tally *t, long long ms)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    json_t *roots = json_array();
    for (size_t i = 0; i < a->nroots; i++)
        json_array_append_new(roots, sg_vet_text(a->roots[i])); /* escaped when not UTF-8 */
    cleanup_free char *shard = sg_xasprintf("%lld/%lld", a->shard_i, a->shard_n);
    return json_pack("{s:s, s:s, s:o, s:s?, s:s, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I, s:I, "
                     "s:f, s:b}",
                     "schema", "skillgate.vetrun/1", "skillgate_version", SG_VERSION, "roots",
                     roots, "rev", a->rev, "shard", shard, "jobs", (json_int_t)a->jobs, "skills",
                     (json_int_t)t->n, "verdicts", "malicious",
                     (json_int_t)t->verdicts[SG_VET_MALICIOUS], "needs_review",
                     (json_int_t)t->verdicts[SG_VET_REVIEW], "clean",
                     (json_int_t)t->verdicts[SG_VET_CLEAN], "failed", (json_int_t)t->failed,
                     "wall_ms", (json_int_t)ms, "peak_rss_kb", (json_int_t)ru.ru_maxrss,
                     "skills_per_minute", ms > 0 ? t->done * 60000.0 / (double)ms : 0.0,
                     "interrupted", vet_stop != 0);
}

static void print_summary(FILE *f, json_t *s, const char *out)
{
    json_t *v = json_object_get(s, "verdicts");
    cleanup_free char *o = sg_sanitize_str(out, 0);
    fprintf(f,
            "skillgate: vetted %lld skills in %.1f s (%.1f a minute, peak %lld MB): "
            "%lld malicious, %lld need review, %lld clean%s; records in %s/skills\n",
            (long long)json_integer_value(json_object_get(s, "skills")),
            (double)json_integer_value(json_object_get(s, "wall_ms")) / 1000.0,
            json_real_value(json_object_get(s, "skills_per_minute")),
            (long long)json_integer_value(json_object_get(s, "peak_rss_kb")) / 1024,
            (long long)json_integer_value(json_object_get(v, "malicious")),
            (long long)json_integer_value(json_object_get(v, "needs_review")),
            (long long)json_integer_value(json_object_get(v, "clean")),
            json_integer_value(json_object_get(s, "failed")) ? " (some not vetted: see logs/)"
                                                            : "",
            o);
}

/* ---- vet PATH... ---- */

static int parse_shard(const char *s, long long *i, long long *n)
{
    char *slash = strchr(s, '/');
    if (!slash)
        return -EINVAL;
    cleanup_free char *a = sg_xstrndup(s, (size_t)(slash - s));
    if (sg_parse_ll(a, 1, 100000, i) < 0 || sg_parse_ll(slash + 1, 1, 100000, n) < 0 || *i > *n)
        return -EINVAL;
    return 0;
}

/* -1: go on; else the exit status */
static int vet_option(struct vet_args *a, int c)
{
    long long v;
    switch (c) {
    case 'h':
        vet_help();
        return SG_EXIT_OK;
    case 'o': a->out = optarg; return -1;
    case 'r': a->rev = optarg; return -1;
    case 'A': a->against = optarg; return -1;
    case 'q': a->quiet = true; return -1;
    case 'J': a->json = true; return -1;
    case 'S': a->o.static_only = true; return -1;
    case 'j':
        if (sg_parse_ll(optarg, 1, VET_JOBS_MAX, &a->jobs) == 0)
            return -1;
        fprintf(stderr, "skillgate: vet: --jobs takes 1..%d\n", VET_JOBS_MAX);
        return SG_EXIT_USAGE;
    case 's':
        if (parse_shard(optarg, &a->shard_i, &a->shard_n) == 0)
            return -1;
        fprintf(stderr, "skillgate: vet: --shard takes I/N, 1 <= I <= N (2/4: the second of "
                        "four slices)\n");
        return SG_EXIT_USAGE;
    case 't':
        if (sg_parse_ll(optarg, 1, 3600, &a->o.timeout_s) == 0)
            return -1;
        fprintf(stderr, "skillgate: vet: --timeout takes whole seconds, 1..3600\n");
        return SG_EXIT_USAGE;
    case 'm':
        if (sg_parse_ll(optarg, 0, 1000, &v) == 0)
            return a->o.max_runs = (size_t)v, -1;
        fprintf(stderr, "skillgate: vet: --max-runs takes 0..1000\n");
        return SG_EXIT_USAGE;
    default:
        break;
    }
    sg_command_usage(stderr, "vet");
    return SG_EXIT_USAGE;
}

static int parse_vet(int argc, char **argv, struct vet_args *a)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},          {"out", required_argument, NULL, 'o'},
        {"jobs", required_argument, NULL, 'j'},    {"shard", required_argument, NULL, 's'},
        {"rev", required_argument, NULL, 'r'},     {"timeout", required_argument, NULL, 't'},
        {"max-runs", required_argument, NULL, 'm'}, {"static", no_argument, NULL, 'S'},
        {"against", required_argument, NULL, 'A'}, {"json", no_argument, NULL, 'J'},
        {"quiet", no_argument, NULL, 'q'},         {NULL, 0, NULL, 0}};
    *a = (struct vet_args){.out = "vet-out", .jobs = 1, .shard_i = 1, .shard_n = 1,
                           .o = {.timeout_s = 15, .max_runs = SG_VET_RUNS_DEFAULT}};
    int c;
    while ((c = sg_getopt(argc, argv, "hqo:j:s:r:t:m:", opts)) != -1) {
        int rc = vet_option(a, c);
        if (rc >= 0)
            return rc;
    }
    for (int i = optind; i < argc; i++) {
        if (a->nroots == VET_ROOTS_MAX) {
            fprintf(stderr, "skillgate: vet: at most %d paths\n", VET_ROOTS_MAX);
            return SG_EXIT_USAGE;
        }
        a->roots[a->nroots++] = argv[i];
    }
    if (!a->nroots) {
        fprintf(stderr, "skillgate: vet: name a skill, a folder of skills or a git repository\n");
        sg_command_usage(stderr, "vet");
        return SG_EXIT_USAGE;
    }
    return -1;
}

/* A root's folder to look in: itself, or its commit written out under
 * OUT/src/N (--rev). */
static char *root_dir(const struct vet_args *a, size_t i, char **why)
{
    if (!a->rev)
        return sg_xstrdup(a->roots[i]);
    char *dest = sg_xasprintf("%s/src/%zu", a->o.out, i);
    if (export_rev(a->roots[i], a->rev, dest, why) < 0) {
        free(dest);
        return NULL;
    }
    return dest;
}

struct vet_found {
    struct sg_discovery d[VET_ROOTS_MAX];
    struct vet_item *v;
    size_t n, cap;
};

static void found_free(struct vet_found *f, size_t nroots)
{
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].owned)
            sg_skill_free(f->v[i].skill);
        free(f->v[i].rel);
    }
    free(f->v);
    for (size_t i = 0; i < nroots; i++)
        sg_discovery_free(&f->d[i]);
}

/* Every skill of the roots in this shard, sorted by path. */
static int gather(const struct vet_args *a, struct vet_found *f, char **why)
{
    for (size_t i = 0; i < a->nroots; i++) {
        cleanup_free char *dir = root_dir(a, i, why);
        if (!dir)
            return -EIO;
        cleanup_free char *prefix = NULL;
        if (a->nroots > 1) {
            const char *b = strrchr(a->roots[i], '/');
            prefix = sg_xasprintf("%zu-%s", i + 1, b && b[1] ? b + 1 : a->roots[i]);
        }
        int e = find_skills(dir, prefix, &f->d[i], &f->v, &f->n, &f->cap, why);
        if (e < 0)
            return e;
    }
    qsort(f->v, f->n, sizeof *f->v, item_cmp);
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (in_shard(f->v[i].rel, a->shard_i, a->shard_n)) {
            f->v[k++] = f->v[i];
            continue;
        }
        if (f->v[i].owned)
            sg_skill_free(f->v[i].skill);
        free(f->v[i].rel);
    }
    f->n = k;
    return 0;
}

static void vet_signals(void)
{
    struct sigaction sa = {.sa_handler = on_vet_signal}; /* no SA_RESTART: waitpid wakes */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Does out/sub hold anything? */
static bool holds_something(const char *out, const char *sub)
{
    cleanup_free char *d = sg_xasprintf("%s/%s", out, sub);
    DIR *dir = opendir(d);
    if (!dir)
        return false;
    struct dirent *e;
    bool any = false;
    while (!any && (e = readdir(dir)))
        any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dir);
    return any;
}

static int vet_out(struct vet_args *a, char **why)
{
    if (sg_mkdir_p(a->out, 0755, (uid_t)-1, (gid_t)-1) < 0)
        return *why = sg_xasprintf("%s: %s", a->out, strerror(errno)), -errno;
    char *real = realpath(a->out, NULL);
    if (!real)
        return *why = sg_xasprintf("%s: %s", a->out, strerror(errno)), -errno;
    a->o.out = real;
    /* An earlier vetting's records (a skill since removed, another
     * registry) or its --rev export (whose files tar would add to) would
     * be read as this one's: a vetting starts in a folder of its own. */
    static const char *const mine[] = {"skills", "traces", "src"};
    for (size_t i = 0; i < SG_ARRAY_LEN(mine); i++)
        if (holds_something(real, mine[i]))
            return *why = sg_xasprintf("%s/%s holds an earlier vetting: name an empty --out "
                                       "folder (or remove it; --against reads an earlier one)",
                                       real, mine[i]),
                   -EEXIST;
    if (a->against) {
        a->o.old = json_array();
        int e = sg_vet_load(a->against, a->o.old, why);
        if (e < 0)
            return e;
    }
    return vet_folders(real, why);
}

static int vet_main(struct vet_args *a)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cleanup_free char *why = NULL;
    struct vet_found f = {0};
    int e = vet_out(a, &why);
    if (e == 0)
        e = gather(a, &f, &why);
    if (e < 0) {
        cleanup_free char *w = sg_sanitize_str(why ? why : strerror(-e), 0);
        fprintf(stderr, "skillgate: vet: %s\n", w);
        found_free(&f, a->nroots);
        return SG_EXIT_USAGE;
    }
    vet_signals();
    struct vet_tally t = {0};
    run_workers(f.v, f.n, a, &t);
    json_t *s = summary(a, &t, wall_ms(&t0));
    cleanup_free char *sp = sg_xasprintf("%s/vet.json", a->o.out);
    cleanup_free char *text = json_dumps(s, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    if (!text || sg_write_file_atomic(sp, text, 0644) < 0)
        fprintf(stderr, "skillgate: vet: %s: %s\n", sp, strerror(errno));
    if (a->json)
        sg_print_json(stdout, s);
    print_summary(stderr, s, a->o.out);
    json_decref(s);
    found_free(&f, a->nroots);
    return vet_stop ? 128 + vet_stop : t.failed ? SG_EXIT_INVALID : SG_EXIT_OK;
}

/* ---- vet merge DIR... ---- */

struct merge_args {
    const char *dirs[VET_ROOTS_MAX * 16];
    size_t ndirs;
    const char *html, *sarif, *json, *against;
};

static int parse_merge(int argc, char **argv, struct merge_args *m)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},      {"html", required_argument, NULL, 'H'},
        {"sarif", required_argument, NULL, 'S'}, {"json", required_argument, NULL, 'J'},
        {"against", required_argument, NULL, 'A'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = sg_getopt(argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h': vet_help(); return SG_EXIT_OK;
        case 'H': m->html = optarg; break;
        case 'S': m->sarif = optarg; break;
        case 'J': m->json = optarg; break;
        case 'A': m->against = optarg; break;
        default: sg_command_usage(stderr, "vet"); return SG_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc && m->ndirs < SG_ARRAY_LEN(m->dirs); i++)
        m->dirs[m->ndirs++] = argv[i];
    if (!m->ndirs || optind + (int)m->ndirs != argc) {
        fprintf(stderr, "skillgate: vet merge: name the --out folders of the shards (at most "
                        "%zu)\n", SG_ARRAY_LEN(m->dirs));
        return SG_EXIT_USAGE;
    }
    return -1;
}

/* One output of the merge: whole or not at all. */
static int write_out(const char *path, json_t *doc, int fmt)
{
    cleanup_free char *tmp = sg_xasprintf("%s.skillgate-tmp", path);
    FILE *f = fopen(tmp, "we");
    int e = !f ? -errno
            : fmt < 0 ? (json_dumpf(doc, f, JSON_INDENT(1) | JSON_ENSURE_ASCII) < 0 ? -EIO : 0)
                      : sg_vetreport_write(doc, fmt, f);
    if (f && fmt < 0 && e == 0 && fputc('\n', f) == EOF)
        e = -EIO;
    if (f && fclose(f) != 0 && e == 0)
        e = -errno;
    if (e == 0 && rename(tmp, path) < 0)
        e = -errno;
    if (e < 0) {
        unlink(tmp);
        cleanup_free char *p = sg_sanitize_str(path, 0);
        fprintf(stderr, "skillgate: vet merge: %s: %s\n", p, strerror(-e));
    }
    return e;
}

static int merge_main(struct merge_args *m)
{
    json_t *recs = json_array(), *old = m->against ? json_array() : NULL, *doc = NULL;
    cleanup_free char *why = NULL;
    int e = 0;
    for (size_t i = 0; i < m->ndirs && e == 0; i++)
        e = sg_vet_load(m->dirs[i], recs, &why);
    if (e == 0 && old)
        e = sg_vet_load(m->against, old, &why);
    if (e == 0)
        e = sg_vet_merge(recs, old, &doc, &why);
    json_decref(recs);
    json_decref(old);
    if (e < 0) {
        cleanup_free char *w = sg_sanitize_str(why ? why : strerror(-e), 0);
        fprintf(stderr, "skillgate: vet merge: %s\n", w);
        return SG_EXIT_USAGE;
    }
    int bad = 0;
    if (m->json)
        bad |= write_out(m->json, doc, -1) < 0;
    if (m->html)
        bad |= write_out(m->html, doc, SG_VETREPORT_HTML) < 0;
    if (m->sarif)
        bad |= write_out(m->sarif, doc, SG_VETREPORT_SARIF) < 0;
    json_t *t = json_object_get(doc, "totals");
    fprintf(stderr, "skillgate: vet merge: %lld skills: %lld malicious, %lld need review, %lld "
                    "clean\n",
            (long long)json_integer_value(json_object_get(t, "skills")),
            (long long)json_integer_value(json_object_get(t, "malicious")),
            (long long)json_integer_value(json_object_get(t, "needs_review")),
            (long long)json_integer_value(json_object_get(t, "clean")));
    if (!m->json && !m->html && !m->sarif)
        sg_print_json(stdout, doc);
    json_decref(doc);
    return bad ? SG_EXIT_INVALID : SG_EXIT_OK;
}

int cmd_vet(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "merge")) {
        struct merge_args m = {0};
        int rc = parse_merge(argc - 1, argv + 1, &m);
        return rc >= 0 ? rc : merge_main(&m);
    }
    struct vet_args a;
    int rc = parse_vet(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = vet_main(&a);
    free((char *)a.o.out);
    json_decref(a.o.old);
    return rc;
}
