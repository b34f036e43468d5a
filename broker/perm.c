#include "perm.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "policy.h"
#include "notifpath.h"
#include "sanitize.h"
#include "shellcmd.h"
#include "skill.h"
#include "util.h"
#include "ynode.h"

#define ARM_MS 500 /* keys typed before the prompt was seen do not count */
#define MAX_PENDING 64

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

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- rules ---- */

int sg_prule_parse(const char *text, enum sg_effect eff, const char *source, struct sg_prule *r,
                   const char **why)
{
    memset(r, 0, sizeof *r);
    r->port = -1;
    const char *open = strchr(text, '(');
    size_t len = strlen(text);
    if (!open || len < 3 || text[len - 1] != ')') {
        *why = "a rule is Tool(pattern), e.g. Bash(git status:*)";
        return -EINVAL;
    }
    size_t tl = (size_t)(open - text);
    size_t t;
    for (t = 0; t < SG_ARRAY_LEN(tool_names); t++)
        if (strlen(tool_names[t]) == tl && !strncmp(text, tool_names[t], tl))
            break;
    if (t == SG_ARRAY_LEN(tool_names)) {
        if (tl == 8 && !strncmp(text, "WebFetch", 8))
            t = SG_PT_FETCH;
        else {
            *why = "the tool must be Bash, Write or Fetch";
            return -EINVAL;
        }
    }
    r->tool = (enum sg_ptool)t;
    cleanup_free char *pat = sg_xstrndup(open + 1, len - tl - 2);
    if (!*pat) {
        *why = "empty pattern";
        return -EINVAL;
    }
    if (r->tool == SG_PT_BASH) {
        size_t pl = strlen(pat);
        if (pl > 2 && !strcmp(pat + pl - 2, ":*")) {
            pat[pl - 2] = '\0';
            r->prefix = true;
        }
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
    } else if (pat[0] != '/') {
        *why = "a Write pattern is an absolute path or glob";
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

bool sg_prule_matches(const struct sg_prule *r, const struct sg_preq *q)
{
    if (r->tool != q->tool)
        return false;
    switch (q->tool) {
    case SG_PT_BASH: {
        if (r->pattern[0] == '/' && !strchr(r->pattern, ' '))
            return !strcmp(r->pattern, q->subject); /* Bash(/usr/bin/python3): that program */
        /* the command as a person reads it: program name, then the arguments.
         * A skill's exec names its program by base name only when that name
         * on the sandbox's PATH is the same file (a symlink or a copy named
         * ls elsewhere is not ls); an agent's command is read as written. */
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "%s%s%s", q->name[0] ? q->name : base_name(q->subject),
                 q->args[0] ? " " : "", q->args);
        size_t n = strlen(r->pattern);
        if (!r->prefix)
            return !strcmp(cmd, r->pattern);
        return !strncmp(cmd, r->pattern, n) && (cmd[n] == '\0' || cmd[n] == ' ');
    }
    case SG_PT_WRITE: {
        size_t n = strlen(r->pattern);
        if (n >= 3 && !strcmp(r->pattern + n - 3, "/**"))
            return !strncmp(q->subject, r->pattern, n - 2) ||
                   (!strncmp(q->subject, r->pattern, n - 3) && q->subject[n - 3] == '\0');
        return fnmatch(r->pattern, q->subject, FNM_PATHNAME) == 0;
    }
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

char *sg_preq_rule(const struct sg_preq *q)
{
    switch (q->tool) {
    case SG_PT_BASH:
        if (q->agent_tool[0]) /* a command the agent runs: that exact command */
            return sg_xasprintf("Bash(%s%s%s)", q->subject, q->args[0] ? " " : "", q->args);
        return sg_xasprintf("Bash(%s)", q->subject);
    case SG_PT_WRITE:
        return sg_xasprintf("Write(%s)", q->subject);
    case SG_PT_FETCH:
        return q->port > 0 ? sg_xasprintf("Fetch(%s:%d)", q->subject, q->port)
                           : sg_xasprintf("Fetch(%s)", q->subject);
    }
    return sg_xstrdup("?");
}

/* ---- the engine ---- */

struct pending {
    struct sg_preq q;
    sg_perm_cont cont;
    void *ctx;
    int64_t asked_ms;
    uint64_t id; /* what a front end's answer names: never another request's */
};

#define AUDIT_PER_KIND 20
#define AUDIT_KINDS 64
#define AUDIT_FLUSH_EVERY 10000

struct audit_kind {
    char *tool, *by;
    bool allow;
    char *seen[AUDIT_PER_KIND]; /* the requests written as records of their own */
    size_t nseen;
    unsigned long long more;    /* counted since the last "decisions" record */
    char first[32], last[32];
    json_t *examples;
};

struct sg_perm {
    struct sg_perm_opts o;
    char *skill, *digest, *run_id, *grants_file;
    struct sg_prule *rules;
    size_t nrules;
    /* the prompt */
    int tty;
    struct pending queue[MAX_PENDING];
    size_t nqueue;
    uint64_t next_id;
    bool quiet;               /* record without an event (sg_perm_record of a refusal) */
    struct audit_kind *kinds; /* the run's decisions, counted (audit_decision) */
    size_t nkinds;
    bool shown, confirming;
    int64_t shown_ms, armed_ms, deadline_ms;
    char line[256];
    size_t linelen;
    char last_by[512];       /* who made the last decision */
    sg_perm_show_fn fe_show; /* a front end shows the prompt */
    void *fe_ctx;
};

void sg_tools_from_policy(const struct sg_policy *pol, struct sg_tools *t)
{
    memset(t, 0, sizeof *t);
    t->restricted = pol->tools_restricted;
    for (size_t i = 0; i < pol->ntools; i++) {
        const struct sg_tool *tl = &pol->tools[i];
        if (tl->id == SG_TOOL_BASH || tl->id == SG_TOOL_TERMINAL) {
            t->bash_listed = true;
            if (!tl->scope)
                t->bash_unscoped = true;
            else {
                t->bash_scopes = sg_xrealloc(t->bash_scopes,
                                             (t->nbash_scopes + 1) * sizeof *t->bash_scopes);
                t->bash_scopes[t->nbash_scopes++] = sg_xstrdup(tl->scope);
            }
        }
        if (tl->id == SG_TOOL_FETCH || tl->id == SG_TOOL_WEBFETCH || tl->id == SG_TOOL_WEBSEARCH)
            t->fetch_listed = true;
        if (tl->id == SG_TOOL_WRITE || tl->id == SG_TOOL_EDIT || tl->id == SG_TOOL_MULTIEDIT ||
            tl->id == SG_TOOL_DELETE)
            t->write_listed = true;
    }
}

void sg_tools_free(struct sg_tools *t)
{
    for (size_t i = 0; i < t->nbash_scopes; i++)
        free(t->bash_scopes[i]);
    free(t->bash_scopes);
    memset(t, 0, sizeof *t);
}

const struct sg_tools *sg_perm_tools(const struct sg_perm *p)
{
    static const struct sg_tools none = {.restricted = true};
    return p && p->o.tools ? p->o.tools : &none;
}

char *sg_grants_path(void)
{
    cleanup_free char *dir = sg_config_dir(); /* the folder the sandbox masks */
    return sg_xasprintf("%s/grants.yaml", dir);
}

static void add_rule(struct sg_perm *p, const struct sg_prule *r)
{
    p->rules = sg_xrealloc(p->rules, (p->nrules + 1) * sizeof *p->rules);
    p->rules[p->nrules++] = *r;
}

/* Read a YAML file of bytes into a tree (capped like a manifest). */
static struct sg_ynode *load_yaml(const char *path, struct sg_diags *d, int *err)
{
    *err = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        *err = errno == ENOENT ? 0 : -errno;
        if (*err)
            sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SG_MANIFEST_MAX) {
        close(fd);
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "not a regular file under %d bytes",
                    SG_MANIFEST_MAX);
        *err = -EINVAL;
        return NULL;
    }
    char *buf = sg_xmalloc((size_t)st.st_size + 1);
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    close(fd);
    struct sg_ynode *root = NULL;
    if (n < 0 || sg_yaml_parse(buf, (size_t)n, 0, path, d, &root) < 0)
        *err = -EINVAL;
    free(buf);
    return root;
}

static int load_policy(struct sg_perm *p, const char *path, struct sg_diags *d)
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
            add_rule(p, &rule);
        }
    }
    sg_ynode_free(root);
    return r;
}

