/* What a skill actually needs (record.h). */
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#include <yaml.h>

#include "config.h"
#include "homes.h"
#include "policy.h"
#include "record.h"
#include "sanitize.h"
#include "tracediff.h"
#include "util.h"

/* ---- the recording policy ---- */

void sg_record_policy(struct sg_skill *sk, struct sg_record_hold *h)
{
    struct sg_policy *pol = &sk->policy;
    *h = (struct sg_record_hold){.negress = pol->negress, .nwrite = pol->nwrite,
                                 .nread = pol->nread, .read = pol->read,
                                 .restricted = pol->tools_restricted, .held = true};
    h->shown = sg_xcalloc(pol->nread + pol->nwrite + 1, sizeof *h->shown);
    if (pol->nread)
        memcpy(h->shown, pol->read, pol->nread * sizeof *h->shown);
    if (pol->nwrite)
        memcpy(h->shown + pol->nread, pol->write, pol->nwrite * sizeof *h->shown);
    pol->read = h->shown, pol->nread += pol->nwrite;
    pol->negress = 0, pol->nwrite = 0, pol->tools_restricted = false;
}

void sg_record_policy_restore(struct sg_skill *sk, struct sg_record_hold *h)
{
    if (!h->held)
        return;
    struct sg_policy *pol = &sk->policy;
    pol->negress = h->negress, pol->nwrite = h->nwrite, pol->tools_restricted = h->restricted;
    pol->read = h->read, pol->nread = h->nread;
    free(h->shown);
    h->shown = NULL, h->held = false;
}

/* ---- the profile ---- */

static void add_unique(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach (arr, i, v)
        if (!strcmp(json_string_value(v), s))
            return;
    json_array_append_new(arr, json_string(s));
}

static void keep_max(json_t *o, const char *key, json_int_t v)
{
    json_t *cur = json_object_get(o, key);
    if (v > (1LL << 50)) /* a hostile trace's number: past any limit anyway */
        v = 1LL << 50;
    if (v >= 0 && (!json_is_integer(cur) || json_integer_value(cur) < v))
        json_object_set_new(o, key, json_integer(v));
}

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void sort_strings(json_t *arr)
{
    sg_json_array_sort(arr, cmp_json_str);
}

static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0' || (n == 1 && *dir == '/'));
}

/* The invoking user's home without a trailing '/', or NULL (none, or "/"). */
static const char *record_home(void)
{
    static char buf[PATH_MAX];
    const char *h = sg_invoking_home();
    if (!h || *h != '/' || snprintf(buf, sizeof buf, "%s", h) >= (int)sizeof buf)
        return NULL;
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
        buf[n - 1] = '\0';
    return strcmp(buf, "/") ? buf : NULL;
}

/* The invoking user's home as it really is (its symlinks resolved), or
 * NULL: a skill may name the home by either. */
static const char *record_home_real(void)
{
    static char buf[PATH_MAX];
    static bool done;
    const char *h = record_home();
    if (!done && h) {
        cleanup_free char *r = realpath(h, NULL);
        if (r && strcmp(r, "/") && snprintf(buf, sizeof buf, "%s", r) < (int)sizeof buf)
            done = true;
    }
    return done ? buf : NULL;
}

/* On the credential list, in home. */
static bool home_credential_in(const char *home, const char *path)
{
    if (!home || !within(path, home) || !path[strlen(home)])
        return false;
    for (size_t i = 0; sg_sensitive_home_paths[i]; i++) {
        char cred[PATH_MAX];
        if (snprintf(cred, sizeof cred, "%s/%s", home, sg_sensitive_home_paths[i]) <
                (int)sizeof cred &&
            within(path, cred))
            return true;
    }
    return false;
}

/* At or below a dot entry of the home in home (~/.config/gh/hosts.yml,
 * ~/.local/share/keyrings/login.keyring), or on the credential list: where
 * every program keeps its tokens, keys and sessions. A recording never
 * declares such a path, whatever the skill opened (issue 34, item 7); the
 * manifest at most names it in a comment. A declared write path the skill
 * used is the exception (write_entries), unless on the credential list. */
static bool home_private_in(const char *home, const char *path)
{
    if (!home || !within(path, home) || !path[strlen(home)])
        return false;
    return path[strlen(home) + 1] == '.' || home_credential_in(home, path);
}

static bool home_private(const char *path)
{
    return home_private_in(record_home(), path) || home_private_in(record_home_real(), path);
}

/* On the credential list: never declared, even where the manifest did. */
static bool home_credential(const char *path)
{
    return home_credential_in(record_home(), path) ||
           home_credential_in(record_home_real(), path);
}

/* Places a recording never declares readable, however the skill reached
 * for them: the host's kernel and daemons' (/sys, /run: the sandbox does
 * not offer them), skillgate's own folders, shared scratch (what lies
 * directly in /tmp: others' sockets and tickets), other users' homes, and
 * whole folders that hold everything of a kind ("/" and its top folders,
 * the folders above the home, the home itself and its own dot folders such
 * as ~/.config, which hold every program's tokens; a file below one is
 * at most "needed", never declared: home_private). Other homes are also
 * wherever passwd puts them (homes.h). What was looked for there is
 * listed for a person to judge. */
static bool never_declared(const char *home, const struct sg_homes *homes, const char *path)
{
    static const char *const system[] = {"/sys", "/run", "/var/run", "/boot", "/proc", "/dev"};
    for (size_t i = 0; i < SG_ARRAY_LEN(system); i++)
        if (within(path, system[i]))
            return true;
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) /* "/" or a top folder */
        return true;
    static const char *const scratch[] = {"/tmp/", "/var/tmp/"};
    for (size_t i = 0; i < SG_ARRAY_LEN(scratch); i++)
        if (!strncmp(path, scratch[i], strlen(scratch[i])) &&
            !strchr(path + strlen(scratch[i]), '/'))
            return true;
    bool mine = home && within(path, home);
    if ((!strncmp(path, "/home/", 6) && !mine) || (within(path, "/root") && !mine))
        return true; /* another user's home, or the folder of homes */
    for (size_t i = 0; homes && i < homes->n; i++) /* wherever passwd puts one */
        if (!homes->v[i].yours && (within(path, homes->v[i].path) ||
                                   within(path, homes->v[i].real) ||
                                   within(homes->v[i].real, path)))
            return true;
    if (home && (within(home, path) || /* the home, or a folder above it */
                 (mine && path[strlen(home) + 1] == '.' && !strchr(path + strlen(home) + 1, '/'))))
        return true;
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    size_t w = 0;
    enum sg_own_rel rel = sg_own_dirs_relation(&own, path, &w);
    sg_own_dirs_free(&own);
    return rel != SG_OWN_NONE;
}

