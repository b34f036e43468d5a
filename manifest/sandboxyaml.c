/* skillsandbox.yaml: skill{}, permissions{}, resources{}, entrypoint{}. */
#include "parse.h"
#include "skill.h"
#include "util.h"

/* ---- skill ---- */

static void s_name(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (!s || !sg_check_name(c, v, field, s))
        return;
    if (c->sk->name && strcmp(c->sk->name, s) != 0) {
        pc_err(c, v, field, "\"%s\" differs from the SKILL.md name \"%s\"", s, c->sk->name);
        return;
    }
    if (!c->sk->name)
        c->sk->name = sg_xstrdup(s);
}

static void s_description(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (!s || !sg_check_description(c, v, field, s))
        return;
    if (!c->sk->description)
        c->sk->description = sg_xstrdup(s);
}

static void s_version(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->version, c, v, field);
}

static void s_author(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_set_string(&c->sk->author, c, v, field);
}

static void p_skill(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"name", s_name},
                                        {"version", s_version},
                                        {"description", s_description},
                                        {"author", s_author}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

/* ---- permissions ---- */

static bool read_ports(struct sg_pctx *c, const struct sg_ynode *v, const char *field,
                       uint16_t *ports, size_t *n)
{
    *n = 0;
    if (v->type == SG_Y_SCALAR) {
        long long x;
        if (!pc_int(c, v, field, 1, 65535, &x))
            return false;
        ports[(*n)++] = (uint16_t)x;
        return true;
    }
    if (v->type != SG_Y_SEQ) {
        pc_err(c, v, field, "must be a list of port numbers, not %s", sg_ytype_name(v->type));
        return false;
    }
    if (v->n == 0) {
        pc_err(c, v, field, "is empty: omit it for the default [443]");
        return false;
    }
    if (v->n > SG_MAX_PORTS) {
        pc_err(c, v, field, "lists %zu ports; the limit is %d", v->n, SG_MAX_PORTS);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < v->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        long long x;
        if (!pc_int(c, v->kids[i], f, 1, 65535, &x)) {
            ok = false;
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < *n; j++)
            dup |= ports[j] == x;
        if (dup)
            pc_warn(c, v->kids[i], f, "port %lld is listed twice", x);
        else
            ports[(*n)++] = (uint16_t)x;
    }
    return ok;
}

static const char *near_key(const char *key, const char *a, const char *b)
{
    struct sg_nearest near;
    sg_nearest_init(&near, key);
    sg_nearest_offer(&near, a);
    sg_nearest_offer(&near, b);
    return near.best;
}

static void egress_item(struct sg_pctx *c, const struct sg_ynode *it, const char *field)
{
    uint16_t ports[SG_MAX_PORTS] = {443};
    size_t nports = 1;
    if (it->type == SG_Y_SCALAR) {
        const char *d = pc_string(c, it, field);
        if (d)
            sg_policy_add_egress(c, it, field, d, ports, nports);
        return;
    }
    if (it->type != SG_Y_MAP) {
        pc_err(c, it, field, "must be {domain, ports}, not %s", sg_ytype_name(it->type));
        return;
    }
    const struct sg_ynode *dom = NULL;
    bool ports_ok = true;
    for (size_t i = 0; i + 1 < it->n; i += 2) {
        const char *k = it->kids[i]->str;
        cleanup_free char *f = sg_xasprintf("%s.%s", field, k);
        if (!strcmp(k, "domain"))
            dom = it->kids[i + 1];
        else if (!strcmp(k, "ports"))
            ports_ok &= read_ports(c, it->kids[i + 1], f, ports, &nports);
        else
            pc_unknown_key(c, it->kids[i], f, near_key(k, "domain", "ports"));
    }
    cleanup_free char *df = sg_xasprintf("%s.domain", field);
    if (!dom) {
        pc_err(c, it, df, "missing (required)");
        return;
    }
    const char *d = pc_string(c, dom, df);
    if (d && ports_ok) {
        sg_policy_add_egress(c, dom, df, d, ports, nports);
    } else if (d) {
        /* every problem: a bad port does not hide a bad domain */
        cleanup_free char *norm = NULL;
        const char *why = NULL;
        if (sg_domain_normalize(d, &norm, &why) < 0)
            pc_err(c, dom, df, "\"%.80s\": %s", d, why);
    }
}

static void n_egress(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_SEQ) {
        pc_err(c, v, field, "must be a list of {domain, ports}, not %s", sg_ytype_name(v->type));
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        egress_item(c, v->kids[i], f);
    }
}

/* Ports the skill listens on for the person: published on the host's
 * 127.0.0.1 only, never another address (egress/publish.h). */
