/* SKILL.md frontmatter: the Agent Skills fields, Claude Code's extras and the
 * OpenSkills wasm: block, applied to the Skill and its Policy. */
#include "openclaw.h"
#include "parse.h"
#include "skill.h"
#include "util.h"

static void f_name(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (s && sg_check_name(c, v, field, s))
        c->sk->name = sg_xstrdup(s);
}

static void f_description(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (s && sg_check_description(c, v, field, s))
        c->sk->description = sg_xstrdup(s);
}

static void f_license(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->license, c, v, field);
}

static void f_compatibility(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (s && sg_utf8_chars(s) > 500)
        pc_err(c, v, field, "is %zu characters; the limit is 500", sg_utf8_chars(s));
    else if (s)
        c->sk->compatibility = sg_xstrdup(s);
}

static void f_metadata(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, field, "must be a mapping of strings, not %s", sg_ytype_name(v->type));
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        cleanup_free char *f = sg_xasprintf("%s.%s", field, v->kids[i]->str);
        const struct sg_ynode *val = v->kids[i + 1];
        if (sg_openclaw_key(v->kids[i]->str) && val->type == SG_Y_MAP) {
            /* ClawHub's runtime metadata: OpenClaw's format, and a skill
             * carrying it is judged by OpenClaw's rules (openclaw.h), which
             * want it a mapping (the spec's string-only metadata is not
             * theirs) */
            sg_openclaw_parse(c, val, f, v->kids[i]->str);
            continue;
        }
        if (val->type != SG_Y_SCALAR) {
            pc_warn(c, val, f, "must be a string (Agent Skills spec), not %s; ignored",
                    sg_ytype_name(val->type));
            continue;
        }
        const char *s = pc_string(c, val, f);
        if (!s)
            continue;
        struct sg_skill *sk = c->sk;
        sk->metadata = sg_xrealloc(sk->metadata, (sk->nmetadata + 1) * sizeof *sk->metadata);
        sk->metadata[sk->nmetadata].key = sg_xstrdup(v->kids[i]->str);
        sk->metadata[sk->nmetadata++].value = sg_xstrdup(s);
    }
}

static void f_allowed_tools(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    sg_policy_add_tools(c, v, field);
}

static void f_model(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->model, c, v, field);
}

static void f_agent(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->agent, c, v, field);
}

static void f_argument_hint(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->argument_hint, c, v, field);
}

static void f_context(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (!s)
        return;
    if (strcmp(s, "fork") != 0) {
        pc_err(c, v, field, "\"%.40s\" is not a context; the only one is \"fork\"", s);
        return;
    }
    c->sk->policy.fork_context = true;
}

static void f_user_invocable(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    bool b;
    if (pc_bool(c, v, field, &b))
        c->sk->user_invocable = b;
}

static void f_disable_model(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    bool b;
    if (pc_bool(c, v, field, &b))
        c->sk->disable_model_invocation = b;
}

/* OpenClaw's loader keeps every field of the frontmatter; these are the
 * ones ClawHub's skills write, kept to show. */
static void f_version(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (v->type == SG_Y_SCALAR && !sg_y_is_null(v))
        pc_set_string(&c->sk->version, c, v, field);
    else if (!sg_y_is_null(v))
        pc_warn(c, v, field, "not a string, ignored (OpenClaw ignores it too)");
}

static void f_author(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (v->type == SG_Y_SCALAR && !sg_y_is_null(v))
        pc_set_string(&c->sk->author, c, v, field);
    else if (!sg_y_is_null(v))
        pc_warn(c, v, field, "not a string, ignored (OpenClaw ignores it too)");
}

static void f_kept(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    (void)c, (void)v, (void)field; /* homepage, command-dispatch: shown by OpenClaw only */
}

static void f_hooks(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, field, "must be a mapping, not %s", sg_ytype_name(v->type));
        return;
    }
    c->sk->has_hooks = true;
    pc_warn(c, v, field, "skill hooks are not run by skillgate");
}

