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

/* A field that is only shown: a string, or a word of the spec's (a list
 * or a mapping is ignored; pc_spec). */
static bool shown_string(char **dst, struct sg_pctx *c, const struct sg_ynode *v,
                         const char *field)
{
    if (v->type != SG_Y_SCALAR || sg_y_is_null(v)) {
        pc_spec(c, v, field, "must be a string, not %s; ignored",
                v->type == SG_Y_SCALAR ? "empty" : sg_ytype_name(v->type));
        return false;
    }
    pc_set_string(dst, c, v, field);
    return *dst != NULL;
}

static void f_license(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    shown_string(&c->sk->license, c, v, field);
}

static void f_compatibility(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (shown_string(&c->sk->compatibility, c, v, field) &&
        sg_utf8_chars(c->sk->compatibility) > 500)
        pc_spec(c, v, field, "is %zu characters; the limit is 500",
                sg_utf8_chars(c->sk->compatibility));
}

static void metadata_map(struct sg_pctx *c, const struct sg_ynode *v, const char *field);

/* A scalar's text read as YAML on its own, put back at its line and
 * column (past its opening quote), so what it gives has its place in the
 * file: the node, or NULL with the first problem in *why. */
static struct sg_ynode *text_as_yaml(struct sg_pctx *c, const struct sg_ynode *v,
                                     char **why)
{
    int col = v->col + (v->quoted ? 1 : 0); /* past a quote; exact on the first line */
    struct sg_buf b;
    sg_buf_init(&b, v->len + (size_t)col);
    for (int i = 1; i < col; i++)
        sg_buf_append(&b, " ", 1);
    sg_buf_append(&b, v->str, v->len);
    struct sg_diags quiet = {0};
    struct sg_ynode *n = NULL;
    if (sg_yaml_parse(b.data, b.len, v->line - 1, c->file, &quiet, &n) < 0 || !n)
        *why = sg_xstrdup(quiet.n ? quiet.v[0].msg : "it is empty");
    sg_diags_free(&quiet);
    sg_buf_free(&b);
    return n;
}

/* OpenClaw reads metadata as JSON5 text (resolveOpenClawMetadata, src/
 * agents/skills/frontmatter.ts): a YAML mapping is that text's object, and
 * a string (a quoted one, or a value of the line-by-line reading) is
 * parsed; JSON's "{...}" is YAML's flow mapping. What is no object
 * OpenClaw ignores, and so does skillgate, saying so. */
static void metadata_text(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    cleanup_free char *why = NULL;
    struct sg_ynode *m = v->len && v->str[0] == '{' ? text_as_yaml(c, v, &why) : NULL;
    if (m && m->type == SG_Y_MAP)
        metadata_map(c, m, field);
    else
        pc_warn(c, v, field, "is text that is no JSON object; OpenClaw reads metadata as JSON "
                             "and ignores it, and so does skillgate (the variables it names are "
                             "not passed)");
    sg_ynode_free(m);
}

static void f_metadata(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type == SG_Y_SCALAR && c->sk->openclaw_rules) {
        metadata_text(c, v, field);
        return;
    }
    metadata_map(c, v, field);
}

/* The block OpenClaw reads (resolveOpenClawMetadata): metadata.openclaw,
 * else metadata.clawdbot; NULL when neither is a mapping. */
static const char *openclaw_block(const struct sg_ynode *v)
{
    static const char *const order[] = {"openclaw", "clawdbot"};
    for (size_t i = 0; i < SG_ARRAY_LEN(order); i++) {
        const struct sg_ynode *b = sg_y_get(v, order[i]);
        if (b && b->type == SG_Y_MAP)
            return order[i];
    }
    return NULL;
}

