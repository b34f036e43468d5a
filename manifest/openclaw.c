/* OpenClaw's metadata.openclaw (openclaw.h). */
#include "openclaw.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "config.h"
#include "parse.h"
#include "skill.h"
#include "util.h"

int sg_openclaw_key(const char *k)
{
    return !strcmp(k, "openclaw") || !strcmp(k, "clawdbot") || !strcmp(k, "clawdis") ||
           !strcmp(k, "moltbot");
}

char *sg_openclaw_place(const char *home, const char *real_root)
{
    if (!home || !real_root)
        return NULL;
    static const char *const places[] = {
#define X(rel, ws) rel,
        SG_OPENCLAW_PLACES(X)
#undef X
    };
    /* one lstat per agent folder (~/.openclaw, ~/.clawdbot) where OpenClaw
     * is not installed: every skill loaded asks */
    const char *top = NULL;
    size_t topl = 0;
    bool have = false;
    for (size_t i = 0; i < SG_ARRAY_LEN(places); i++) {
        size_t l = strcspn(places[i], "/");
        if (!top || l != topl || strncmp(places[i], top, l)) {
            cleanup_free char *t = sg_xasprintf("%s/%.*s", home, (int)l, places[i]);
            struct stat st;
            have = lstat(t, &st) == 0;
            top = places[i], topl = l;
        }
        if (!have)
            continue;
        bool in;
        if (strchr(places[i], '*')) { /* an agent's workspace, by name */
            cleanup_free char *inside = sg_xasprintf("%s/*", places[i]);
            cleanup_free char *rh = sg_path_real(home);
            in = sg_path_within_pattern(real_root, home, inside) ||
                 (rh && sg_path_within_pattern(real_root, rh, inside));
        } else {
            cleanup_free char *p = sg_xasprintf("%s/%s", home, places[i]);
            cleanup_free char *real = sg_path_real(p);
            in = (real && sg_path_within(real_root, real) && strcmp(real_root, real)) ||
                 (sg_path_within(real_root, p) && strcmp(real_root, p));
        }
        if (in)
            return sg_xasprintf("found in ~/%s, where OpenClaw keeps skills", places[i]);
    }
    return NULL;
}

char *sg_openclaw_carried(const struct sg_ynode *fm)
{
    const struct sg_ynode *m = fm && fm->type == SG_Y_MAP ? sg_y_get(fm, "metadata") : NULL;
    for (size_t i = 0; m && m->type == SG_Y_MAP && i + 1 < m->n; i += 2)
        if (sg_openclaw_key(m->kids[i]->str) && m->kids[i + 1]->type == SG_Y_MAP)
            return sg_xasprintf("carries OpenClaw's metadata.%s", m->kids[i]->str);
    return NULL;
}