/* ---- wasm: (OpenSkills) ---- */

static void add_host(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    static const uint16_t https[] = {443};
    sg_policy_add_egress(c, n, f, n->str, https, 1);
}

static void w_net_allow(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    struct sg_policy *p = &c->sk->policy;
    if (!sg_y_is_null(v) && !p->wasm_network) { /* said in validate for a WASM skill (skill.c) */
        p->wasm_network = true;
        sg_origin_set(&p->wasm_network_origin, c->file, v->line, v->col, field);
    }
    pc_string_list(c, v, field, add_host, NULL);
}

static void w_network(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"allow", w_net_allow}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

static void w_memory(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    long long x;
    if (pc_int(c, v, field, 16, 65536, &x))
        sg_policy_set_limit(c, &c->sk->policy.limits.memory_mb, v, field, x);
}

static void w_timeout(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    long long x;
    if (pc_int(c, v, field, 1, 86400000LL, &x))
        sg_policy_set_limit(c, &c->sk->policy.limits.runtime_s, v, field, (x + 999) / 1000);
}

static void w_seed(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    long long x;
    if (pc_int(c, v, field, 0, INT64_MAX, &x)) {
        c->sk->policy.has_random_seed = true;
        c->sk->policy.random_seed = x;
    }
}

static void f_wasm(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {
        {"filesystem", pc_field_filesystem}, {"network", w_network}, {"env", pc_field_env},
        {"memory_mb", w_memory},      {"timeout_ms", w_timeout}, {"random_seed", w_seed},
    };
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

#define SKILLMD_FIELDS(X)                                                       \
    X("name", f_name) X("description", f_description) X("license", f_license)     \
    X("compatibility", f_compatibility) X("metadata", f_metadata)                 \
    X("allowed-tools", f_allowed_tools) X("model", f_model) X("context", f_context) \
    X("agent", f_agent) X("user-invocable", f_user_invocable)                      \
    X("disable-model-invocation", f_disable_model) X("argument-hint", f_argument_hint) \
    X("hooks", f_hooks) X("wasm", f_wasm)
/* the fields OpenClaw's skills carry that the spec does not know */
#define OPENCLAW_FIELDS(X)                                                           \
    X("homepage", f_kept) X("version", f_version) X("author", f_author)               \
    X("command-dispatch", f_kept) X("command-tool", f_kept) X("command-arg-mode", f_kept)

void sg_skillmd_apply(struct sg_pctx *c, const struct sg_ynode *root)
{
#define X(k, fn) {k, fn},
    static const struct pc_field spec[] = {SKILLMD_FIELDS(X)};
    static const struct pc_field both[] = {SKILLMD_FIELDS(X) OPENCLAW_FIELDS(X)};
#undef X
    const char *oc = c->sk->openclaw_rules;
    if (!root || sg_y_is_null(root)) {
        sg_diag_add(c->d, SG_ERROR, c->file, 2, 1, NULL,
                    "the frontmatter is empty; OpenClaw would refuse it too (its loader skips a "
                    "skill without a description)");
        return;
    }
    if (root->type != SG_Y_MAP) {
        pc_err(c, root, NULL, "the frontmatter must be a mapping of fields, not %s",
               sg_ytype_name(root->type));
        return;
    }
    if (oc)
        pc_walk_map(c, root, "", both, SG_ARRAY_LEN(both));
    else
        pc_walk_map(c, root, "", spec, SG_ARRAY_LEN(spec));
    if (!sg_y_get(root, "name") && !oc)
        pc_err(c, root, "name", "missing (required by the Agent Skills spec; OpenClaw's loader "
                                "would use the folder's name)");
    if (!sg_y_get(root, "description"))
        pc_err(c, root, "description", "missing (required); %s",
               oc ? "OpenClaw would refuse it too (its loader skips a skill without one)"
                  : "OpenClaw's loader would skip it too");
}
