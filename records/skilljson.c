#include "skilljson.h"

#include <stdint.h>

#include "openclaw.h"
#include "sanitize.h"
#include "skill.h"
#include "util.h"

static const struct {
    unsigned bit;
    const char *name;
} cap_names[] = {
    {SG_CAP_READ_ROOT, "read_root"},
    {SG_CAP_WRITE_ROOT, "write_root"},
    {SG_CAP_EXEC, "exec"},
    {SG_CAP_NETWORK, "network"},
};

const char *sg_cap_name(unsigned bit)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(cap_names); i++)
        if (cap_names[i].bit == bit)
            return cap_names[i].name;
    return "?";
}

static json_t *caps_json(unsigned caps)
{
    json_t *a = json_array();
    for (size_t i = 0; i < SG_ARRAY_LEN(cap_names); i++)
        if (caps & cap_names[i].bit)
            json_array_append_new(a, json_string(cap_names[i].name));
    return a;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *sg_one_line(const char *s, size_t max)
{
    if (!s)
        return sg_xstrdup("");
    size_t n = strcspn(s, "\r\n");
    if (n > max)
        n = max;
    return sg_xstrndup(s, n);
}

static json_t *origin_json(const struct sg_origin *o)
{
    json_t *j = json_object();
    json_object_set_new(j, "file", json_string(o->file ? o->file : "default"));
    json_object_set_new(j, "line", o->line ? json_integer(o->line) : json_null());
    json_object_set_new(j, "column", o->col ? json_integer(o->col) : json_null());
    json_object_set_new(j, "field", str_or_null(o->field && *o->field ? o->field : NULL));
    return j;
}

json_t *sg_diags_to_json(const struct sg_diags *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct sg_diag *g = &d->v[i];
        json_t *o = json_object();
        json_object_set_new(o, "severity", json_string(g->sev == SG_ERROR ? "error" : "warning"));
        json_object_set_new(o, "file", json_string(g->file));
        json_object_set_new(o, "line", g->line ? json_integer(g->line) : json_null());
        json_object_set_new(o, "column", g->col ? json_integer(g->col) : json_null());
        json_object_set_new(o, "field", str_or_null(g->field));
        json_object_set_new(o, "message", json_string(g->msg));
        if (g->spec_only) /* validate fails on it; a run does not stop */
            json_object_set_new(o, "blocks_run", json_false());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *paths_json(const struct sg_path *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "path", json_string(v[i].path));
        json_object_set_new(o, "declared", json_string(v[i].declared));
        json_object_set_new(o, "origin", origin_json(&v[i].origin));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *strv_json(const struct sg_strv *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->n; i++)
        json_array_append_new(a, json_string(s->v[i]));
    return a;
}

/* metadata.openclaw as skillgate reads it: the programs with where they
 * are (null: not on the sandbox's PATH) */
static json_t *openclaw_json(const struct sg_openclaw *o)
{
    if (!o)
        return json_null();
    json_t *bins = json_array(), *any = json_array();
    const struct sg_strv *from[] = {&o->bins, &o->any_bins};
    json_t *to[] = {bins, any};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < from[k]->n; i++) {
            cleanup_free char *at = sg_openclaw_which(from[k]->v[i]);
            json_array_append_new(to[k], json_pack("{s:s, s:o}", "name", from[k]->v[i], "path",
                                                   str_or_null(at)));
        }
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "key", o->key,
                     "env", strv_json(&o->env), "primary_env", str_or_null(o->primary_env),
                     "bins", bins, "any_bins", any, "config", strv_json(&o->config), "install",
                     strv_json(&o->install), "os", strv_json(&o->os), "homepage",
                     str_or_null(o->homepage), "emoji", str_or_null(o->emoji));
}

static json_t *tools_json(const struct sg_policy *p, bool with_origin)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->ntools; i++) {
        const struct sg_tool *t = &p->tools[i];
        json_t *o = json_object();
        json_object_set_new(o, "written", json_string(t->written ? t->written : t->name));
        json_object_set_new(o, "name", json_string(t->name));
        json_object_set_new(o, "canonical",
                            t->id == SG_TOOL_UNKNOWN ? json_null()
                                                     : json_string(sg_tool_canonical(t->id)));
        json_object_set_new(o, "scope", str_or_null(t->scope));
        json_object_set_new(o, "risk", json_string(sg_risk_name(t->risk)));
        if (with_origin) {
            json_object_set_new(o, "capabilities", caps_json(t->caps));
            json_object_set_new(o, "origin", origin_json(&t->origin));
        }
        json_array_append_new(a, o);
    }
    return a;
}