/* A recording's files_read event (reads.h) folded into the profile's reads:
 * found (there in the sandbox), needed (opened, not shown, on this
 * machine), looked (only looked up, not shown, on this machine), absent
 * (nowhere), unchecked (not looked for here: a link on the way, a network
 * or automount filesystem), credential (a decoy or a mask answered),
 * "system" (never declared: never_declared). What the skill made in its
 * private views after looking for it is its own, not kept. */
static void fold_reads(json_t *reads, json_t *data, bool completed)
{
    json_t *o = json_object_get(reads, "opens");
    json_object_set_new(reads, "opens", json_integer(json_integer_value(o) +
                                                     json_integer_value(json_object_get(data,
                                                                                       "opens"))));
    /* a path not kept, an open not named, a run cut short: a declared read
     * may have been used unseen */
    if (json_integer_value(json_object_get(data, "dropped")) > 0 ||
        json_integer_value(json_object_get(data, "unnamed")) > 0 || !completed)
        json_object_set_new(reads, "partial", json_true());
    const char *home = record_home();
    struct sg_homes homes;
    sg_homes_get(&homes);
    size_t i;
    json_t *it;
    json_array_foreach (json_object_get(data, "paths"), i, it) {
        const char *path = json_string_value(json_object_get(it, "path"));
        if (!path || *path != '/' || json_is_true(json_object_get(it, "made")))
            continue;
        const char *cls = json_string_value(json_object_get(it, "class"));
        bool escaped = json_is_true(json_object_get(it, "escaped"));
        /* an escaped name counts for its folder, and is never declared;
         * only a regular file it opened is a need (a folder it listed, or
         * a path it looked up, is for a person to judge) */
        bool need = json_is_true(json_object_get(it, "opened")) &&
                    json_is_true(json_object_get(it, "file"));
        const char *to = cls && !strcmp(cls, "credential")                ? "credential"
                         : json_is_true(json_object_get(it, "found"))     ? "found"
                         : escaped                                        ? "absent"
                         : json_is_true(json_object_get(it, "unchecked")) ? "unchecked"
                         : !json_is_true(json_object_get(it, "on_host"))  ? "absent"
                         : never_declared(home, &homes, path)             ? "system"
                         : need                                           ? "needed"
                                                                          : "looked";
        add_unique(json_object_get(reads, to), path);
    }
    sg_homes_free(&homes);
}

/* The working folder the runs worked in ("work"), when every run worked in
 * the same person's folder: what they wrote there is declared as $CWD, so
 * the manifest holds from any working folder. */
static void record_work(json_t *p, json_t *doc, bool first)
{
    json_t *inv = json_object_get(doc, "invocation");
    const char *cwd = json_string_value(json_object_get(inv, "cwd"));
    bool work = json_is_true(json_object_get(inv, "working_folder")) && cwd && cwd[0] == '/';
    const char *had = json_string_value(json_object_get(p, "work"));
    if (first && work)
        json_object_set_new(p, "work", json_string(cwd));
    else if (!first && had && (!work || strcmp(had, cwd)))
        json_object_del(p, "work");
}

json_t *sg_record_profile(json_t *const *traces, size_t n)
{
    json_t *p = json_pack("{s:I, s:{}, s:[], s:[], s:[], s:{s:[], s:[], s:[]}, s:[]}", "runs",
                          (json_int_t)n, "hosts", "programs", "writes", "discarded", "tried",
                          "hosts", "programs", "paths", "traces");
    json_t *hosts = json_object_get(p, "hosts"), *tried = json_object_get(p, "tried");
    json_t *reads = json_pack("{s:b, s:I, s:[], s:[], s:[], s:[], s:[], s:[], s:[]}", "observed",
                              n > 0, "opens", (json_int_t)0, "found", "needed", "looked",
                              "absent", "unchecked", "credential", "system");
    json_object_set_new(p, "reads", reads);
    for (size_t t = 0; t < n; t++) {
        json_t *doc = traces[t];
        /* reads: from the run's files_read event; a run without one (not a
         * recording, or it never started) leaves them unobserved */
        bool seen = false;
        size_t e;
        json_t *ev;
        json_array_foreach (json_object_get(doc, "events"), e, ev) {
            json_t *data = json_object_get(ev, "data");
            const char *kind = json_string_value(json_object_get(ev, "kind"));
            if (kind && !strcmp(kind, "files_read") && json_is_object(data) && !seen) {
                const char *st = json_string_value(json_object_get(doc, "status"));
                fold_reads(reads, data, st && !strcmp(st, "completed"));
                seen = true;
            }
        }
        if (!seen)
            json_object_set_new(reads, "observed", json_false());
        json_t *f = sg_trace_facts(doc);
        const char *key;
        json_t *it;
        json_object_foreach (json_object_get(f, "hosts"), key, it) {
            const char *st = json_string_value(json_object_get(it, "state"));
            if (!strcmp(st, "reached")) {
                json_t *ports = json_object_get(hosts, key);
                if (!ports) {
                    ports = json_array();
                    json_object_set_new(hosts, key, ports);
                }
                size_t i;
                json_t *port;
                json_array_foreach (json_object_get(it, "ports"), i, port) {
                    size_t k;
                    json_t *q;
                    bool have = false;
                    json_array_foreach (ports, k, q)
                        have |= json_integer_value(q) == json_integer_value(port);
                    if (!have)
                        json_array_append(ports, port);
                }
            } else if (!strcmp(st, "refused")) {
                add_unique(json_object_get(tried, "hosts"), key);
            }
        }
        json_object_foreach (json_object_get(f, "programs"), key, it)
            add_unique(!strcmp(json_string_value(json_object_get(it, "state")), "ran")
                           ? json_object_get(p, "programs")
                           : json_object_get(tried, "programs"),
                       key);
        json_object_foreach (json_object_get(f, "paths"), key, it) {
            const char *st = json_string_value(json_object_get(it, "state"));
            if (!strcmp(st, "read")) /* the reads' own fold, from the same event */
                continue;
            add_unique(!strcmp(st, "written")     ? json_object_get(p, "writes")
                       : !strcmp(st, "discarded") ? json_object_get(p, "discarded")
                                                  : json_object_get(tried, "paths"),
                       key);
        }
        json_decref(f);
        record_work(p, doc, t == 0);
        keep_max(p, "duration_ms", json_integer_value(json_object_get(doc, "duration_ms")));
        json_t *out = json_object_get(doc, "output");
        keep_max(p, "output_bytes", json_integer_value(json_object_get(out, "stdout_bytes")));
        keep_max(p, "output_bytes", json_integer_value(json_object_get(out, "stderr_bytes")));
        json_t *peak = json_object_get(json_object_get(doc, "usage"), "memory_peak_bytes");
        if (json_is_integer(peak))
            keep_max(p, "memory_peak_bytes", json_integer_value(peak));
        json_t *pids = json_object_get(json_object_get(doc, "usage"), "pids_peak");
        if (json_is_integer(pids))
            keep_max(p, "pids_peak", json_integer_value(pids));
        const char *status = json_string_value(json_object_get(doc, "status"));
        if (status && strcmp(status, "completed"))
            json_object_set_new(p, "incomplete", json_true());
        json_t *id = json_object_get(doc, "trace_id");
        if (json_is_string(id))
            json_array_append(json_object_get(p, "traces"), id);
    }
    sort_strings(json_object_get(p, "programs"));
    sort_strings(json_object_get(p, "writes"));
    sort_strings(json_object_get(p, "discarded"));
    static const char *const lists[] = {"hosts", "programs", "paths"};
    for (size_t i = 0; i < 3; i++)
        sort_strings(json_object_get(tried, lists[i]));
    static const char *const rl[] = {"found",     "needed",     "looked", "absent",
                                     "unchecked", "credential", "system"};
    for (size_t i = 0; i < SG_ARRAY_LEN(rl); i++)
        sort_strings(json_object_get(reads, rl[i]));
    return p;
}