static void n_listen(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    if (sg_y_is_null(v))
        return;
    struct sg_policy *p = &c->sk->policy;
    uint16_t ports[SG_MAX_PORTS];
    size_t n = 0;
    if (v->type == SG_Y_SEQ && v->n == 0)
        return; /* listen: [] says "none", as omitting it does */
    if (!read_ports(c, v, field, ports, &n))
        return;
    for (size_t i = 0; i < n; i++)
        if (ports[i] < 1024) {
            sg_diag_add(c->d, SG_ERROR, c->file, v->line, v->col, field,
                        "port %u is privileged (below 1024): a system service's, which a skill "
                        "never serves on this machine; use a port from 1024 up", ports[i]);
            return;
        }
    memcpy(p->listen, ports, n * sizeof *ports);
    p->nlisten = n;
    sg_origin_free(&p->listen_origin);
    sg_origin_set(&p->listen_origin, c->origin, v->line, v->col, field);
}

static void p_network(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"egress", n_egress}, {"listen", n_listen}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

static void sys_profile(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    enum sg_seccomp_profile prof;
    if (!s)
        return;
    if (sg_seccomp_profile_from_name(s, &prof) < 0) {
        pc_err(c, v, field, "\"%.40s\" is not a profile (default, strict, permissive)", s);
        return;
    }
    struct sg_policy *p = &c->sk->policy;
    p->profile = prof;
    sg_origin_free(&p->profile_origin);
    sg_origin_set(&p->profile_origin, c->origin, v->line, v->col, field);
}

static void p_syscalls(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"profile", sys_profile}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

static void add_socket(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    sg_policy_add_socket(c, n, f, n->str);
}

static void p_unix_sockets(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_socket, NULL);
}

static void add_program(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    sg_policy_add_program(c, n, f, n->str);
}

static void p_programs(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_program, NULL);
}

static void t_permissions(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"network", p_network},
                                        {"programs", p_programs},
                                        {"filesystem", pc_field_filesystem},
                                        {"env_vars", pc_field_env},
                                        {"syscalls", p_syscalls},
                                        {"unix_sockets", p_unix_sockets}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

/* ---- resources: one handler per limit, from the SG_LIMITS list ---- */

#define X(f, key, def, min, max, unit)                                                \
    static void r_##f(struct sg_pctx *c, const struct sg_ynode *v, const char *field) \
    {                                                                                 \
        long long x;                                                                  \
        if (pc_int(c, v, field, min, max, &x))                                        \
            sg_policy_set_limit(c, &c->sk->policy.limits.f, v, field, x);             \
    }
SG_LIMITS(X)
#undef X

static void t_resources(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {
#define X(f, key, def, min, max, unit) {key, r_##f},
        SG_LIMITS(X)
#undef X
    };
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

/* ---- entrypoint ---- */

static void e_command(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (!s)
        return;
    struct sg_entrypoint *e = &c->sk->policy.entry;
    free(e->command);
    e->command = sg_xstrdup(s);
    e->detected = false;
    sg_origin_free(&e->origin);
    sg_origin_set(&e->origin, c->origin, v->line, v->col, field);
}

static void add_arg(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)f, (void)arg;
    struct sg_entrypoint *e = &c->sk->policy.entry;
    e->args = sg_xrealloc(e->args, (e->nargs + 1) * sizeof *e->args);
    e->args[e->nargs++] = sg_xstrdup(n->str);
}

static void e_args(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_arg, NULL);
}

static void t_entrypoint(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"command", e_command}, {"args", e_args}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
    if (v && v->type == SG_Y_MAP && !sg_y_get(v, "command"))
        pc_err(c, v, "entrypoint.command", "missing (required when entrypoint is given)");
}

void sg_sandbox_yaml_apply(struct sg_pctx *c, const struct sg_ynode *root)
{
    static const struct pc_field top[] = {{"skill", p_skill},
                                          {"permissions", t_permissions},
                                          {"resources", t_resources},
                                          {"entrypoint", t_entrypoint}};
    if (!root || sg_y_is_null(root)) {
        sg_diag_add(c->d, SG_ERROR, c->file, 1, 1, NULL, "the file is empty");
        return;
    }
    if (root->type != SG_Y_MAP) {
        pc_err(c, root, NULL, "must be a mapping (skill, permissions, resources, entrypoint), "
               "not %s", sg_ytype_name(root->type));
        return;
    }
    pc_walk_map(c, root, "", top, SG_ARRAY_LEN(top));
    const struct sg_ynode *skill = sg_y_get(root, "skill");
    if (!skill)
        pc_err(c, root, "skill", "missing (required: skill.name)");
    else if (skill->type == SG_Y_MAP && !sg_y_get(skill, "name"))
        pc_err(c, skill, "skill.name", "missing (required)");
}