json_t *sg_skill_to_json(const struct sg_skill *sk, const char *digest)
{
    const struct sg_policy *p = &sk->policy;
    json_t *j = json_object();
    json_object_set_new(j, "schema", json_string(SG_INSPECT_SCHEMA));
    json_object_set_new(j, "name", str_or_null(sk->name));
    json_object_set_new(j, "description", str_or_null(sk->description));
    json_object_set_new(j, "version", str_or_null(sk->version));
    json_object_set_new(j, "author", str_or_null(sk->author));
    json_object_set_new(j, "license", str_or_null(sk->license));
    json_object_set_new(j, "compatibility", str_or_null(sk->compatibility));
    json_object_set_new(j, "model", str_or_null(sk->model));
    json_object_set_new(j, "agent", str_or_null(sk->agent));
    json_object_set_new(j, "context", p->fork_context ? json_string("fork") : json_null());
    json_object_set_new(j, "root", json_string(sk->root));
    json_object_set_new(j, "location", json_string(sk->display));
    json_t *files = json_object();
    json_object_set_new(files, "skill_md", str_or_null(sk->skill_md));
    json_object_set_new(files, "sandbox_yaml", str_or_null(sk->sandbox_yaml));
    json_object_set_new(j, "files", files);
    json_object_set_new(j, "digest", str_or_null(digest));
    json_object_set_new(j, "valid", json_boolean(!sg_diags_count(&sk->diags, SG_ERROR)));
    json_object_set_new(j, "runnable", json_boolean(!sg_skill_has_errors(sk)));
    json_object_set_new(j, "mode", json_string(sg_mode_name(p->mode)));
    json_object_set_new(j, "max_risk", json_string(sg_risk_name(sg_policy_max_risk(p))));

    json_t *tools = json_object();
    json_object_set_new(tools, "restricted", json_boolean(p->tools_restricted));
    json_object_set_new(tools, "list", tools_json(p, true));
    json_object_set_new(j, "tools", tools);
    json_object_set_new(j, "capabilities", caps_json(p->caps));

    json_t *fs = json_object();
    json_object_set_new(fs, "read", paths_json(p->read, p->nread));
    json_object_set_new(fs, "write", paths_json(p->write, p->nwrite));
    json_object_set_new(fs, "write_in_working_folder", paths_json(p->cwd_write, p->ncwd_write));
    json_object_set_new(j, "filesystem", fs);

    json_t *eg = json_array();
    for (size_t i = 0; i < p->negress; i++) {
        json_t *o = json_object(), *ports = json_array();
        json_object_set_new(o, "domain", json_string(p->egress[i].domain));
        json_object_set_new(o, "wildcard", json_boolean(p->egress[i].wildcard));
        for (size_t k = 0; k < p->egress[i].nports; k++)
            json_array_append_new(ports, json_integer(p->egress[i].ports[k]));
        json_object_set_new(o, "ports", ports);
        json_object_set_new(o, "origin", origin_json(&p->egress[i].origin));
        json_array_append_new(eg, o);
    }
    json_t *net = json_object();
    json_object_set_new(net, "egress", eg);
    json_t *socks = paths_json(p->sockets, p->nsockets);
    for (size_t i = 0; i < json_array_size(socks); i++)
        json_object_set_new(json_array_get(socks, i), "risk", json_string("high"));
    json_object_set_new(net, "unix_sockets", socks);
    json_t *listen = json_array();
    for (size_t i = 0; i < p->nlisten; i++)
        json_array_append_new(listen, json_pack("{s:i, s:o}", "port", p->listen[i], "origin",
                                                origin_json(&p->listen_origin)));
    json_object_set_new(net, "listen", listen);
    json_object_set_new(j, "network", net);

    json_t *env = json_array();
    for (size_t i = 0; i < p->nenv; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(p->env[i].name));
        json_object_set_new(o, "origin", origin_json(&p->env[i].origin));
        json_array_append_new(env, o);
    }
    json_object_set_new(j, "env", env);

    json_t *sys = json_object();
    json_object_set_new(sys, "profile", json_string(sg_seccomp_profile_name(p->profile)));
    json_object_set_new(sys, "origin", origin_json(&p->profile_origin));
    json_object_set_new(j, "syscalls", sys);

    json_t *lim = json_object();