/* ---- the folders the writes need ---- */

/* The declared write path holding file, or NULL. */
static const struct sg_path *declared_write(const struct sg_skill *sk, const char *file)
{
    for (size_t i = 0; i < sk->policy.nwrite; i++)
        if (within(file, sk->policy.write[i].path))
            return &sk->policy.write[i];
    return NULL;
}

/* A recording runs with the declared write paths read-only (sg_record_policy):
 * a file the skill made under one where the folder was not there yet
 * landed in the sandbox's private view and was "discarded". It is a use of
 * that declared path, so it moves to the writes (once; the profile keeps
 * it there). */
static void declared_discards(const struct sg_skill *sk, json_t *profile)
{
    json_t *disc = json_object_get(profile, "discarded"), *kept = json_array();
    size_t i;
    json_t *v;
    json_array_foreach (disc, i, v) {
        if (declared_write(sk, json_string_value(v)))
            add_unique(json_object_get(profile, "writes"), json_string_value(v));
        else
            json_array_append(kept, v);
    }
    if (json_array_size(kept) != json_array_size(disc)) {
        json_object_set(profile, "discarded", kept);
        sort_strings(json_object_get(profile, "writes"));
    }
    json_decref(kept);
}

/* A written file's folder, unless that folder is one no manifest may
 * declare writable (/, a system folder, the home, the skill's own): then
 * the file itself. */
static char *write_entry(const struct sg_skill *sk, const char *home, const char *file)
{
    static const char *const system[] = {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64",
                                         "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
                                         "/usr", "/var", "/home", "/tmp"};
    char *dir = sg_xstrdup(file);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    bool keep_file = (home && !strcmp(dir, home)) || !strcmp(dir, sk->root);
    for (size_t i = 0; i < SG_ARRAY_LEN(system); i++)
        keep_file |= !strcmp(dir, system[i]);
    if (keep_file) {
        free(dir);
        return sg_xstrdup(file);
    }
    return dir;
}

/* all sorted (taken), without what lies inside another of its entries */
static json_t *drop_covered(json_t *all)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    sort_strings(all);
    json_array_foreach (all, i, v) {
        size_t k;
        json_t *o;
        bool covered = false;
        json_array_foreach (all, k, o)
            covered |= k != i && within(json_string_value(v), json_string_value(o)) &&
                       strcmp(json_string_value(v), json_string_value(o));
        if (!covered)
            json_array_append(out, v);
    }
    json_decref(all);
    return out;
}

static char *tilde(const char *home, const char *path);
static bool home_private(const char *path);

/* What was written, as folders (write_entry); what lies at or below a dot
 * entry of the home or on the credential list goes to withheld instead.
 * A folder of the working folder work (NULL: none) is $CWD or $CWD/DIR. */
static json_t *write_entries(const struct sg_skill *sk, json_t *writes, json_t *withheld,
                             const char *work)
{
    const char *home = sg_invoking_home();
    json_t *all = json_array();
    size_t i;
    json_t *v;
    json_array_foreach (writes, i, v) {
        /* a folder it made is that folder (an output folder), never its parent */
        struct stat st;
        const char *wp = json_string_value(v);
        const struct sg_path *dw = declared_write(sk, wp);
        if (dw && !home_credential(dw->path)) {
            /* a declared write path it used: the author's choice, kept as
             * written (~/ and all), in a dot folder of the home too (an
             * app's data folder); never one on the credential list */
            add_unique(all, dw->declared);
            continue;
        }
        bool made_dir = work && within(wp, work) && strcmp(wp, work) &&
                        lstat(wp, &st) == 0 && S_ISDIR(st.st_mode);
        cleanup_free char *e = made_dir ? sg_xstrdup(wp) : write_entry(sk, home, wp);
        if (home_private(e) || home_private(json_string_value(v))) {
            cleanup_free char *t = tilde(record_home(), json_string_value(v));
            add_unique(withheld, t);
            continue;
        }
        if (work && within(e, work) && strcmp(work, sk->root)) {
            /* a file of the working folder itself is the folder: a file name
             * is the run's, another run writes another */
            size_t n = strlen(work);
            cleanup_free char *c = sg_xasprintf("$CWD%s", e[n] == '/' ? e + n : "");
            if (!made_dir && !strcmp(e, wp)) /* the file itself (work is a home) */
                c[4] = '\0';
            add_unique(all, c);
            continue;
        }
        add_unique(all, e);
    }
    return drop_covered(all);
}

/* ---- the folders the reads need ---- */

static bool reads_observed(json_t *profile)
{
    return json_is_true(json_object_get(json_object_get(profile, "reads"), "observed"));
}

/* Observed whole: an unused declared read can be called unused. */
static bool reads_complete(json_t *profile)
{
    return reads_observed(profile) &&
           !json_is_true(json_object_get(json_object_get(profile, "reads"), "partial"));
}

/* Was anything of the profile's reads at or under folder? */
static bool read_under(json_t *profile, const char *folder)
{
    static const char *const lists[] = {"found", "needed", "looked", "absent", "unchecked"};
    json_t *reads = json_object_get(profile, "reads");
    for (size_t k = 0; k < SG_ARRAY_LEN(lists); k++) {
        size_t j;
        json_t *v;
        json_array_foreach (json_object_get(reads, lists[k]), j, v)
            if (within(json_string_value(v), folder))
                return true;
    }
    return false;
}

/* A path in the home (named as HOME names it, or as it really is) as
 * "~/...", which a manifest expands for whoever runs it; others as they
 * are. */
static char *tilde(const char *home, const char *path)
{
    const char *real = record_home_real();
    if (home && strcmp(home, "/") && within(path, home))
        return sg_xasprintf("~%s", path + strlen(home));
    if (real && within(path, real))
        return sg_xasprintf("~%s", path + strlen(real));
    return sg_xstrdup(path);
}