/* grants.yaml: grants: [{skill, digest, rule, effect, created}]. An
 * "always allow" there runs an undeclared program without asking, so the
 * file is read only when it and its folder are the user's own (or root's)
 * and nobody else may write them (sg_read_private_file); otherwise it is
 * ignored, *err is -EPERM and *why (caller frees) says why (issue 14). */
static json_t *read_grants(const char *path, struct sg_diags *d, int *err, char **why)
{
    json_t *list = json_array();
    cleanup_free char *buf = NULL;
    size_t len = 0;
    *why = NULL;
    *err = sg_read_private_file(path, SG_MANIFEST_MAX, &buf, &len, why);
    if (*err == -EPERM) {
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "ignored, no grant in it applies: %s",
                    *why);
        return list;
    }
    if (*err < 0) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s",
                    *err == -EFBIG || *err == -EINVAL ? "not a regular file under 256 KiB"
                                                      : strerror(-*err));
        return list;
    }
    struct sg_ynode *root = NULL;
    if (buf && sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        *err = -EINVAL;
    const struct sg_ynode *g = root ? sg_y_get(root, "grants") : NULL;
    for (size_t i = 0; g && g->type == SG_Y_SEQ && i < g->n; i++) {
        const struct sg_ynode *it = g->kids[i];
        json_t *o = json_object();
        static const char *const keys[] = {"skill", "digest", "rule", "effect", "created"};
        for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++) {
            const struct sg_ynode *v = sg_y_get(it, keys[k]);
            if (v && v->type == SG_Y_SCALAR)
                json_object_set_new(o, keys[k], json_string(v->str));
        }
        json_array_append_new(list, o);
    }
    sg_ynode_free(root);
    return list;
}

