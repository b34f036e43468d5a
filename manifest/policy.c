#include "policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static const struct {
    const char *name;
    enum sg_risk risk;
    unsigned caps;
} tool_table[] = {
#define X(id, name, risk, caps) [SG_TOOL_##id] = {name, SG_RISK_##risk, caps},
    SG_TOOLS(X)
#undef X
    [SG_TOOL_UNKNOWN] = {"unknown", SG_RISK_HIGH, 0},
};

static const char *const profile_names[] = {
#define X(id, name, desc) [SG_SECCOMP_##id] = name,
    SG_SECCOMP_PROFILES(X)
#undef X
};

const char *const sg_sensitive_home_paths[] = {
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
    ".npmrc", ".pypirc", ".netrc", ".gitconfig", ".git-credentials",
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv",
    ".zprofile", ".config/fish", NULL,
};

const char *sg_env_own(const char *name)
{
    static const struct {
        const char *name, *what;
    } own[] = {
#define X(name_, what_) {name_, what_},
        SG_OWN_ENV(X)
#undef X
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(own); i++) {
        size_t n = strlen(own[i].name);
        if (own[i].name[n - 1] == '_' ? !strncmp(name, own[i].name, n)
                                      : !strcmp(name, own[i].name))
            return own[i].what;
    }
    return NULL;
}

const char *sg_risk_name(enum sg_risk r)
{
    switch (r) {
    case SG_RISK_LOW: return "low";
    case SG_RISK_MEDIUM: return "medium";
    case SG_RISK_HIGH: return "high";
    }
    return "high";
}

const char *sg_mode_name(enum sg_exec_mode m)
{
    switch (m) {
    case SG_MODE_NATIVE: return "native";
    case SG_MODE_INSTRUCTIONS: return "instructions";
    case SG_MODE_WASM: return "wasm";
    case SG_MODE_SCRIPTS: return "scripts";
    }
    return "?";
}

const char *sg_seccomp_profile_name(enum sg_seccomp_profile p)
{
    return (size_t)p < SG_ARRAY_LEN(profile_names) ? profile_names[p] : "?";
}

int sg_seccomp_profile_from_name(const char *s, enum sg_seccomp_profile *out)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(profile_names); i++) {
        if (!strcmp(s, profile_names[i])) {
            *out = (enum sg_seccomp_profile)i;
            return 0;
        }
    }
    return -EINVAL;
}

bool sg_tool_is_mcp_name(const char *t)
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

enum sg_tool_id sg_tool_lookup(const char *name)
{
    for (size_t i = 0; i < SG_TOOL_UNKNOWN; i++)
        if (i != SG_TOOL_MCP && !strcmp(name, tool_table[i].name))
            return (enum sg_tool_id)i;
    return sg_tool_is_mcp_name(name) ? SG_TOOL_MCP : SG_TOOL_UNKNOWN;
}

const char *sg_tool_canonical(enum sg_tool_id id)
{
    /* WebFetch is Claude Code's name for Fetch. */
    if (id == SG_TOOL_WEBFETCH)
        id = SG_TOOL_FETCH;
    return tool_table[id <= SG_TOOL_UNKNOWN ? id : SG_TOOL_UNKNOWN].name;
}

enum sg_risk sg_tool_risk(enum sg_tool_id id)
{
    return tool_table[id <= SG_TOOL_UNKNOWN ? id : SG_TOOL_UNKNOWN].risk;
}

unsigned sg_tool_caps(enum sg_tool_id id)
{
    return tool_table[id <= SG_TOOL_UNKNOWN ? id : SG_TOOL_UNKNOWN].caps;
}

enum sg_risk sg_policy_max_risk(const struct sg_policy *p)
{
    /* a declared host socket is a Connect granted: a daemon outside the
     * sandbox acts for the skill */
    if (!p->tools_restricted || p->nsockets)
        return SG_RISK_HIGH;
    enum sg_risk r = SG_RISK_LOW;
    for (size_t i = 0; i < p->ntools; i++)
        if (p->tools[i].risk > r)
            r = p->tools[i].risk;
    return r;
}

void sg_origin_set(struct sg_origin *o, const char *file, int line, int col, const char *field)
{
    o->file = sg_xstrdup(file);
    o->line = line;
    o->col = col;
    o->field = sg_xstrdup(field ? field : "");
}