/* The paths of the profile's reads list key that no declared read covers. */
static json_t *undeclared_reads(const struct sg_skill *sk, json_t *profile, const char *key)
{
    const struct sg_policy *pol = &sk->policy;
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get(json_object_get(profile, "reads"), key), i, v) {
        bool declared = false;
        for (size_t k = 0; k < pol->nread; k++)
            declared |= within(json_string_value(v), pol->read[k].path);
        if (!declared)
            add_unique(out, json_string_value(v));
    }
    return out;
}

/* filesystem.read of the manifest: without observed reads, what was
 * declared; with them, the declared entries something was opened or looked
 * up under (the skill's own folder always), then each file it opened that
 * the sandbox did not show and this machine has: the file itself, or its
 * folder where two or more of it were opened and the folder is not one
 * never declared. What was only looked up is not declared (a probe is no
 * need; the manifest names it in a comment). Nothing at or below a dot
 * entry of the home or on the credential list (home_private), declared or
 * opened, is written: withheld gets it ("~/..."), for a comment. */
static json_t *read_entries(const struct sg_skill *sk, json_t *profile, json_t *withheld)
{
    const struct sg_policy *pol = &sk->policy;
    json_t *out = json_array();
    bool observed = reads_observed(profile);
    const char *home = record_home();
    for (size_t i = 0; i < pol->nread; i++) {
        const char *shown = pol->read[i].declared ? pol->read[i].declared : pol->read[i].path;
        bool root = !strcmp(pol->read[i].path, sk->root);
        if (!root && home_private(pol->read[i].path)) {
            cleanup_free char *t = tilde(home, pol->read[i].path);
            add_unique(withheld, t);
        } else if (!reads_complete(profile) || root || read_under(profile, pol->read[i].path)) {
            json_array_append_new(out, json_string(shown));
        }
    }
    if (!observed)
        return out;
    json_t *needed = undeclared_reads(sk, profile, "needed"), *entries = json_array();
    size_t i;
    json_t *v;
    const char *home_real = record_home_real();
    json_array_foreach (needed, i, v) {
        if (home_private(json_string_value(v))) {
            cleanup_free char *t = tilde(home, json_string_value(v));
            add_unique(withheld, t);
            continue;
        }
        cleanup_free char *dir = sg_xstrdup(json_string_value(v));
        *strrchr(dir, '/') = '\0'; /* absolute, never "/" itself (never_declared) */
        size_t k, siblings = 0;
        json_t *o;
        json_array_foreach (needed, k, o) {
            const char *s = json_string_value(o);
            size_t dl = strlen(dir);
            siblings += !strncmp(s, dir, dl) && s[dl] == '/' && !strchr(s + dl + 1, '/');
        }
        /* never a folder of the home (documents, profiles, tokens sit
         * beside what it read), nor one that holds the skill itself */
        bool folder = siblings >= 2 && *dir && !never_declared(home, NULL, dir) &&
                      !(home && within(dir, home)) && !(home_real && within(dir, home_real)) &&
                      !within(sk->root, dir);
        add_unique(entries, folder ? dir : json_string_value(v));
    }
    json_decref(needed);
    json_t *kept = drop_covered(entries);
    json_array_foreach (kept, i, v) {
        cleanup_free char *e = tilde(home, json_string_value(v));
        add_unique(out, e);
    }
    json_decref(kept);
    return out;
}

/* ---- the manifest ---- */

struct emit {
    yaml_emitter_t e;
    struct sg_buf b;
    bool ok;
};

static int write_handler(void *ctx, unsigned char *buf, size_t n)
{
    struct emit *m = ctx;
    return sg_buf_append(&m->b, buf, n) == 0;
}

/* Emit e (the emitter takes it), or, once something failed, free it. */
static void ev(struct emit *m, yaml_event_t *e)
{
    if (!m->ok)
        yaml_event_delete(e);
    else if (!yaml_emitter_emit(&m->e, e))
        m->ok = false;
}

/* Would a plain s read as something other than a string (1.0, true, ~)? */
static bool looks_typed(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "~",
                                        "y", "n", ".inf", ".nan"};
    for (size_t i = 0; i < SG_ARRAY_LEN(words); i++)
        if (!strcasecmp(s, words[i]))
            return true;
    char *end;
    strtod(s, &end);
    return *s && !*end;
}

static void scalar(struct emit *m, const char *s)
{
    yaml_event_t e;
    if (!yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                      looks_typed(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                     : YAML_ANY_SCALAR_STYLE)) {
        m->ok = false; /* not UTF-8, no memory: no manifest rather than half of one */
        return;
    }
    ev(m, &e);
}

static void number(struct emit *m, long long v);

static void number(struct emit *m, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    yaml_event_t e;
    yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)buf, (int)strlen(buf), 1, 1,
                                 YAML_PLAIN_SCALAR_STYLE);
    ev(m, &e);
}