static void yaml_str(FILE *f, const char *s)
{
    /* a double-quoted YAML scalar: JSON's escaping is valid YAML */
    json_t *j = json_string(s ? s : "");
    char *t = json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
    fputs(t ? t : "\"\"", f);
    free(t);
    json_decref(j);
}

static int write_grants(const char *path, json_t *list)
{
    /* the folder walked safely (under sudo it is in the user's home) */
    cleanup_free char *dir = sg_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return -EINVAL;
    *slash = '\0';
    const char *base = slash + 1;
    cleanup_fd int dfd = sg_open_records_dir(dir);
    if (dfd < 0)
        return dfd;
    /* never into a folder, or over a file, that is not ours alone */
    cleanup_free char *old = NULL, *why = NULL;
    size_t oldlen;
    int mr = sg_read_private_file(path, SG_MANIFEST_MAX, &old, &oldlen, &why);
    if (mr == -EPERM)
        return mr;
    cleanup_free char *tmp = sg_xasprintf("%s.tmp.%d", base, (int)getpid());
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    FILE *f = fdopen(fd, "w");
    fputs("# skillgate grants: \"always\" decisions, each pinned to a skill's content digest.\n"
          "# A changed skill has a new digest and is asked again. Revoke with\n"
          "# `skillgate grants revoke N`.\ngrants:\n", f);
    size_t i;
    json_t *g;
    json_array_foreach(list, i, g)
    {
        static const char *const keys[] = {"skill", "digest", "rule", "effect", "created"};
        for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++) {
            fprintf(f, "%s%s: ", k ? "    " : "  - ", keys[k]);
            yaml_str(f, json_string_value(json_object_get(g, keys[k])));
            fputc('\n', f);
        }
    }
    int r = fflush(f) == 0 && fsync(fd) == 0 ? 0 : -errno;
    fclose(f);
    if (!r && renameat(dfd, tmp, dfd, base) < 0)
        r = -errno;
    if (r)
        unlinkat(dfd, tmp, 0);
    return r;
}

int sg_grants_list(const char *path, json_t **out, struct sg_diags *d)
{
    int err;
    cleanup_free char *why = NULL;
    *out = read_grants(path, d, &err, &why);
    return err;
}

int sg_grants_save(const char *path, json_t *list)
{
    return write_grants(path, list);
}

struct sg_perm *sg_perm_new(const struct sg_perm_opts *o, struct sg_diags *d)
{
    struct sg_perm *p = sg_xcalloc(1, sizeof *p);
    p->kinds = sg_xcalloc(AUDIT_KINDS, sizeof *p->kinds);
    p->o = *o;
    p->tty = -1;
    p->skill = sg_xstrdup(o->skill ? o->skill : "?");
    p->digest = sg_xstrdup(o->digest ? o->digest : "");
    p->run_id = sg_xstrdup(o->run_id ? o->run_id : "");
    p->grants_file = o->grants_file ? sg_xstrdup(o->grants_file) : sg_grants_path();
    if (o->policy_file && load_policy(p, o->policy_file, d) < 0) {
        sg_perm_free(p);
        return NULL;
    }
    int err;
    cleanup_free char *untrusted = NULL;
    json_t *grants = read_grants(p->grants_file, d, &err, &untrusted);
    if (err == -EPERM && o->bus) /* d has it for stderr; the trace and the TUI get this */
        sg_bus_emit(o->bus, SG_EV_POLICY_APPLIED,
                    json_pack("{s:s, s:s}", "grants_ignored", p->grants_file, "reason",
                              untrusted),
                    "grants file ignored, no saved \"always\" decision applies: %s", untrusted);
    size_t i;
    json_t *g;
    json_array_foreach(grants, i, g)
    {
        const char *sk = json_string_value(json_object_get(g, "skill"));
        const char *dg = json_string_value(json_object_get(g, "digest"));
        const char *rt = json_string_value(json_object_get(g, "rule"));
        const char *ef = json_string_value(json_object_get(g, "effect"));
        if (!sk || !dg || !rt || !ef || strcmp(sk, p->skill) || strcmp(dg, p->digest))
            continue; /* another skill's, or this skill's before it changed */
        struct sg_prule r;
        const char *why;
        if (sg_prule_parse(rt, !strcmp(ef, "deny") ? SG_EFF_DENY : SG_EFF_ALLOW, "grant", &r,
                           &why) == 0)
            add_rule(p, &r);
    }
    json_decref(grants);
    return p;
}

/* A run's decisions in the audit log, bounded: a flood of refusals (20,000
 * refused creates) was 20,000 fsync'd records. Per kind of decision (tool,
 * allow or deny, who decided), the first AUDIT_PER_KIND different requests
 * are records of their own; a request identical to one of those, and every
 * one past them, is counted, and one "decisions" record per kind says how
 * many, with the first and last time and the first requests: when the run
 * ends (sg_perm_free), and every AUDIT_FLUSH_EVERY counted on the way, so a
 * day-long flood leaves a bounded log and a killed broker loses at most
 * that many counts. */