char *sg_openclaw_which(const char *bin)
{
    if (!bin[0] || strlen(bin) > 255)
        return NULL;
    if (strchr(bin, '/'))
        return access(bin, X_OK) == 0 ? sg_xstrdup(bin) : NULL;
    static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < SG_ARRAY_LEN(dirs); i++) {
        char *p = sg_xasprintf("%s/%s", dirs[i], bin);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

static void push(struct sg_strv *s, const char *v)
{
    s->v = sg_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = sg_xstrdup(v);
}

static void strv_free(struct sg_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

void sg_openclaw_free(struct sg_openclaw *o)
{
    if (!o)
        return;
    strv_free(&o->env), strv_free(&o->bins), strv_free(&o->any_bins);
    strv_free(&o->config), strv_free(&o->os), strv_free(&o->install);
    free(o->key), free(o->primary_env), free(o->emoji), free(o->homepage), free(o->skill_key);
    free(o);
}

static struct sg_openclaw *oc(struct sg_pctx *c)
{
    return c->sk->openclaw;
}

/* A variable it needs is one it may receive: env_vars.allow, with this origin. */
static void add_env(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    push(&oc(c)->env, n->str);
    sg_policy_add_env(c, n, f, n->str);
}

static void add_to(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)c, (void)f;
    push(arg, n->str);
}

/* A list OpenClaw reads as a list of strings or one comma-separated string
 * (normalizeStringList, src/shared/frontmatter.ts): each item to fn with
 * the node's place. Anything else OpenClaw ignores: a warning here. */
static void oc_list(struct sg_pctx *c, const struct sg_ynode *v, const char *field,
                    void (*fn)(struct sg_pctx *, const struct sg_ynode *, const char *, void *),
                    void *arg)
{
    if (sg_y_is_null(v))
        return;
    if (v->type == SG_Y_SEQ) {
        pc_string_list(c, v, field, fn, arg);
        return;
    }
    if (v->type != SG_Y_SCALAR) {
        pc_warn(c, v, field, "must be a list of strings, not %s; ignored (OpenClaw ignores it "
                             "too)", sg_ytype_name(v->type));
        return;
    }
    size_t i = 0;
    for (const char *s = v->str; *s; i++) {
        size_t l = strcspn(s, ",");
        cleanup_free char *item = sg_xstrndup(s, l);
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        char *a = item, *e = item + strlen(item);
        while (*a == ' ' || *a == '\t')
            a++;
        while (e > a && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        struct sg_ynode one = {.type = SG_Y_SCALAR, .line = v->line, .col = v->col,
                               .str = a, .len = strlen(a), .quoted = true};
        if (*a)
            fn(c, &one, f, arg);
        s += l;
        s += *s == ',';
    }
}

static void f_env(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    oc_list(c, v, field, add_env, NULL);
}

static void f_bins(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    oc_list(c, v, field, add_to, &oc(c)->bins);
}

static void f_any_bins(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    oc_list(c, v, field, add_to, &oc(c)->any_bins);
}

static void f_config(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    oc_list(c, v, field, add_to, &oc(c)->config);
}

static void f_os(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    oc_list(c, v, field, add_to, &oc(c)->os);
}

static void f_requires(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {
        {"env", f_env, true}, {"bins", f_bins, true}, {"anyBins", f_any_bins, true},
        {"config", f_config, true}};
    if (!sg_y_is_null(v) && v->type != SG_Y_MAP) {
        pc_warn(c, v, field, "must be a mapping of env, bins, anyBins, config, not %s; ignored "
                             "(OpenClaw ignores it too)", sg_ytype_name(v->type));
        return;
    }
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

/* primaryEnv: a variable's name; OpenClaw reads it only when it is a
 * string (null, which published ClawHub skills write, is none). */
static void f_primary_env(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_SCALAR) {
        pc_warn(c, v, field, "must be a variable's name, not %s; ignored (OpenClaw ignores it "
                             "too)", sg_ytype_name(v->type));
        return;
    }
    pc_set_string(&oc(c)->primary_env, c, v, field);
    if (oc(c)->primary_env)
        sg_policy_add_env(c, v, field, oc(c)->primary_env);
}

/* envVars: [{name, required, description}]: each may be passed. */
static void f_env_vars(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_SEQ) {
        pc_warn(c, v, field, "must be a list of {name, required, description}; ignored");
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        const struct sg_ynode *e = v->kids[i];
        const struct sg_ynode *name = e->type == SG_Y_MAP ? sg_y_get(e, "name") : NULL;
        cleanup_free char *nf = sg_xasprintf("%s.name", f);
        const char *s = name ? pc_string(c, name, nf) : NULL;
        if (!s) {
            pc_warn(c, e, f, "has no name; ignored");
            continue;
        }
        push(&oc(c)->env, s);
        sg_policy_add_env(c, name, nf, s);
    }
}

static void f_string(struct sg_pctx *c, const struct sg_ynode *v, const char *field, char **dst)
{
    pc_set_string(dst, c, v, field);
}

static void f_emoji(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    f_string(c, v, field, &oc(c)->emoji);
}

static void f_homepage(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    f_string(c, v, field, &oc(c)->homepage);
}

static void f_skill_key(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    f_string(c, v, field, &oc(c)->skill_key);
}

static void f_always(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    bool b;
    if (pc_bool(c, v, field, &b))
        oc(c)->always = b;
}

/* install: shown as "kind: what (bins: ...)", never run. */
static void f_install(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_SEQ) {
        pc_warn(c, v, field, "must be a list of install steps; ignored");
        return;
    }
    static const char *const what[] = {"formula", "cask", "package", "module", "url"};
    for (size_t i = 0; i < v->n; i++) {
        const struct sg_ynode *e = v->kids[i];
        if (e->type != SG_Y_MAP) {
            cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
            pc_warn(c, e, f, "an install step is a mapping; ignored");
            continue;
        }
        const struct sg_ynode *kind = sg_y_get(e, "kind");
        const char *k = kind && kind->type == SG_Y_SCALAR ? kind->str : "?";
        const char *w = NULL;
        for (size_t j = 0; !w && j < SG_ARRAY_LEN(what); j++) {
            const struct sg_ynode *x = sg_y_get(e, what[j]);
            w = x && x->type == SG_Y_SCALAR ? x->str : NULL;
        }
        struct sg_buf b;
        sg_buf_init(&b, 1024);
        sg_buf_printf(&b, "%.32s: %.200s", k, w ? w : "(nothing named)");
        const struct sg_ynode *bins = sg_y_get(e, "bins");
        for (size_t j = 0; bins && bins->type == SG_Y_SEQ && j < bins->n && j < 8; j++)
            if (bins->kids[j]->type == SG_Y_SCALAR)
                sg_buf_printf(&b, "%s%.64s", j ? ", " : " (gives ", bins->kids[j]->str);
        if (bins && bins->type == SG_Y_SEQ && bins->n)
            sg_buf_printf(&b, ")");
        cleanup_free char *line = sg_buf_steal(&b);
        push(&oc(c)->install, line ? line : "?");
    }
}

static void f_ignored(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    (void)c, (void)v, (void)field; /* nix: OpenClaw's own plugin wiring */
}

void sg_openclaw_parse(struct sg_pctx *c, const struct sg_ynode *v, const char *field,
                       const char *key)
{
    struct sg_skill *sk = c->sk;
    if (sk->openclaw) {
        pc_warn(c, v, field, "a second OpenClaw block (metadata.%s is read already); ignored",
                sk->openclaw->key);
        return;
    }
    sk->openclaw = sg_xcalloc(1, sizeof *sk->openclaw);
    sk->openclaw->key = sg_xstrdup(key);
    sk->openclaw->always = -1;
    /* all lenient: OpenClaw's loader ignores a key it does not know, and
     * what these give (variables) a misspelling only leaves out */
    static const struct pc_field f[] = {
        {"requires", f_requires, true}, {"primaryEnv", f_primary_env, true},
        {"envVars", f_env_vars, true},  {"install", f_install, true},
        {"os", f_os, true},             {"emoji", f_emoji, true},
        {"homepage", f_homepage, true}, {"always", f_always, true},
        {"skillKey", f_skill_key, true}, {"nix", f_ignored, true}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}