static void map_start(struct emit *m)
{
    yaml_event_t e;
    yaml_mapping_start_event_initialize(&e, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    ev(m, &e);
}

static void map_end(struct emit *m)
{
    yaml_event_t e;
    yaml_mapping_end_event_initialize(&e);
    ev(m, &e);
}

static void seq_start(struct emit *m, bool flow)
{
    yaml_event_t e;
    yaml_sequence_start_event_initialize(&e, NULL, NULL, 1,
                                         flow ? YAML_FLOW_SEQUENCE_STYLE
                                              : YAML_BLOCK_SEQUENCE_STYLE);
    ev(m, &e);
}

static void seq_end(struct emit *m)
{
    yaml_event_t e;
    yaml_sequence_end_event_initialize(&e);
    ev(m, &e);
}

/* key: a block list of the strings of arr, when it has any. */
static void string_list(struct emit *m, const char *key, json_t *arr)
{
    if (!json_array_size(arr))
        return;
    scalar(m, key);
    seq_start(m, false);
    size_t i;
    json_t *v;
    json_array_foreach (arr, i, v)
        scalar(m, json_string_value(v));
    seq_end(m);
}

/* A host name a manifest's egress can hold: letters, digits, '-' and
 * dots, with a letter somewhere (an IPv4 literal has none). */
static bool declarable(const char *host)
{
    size_t n = strlen(host);
    bool letter = false;
    if (!n || n > 253 || host[0] == '.' || host[0] == '-' || host[n - 1] == '.')
        return false;
    for (const char *c = host; *c; c++) {
        if (*c >= 'a' && *c <= 'z')
            letter = true;
        else if (!(*c >= '0' && *c <= '9') && *c != '-' && *c != '.')
            return false;
    }
    return letter;
}

/* An observed amount with headroom, never above what was declared. */
static long long headroom(long long observed, long long factor, long long floor, long long round,
                          long long declared)
{
    if (observed < 0)
        observed = 0;
    if (observed > (1LL << 40)) /* past every limit's range: the declared one holds */
        observed = 1LL << 40;
    long long v = observed * factor;
    v = (v + round - 1) / round * round;
    if (v < floor)
        v = floor;
    return declared > 0 && v > declared ? declared : v;
}

/* permissions.network: the names a manifest can declare (an address
 * reached cannot be: the comparison still lists it), with their ports. */
static void emit_network(struct emit *m, json_t *profile)
{
    json_t *hosts = json_object_get(profile, "hosts");
    size_t nk = 0;
    const char **keys = sg_xcalloc(json_object_size(hosts) + 1, sizeof *keys);
    const char *key;
    json_t *ports;
    json_object_foreach (hosts, key, ports)
        if (declarable(key) && json_array_size(ports))
            keys[nk++] = key;
    qsort(keys, nk, sizeof *keys, cmp_cstr);
    if (nk) {
        scalar(m, "network");
        map_start(m);
        scalar(m, "egress");
        seq_start(m, false);
        for (size_t i = 0; i < nk; i++) {
            map_start(m);
            scalar(m, "domain"), scalar(m, keys[i]);
            scalar(m, "ports");
            seq_start(m, true);
            size_t k;
            json_t *port;
            json_array_foreach (json_object_get(hosts, keys[i]), k, port)
                if (k < SG_MAX_PORTS)
                    number(m, json_integer_value(port));
            seq_end(m);
            map_end(m);
        }
        seq_end(m);
        map_end(m);
    }
    free(keys);
}

/* resources: what was observed, with headroom, never above what was
 * declared; why says how each was reached, as comment lines. */
static void emit_resources(struct emit *m, const struct sg_policy *pol, json_t *profile,
                           struct sg_buf *why)
{
    scalar(m, "resources");
    map_start(m);
    json_t *peak = json_object_get(profile, "memory_peak_bytes");
    long long mem = pol->limits.memory_mb.value;
    if (json_is_integer(peak) && json_integer_value(peak) > 0) {
        long long mib = (json_integer_value(peak) + (1 << 20) - 1) >> 20;
        mem = headroom(mib, 2, 64, 16, pol->limits.memory_mb.value);
        sg_buf_printf(why, "# memory_mb %lld: peak %lld MiB, doubled, in steps of 16, at least 64\n",
                      mem, mib);
    } else {
        sg_buf_printf(why, "# memory_mb %lld: as declared (no cgroup measured the peak here)\n",
                      mem);
    }
    scalar(m, "memory_mb"), number(m, mem);
    json_t *pk = json_object_get(profile, "pids_peak");
    long long pids = pol->limits.pids.value;
    if (json_is_integer(pk) && json_integer_value(pk) > 0) {
        pids = headroom(json_integer_value(pk), 2, 16, 1, pol->limits.pids.value);
        sg_buf_printf(why, "# max_pids %lld: at most %lld processes and threads at once, doubled, "
                            "at least 16\n", pids, (long long)json_integer_value(pk));
    } else {
        sg_buf_printf(why, "# max_pids %lld: as declared (no cgroup counted processes here)\n",
                      pids);
    }
    scalar(m, "max_pids"), number(m, pids);
    long long ms = json_integer_value(json_object_get(profile, "duration_ms"));
    long long secs = headroom((ms + 999) / 1000, 3, 10, 1, pol->limits.runtime_s.value);
    sg_buf_printf(why, "# max_runtime_seconds %lld: longest run %lld ms, three times, at least 10\n",
                  secs, ms);
    scalar(m, "max_runtime_seconds"), number(m, secs);
    long long outb = json_integer_value(json_object_get(profile, "output_bytes"));
    long long capb = headroom(outb, 2, 65536, 1024, pol->limits.output_bytes.value);
    sg_buf_printf(why, "# max_output_bytes %lld: most output %lld bytes a stream, doubled, at "
                        "least 64 KiB\n", capb, outb);
    scalar(m, "max_output_bytes"), number(m, capb);
    map_end(m);
}

/* The comment lines on paths the manifest does not declare: what the
 * skill only looked up (a person decides) and what it used where
 * programs keep their secrets (never declared). Frees withheld. */
static char *unsaid_paths(const struct sg_skill *sk, json_t *profile, json_t *withheld)
{
    /* what it only looked up: a person decides */
    struct sg_buf looked;
    sg_buf_init(&looked, 16384);
    json_t *lk = undeclared_reads(sk, profile, "looked");
    json_t *opened = json_object_get(json_object_get(profile, "reads"), "needed");
    const char *home = record_home();
    size_t i, nshown = 0, more = 0;
    json_t *v;
    json_array_foreach (lk, i, v) {
        const char *path = json_string_value(v);
        bool ascii = true, elsewhere = false; /* a comment line holds plain ASCII only */
        for (const char *c = path; *c; c++)
            ascii &= *c >= 0x20 && *c < 0x7f;
        size_t k;
        json_t *o;
        json_array_foreach (opened, k, o)
            elsewhere |= !strcmp(json_string_value(o), path); /* declared from another run */
        if (elsewhere)
            continue;
        if (!ascii || nshown == 8) {
            more++;
            continue;
        }
        cleanup_free char *t = tilde(home, path);
        sg_buf_printf(&looked, "%s#   %s\n", nshown++ ? "" : "# Looked up, never opened, not "
                                                          "declared (add what the skill needs):\n",
                      t);
    }
    if (more)
        sg_buf_printf(&looked, "#   and %zu more (skillgate record --json lists them)\n", more);
    json_decref(lk);
    /* what it used where programs keep their secrets: never declared */
    nshown = 0, more = 0;
    sort_strings(withheld);
    json_array_foreach (withheld, i, v) {
        const char *path = json_string_value(v);
        bool ascii = true;
        for (const char *c = path; *c; c++)
            ascii &= *c >= 0x20 && *c < 0x7f;
        if (!ascii || nshown == 8) {
            more++;
            continue;
        }
        sg_buf_printf(&looked, "%s#   %s\n", nshown++ ? "" : "# Used in a dot folder of your "
                      "home or a credential, never declared (tokens and keys live\n# there; "
                      "add one yourself only if the skill truly needs it):\n", path);
    }
    if (more)
        sg_buf_printf(&looked, "#   and %zu more (skillgate record --json lists them)\n", more);
    json_decref(withheld);
    return sg_buf_steal(&looked);
}

/* permissions: the hosts, paths and environment the skill used, and a
 * syscall profile other than the default. Returns the paths withheld
 * (used where secrets live: never declared), the caller's to free. */
/* A program as permissions.programs names it: a program on the PATH by
 * its name with any arguments, any other by its path. Caller frees. */
static char *program_scope(const char *prog)
{
    const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    bool on_path = !strncmp(prog, "/usr/bin/", 9) || !strncmp(prog, "/bin/", 5) ||
                   !strncmp(prog, "/usr/local/bin/", 15);
    return on_path ? sg_xasprintf("%s:*", base) : sg_xstrdup(prog);
}

/* permissions.programs: what it ran (declared there, no other tool is
 * restricted, as allowed-tools would) */
static void emit_programs(struct emit *m, json_t *profile)
{
    json_t *progs = json_object_get(profile, "programs");
    if (!json_array_size(progs))
        return;
    scalar(m, "programs");
    seq_start(m, false);
    size_t i;
    json_t *w;
    json_array_foreach (progs, i, w) {
        cleanup_free char *sc = program_scope(json_string_value(w));
        scalar(m, sc);
    }
    seq_end(m);
}

static json_t *emit_permissions(struct emit *m, const struct sg_skill *sk, json_t *profile)
{
    const struct sg_policy *pol = &sk->policy;
    scalar(m, "permissions");
    map_start(m);
    emit_network(m, profile);
    json_t *withheld = json_array();
    json_t *writes = write_entries(sk, json_object_get(profile, "writes"), withheld,
                                   json_string_value(json_object_get(profile, "work")));
    json_t *reads = read_entries(sk, profile, withheld);
    if (json_array_size(reads) || json_array_size(writes)) {
        scalar(m, "filesystem");
        map_start(m);
        string_list(m, "read", reads);
        string_list(m, "write", writes);
        map_end(m);
    }
    json_decref(writes);
    json_decref(reads);
    emit_programs(m, profile);
    if (pol->nenv) {
        scalar(m, "env_vars");
        map_start(m);
        scalar(m, "allow");
        seq_start(m, false);
        for (size_t i = 0; i < pol->nenv; i++)
            scalar(m, pol->env[i].name);
        seq_end(m);
        map_end(m);
    }
    if (pol->profile != SG_SECCOMP_DEFAULT) {
        scalar(m, "syscalls");
        map_start(m);
        scalar(m, "profile"), scalar(m, sg_seccomp_profile_name(pol->profile));
        map_end(m);
    }
    map_end(m);
    return withheld;
}

char *sg_record_manifest(const struct sg_skill *sk, json_t *profile)
{
    const struct sg_policy *pol = &sk->policy;
    declared_discards(sk, profile);
    struct emit m = {.ok = true};
    sg_buf_init(&m.b, 1u << 20);
    yaml_emitter_initialize(&m.e);
    yaml_emitter_set_output(&m.e, write_handler, &m);
    /* ASCII only: a bidi override or an invisible character in a description
     * or a path shows as its escape, in the file and on the terminal */
    yaml_emitter_set_unicode(&m.e, 0);
    yaml_emitter_set_width(&m.e, 100);
    yaml_event_t e;
    yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
    ev(&m, &e);
    yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1);
    ev(&m, &e);
    map_start(&m);

    scalar(&m, "skill");
    map_start(&m);
    const char *name = sk->name ? sk->name : sk->dirname;
    scalar(&m, "name"), scalar(&m, name);
    if (sk->version)
        scalar(&m, "version"), scalar(&m, sk->version);
    if (sk->description)
        scalar(&m, "description"), scalar(&m, sk->description);
    if (sk->author)
        scalar(&m, "author"), scalar(&m, sk->author);
    map_end(&m);

    json_t *withheld = emit_permissions(&m, sk, profile);

    struct sg_buf why;
    sg_buf_init(&why, 4096);
    emit_resources(&m, pol, profile, &why);

    if (pol->entry.command) {
        scalar(&m, "entrypoint");
        map_start(&m);
        scalar(&m, "command"), scalar(&m, pol->entry.command);
        if (pol->entry.nargs) {
            scalar(&m, "args");
            seq_start(&m, true);
            for (size_t i = 0; i < pol->entry.nargs; i++)
                scalar(&m, pol->entry.args[i]);
            seq_end(&m);
        }
        map_end(&m);
    }
    map_end(&m);
    yaml_document_end_event_initialize(&e, 1);
    ev(&m, &e);
    yaml_stream_end_event_initialize(&e);
    ev(&m, &e);
    yaml_emitter_delete(&m.e);
    cleanup_free char *body = sg_buf_steal(&m.b);
    cleanup_free char *whys = sg_buf_steal(&why);
    if (!m.ok) {
        json_decref(withheld);
        return NULL;
    }
    cleanup_free char *shown = sg_sanitize_str(name, 0);
    json_int_t runs = json_integer_value(json_object_get(profile, "runs"));
    const char *seen =
        reads_observed(profile)
            ? json_is_true(json_object_get(json_object_get(profile, "reads"), "partial"))
                  ? "# Reads: opens and lookups (stat, access) were seen, but not all of them\n"
                    "# (a cap, an unnamed call, a run cut short): declared reads are kept.\n"
                  : "# Reads: every open and lookup (stat, access) of a path was seen.\n"
            : "# Reads were not observed in every run: filesystem.read is kept as declared.\n";
    cleanup_free char *looks = unsaid_paths(sk, profile, withheld);
    return sg_xasprintf(
        "# Written by skillgate record from %lld run%s of %s: only what %s used.\n%s%s"
        "# Environment variables are not observed: they are kept as declared.\n"
        "# CPU, disk and file caps are the defaults.\n%s%s",
        (long long)runs, runs == 1 ? "" : "s", shown, runs == 1 ? "it" : "they", seen, looks,
        whys, body);
}