static void flush_kind(struct sg_perm *p, struct audit_kind *k)
{
    if (!k->more)
        return;
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:O}",
                            "type", "decisions", "time", k->last, "run_id", p->run_id, "skill",
                            p->skill, "digest", p->digest, "tool", k->tool, "decision",
                            k->allow ? "allow" : "deny", "decided_by", k->by, "count",
                            (json_int_t)k->more, "first", k->first, "last", k->last,
                            "examples", k->examples);
    cleanup_free char *path = sg_audit_path();
    sg_audit_append(path, rec);
    json_decref(rec);
    k->more = 0;
    json_array_clear(k->examples);
}

/* true: written on its own (a new kind, or a new request of a kind not yet
 * past its bound); false: counted */
static bool audit_counts_it(struct sg_perm *p, const char *tool, bool allow, const char *by,
                            const char *req, const char *iso)
{
    struct audit_kind *k = NULL;
    for (size_t i = 0; i < p->nkinds && !k; i++)
        if (p->kinds[i].allow == allow && !strcmp(p->kinds[i].tool, tool) &&
            !strcmp(p->kinds[i].by, by))
            k = &p->kinds[i];
    if (!k) {
        if (p->nkinds == AUDIT_KINDS)
            return true; /* more kinds than that: each is its own record, as before */
        k = &p->kinds[p->nkinds++];
        *k = (struct audit_kind){.tool = sg_xstrdup(tool), .by = sg_xstrdup(by), .allow = allow,
                                 .examples = json_array()};
    }
    for (size_t i = 0; i < k->nseen; i++)
        if (!strcmp(k->seen[i], req))
            goto counted;
    if (k->nseen < AUDIT_PER_KIND) {
        k->seen[k->nseen++] = sg_xstrdup(req);
        return true;
    }
counted:
    if (!k->more)
        snprintf(k->first, sizeof k->first, "%s", iso);
    snprintf(k->last, sizeof k->last, "%s", iso);
    if (json_array_size(k->examples) < 5)
        json_array_append_new(k->examples, json_string(req));
    if (++k->more >= AUDIT_FLUSH_EVERY)
        flush_kind(p, k);
    return false;
}

static void audit_flush_all(struct sg_perm *p)
{
    for (size_t i = 0; i < p->nkinds; i++) {
        struct audit_kind *k = &p->kinds[i];
        flush_kind(p, k);
        for (size_t j = 0; j < k->nseen; j++)
            free(k->seen[j]);
        free(k->tool), free(k->by);
        json_decref(k->examples);
    }
    p->nkinds = 0;
}

static void audit_decision(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                           const char *by, int64_t latency)
{
    snprintf(p->last_by, sizeof p->last_by, "%s", by);
    /* an agent's own tool (check_tool_permission) is recorded by its name */
    cleanup_free char *rule = q->agent_tool[0]
                                  ? sg_xasprintf("%s(%s%s%s)", q->agent_tool, q->subject,
                                                 q->args[0] ? " " : "", q->args)
                                  : sg_preq_rule(q);
    const char *tool_name = q->agent_tool[0] ? q->agent_tool : sg_ptool_name(q->tool);
    char iso[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    sg_format_iso((int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, iso);
    const char *scope = d == SG_DEC_ALLOW_ONCE  ? "once"
                        : d == SG_DEC_ALLOW_RUN ? "run"
                        : d == SG_DEC_ALLOW_ALWAYS || d == SG_DEC_DENY_ALWAYS ? "always"
                                                                              : "once";
    cleanup_free char *req = sg_sanitize_str(rule, 0);
    cleanup_free char *args = sg_sanitize_str(q->args, 0);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "type",
                            "decision", "time", iso, "run_id", p->run_id, "skill", p->skill,
                            "digest", p->digest, "tool", tool_name, "request", req,
                            "args", args, "decision", sg_decision_allows(d) ? "allow" : "deny",
                            "scope", scope, "latency_ms", (json_int_t)latency);
    json_object_set_new(rec, "decided_by", json_string(by));
    if (audit_counts_it(p, tool_name, sg_decision_allows(d), by, req, iso)) {
        cleanup_free char *path = sg_audit_path();
        sg_audit_append(path, rec);
    }
    if (p->o.bus && !p->quiet)
        sg_bus_emit(p->o.bus, SG_EV_PERMISSION_DECIDED,
                    json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b}", "tool",
                              tool_name, "request", req, "decision",
                              sg_decision_name(d), "decided_by", by, "scope", scope, "latency_ms",
                              (json_int_t)latency, "prevented", !sg_decision_allows(d)),
                    "%s: %s (%s)", req, sg_decision_name(d), by);
    json_decref(rec);
}

void sg_perm_record(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                    const char *by)
{
    if (!p)
        return;
    /* a refusal has its own enforcement event already (one refusal, one
     * count); an allowance is shown as a decision */
    p->quiet = !sg_decision_allows(d);
    audit_decision(p, q, d, by, 0);
    p->quiet = false;
}