#define X(f, key, def, min, max, unit)                                 \
    {                                                                  \
        json_t *o = json_object();                                     \
        json_object_set_new(o, "value", json_integer(p->limits.f.value)); \
        json_object_set_new(o, "unit", json_string(unit));             \
        json_object_set_new(o, "origin", origin_json(&p->limits.f.origin)); \
        json_object_set_new(lim, #f, o);                               \
    }
    SG_LIMITS(X)
#undef X
    json_object_set_new(j, "limits", lim);

    if (p->entry.command) {
        json_t *e = json_object(), *args = json_array();
        json_object_set_new(e, "command", json_string(p->entry.command));
        for (size_t i = 0; i < p->entry.nargs; i++)
            json_array_append_new(args, json_string(p->entry.args[i]));
        json_object_set_new(e, "args", args);
        json_object_set_new(e, "detected", json_boolean(p->entry.detected));
        json_object_set_new(e, "origin", origin_json(&p->entry.origin));
        json_object_set_new(j, "entrypoint", e);
    } else {
        json_object_set_new(j, "entrypoint", json_null());
    }
    json_t *scripts = json_array(), *usage = json_object();
    for (size_t i = 0; i < p->nscripts; i++) {
        cleanup_free char *name = sg_sanitize_str(p->scripts[i], 0);
        json_array_append_new(scripts, json_string(name));
        if (p->script_usage[i]) {
            cleanup_free char *u = sg_sanitize_str(p->script_usage[i], 0);
            json_object_set_new(usage, name, json_string(u));
        }
    }
    json_object_set_new(j, "scripts", scripts);
    json_object_set_new(j, "script_usage", usage);
    json_object_set_new(j, "random_seed",
                        p->has_random_seed ? json_integer(p->random_seed) : json_null());

    json_t *md = json_object();
    for (size_t i = 0; i < sk->nmetadata; i++)
        json_object_set_new(md, sk->metadata[i].key, json_string(sk->metadata[i].value));
    json_object_set_new(j, "metadata", md);
    json_object_set_new(j, "openclaw", openclaw_json(sk->openclaw));
    json_object_set_new(j, "problems", sg_diags_to_json(&sk->diags));
    return j;
}

json_t *sg_discovery_to_json(const struct sg_discovery *d)
{
    json_t *j = json_object(), *skills = json_array();
    json_object_set_new(j, "schema", json_string(SG_LIST_SCHEMA));
    for (size_t i = 0; i < d->n; i++) {
        const struct sg_skill *sk = d->v[i].skill;
        json_t *o = json_object();
        cleanup_free char *desc = sg_one_line(sk->description, 1024);
        const struct sg_plugin *pl = d->v[i].plugin;
        json_object_set_new(o, "name", str_or_null(sk->name));
        json_object_set_new(o, "id", json_string(d->v[i].name));
        json_object_set_new(o, "description", json_string(desc));
        json_object_set_new(o, "location", json_string(sk->display));
        json_object_set_new(o, "root", json_string(sk->root));
        json_object_set_new(o, "source", json_string(sg_source_name(d->v[i].source)));
        json_object_set_new(
            o, "plugin",
            !pl ? json_null()
                : json_pack("{s:s, s:s, s:o, s:o}", "id", pl->id, "name", pl->name, "scope",
                            str_or_null(pl->scope), "enabled",
                            pl->enabled < 0 ? json_null() : json_boolean(pl->enabled)));
        json_object_set_new(o, "valid", json_boolean(!sg_diags_count(&sk->diags, SG_ERROR)));
        json_object_set_new(o, "mode", json_string(sg_mode_name(sk->policy.mode)));
        json_object_set_new(o, "max_risk",
                            json_string(sg_risk_name(sg_policy_max_risk(&sk->policy))));
        json_object_set_new(o, "tools", tools_json(&sk->policy, false));
        json_object_set_new(o, "shadowed_by",
                            d->v[i].shadowed_by == SIZE_MAX
                                ? json_null()
                                : json_string(d->v[d->v[i].shadowed_by].skill->display));
        json_object_set_new(o, "problems", sg_diags_to_json(&sk->diags));
        json_array_append_new(skills, o);
    }
    json_object_set_new(j, "skills", skills);
    json_object_set_new(j, "problems", sg_diags_to_json(&d->diags));
    return j;
}