/* ---- declared against used ---- */

static json_t *item(const char *what, const char *name, const char *note)
{
    return json_pack("{s:s, s:s, s:s}", "what", what, "name", name, "note", note);
}

static bool egress_covers(const struct sg_egress *g, const char *host, long long port)
{
    bool name = g->wildcard ? fnmatch(g->domain, host, 0) == 0 && strcmp(g->domain + 2, host)
                            : !strcmp(g->domain, host);
    if (!name)
        return false;
    for (size_t i = 0; i < g->nports; i++)
        if (g->ports[i] == port)
            return true;
    return port < 0;
}

/* Was the declared pair g:port reached by any host of the profile? */
static bool pair_reached(const struct sg_egress *g, uint16_t port, json_t *hosts)
{
    const char *h;
    json_t *ports;
    json_object_foreach (hosts, h, ports) {
        size_t j;
        json_t *p;
        json_array_foreach (ports, j, p)
            if (json_integer_value(p) == port && egress_covers(g, h, port))
                return true;
    }
    return false;
}

/* Was anything written at or under the declared folder? */
static bool written_under(json_t *writes, const char *folder)
{
    size_t j;
    json_t *w;
    json_array_foreach (writes, j, w)
        if (within(json_string_value(w), folder))
            return true;
    return false;
}