/* Remember a decision: for the run, or as a grant pinned to the digest. */
static void remember(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d)
{
    if (d != SG_DEC_ALLOW_RUN && d != SG_DEC_ALLOW_ALWAYS && d != SG_DEC_DENY_ALWAYS)
        return;
    cleanup_free char *text = sg_preq_rule(q);
    struct sg_prule r;
    const char *why;
    if (sg_prule_parse(text, d == SG_DEC_DENY_ALWAYS ? SG_EFF_DENY : SG_EFF_ALLOW,
                       d == SG_DEC_ALLOW_RUN ? "this run" : "grant", &r, &why) == 0)
        add_rule(p, &r);
    if (d == SG_DEC_ALLOW_RUN)
        return;
    struct sg_diags dd = {0};
    int err;
    cleanup_free char *untrusted = NULL;
    json_t *list = read_grants(p->grants_file, &dd, &err, &untrusted);
    char iso[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    sg_format_iso((int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, iso);
    json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s}", "skill", p->skill, "digest",
                                          p->digest, "rule", text, "effect",
                                          d == SG_DEC_DENY_ALWAYS ? "deny" : "allow", "created",
                                          iso));
    if (!err)
        write_grants(p->grants_file, list);
    json_decref(list);
    sg_diags_free(&dd);
}

/* An agent's command line as it wrote it (check_tool_permission puts the
 * first word in subject, the rest in args). */
static char *agent_line(const struct sg_preq *q)
{
    return sg_xasprintf("%s%s%s", q->subject, q->args[0] ? " " : "", q->args);
}

/* q, narrowed to one simple command c of the agent's line. */
static void one_command(const struct sg_preq *q, const struct sg_shell_cmd *c, struct sg_preq *out)
{
    *out = *q;
    snprintf(out->subject, sizeof out->subject, "%s", c->argv[0]);
    /* the program as written: ./ls or /tmp/ls is not the ls a scope names */
    snprintf(out->name, sizeof out->name, "%s", c->argv[0]);
    struct sg_shell_cmd rest = {.argv = c->argv + 1, .argc = c->argc - 1};
    cleanup_free char *args = sg_shell_join(&rest);
    snprintf(out->args, sizeof out->args, "%s", args);
}

static enum sg_effect evaluate_one(struct sg_perm *p, const struct sg_preq *q,
                                   const struct sg_prule **hit);

/* An agent's command line: denied when any simple command in it is,
 * allowed only when every one is; one that cannot be read exactly is never
 * allowed by a rule (deny rules still see it as written). */
static enum sg_effect evaluate_line(struct sg_perm *p, const struct sg_preq *q,
                                    const struct sg_prule **hit)
{
    cleanup_free char *line = agent_line(q);
    struct sg_shell sh;
    const char *why;
    *hit = NULL;
    if (sg_shell_parse(line, &sh, &why) < 0) {
        for (size_t i = 0; i < p->nrules; i++)
            if (p->rules[i].effect == SG_EFF_DENY && sg_prule_matches(&p->rules[i], q)) {
                *hit = &p->rules[i];
                return SG_EFF_DENY;
            }
        return SG_EFF_ASK;
    }
    enum sg_effect e = SG_EFF_ALLOW;
    const struct sg_prule *first_allow = NULL;
    for (size_t i = 0; i < sh.n; i++) {
        struct sg_preq one;
        const struct sg_prule *h;
        one_command(q, &sh.cmds[i], &one);
        enum sg_effect ei = evaluate_one(p, &one, &h);
        if (ei == SG_EFF_DENY) {
            *hit = h;
            e = SG_EFF_DENY;
            break;
        }
        if (ei == SG_EFF_ASK)
            e = SG_EFF_ASK;
        else if (!first_allow)
            first_allow = h;
    }
    sg_shell_free(&sh);
    if (e == SG_EFF_ALLOW)
        *hit = first_allow;
    return e;
}

static enum sg_effect evaluate(struct sg_perm *p, const struct sg_preq *q, const struct sg_prule **hit)
{
    if (q->tool == SG_PT_BASH && q->agent_tool[0])
        return evaluate_line(p, q, hit);
    return evaluate_one(p, q, hit);
}

static enum sg_effect evaluate_one(struct sg_perm *p, const struct sg_preq *q,
                                   const struct sg_prule **hit)
{
    static const enum sg_effect order[] = {SG_EFF_DENY, SG_EFF_ASK, SG_EFF_ALLOW};
    for (size_t o = 0; o < SG_ARRAY_LEN(order); o++) {
        for (size_t i = 0; i < p->nrules; i++) {
            if (p->rules[i].effect == order[o] && sg_prule_matches(&p->rules[i], q)) {
                *hit = &p->rules[i];
                return order[o];
            }
        }
    }
    *hit = NULL;
    return SG_EFF_ASK;
}

static void show(struct sg_perm *p);
static void show_frontend(struct sg_perm *p);
static void decide_head(struct sg_perm *p, enum sg_decision d, const char *by);