void sg_origin_copy(struct sg_origin *dst, const struct sg_origin *src)
{
    sg_origin_set(dst, src->file ? src->file : "default", src->line, src->col, src->field);
}

void sg_origin_free(struct sg_origin *o)
{
    free(o->file);
    free(o->field);
    o->file = o->field = NULL;
}

void sg_policy_init(struct sg_policy *p)
{
    memset(p, 0, sizeof *p);
    p->profile = SG_SECCOMP_DEFAULT;
    sg_origin_set(&p->profile_origin, "default", 0, 0, "syscalls.profile");
#define X(f, key, def, min, max, unit)  \
    p->limits.f.value = def;              \
    sg_origin_set(&p->limits.f.origin, "default", 0, 0, key);
    SG_LIMITS(X)
#undef X
    p->mode = SG_MODE_INSTRUCTIONS;
}

static void free_paths(struct sg_path *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].declared);
        sg_origin_free(&v[i].origin);
    }
    free(v);
}

void sg_policy_free(struct sg_policy *p)
{
    for (size_t i = 0; i < p->ntools; i++) {
        free(p->tools[i].name);
        free(p->tools[i].scope);
        free(p->tools[i].written);
        sg_origin_free(&p->tools[i].origin);
    }
    free(p->tools);
    free_paths(p->read, p->nread);
    free_paths(p->write, p->nwrite);
    free_paths(p->cwd_write, p->ncwd_write);
    free_paths(p->sockets, p->nsockets);
    for (size_t i = 0; i < p->negress; i++) {
        free(p->egress[i].domain);
        sg_origin_free(&p->egress[i].origin);
    }
    free(p->egress);
    for (size_t i = 0; i < p->nenv; i++) {
        free(p->env[i].name);
        sg_origin_free(&p->env[i].origin);
    }
    free(p->env);
    sg_origin_free(&p->profile_origin);
    sg_origin_free(&p->listen_origin);
    free(p->wasm_module);
    sg_origin_free(&p->wasm_network_origin);
    sg_origin_free(&p->wasm_origin);
#define X(f, key, def, min, max, unit) sg_origin_free(&p->limits.f.origin);
    SG_LIMITS(X)
#undef X
    free(p->entry.command);
    for (size_t i = 0; i < p->entry.nargs; i++)
        free(p->entry.args[i]);
    free(p->entry.args);
    sg_origin_free(&p->entry.origin);
    for (size_t i = 0; i < p->nscripts; i++)
        free(p->scripts[i]), free(p->script_usage[i]);
    free(p->scripts);
    free(p->script_usage);
    memset(p, 0, sizeof *p);
}

void sg_run_identity(struct sg_run_identity *id)
{
    *id = (struct sg_run_identity){.as_root = geteuid() == 0, .uid = getuid(), .gid = getgid()};
    if (!id->as_root)
        return;
    long long v;
    const char *su = secure_getenv("SUDO_UID"), *sg = secure_getenv("SUDO_GID");
    id->via_sudo = su && sg_parse_ll(su, 1, INT32_MAX, &v) == 0;
    id->uid = id->via_sudo ? (uid_t)v : 65534;
    id->gid = sg && sg_parse_ll(sg, 1, INT32_MAX, &v) == 0 ? (gid_t)v : 65534;
}

char *sg_write_folder_note(const char *path, const struct sg_run_identity *id)
{
    struct stat st;
    if (!id->as_root || stat(path, &st) < 0)
        return NULL;
    bool may = st.st_uid == id->uid   ? (st.st_mode & S_IWUSR)
               : st.st_gid == id->gid ? (st.st_mode & S_IWGRP)
                                      : (st.st_mode & S_IWOTH);
    if (may)
        return NULL;
    return sg_xasprintf("the skill (uid %u) may not write %s itself (uid %u, mode %04o): %s",
                        (unsigned)id->uid, path, (unsigned)st.st_uid,
                        (unsigned)(st.st_mode & 07777),
                        id->via_sudo ? "what it writes there is refused (EACCES), as for you"
                                     : "new files and folders are made for it as root and are "
                                       "root's; files already there stay as their modes say");
}

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
        if (tl->id == SG_TOOL_CONNECT)
            t->connect_listed = true;
    }
}

void sg_tools_free(struct sg_tools *t)
{
    for (size_t i = 0; i < t->nbash_scopes; i++)
        free(t->bash_scopes[i]);
    free(t->bash_scopes);
    memset(t, 0, sizeof *t);
}