json_t *sg_record_compare(const struct sg_skill *sk, json_t *profile)
{
    const struct sg_policy *pol = &sk->policy;
    declared_discards(sk, profile);
    json_t *c = json_pack("{s:[], s:[], s:[]}", "over", "under", "tried");
    json_t *over = json_object_get(c, "over"), *under = json_object_get(c, "under");
    json_t *hosts = json_object_get(profile, "hosts");
    /* hosts */
    for (size_t i = 0; i < pol->negress; i++) {
        const struct sg_egress *g = &pol->egress[i];
        for (size_t k = 0; k < g->nports; k++) {
            if (!pair_reached(g, g->ports[k], hosts)) {
                cleanup_free char *n = sg_xasprintf("%s:%u", g->domain, g->ports[k]);
                json_array_append_new(over, item("network", n, "declared, never reached"));
            }
        }
    }
    const char *h;
    json_t *ports;
    json_object_foreach (hosts, h, ports) {
        size_t j;
        json_t *p;
        json_array_foreach (ports, j, p) {
            bool declared = false;
            for (size_t i = 0; i < pol->negress; i++)
                declared |= egress_covers(&pol->egress[i], h, json_integer_value(p));
            if (!declared) {
                cleanup_free char *n = sg_xasprintf("%s:%lld", h, (long long)json_integer_value(p));
                json_array_append_new(under, item("network", n, "reached, not declared"));
            }
        }
    }
    /* writes */
    json_t *writes = json_object_get(profile, "writes");
    for (size_t i = 0; i < pol->nwrite; i++) {
        if (!written_under(writes, pol->write[i].path))
            json_array_append_new(over, item("write", pol->write[i].path,
                                             "declared writable, nothing written there"));
    }
    size_t j;
    json_t *w;
    json_array_foreach (writes, j, w) {
        bool declared = false;
        for (size_t i = 0; i < pol->nwrite; i++)
            declared |= within(json_string_value(w), pol->write[i].path);
        if (!declared)
            json_array_append_new(under, item("write", json_string_value(w),
                                              "written, not declared writable"));
    }
    /* reads, where they were observed */
    json_t *reads = json_object_get(profile, "reads");
    for (size_t i = 0; reads_complete(profile) && i < pol->nread; i++)
        if (strcmp(pol->read[i].path, sk->root) && !read_under(profile, pol->read[i].path))
            json_array_append_new(over, item("read", pol->read[i].path,
                                             "declared readable, nothing opened there"));
    static const char *const unders[][2] = {
        {"needed", "opened, not declared readable: the sandbox showed nothing there; this "
                   "machine has it"},
        {"looked", "looked up, never opened, not declared: the sandbox showed nothing there; "
                   "this machine has it (the manifest names it in a comment)"}};
    for (size_t u = 0; u < SG_ARRAY_LEN(unders); u++) {
        json_t *list = undeclared_reads(sk, profile, unders[u][0]);
        json_array_foreach (list, j, w)
            json_array_append_new(under, item("read", json_string_value(w), unders[u][1]));
        json_decref(list);
    }
    json_object_set_new(c, "reads_observed", json_boolean(reads_observed(profile)));
    json_object_set(c, "absent", json_object_get(reads, "absent"));
    json_object_set(c, "system", json_object_get(reads, "system"));
    json_object_set(c, "unchecked", json_object_get(reads, "unchecked"));
    /* programs: SKILL.md's allowed-tools */
    struct sg_tools t;
    sg_tools_from_policy(pol, &t);
    json_t *progs = json_object_get(profile, "programs");
    if (t.bash_listed && !json_array_size(progs))
        json_array_append_new(over, item("program", "Bash",
                                         "in allowed-tools, no program run beyond the entrypoint"));
    json_array_foreach (progs, j, w) {
        const char *prog = json_string_value(w);
        const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
        bool declared = t.bash_unscoped;
        for (size_t i = 0; i < t.nbash_scopes; i++) {
            size_t n = strcspn(t.bash_scopes[i], ": ");
            declared |= (strlen(base) == n && !strncmp(t.bash_scopes[i], base, n)) ||
                        (strlen(prog) == n && !strncmp(t.bash_scopes[i], prog, n));
        }
        if (!declared) {
            cleanup_free char *note = sg_xasprintf("run, not declared (skillsandbox.yaml: "
                                                   "permissions.programs: [%s:*])", base);
            json_array_append_new(under, item("program", prog, note));
        }
    }
    sg_tools_free(&t);
    /* the programs, as the manifest's permissions.programs names them */
    struct sg_buf sug;
    sg_buf_init(&sug, 8192);
    json_array_foreach (progs, j, w) {
        cleanup_free char *sc = program_scope(json_string_value(w));
        sg_buf_printf(&sug, "%s%s", j ? ", " : "", sc);
    }
    cleanup_free char *sugs = sg_buf_steal(&sug);
    json_object_set_new(c, "programs", json_deep_copy(progs));
    json_object_set_new(c, "allowed_tools_for_programs", json_string(sugs));
    json_object_set(c, "discarded", json_object_get(profile, "discarded"));
    /* tried and refused while recording */
    json_t *tried = json_object_get(profile, "tried");
    static const char *const kinds[][2] = {{"hosts", "network"}, {"programs", "program"},
                                           {"paths", "file"}};
    for (size_t k = 0; k < 3; k++)
        json_array_foreach (json_object_get(tried, kinds[k][0]), j, w)
            json_array_append_new(json_object_get(c, "tried"),
                                  item(kinds[k][1], json_string_value(w), "tried and refused"));
    json_array_foreach (json_object_get(reads, "credential"), j, w) {
        bool listed = false; /* a decoy's open is an fs_blocked event too */
        size_t k;
        json_t *x;
        json_array_foreach (json_object_get(tried, "paths"), k, x)
            listed |= !strcmp(json_string_value(x), json_string_value(w));
        if (!listed)
            json_array_append_new(json_object_get(c, "tried"),
                                  item("file", json_string_value(w),
                                       "a credential opened: a mask answered, never the real one"));
    }
    return c;
}

/* A heading and the first paths of list (sanitized), or nothing. */
static void some_paths(struct sg_buf *b, json_t *list, const char *head)
{
    size_t i;
    json_t *it;
    json_array_foreach (list, i, it) {
        if (i == 8) {
            sg_buf_printf(b, "  and %zu more\n", json_array_size(list) - i);
            break;
        }
        cleanup_free char *s = sg_sanitize_str(json_string_value(it), 0);
        sg_buf_printf(b, "%s%s  %s\n", i ? "" : head, i ? "" : "\n", s);
    }
    if (json_array_size(list))
        sg_buf_printf(b, "\n");
}