int sg_perm_request(struct sg_perm *p, const struct sg_preq *q, sg_perm_cont cont, void *ctx,
                    enum sg_decision *dec)
{
    const struct sg_prule *hit;
    enum sg_effect e = evaluate(p, q, &hit);
    char by[512];
    if (e == SG_EFF_DENY || e == SG_EFF_ALLOW) {
        snprintf(by, sizeof by, "%s %s (%s)", !strcmp(hit->source, "grant") ? "grant" : "rule",
                 hit->text, hit->source);
        *dec = e == SG_EFF_ALLOW ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
        audit_decision(p, q, *dec, by, 0);
        return 1;
    }
    if (p->o.mode == SG_PERM_ALLOW_ALL) {
        *dec = SG_DEC_ALLOW_ONCE;
        audit_decision(p, q, *dec, "--allow-all (no person was asked)", 0);
        return 1;
    }
    if (p->o.mode == SG_PERM_DENY_ALL || p->o.mode == SG_PERM_POLICY) {
        *dec = SG_DEC_DENY;
        audit_decision(p, q, *dec,
                       p->o.mode == SG_PERM_POLICY ? "policy: no rule allows it" : "deny-all",
                       0);
        return 1;
    }
    if (p->tty < 0 && !p->fe_show)
        p->tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if ((p->tty < 0 && !p->fe_show) || p->nqueue >= MAX_PENDING) {
        *dec = SG_DEC_DENY;
        audit_decision(p, q, *dec,
                       p->nqueue >= MAX_PENDING ? "too many waiting" : "no terminal to ask on", 0);
        return 1;
    }
    p->queue[p->nqueue++] = (struct pending){.q = *q, .cont = cont, .ctx = ctx,
                                             .asked_ms = now_ms(), .id = ++p->next_id};
    if (p->o.bus) {
        cleanup_free char *r = sg_preq_rule(q);
        cleanup_free char *rs = sg_sanitize_str(r, 0);
        sg_bus_emit(p->o.bus, SG_EV_PERMISSION_ASKED,
                    json_pack("{s:s, s:s, s:i}", "tool", sg_ptool_name(q->tool), "request", rs,
                              "queued", (int)p->nqueue),
                    "%s: waiting for a person (%zu in the queue)", rs, p->nqueue);
    }
    if (!p->shown)
        show(p);
    else if (p->fe_show)
        show_frontend(p); /* the counter changed */
    return 0;
}

#define WHY_TEXT "no rule allows it; its manifest does not declare it"

static void show_frontend(struct sg_perm *p)
{
    if (!p->nqueue) {
        p->fe_show(p->fe_ctx, NULL);
        return;
    }
    cleanup_free char *rule = sg_preq_rule(&p->queue[0].q);
    struct sg_perm_prompt pr = {.perm = p, .q = &p->queue[0].q, .skill = p->skill, .why = WHY_TEXT,
                                .rule = rule, .queued = p->nqueue, .shown_ms = p->shown_ms,
                                .deadline_ms = p->deadline_ms, .id = p->queue[0].id};
    p->fe_show(p->fe_ctx, &pr);
}

void sg_perm_set_frontend(struct sg_perm *p, sg_perm_show_fn show_fn, void *ctx)
{
    p->fe_show = show_fn;
    p->fe_ctx = ctx;
}

const char *sg_perm_last_decided_by(const struct sg_perm *p)
{
    return p->last_by;
}

void sg_perm_answer(struct sg_perm *p, enum sg_decision d)
{
    if (p && p->nqueue && p->shown)
        decide_head(p, d, "person");
}

int sg_perm_answer_id(struct sg_perm *p, uint64_t id, enum sg_decision d)
{
    if (!p || !p->nqueue || !p->shown || p->queue[0].id != id)
        return -ESTALE; /* that request is settled already: this answer is not another's */
    decide_head(p, d, "person");
    return 0;
}

static void say(struct sg_perm *p, const char *s)
{
    if (p->tty < 0)
        return;
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(p->tty, s, n);
        if (w <= 0)
            return;
        s += w, n -= (size_t)w;
    }
}