static void metadata_map(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (v->type != SG_Y_MAP) {
        pc_err(c, v, field, "must be a mapping of strings, not %s", sg_ytype_name(v->type));
        return;
    }
    const char *block = openclaw_block(v);
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        cleanup_free char *f = sg_xasprintf("%s.%s", field, v->kids[i]->str);
        const struct sg_ynode *val = v->kids[i + 1];
        if (sg_openclaw_key(v->kids[i]->str) && val->type == SG_Y_MAP) {
            /* ClawHub's runtime metadata: OpenClaw's format, and a skill
             * carrying it is judged by OpenClaw's rules (openclaw.h), which
             * want it a mapping (the spec's string-only metadata is not
             * theirs); only the block OpenClaw reads gives variables */
            if (block && !strcmp(block, v->kids[i]->str))
                sg_openclaw_parse(c, val, f, v->kids[i]->str);
            else
                pc_warn(c, val, f, "OpenClaw reads metadata.openclaw, else metadata.clawdbot, "
                                   "and ignores this block; so does skillgate (the variables "
                                   "it names are not passed)");
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

/* A field skillgate enforces, in a frontmatter read line by line: its
 * text put back at its column and read as YAML on its own (a flow list
 * such as ["Read", "Bash"], or the lines of a block list), as YAML reads
 * it where the rest of the frontmatter parses. NULL, with an error, when
 * that text is no YAML: guessing at it could widen what the skill may do. */
static struct sg_ynode *lines_value(struct sg_pctx *c, const struct sg_ynode *v,
                                    const char *field)
{
    cleanup_free char *why = NULL;
    struct sg_ynode *n = text_as_yaml(c, v, &why);
    if (!n)
        pc_err(c, v, field, "the frontmatter is no YAML, and read line by line (as OpenClaw "
                            "reads it) this field's text is no YAML either (%s); fix the YAML",
               why);
    return n;
}

/* fn with v; in a frontmatter read line by line, with the YAML its text
 * is (lines_value), unless quotes made it one string. */
static void enforced(struct sg_pctx *c, const struct sg_ynode *v, const char *field,
                     void (*fn)(struct sg_pctx *, const struct sg_ynode *, const char *))
{
    if (!c->lines || v->type != SG_Y_SCALAR || v->quoted) {
        fn(c, v, field);
        return;
    }
    struct sg_ynode *n = lines_value(c, v, field);
    if (n)
        fn(c, n, field);
    sg_ynode_free(n);
}

static void allowed_tools(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    sg_policy_add_tools(c, v, field);
}

static void f_allowed_tools(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    enforced(c, v, field, allowed_tools);
}

static void f_model(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    shown_string(&c->sk->model, c, v, field);
}

static void f_agent(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    shown_string(&c->sk->agent, c, v, field);
}

static void f_argument_hint(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    shown_string(&c->sk->argument_hint, c, v, field);
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

static void hooks(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
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

static void f_hooks(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    enforced(c, v, field, hooks);
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

static void wasm(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {
        {"filesystem", pc_field_filesystem}, {"network", w_network}, {"env", pc_field_env},
        {"memory_mb", w_memory},      {"timeout_ms", w_timeout}, {"random_seed", w_seed},
    };
    struct sg_policy *p = &c->sk->policy;
    if (!p->wasm_declared) { /* said in validate when no module is there (skill.c) */
        p->wasm_declared = true;
        sg_origin_set(&p->wasm_origin, c->file, v->line, v->col, field);
    }
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

static void f_wasm(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    enforced(c, v, field, wasm);
}

/* X(key, handler, lenient): lenient for what is shown or only gives
 * (parse.h); what restricts (allowed-tools), runs (hooks, context) or
 * grants under skillgate's own schema (wasm) keeps a near miss an error */
#define SKILLMD_FIELDS(X)                                                                \
    X("name", f_name, true) X("description", f_description, true)                          \
    X("license", f_license, true) X("compatibility", f_compatibility, true)                \
    X("metadata", f_metadata, true) X("allowed-tools", f_allowed_tools, false)             \
    X("model", f_model, true) X("context", f_context, false) X("agent", f_agent, true)     \
    X("user-invocable", f_user_invocable, true)                                            \
    X("disable-model-invocation", f_disable_model, true)                                   \
    X("argument-hint", f_argument_hint, true) X("hooks", f_hooks, false)                   \
    X("wasm", f_wasm, false)
/* the fields OpenClaw's skills carry that the spec does not know */
#define OPENCLAW_FIELDS(X)                                                               \
    X("homepage", f_kept, true) X("version", f_version, true) X("author", f_author, true) \
    X("command-dispatch", f_kept, true) X("command-tool", f_kept, true)                    \
    X("command-arg-mode", f_kept, true)

bool sg_skillmd_enforced(const char *key)
{
#define X(k, fn, lenient) if (!(lenient) && !strcmp(key, k)) return true;
    SKILLMD_FIELDS(X)
#undef X
    return false;
}

void sg_skillmd_apply(struct sg_pctx *c, const struct sg_ynode *root)
{
#define X(k, fn, lenient) {k, fn, lenient},
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