char *sg_record_compare_text(json_t *cmp)
{
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    static const char *const heads[][2] = {
        {"over", "Declared and never used (over-asking):"},
        {"under", "Used and never declared (the prompts it will cause, or the attack):"},
        {"tried", "Tried and refused while recording:"}};
    json_t *progs = json_object_get(cmp, "programs");
    if (json_array_size(progs)) {
        cleanup_free char *s = sg_sanitize_str(
            json_string_value(json_object_get(cmp, "allowed_tools_for_programs")), 0);
        sg_buf_printf(&b, "Programs it ran (declared in the manifest above, "
                          "permissions.programs; no other tool is restricted by them): %s\n\n",
                      s);
    }
    size_t i;
    json_t *it;
    some_paths(&b, json_object_get(cmp, "absent"),
               "Looked for and found nowhere, not on this machine either (nothing to declare):");
    some_paths(&b, json_object_get(cmp, "system"),
               "Looked for where a recording never declares (the host's system places, "
               "skillgate's own folders, whole homes or top folders):");
    some_paths(&b, json_object_get(cmp, "unchecked"),
               "Looked for, not checked on this machine (a symbolic link on the way, a network, "
               "automount or FUSE filesystem):");
    if (json_is_false(json_object_get(cmp, "reads_observed")))
        sg_buf_printf(&b, "Reads were not observed in every run: the declared ones are kept.\n\n");
    json_array_foreach (json_object_get(cmp, "discarded"), i, it) {
        cleanup_free char *s = sg_sanitize_str(json_string_value(it), 0);
        sg_buf_printf(&b, "%s  %s\n", i ? "" : "Left in the sandbox's private views (gone with "
                                              "it, nothing to declare):\n", s);
        if (i + 1 == json_array_size(json_object_get(cmp, "discarded")))
            sg_buf_printf(&b, "\n");
    }
    for (size_t h = 0; h < 3; h++) {
        json_t *list = json_object_get(cmp, heads[h][0]);
        sg_buf_printf(&b, "%s%s", h ? "\n" : "", heads[h][1]);
        if (!json_array_size(list))
            sg_buf_printf(&b, " none\n");
        else
            sg_buf_printf(&b, "\n");
        json_array_foreach (list, i, it) {
            cleanup_free char *name =
                sg_sanitize_str(json_string_value(json_object_get(it, "name")), 0);
            cleanup_free char *note =
                sg_sanitize_str(json_string_value(json_object_get(it, "note")), 0);
            sg_buf_printf(&b, "  %-8s %s  (%s)\n", json_string_value(json_object_get(it, "what")),
                          name, note);
        }
    }
    return sg_buf_steal(&b);
}

/* ---- declared beside observed ---- */

static void row(struct sg_buf *b, const char *what, const char *declared, const char *observed,
                const char *note)
{
    cleanup_free char *d = sg_sanitize_str(declared, 0);
    cleanup_free char *o = sg_sanitize_str(observed, 0);
    sg_buf_printf(b, " %-8s %-26.26s %-26.26s %s\n", what, *d ? d : "-", *o ? o : "-", note);
}


char *sg_record_side_by_side(const struct sg_skill *sk, json_t *profile, json_t *cmp)
{
    const struct sg_policy *pol = &sk->policy;
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    sg_buf_printf(&b, " %-8s %-26s %-26s %s\n", "", "DECLARED", "OBSERVED", "");
    json_t *hosts = json_object_get(profile, "hosts");
    /* hosts: each declared pair, used or not; then what was reached undeclared */
    for (size_t i = 0; i < pol->negress; i++)
        for (size_t k = 0; k < pol->egress[i].nports; k++) {
            cleanup_free char *n = sg_xasprintf("%s:%u", pol->egress[i].domain,
                                                pol->egress[i].ports[k]);
            bool used = pair_reached(&pol->egress[i], pol->egress[i].ports[k], hosts);
            row(&b, "network", n, used ? n : "", used ? "used" : "over-asked");
        }
    size_t i;
    json_t *it;
    json_array_foreach (json_object_get(cmp, "under"), i, it) {
        const char *what = json_string_value(json_object_get(it, "what"));
        if (strcmp(what, "program"))
            row(&b, what, "", json_string_value(json_object_get(it, "name")),
                strcmp(what, "read") ? "will ask" : "not shown");
    }
    for (size_t r = 0; r < pol->nread; r++) {
        if (!strcmp(pol->read[r].path, sk->root))
            continue;
        bool used = read_under(profile, pol->read[r].path);
        const char *d = pol->read[r].declared ? pol->read[r].declared : pol->read[r].path;
        row(&b, "read", d, used ? d : "",
            used ? "used" : reads_complete(profile) ? "over-asked" : "not observed");
    }
    for (size_t w = 0; w < pol->nwrite; w++) {
        bool used = written_under(json_object_get(profile, "writes"), pol->write[w].path);
        row(&b, "write", pol->write[w].path, used ? pol->write[w].path : "",
            used ? "used" : "over-asked");
    }
    struct sg_tools t;
    sg_tools_from_policy(pol, &t);
    json_t *progs = json_object_get(profile, "programs");
    if (!json_array_size(progs) && t.bash_listed)
        row(&b, "program", "Bash", "", "over-asked");
    json_array_foreach (progs, i, it) {
        bool declared = false;
        size_t k;
        json_t *u;
        json_array_foreach (json_object_get(cmp, "under"), k, u)
            declared |= !strcmp(json_string_value(json_object_get(u, "name")),
                                json_string_value(it));
        row(&b, "program", declared ? "" : t.bash_unscoped ? "Bash" : "Bash(...)",
            json_string_value(it), declared ? "will ask" : "used");
    }
    sg_tools_free(&t);
    char dec[64], obs[64];
    json_t *peak = json_object_get(profile, "memory_peak_bytes");
    snprintf(dec, sizeof dec, "%lld MB", pol->limits.memory_mb.value);
    if (json_is_integer(peak)) {
        char by[32];
        sg_format_size(by, sizeof by, json_integer_value(peak));
        snprintf(obs, sizeof obs, "peak %s", by);
    } else {
        snprintf(obs, sizeof obs, "not measured (no cgroup)");
    }
    row(&b, "memory", dec, obs, "");
    json_t *pk = json_object_get(profile, "pids_peak");
    snprintf(dec, sizeof dec, "%lld", pol->limits.pids.value);
    if (json_is_integer(pk))
        snprintf(obs, sizeof obs, "at most %lld at once", (long long)json_integer_value(pk));
    else
        snprintf(obs, sizeof obs, "not measured (no cgroup)");
    row(&b, "pids", dec, obs, "");
    snprintf(dec, sizeof dec, "%lld s", pol->limits.runtime_s.value);
    snprintf(obs, sizeof obs, "longest run %lld ms",
             (long long)json_integer_value(json_object_get(profile, "duration_ms")));
    row(&b, "runtime", dec, obs, "");
    sg_format_size(dec, sizeof dec, pol->limits.output_bytes.value);
    char by[32];
    sg_format_size(by, sizeof by, json_integer_value(json_object_get(profile, "output_bytes")));
    snprintf(obs, sizeof obs, "most %s a stream", by);
    row(&b, "output", dec, obs, "");
    json_array_foreach (json_object_get(cmp, "tried"), i, it)
        row(&b, json_string_value(json_object_get(it, "what")), "",
            json_string_value(json_object_get(it, "name")), "refused");
    json_array_foreach (json_object_get(profile, "discarded"), i, it)
        row(&b, "file", "", json_string_value(it), "discarded");
    return sg_buf_steal(&b);
}