static void show(struct sg_perm *p)
{
    if (!p->nqueue)
        return;
    if (p->fe_show) {
        p->shown = true;
        p->shown_ms = now_ms();
        p->deadline_ms = p->shown_ms + (int64_t)p->o.timeout_s * 1000;
        show_frontend(p);
        return;
    }
    const struct sg_preq *q = &p->queue[0].q;
    cleanup_free char *subj = sg_sanitize_str(q->subject, 0);
    cleanup_free char *args = sg_sanitize_str(q->args, 0);
    cleanup_free char *cwd = sg_sanitize_str(q->cwd, 0);
    cleanup_free char *rule = sg_preq_rule(q);
    cleanup_free char *rules = sg_sanitize_str(rule, 0);
    cleanup_free char *skill = sg_sanitize_str(p->skill, 0);
    char what[8400];
    if (q->tool == SG_PT_BASH)
        snprintf(what, sizeof what, "run a program (Bash, high risk)\n  program: %s\n  argv:    %s\n"
                 "  cwd:     %s", subj, args, cwd);
    else if (q->tool == SG_PT_FETCH)
        snprintf(what, sizeof what, "reach a host (Fetch, medium risk)\n  host:    %s%s%.0d", subj,
                 q->port > 0 ? "  port " : "", q->port > 0 ? q->port : 0);
    else
        snprintf(what, sizeof what, "write a file (Write, medium risk)\n  path:    %s", subj);
    if (q->detail[0]) { /* built from paths and an agent's tool name: theirs too */
        cleanup_free char *note = sg_sanitize_str(q->detail, 0);
        size_t wl = strlen(what);
        snprintf(what + wl, sizeof what - wl, "\n  note:    %s", note);
    }
    cleanup_free char *text = sg_xasprintf(
        "\n\033[0m--- skillgate: %s asks to %s\n  why:     " WHY_TEXT "\n  [a] allow once  [r] for this run  [A] always (saves %s)\n"
        "  [d] deny  [D] always deny   (Enter alone never allows; deny in %d s)%s\n> ",
        skill, what, rules, p->o.timeout_s,
        p->nqueue > 1 ? "\n  (more requests are waiting)" : "");
    tcflush(p->tty, TCIFLUSH); /* typeahead is not an answer */
    say(p, text);
    p->shown = true;
    p->confirming = false;
    p->shown_ms = now_ms();
    p->armed_ms = p->shown_ms + ARM_MS;
    p->deadline_ms = p->shown_ms + (int64_t)p->o.timeout_s * 1000;
    p->linelen = 0;
}

static void decide_head(struct sg_perm *p, enum sg_decision d, const char *by)
{
    struct pending head = p->queue[0];
    memmove(p->queue, p->queue + 1, (p->nqueue - 1) * sizeof *p->queue);
    p->nqueue--;
    p->shown = false;
    remember(p, &head.q, d);
    audit_decision(p, &head.q, d, by, now_ms() - head.asked_ms);
    say(p, sg_decision_allows(d) ? "  -> allowed\n" : "  -> denied\n");
    head.cont(head.ctx, d);
    /* later requests a new rule now settles are settled without asking */
    for (size_t i = 0; i < p->nqueue;) {
        const struct sg_prule *hit;
        enum sg_effect e = evaluate(p, &p->queue[i].q, &hit);
        if (e == SG_EFF_ASK) {
            i++;
            continue;
        }
        struct pending x = p->queue[i];
        memmove(p->queue + i, p->queue + i + 1, (p->nqueue - i - 1) * sizeof *p->queue);
        p->nqueue--;
        enum sg_decision dx = e == SG_EFF_ALLOW ? SG_DEC_ALLOW_ONCE : SG_DEC_DENY;
        char b2[512];
        snprintf(b2, sizeof b2, "rule %s (%s)", hit->text, hit->source);
        audit_decision(p, &x.q, dx, b2, now_ms() - x.asked_ms);
        x.cont(x.ctx, dx);
    }
    if (p->nqueue)
        show(p);
    else if (p->fe_show)
        show_frontend(p);
}

static void on_line(struct sg_perm *p, const char *l)
{
    while (*l == ' ' || *l == '\t')
        l++;
    if (p->confirming) {
        if (*l == 'y' || *l == 'Y')
            decide_head(p, SG_DEC_ALLOW_ALWAYS, "person");
        else {
            p->confirming = false;
            say(p, "  not saved. [a/r/A/d/D]> ");
        }
        return;
    }
    switch (*l) {
    case 'a': decide_head(p, SG_DEC_ALLOW_ONCE, "person"); return;
    case 'r': decide_head(p, SG_DEC_ALLOW_RUN, "person"); return;
    case 'd': decide_head(p, SG_DEC_DENY, "person"); return;
    case 'D': decide_head(p, SG_DEC_DENY_ALWAYS, "person"); return;
    case 'A': {
        cleanup_free char *rule = sg_preq_rule(&p->queue[0].q);
        cleanup_free char *rs = sg_sanitize_str(rule, 0);
        cleanup_free char *t = sg_xasprintf("  save the grant %s for this version of %s? [y/N]> ",
                                            rs, p->skill);
        p->confirming = true;
        say(p, t);
        return;
    }
    default:
        say(p, "  a, r, A, d or D (Enter alone never allows)> ");
    }
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
        cleanup_free char *line = agent_line(q);
        struct sg_shell sh;
        const char *why;
        if (sg_shell_parse(line, &sh, &why) < 0)
            return false;
        bool all = true;
        for (size_t i = 0; i < sh.n && all; i++) {
            struct sg_preq one;
            one_command(q, &sh.cmds[i], &one);
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

/* mcp__server__tool: Claude Code's name for an MCP server's tool */
static bool mcp_tool_name(const char *t)
{
    if (!sg_str_has_prefix(t, "mcp__"))
        return false;
    const char *sep = strstr(t + 5, "__");
    if (!sep || sep == t + 5 || !sep[2])
        return false;
    for (const char *c = t + 5; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            return false;
    return true;
}

int sg_check_tool_permission(struct sg_perm *p, const struct sg_policy *pol, const char *tool,
                             const char *detail, sg_perm_cont cont, void *ctx,
                             enum sg_decision *dec, bool *denied_outright)
{
    *denied_outright = false;
    enum sg_tool_id id = sg_tool_lookup(tool);
    if (id == SG_TOOL_UNKNOWN && !mcp_tool_name(tool)) {
        /* not a tool's name: escapes, spaces, a forged prompt. Refused
         * before a byte of it reaches a terminal or a record unsanitized */
        struct sg_preq q = {.tool = SG_PT_BASH};
        cleanup_free char *t = sg_sanitize_str(tool, 0);
        snprintf(q.agent_tool, sizeof q.agent_tool, "?");
        snprintf(q.subject, sizeof q.subject, "%s", t);
        *denied_outright = true;
        *dec = SG_DEC_DENY;
        audit_decision(p, &q, *dec, "PermissionDenied: not a known tool or mcp__ name", 0);
        return 1;
    }
    unsigned caps = sg_tool_caps(id);
    struct sg_preq q = {0};
    q.tool = id == SG_TOOL_UNKNOWN       ? SG_PT_BASH
             : (caps & SG_CAP_NETWORK)   ? SG_PT_FETCH
             : (caps & SG_CAP_EXEC)      ? SG_PT_BASH
                                         : SG_PT_WRITE;
    detail = detail ? detail : "";
    if (q.tool == SG_PT_BASH) { /* "git status" -> program git, arguments status */
        size_t w = strcspn(detail, " \t");
        snprintf(q.subject, sizeof q.subject, "%.*s", (int)w, detail);
        snprintf(q.args, sizeof q.args, "%s", detail[w] ? detail + w + 1 : "");
    } else {
        snprintf(q.subject, sizeof q.subject, "%s", detail);
        if (q.tool == SG_PT_WRITE) /* every rule sees the path the kernel would */
            canonical_path(q.subject, sizeof q.subject);
    }
    snprintf(q.detail, sizeof q.detail, "the agent runs its %s tool itself "
             "(check_tool_permission)", tool);
    snprintf(q.agent_tool, sizeof q.agent_tool, "%s", tool);
    if (pol->tools_restricted) {
        bool listed = false;
        for (size_t i = 0; i < pol->ntools; i++)
            listed |= !strcmp(pol->tools[i].name, tool);
        if (!listed) {
            *denied_outright = true;
            *dec = SG_DEC_DENY;
            audit_decision(p, &q, *dec, "PermissionDenied: not in allowed-tools", 0);
            return 1;
        }
    }
    if (sg_tool_risk(id) == SG_RISK_LOW) {
        *dec = SG_DEC_ALLOW_ONCE;
        audit_decision(p, &q, *dec, "low-risk tool", 0);
        return 1;
    }
    if (declared(pol, tool, &q)) {
        *dec = SG_DEC_ALLOW_ONCE;
        audit_decision(p, &q, *dec, "declared in the manifest", 0);
        return 1;
    }
    return sg_perm_request(p, &q, cont, ctx, dec);
}

size_t sg_perm_pollfds(struct sg_perm *p, struct pollfd *out, size_t max)
{
    if (!p || p->tty < 0 || !p->shown || max < 1)
        return 0;
    out[0] = (struct pollfd){.fd = p->tty, .events = POLLIN};
    return 1;
}

void sg_perm_dispatch(struct sg_perm *p, const struct pollfd *pfds, size_t n)
{
    if (!p || !p->shown)
        return;
    if (n && (pfds[0].revents & (POLLIN | POLLHUP))) {
        char buf[128];
        ssize_t r = read(p->tty, buf, sizeof buf);
        bool armed = now_ms() >= p->armed_ms;
        for (ssize_t i = 0; i < r && p->shown; i++) {
            if (buf[i] == '\n' || buf[i] == '\r') {
                p->line[p->linelen] = '\0';
                if (armed)
                    on_line(p, p->line);
                p->linelen = 0;
            } else if (p->linelen + 1 < sizeof p->line) {
                p->line[p->linelen++] = buf[i];
            }
        }
    }
    if (p->shown && now_ms() >= p->deadline_ms)
        decide_head(p, SG_DEC_DENY, "timeout (nobody answered)");
}

int sg_perm_timeout(const struct sg_perm *p)
{
    if (!p || !p->shown)
        return -1;
    int64_t left = p->deadline_ms - now_ms();
    return left < 0 ? 0 : (int)left;
}

void sg_perm_cancel_all(struct sg_perm *p)
{
    if (!p)
        return;
    while (p->nqueue)
        decide_head(p, SG_DEC_DENY, "the run ended");
}

void sg_perm_free(struct sg_perm *p)
{
    if (!p)
        return;
    /* whoever still waits is denied: the run is over */
    sg_perm_cancel_all(p);
    audit_flush_all(p);
    for (size_t i = 0; i < p->nrules; i++)
        sg_prule_free(&p->rules[i]);
    free(p->rules);
    if (p->tty >= 0)
        close(p->tty);
    free(p->skill), free(p->digest), free(p->run_id), free(p->grants_file);
    free(p->kinds);
    free(p);
}
