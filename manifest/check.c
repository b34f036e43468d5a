/* Typed field access and the validation rules both manifest formats share. */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/stat.h>

#include "agentdirs.h"
#include "config.h"
#include "homes.h"
#include "parse.h"
#include "skill.h"
#include "util.h"

__attribute__((format(printf, 5, 0)))
static void pc_vadd(struct sg_pctx *c, enum sg_severity sev, const struct sg_ynode *n,
                    const char *field, const char *fmt, va_list ap)
{
    cleanup_free char *msg = sg_xvasprintf(fmt, ap);
    sg_diag_add(c->d, sev, c->file, n ? n->line : 0, n ? n->col : 0, field, "%s", msg);
}

void pc_err(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_vadd(c, SG_ERROR, n, field, fmt, ap);
    va_end(ap);
}

void pc_warn(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pc_vadd(c, SG_WARNING, n, field, fmt, ap);
    va_end(ap);
}

void pc_spec(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *msg = sg_xvasprintf(fmt, ap);
    va_end(ap);
    if (c->sk->openclaw_rules) {
        pc_warn(c, n, field, "%s (Agent Skills spec; OpenClaw takes it, and so does skillgate)",
                msg);
        return;
    }
    pc_err(c, n, field, "%s (Agent Skills spec; Claude Code's and OpenClaw's loaders take it, "
                        "so it can still be inspected and run)", msg);
    c->d->v[c->d->n - 1].spec_only = true;
}

const char *pc_string(struct sg_pctx *c, const struct sg_ynode *n, const char *field)
{
    if (!n || sg_y_is_null(n)) {
        pc_err(c, n, field, "must be a string, but is empty");
        return NULL;
    }
    if (n->type != SG_Y_SCALAR) {
        pc_err(c, n, field, "must be a string, not %s", sg_ytype_name(n->type));
        return NULL;
    }
    if (memchr(n->str, '\0', n->len)) {
        pc_err(c, n, field, "contains a NUL character");
        return NULL;
    }
    return n->str;
}

bool pc_int(struct sg_pctx *c, const struct sg_ynode *n, const char *field, long long min,
            long long max, long long *out)
{
    if (!n || n->type != SG_Y_SCALAR || sg_y_is_null(n)) {
        pc_err(c, n, field, "must be a whole number, not %s",
               n && n->type != SG_Y_SCALAR ? sg_ytype_name(n->type) : "empty");
        return false;
    }
    long long v;
    int r = sg_parse_ll(n->str, LLONG_MIN, LLONG_MAX, &v);
    if (r == -EINVAL || n->quoted) {
        pc_err(c, n, field, "must be a whole number, not \"%.40s\"", n->str);
        return false;
    }
    if (r == -ERANGE || v < min || v > max) {
        pc_err(c, n, field, "%s is out of range (%lld..%lld)", n->str, min, max);
        return false;
    }
    *out = v;
    return true;
}

bool pc_bool(struct sg_pctx *c, const struct sg_ynode *n, const char *field, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
    if (n && n->type == SG_Y_SCALAR && !n->quoted) {
        for (size_t i = 0; i < SG_ARRAY_LEN(yes); i++) {
            if (!strcmp(n->str, yes[i])) {
                *out = true;
                return true;
            }
            if (!strcmp(n->str, no[i])) {
                *out = false;
                return true;
            }
        }
    }
    pc_err(c, n, field, "must be true or false");
    return false;
}

void pc_string_list(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                    void (*fn)(struct sg_pctx *, const struct sg_ynode *, const char *, void *),
                    void *arg)
{
    if (sg_y_is_null(n))
        return;
    if (n->type != SG_Y_SEQ) {
        pc_err(c, n, field, "must be a list of strings, not %s", sg_ytype_name(n->type));
        return;
    }
    for (size_t i = 0; i < n->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        if (pc_string(c, n->kids[i], f))
            fn(c, n->kids[i], f, arg);
    }
}

void pc_set_string(char **dst, struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    const char *s = pc_string(c, v, field);
    if (s) {
        free(*dst);
        *dst = sg_xstrdup(s);
    }
}

static void add_read_path(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    sg_policy_add_path(c, false, n, f, n->str);
}

static void add_write_path(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    if (!strncmp(n->str, "$CWD", 4))
        sg_policy_add_cwd_write(c, n, f, n->str);
    else
        sg_policy_add_path(c, true, n, f, n->str);
}

static void add_env_name(struct sg_pctx *c, const struct sg_ynode *n, const char *f, void *arg)
{
    (void)arg;
    sg_policy_add_env(c, n, f, n->str);
}

static void f_read(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_read_path, NULL);
}

static void f_write(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_write_path, NULL);
}

static void f_allow(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    pc_string_list(c, v, field, add_env_name, NULL);
}

void pc_unknown_key(struct sg_pctx *c, const struct sg_ynode *k, const char *field,
                    const char *near)
{
    if (near)
        pc_err(c, k, field, "unknown key; did you mean \"%s\"?", near);
    else
        pc_warn(c, k, field, "unknown key, ignored");
}

static void unknown_key(struct sg_pctx *c, const struct sg_ynode *k, const char *field,
                        const struct pc_field *fields, size_t nfields)
{
    struct sg_nearest near;
    sg_nearest_init(&near, k->str);
    size_t best = nfields;
    for (size_t j = 0; j < nfields; j++)
        if (sg_nearest_offer(&near, fields[j].key))
            best = j;
    if (best < nfields && fields[best].lenient)
        pc_warn(c, k, field, "unknown key, ignored; did you mean \"%s\"? (a warning: what that "
                             "field says is shown or given, so missing it allows nothing more)",
                 near.best);
    else
        pc_unknown_key(c, k, field, near.best);
}

void pc_walk_map(struct sg_pctx *c, const struct sg_ynode *map, const char *prefix,
                 const struct pc_field *fields, size_t nfields)
{
    if (sg_y_is_null(map))
        return;
    if (map->type != SG_Y_MAP) {
        pc_err(c, map, prefix && *prefix ? prefix : NULL, "must be a mapping, not %s",
               sg_ytype_name(map->type));
        return;
    }
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const struct sg_ynode *k = map->kids[i];
        cleanup_free char *field =
            prefix && *prefix ? sg_xasprintf("%s.%s", prefix, k->str) : sg_xstrdup(k->str);
        size_t j;
        for (j = 0; j < nfields; j++)
            if (!strcmp(fields[j].key, k->str))
                break;
        if (j == nfields) {
            unknown_key(c, k, field, fields, nfields);
            continue;
        }
        fields[j].fn(c, map->kids[i + 1], field);
    }
}

/* ---- names and descriptions ---- */

/* A name skillgate cannot take under any loader's rules: `run NAME` would
 * read it as a plugin's skill ("plugin:skill") or a path, or a terminal
 * would act on it. */
static bool name_unusable(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == ':' || *p == '/')
            return true;
    return false;
}

/* Under OpenClaw's rules any name is taken as written (local-loader.ts
 * trims it and keys the skill by it; the folder is ClawHub's slug): what
 * the spec would refuse is a warning. */
static bool check_name_openclaw(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                                const char *name, const char *spec_says)
{
    if (spec_says)
        pc_warn(c, n, field,
                "\"%s\" %s (Agent Skills spec); OpenClaw takes any name (this skill %s), so "
                "skillgate reads it as written",
                name, spec_says, c->sk->openclaw_rules);
    return true;
}

bool sg_check_name(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *name)
{
    size_t len = strlen(name), chars = sg_utf8_chars(name);
    const char *oc = c->sk->openclaw_rules;
    bool blank = true;
    for (size_t i = 0; i < len; i++)
        blank = blank && isspace((unsigned char)name[i]);
    if (oc && blank) {
        pc_warn(c, n, field, "is empty; OpenClaw uses the folder's name \"%s\", and so does "
                             "skillgate", c->sk->dirname ? c->sk->dirname : "");
        return false;
    }
    if (name_unusable(name)) {
        pc_err(c, n, field,
               "\"%s\": a ':', a '/' or a control character; %s, but skillgate cannot: "
               "`run NAME` would read it as a plugin's skill or a path",
               name, oc ? "OpenClaw would take it" : "the Agent Skills spec refuses it too");
        return false;
    }
    const char *spec_says = NULL;
    cleanup_free char *len_says = sg_xasprintf("must be 1-64 characters (it has %zu)", chars);
    if (chars == 0 || chars > 64)
        spec_says = len_says;
    for (size_t i = 0; !spec_says && i < len; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
            spec_says = "may hold only lower-case letters, digits and '-'";
    }
    if (!spec_says && (name[0] == '-' || name[len - 1] == '-'))
        spec_says = "may not start or end with '-'";
    if (!spec_says && strstr(name, "--"))
        spec_says = "may not contain \"--\"";
    if (oc)
        return check_name_openclaw(c, n, field, name, spec_says);
    if (spec_says) {
        pc_err(c, n, field, "\"%s\" %s (Agent Skills spec; OpenClaw's loader would take it)",
               name, spec_says);
        return false;
    }
    if (c->sk->dirname && strcmp(name, c->sk->dirname) != 0) {
        /* the spec says so, and validate fails; Claude Code loads such
         * skills from plugins all the same, so they can still be vetted
         * and run here, with this error in plain view */
        pc_err(c, n, field,
               "\"%s\" must equal the folder name \"%s\" (Agent Skills spec; Claude Code's and "
               "OpenClaw's loaders accept it, so it can still be inspected and run)",
               name, c->sk->dirname);
        c->d->v[c->d->n - 1].spec_only = true;
    }
    if (strstr(name, "anthropic") || strstr(name, "claude"))
        pc_warn(c, n, field, "\"%s\" contains a reserved word (anthropic, claude)", name);
    return true;
}

bool sg_check_description(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *desc)
{
    size_t len = strlen(desc);
    bool blank = true;
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)desc[i]))
            blank = false;
    if (blank) {
        pc_err(c, n, field, "must not be empty; OpenClaw would refuse it too (its loader skips "
                            "a skill without a description)");
        return false;
    }
    size_t chars = sg_utf8_chars(desc); /* as a person counts: "é" is one */
    if (chars > 1024) /* shown only, and the manifest's own cap bounds it */
        pc_spec(c, n, field, "is %zu characters; the limit is 1024", chars);
    return true;
}

/* ---- tools ---- */

static void add_tool(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                     const char *tok, size_t len)
{
    struct sg_policy *p = &c->sk->policy;
    const char *paren = memchr(tok, '(', len);
    size_t nlen = paren ? (size_t)(paren - tok) : len;
    cleanup_free char *name = sg_xstrndup(tok, nlen);
    cleanup_free char *scope = NULL;
    if (paren) {
        if (tok[len - 1] != ')') {
            pc_err(c, n, field, "\"%.*s\": a scoped tool must end with ')'", (int)len, tok);
            return;
        }
        scope = sg_xstrndup(paren + 1, len - nlen - 2);
    }
    if (nlen == 0 || !isalpha((unsigned char)name[0])) {
        pc_err(c, n, field, "\"%.*s\" is not a tool name", (int)len, tok);
        return;
    }
    for (size_t i = 0; i < nlen; i++) {
        if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-') {
            pc_err(c, n, field, "\"%.*s\" is not a tool name", (int)len, tok);
            return;
        }
    }
    for (size_t i = 0; i < p->ntools; i++) {
        if (!strcmp(p->tools[i].name, name) &&
            !strcmp(p->tools[i].scope ? p->tools[i].scope : "", scope ? scope : "")) {
            pc_warn(c, n, field, "\"%.*s\" is listed twice", (int)len, tok);
            return;
        }
    }
    enum sg_tool_id id = sg_tool_lookup(name);
    if (id == SG_TOOL_UNKNOWN)
        pc_warn(c, n, field, "unknown tool \"%s\": treated as high risk", name);
    p->tools = sg_xrealloc(p->tools, (p->ntools + 1) * sizeof *p->tools);
    struct sg_tool *t = &p->tools[p->ntools++];
    memset(t, 0, sizeof *t);
    t->id = id;
    t->name = steal_pointer(&name);
    t->scope = steal_pointer(&scope);
    t->written = sg_xstrndup(tok, len);
    t->risk = sg_tool_risk(id);
    t->caps = sg_tool_caps(id);
    sg_origin_set(&t->origin, c->origin, n->line, n->col, field);
    p->caps |= t->caps;
    p->tools_restricted = true;
}

/* "Read, Grep Bash(git diff:*)": split on spaces and commas outside
 * parentheses, so a scoped form stays whole. */
static void split_tools(struct sg_pctx *c, const struct sg_ynode *n, const char *field)
{
    const char *s = n->str;
    size_t i = 0, len = n->len, idx = 0;
    while (i < len) {
        while (i < len && (isspace((unsigned char)s[i]) || s[i] == ','))
            i++;
        if (i >= len)
            break;
        size_t start = i;
        int depth = 0;
        while (i < len && (depth > 0 || !(isspace((unsigned char)s[i]) || s[i] == ','))) {
            if (s[i] == '(')
                depth++;
            else if (s[i] == ')' && depth > 0)
                depth--;
            i++;
        }
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, idx++);
        if (depth > 0) {
            pc_err(c, n, f, "\"%.*s\": unbalanced '('", (int)(i - start), s + start);
            continue;
        }
        add_tool(c, n, f, s + start, i - start);
    }
}

void sg_policy_add_tools(struct sg_pctx *c, const struct sg_ynode *n, const char *field)
{
    if (sg_y_is_null(n))
        return;
    if (n->type == SG_Y_SCALAR) {
        split_tools(c, n, field);
        return;
    }
    if (n->type != SG_Y_SEQ) {
        pc_err(c, n, field, "must be a list or a space-separated string, not %s",
               sg_ytype_name(n->type));
        return;
    }
    for (size_t i = 0; i < n->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        const char *s = pc_string(c, n->kids[i], f);
        if (!s)
            continue;
        size_t a = 0, b = strlen(s);
        while (a < b && isspace((unsigned char)s[a]))
            a++;
        while (b > a && isspace((unsigned char)s[b - 1]))
            b--;
        if (a == b) {
            pc_err(c, n->kids[i], f, "empty tool name");
            continue;
        }
        add_tool(c, n->kids[i], f, s + a, b - a);
    }
}

/* ---- domains ---- */

bool sg_addr_private(const char *s)
{
    unsigned char a[16];
    if (inet_pton(AF_INET, s, a) == 1)
        return a[0] == 127 || a[0] == 10 || a[0] == 0 || (a[0] == 169 && a[1] == 254) ||
               (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168) ||
               (a[0] == 100 && (a[1] & 0xc0) == 64) || (a[0] & 0xf0) == 0xe0;
    if (inet_pton(AF_INET6, s, a) != 1)
        return false;
    static const unsigned char zero[15] = {0};
    if (!memcmp(a, zero, 15) && a[15] <= 1) /* :: and ::1 */
        return true;
    if ((a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || (a[0] & 0xfe) == 0xfc || a[0] == 0xff)
        return true; /* link-local, unique local, multicast */
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(a, mapped, 12)) {
        char v4[16];
        snprintf(v4, sizeof v4, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
        return sg_addr_private(v4);
    }
    return false;
}

bool sg_addr_this_machine(const char *s)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    unsigned char a[16];
    int family = AF_INET6;
    if (inet_pton(AF_INET, s, a) == 1)
        family = AF_INET;
    else if (inet_pton(AF_INET6, s, a) != 1)
        return false;
    else if (!memcmp(a, mapped, 12))
        memmove(a, a + 12, 4), family = AF_INET;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return false;
    bool mine = false;
    for (struct ifaddrs *i = ifs; i && !mine; i = i->ifa_next) {
        const struct sockaddr *as[2] = {i->ifa_addr,
                                        i->ifa_flags & IFF_BROADCAST ? i->ifa_broadaddr : NULL};
        for (size_t k = 0; k < 2 && !mine; k++) {
            if (!as[k] || as[k]->sa_family != family)
                continue;
            mine = family == AF_INET
                       ? !memcmp(&((const struct sockaddr_in *)as[k])->sin_addr, a, 4)
                       : !memcmp(&((const struct sockaddr_in6 *)as[k])->sin6_addr, a, 16);
        }
    }
    freeifaddrs(ifs);
    return mine;
}

int sg_domain_normalize(const char *in, char **out, const char **why)
{
    size_t len = strlen(in);
    unsigned char buf6[16];
    if (len == 0) {
        *why = "is empty";
        return -EINVAL;
    }
    if (strstr(in, "://") || strchr(in, '/')) {
        *why = "must be a host name, not a URL";
        return -EINVAL;
    }
    if (inet_pton(AF_INET6, in, buf6) == 1 || inet_pton(AF_INET, in, buf6) == 1) {
        *out = sg_xstrdup(in);
        return 0;
    }
    if (strchr(in, ':')) {
        *why = "must not carry a port: list ports under ports";
        return -EINVAL;
    }
    if (!strcmp(in, "*")) {
        *why = "would allow every host: list the domains the skill needs";
        return -EINVAL;
    }
    cleanup_free char *d = sg_xstrdup(in);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (len > 1 && d[len - 1] == '.')
        d[--len] = '\0';
    const char *host = d;
    if (sg_str_has_prefix(d, "*.")) {
        host = d + 2;
        if (!strchr(host, '.')) {
            *why = "a wildcard needs at least two labels after \"*.\" (one is too broad)";
            return -EINVAL;
        }
    }
    if (strlen(host) > 253) {
        *why = "is longer than 253 characters";
        return -EINVAL;
    }
    size_t lab = 0;
    for (const char *p = host;; p++) {
        if (*p == '.' || *p == '\0') {
            if (lab == 0) {
                *why = "has an empty label";
                return -EINVAL;
            }
            if (p[-1] == '-' || p[-(long)lab] == '-') {
                *why = "has a label that starts or ends with '-'";
                return -EINVAL;
            }
            if (lab > 63) {
                *why = "has a label longer than 63 characters";
                return -EINVAL;
            }
            lab = 0;
            if (*p == '\0')
                break;
            continue;
        }
        if (*p == '*') {
            *why = "'*' is only allowed as a leading \"*.\"";
            return -EINVAL;
        }
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
            *why = "may only contain letters, digits, '-' and '.'";
            return -EINVAL;
        }
        lab++;
    }
    *out = steal_pointer(&d);
    return 0;
}

void sg_policy_add_egress(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *domain, const uint16_t *ports, size_t nports)
{
    struct sg_policy *p = &c->sk->policy;
    cleanup_free char *norm = NULL;
    const char *why = NULL;
    if (sg_domain_normalize(domain, &norm, &why) < 0) {
        pc_err(c, n, field, "\"%.80s\": %s", domain, why);
        return;
    }
    if (sg_addr_private(norm))
        pc_warn(c, n, field, "%s is a loopback, private or metadata address: the proxy refuses "
                "it however it is declared, unless the run is given --allow-upstream %s",
                norm, norm);
    else if (sg_addr_this_machine(norm))
        pc_warn(c, n, field, "%s is an address of this machine (one of its interfaces answers "
                "to it): the proxy refuses it however it is declared, unless the run is given "
                "--allow-upstream %s", norm, norm);
    for (size_t i = 0; i < p->negress; i++) {
        struct sg_egress *e = &p->egress[i];
        if (strcmp(e->domain, norm) != 0)
            continue;
        /* The same domain twice (or from both files): merge the ports. */
        for (size_t k = 0; k < nports; k++) {
            bool have = false;
            for (size_t j = 0; j < e->nports; j++)
                have |= e->ports[j] == ports[k];
            if (!have && e->nports < SG_MAX_PORTS)
                e->ports[e->nports++] = ports[k];
        }
        return;
    }
    p->egress = sg_xrealloc(p->egress, (p->negress + 1) * sizeof *p->egress);
    struct sg_egress *e = &p->egress[p->negress++];
    memset(e, 0, sizeof *e);
    e->wildcard = sg_str_has_prefix(norm, "*.");
    e->domain = steal_pointer(&norm);
    memcpy(e->ports, ports, nports * sizeof *ports);
    e->nports = nports;
    sg_origin_set(&e->origin, c->origin, n ? n->line : 0, n ? n->col : 0, field);
}

/* ---- environment ---- */

void sg_policy_add_env(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                       const char *name)
{
    static const char *const set_by_us[] = {"SKILL_ID", "SKILL_NAME", "SKILL_INPUT",
                                            "SKILL_ROOT", "TIMEOUT_MS", "HOME", "TMPDIR",
                                            "PATH", "PYTHONNOUSERSITE",
                                            "PYTHONDONTWRITEBYTECODE"};
    static const char *const code_loading[] = {
        "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
        "PYTHONHOME", "BASH_ENV", "ENV", "PERL5OPT", "PERL5LIB", "NODE_OPTIONS",
        "RUBYOPT", "GCONV_PATH"};
    struct sg_policy *p = &c->sk->policy;
    size_t len = strlen(name);
    bool ok = len > 0 && len <= 128 && (isalpha((unsigned char)name[0]) || name[0] == '_');
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok) {
        pc_err(c, n, field, "\"%.80s\" is not an environment variable name%s", name,
               strchr(name, '*') ? " (no wildcards: list each variable)" : "");
        return;
    }
    const char *own = sg_env_own(name);
    if (own) { /* not kept: the run strips it, and inspect should not list it */
        pc_warn(c, n, field, "%s is skillgate's own setting (%s); it is never passed to a skill",
                name, own);
        return;
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(set_by_us); i++)
        if (!strcmp(name, set_by_us[i]))
            pc_warn(c, n, field, "%s is set by skillgate; the host's value is not passed", name);
    for (size_t i = 0; i < SG_ARRAY_LEN(code_loading); i++)
        if (!strcmp(name, code_loading[i]))
            pc_warn(c, n, field, "%s lets the host environment change what code the skill runs",
                    name);
    for (size_t i = 0; i < p->nenv; i++)
        if (!strcmp(p->env[i].name, name))
            return; /* listed twice (or in both files): once is enough */
    p->env = sg_xrealloc(p->env, (p->nenv + 1) * sizeof *p->env);
    struct sg_envname *e = &p->env[p->nenv++];
    e->name = sg_xstrdup(name);
    sg_origin_set(&e->origin, c->origin, n ? n->line : 0, n ? n->col : 0, field);
}

/* ---- limits ---- */

void sg_policy_set_limit(struct sg_pctx *c, struct sg_limit *l, const struct sg_ynode *n,
                         const char *field, long long value)
{
    if (strcmp(l->origin.file, "default") != 0 && l->value != value) {
        /* Declared twice (SKILL.md wasm: and skillsandbox.yaml): the stricter holds. */
        pc_warn(c, n, field, "%lld conflicts with %lld from %s %s; the smaller applies", value,
                l->value, l->origin.file, l->origin.field);
        if (value >= l->value)
            return;
    }
    l->value = value;
    sg_origin_free(&l->origin);
    sg_origin_set(&l->origin, c->origin, n ? n->line : 0, n ? n->col : 0, field);
}

/* ---- paths ---- */

/* Lexically normalize an absolute or relative path: collapse "//", ".", and
 * "..". Returns NULL when a relative path climbs above its start. */
static char *normalize(const char *in, bool *escapes)
{
    bool abs = in[0] == '/';
    size_t n = strlen(in);
    char *out = sg_xmalloc(n + 2);
    size_t o = 0;
    size_t depth = 0;
    *escapes = false;
    if (abs)
        out[o++] = '/';
    const char *p = in;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchrnul(p, '/');
        size_t len = (size_t)(e - p);
        if (len == 1 && p[0] == '.') {
            /* skip */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (depth == 0) {
                if (!abs)
                    *escapes = true;
            } else {
                /* drop the last component */
                while (o > (abs ? 1u : 0u) && out[o - 1] != '/')
                    o--;
                if (o > (abs ? 1u : 0u))
                    o--;
                depth--;
            }
        } else {
            if (o > (abs ? 1u : 0u))
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
            depth++;
        }
        p = e;
    }
    if (o == 0)
        out[o++] = '.';
    out[o] = '\0';
    if (*escapes) {
        free(out);
        return NULL;
    }
    return out;
}

static bool path_within(const char *path, const char *root)
{
    size_t rl = strlen(root);
    if (!strcmp(root, "/"))
        return true;
    return strncmp(path, root, rl) == 0 && (path[rl] == '\0' || path[rl] == '/');
}

int sg_path_resolve(const char *root, const char *declared, char **out, const char **why)
{
    if (!*declared) {
        *why = "is empty";
        return -EINVAL;
    }
    if (strlen(declared) >= PATH_MAX) {
        *why = "is longer than PATH_MAX";
        return -ENAMETOOLONG;
    }
    cleanup_free char *expanded = NULL;
    if (declared[0] == '~') {
        if (declared[1] != '\0' && declared[1] != '/') {
            *why = "\"~user\" paths are not supported; use ~/ or an absolute path";
            return -EINVAL;
        }
        const char *home = sg_invoking_home();
        if (!home) {
            *why = "uses ~ but the invoking user has no home directory";
            return -ENOENT;
        }
        expanded = sg_xasprintf("%s%s", home, declared + 1);
        declared = expanded;
    }
    bool escapes;
    cleanup_free char *norm = normalize(declared, &escapes);
    if (!norm) {
        *why = "climbs out of the skill root with \"..\"";
        return -EPERM;
    }
    if (norm[0] == '/') {
        *out = steal_pointer(&norm);
        return 0;
    }
    char rroot[PATH_MAX];
    if (!realpath(root, rroot))
        snprintf(rroot, sizeof rroot, "%s", root);
    cleanup_free char *joined = strcmp(norm, ".") ? sg_xasprintf("%s/%s", rroot, norm)
                                                  : sg_xstrdup(rroot);
    /* a path that does not exist yet still gets its symlinks resolved */
    cleanup_free char *resolved = sg_path_real(joined);
    if (!path_within(resolved, rroot)) {
        *why = "leaves the skill root through a symlink";
        return -EPERM;
    }
    *out = steal_pointer(&resolved);
    return 0;
}

/* skillgate's own folders (config.h): reading them shows other runs' traces
 * and the skill's own digest, writing them forges an "always" grant (issue
 * 14). A path that is or is inside one is an error. A path that holds one is
 * an error for write too: the plan masks the folder, but a mask cannot stop
 * a skill from renaming one of the folder's parents aside and making its own
 * folder, with its own grants, where skillgate will look next time. To read a
 * folder that holds one ("~/.config", "~/.local") is a warning, as for
 * credentials: the mask hides it entirely ("~" and "/" hold the home and
 * are refused before this). */
static bool own_dirs_ok(struct sg_pctx *c, bool write, const struct sg_ynode *n,
                        const char *field, const char *abs)
{
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    size_t w = 0;
    enum sg_own_rel rel = sg_own_dirs_relation(&own, abs, &w);
    bool ok = true;
    if (rel == SG_OWN_INSIDE) {
        bool same = !strcmp(abs, own.v[w].path);
        pc_err(c, n, field, "%s is %sskillgate's own %s folder%s%s: a skill may never %s it", abs,
               same ? "" : "inside ", own.v[w].what, same ? "" : " ", same ? "" : own.v[w].path,
               write ? "write" : "read");
        ok = false;
    } else if (rel == SG_OWN_CONTAINS && write) {
        pc_err(c, n, field, "refusing write access to %s: it holds skillgate's own %s folder %s; "
               "name the folder the skill needs", abs, own.v[w].what, own.v[w].path);
        ok = false;
    } else if (rel == SG_OWN_CONTAINS) {
        pc_warn(c, n, field, "covers skillgate's own %s folder %s; the skill will not see it "
                "(it stays masked)", own.v[w].what, own.v[w].path);
    }
    sg_own_dirs_free(&own);
    return ok;
}

/* An AI agent's own folder (agentdirs.h): its login, history and the
 * settings that hold its hooks. Inside one (read or write), or a write of
 * a folder that holds one, is an error; a read of a folder that holds one
 * is a warning: it stays masked. A skill kept in the agent's skill folder
 * names its own files freely. */
static bool agent_dirs_ok(struct sg_pctx *c, bool write, const struct sg_ynode *n,
                          const char *field, const char *abs)
{
    struct sg_agent_paths ap;
    sg_agent_paths_get(&ap);
    const struct sg_agent_path *a = NULL;
    enum sg_agent_rel rel = sg_agent_paths_relation(&ap, abs, c->sk->root, &a);
    bool ok = true;
    if (rel == SG_AGENT_INSIDE) {
        bool same = !strcmp(abs, a->path) || !strcmp(abs, a->real);
        pc_err(c, n, field, "refusing %s access to %s: it is %s%s, %s: a skill may never read "
               "or write an AI agent's own files (they are always masked)",
               write ? "write" : "read", abs, same ? "" : "inside ", a->path, a->what);
        ok = false;
    } else if (rel == SG_AGENT_HOLDS && write) {
        pc_err(c, n, field, "refusing write access to %s: it holds %s, %s; name the folder the "
               "skill needs", abs, a->path, a->what);
        ok = false;
    } else if (rel == SG_AGENT_HOLDS) {
        pc_warn(c, n, field, "covers %s, %s; the skill will not see it (it stays masked)",
                a->path, a->what);
    }
    sg_agent_paths_free(&ap);
    return ok;
}

/* Daemons listen in socket folders (/run, /tmp, the user's runtime dir):
 * declaring one readable gives the skill no line to them (every connect is
 * the broker's, and a host socket is refused), and validate says so, naming
 * a socket it sees there. The look is one folder deep and capped. */
static void warn_sockets(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                         const char *abs)
{
    /* the runtime trees hold sockets anywhere below; /tmp and friends at
     * their top (X11's, an ssh agent's folder) */
    static const struct {
        const char *dir;
        bool deep;
    } socket_dirs[] = {{"/run", true}, {"/var/run", true}, {"/tmp", false},
                       {"/var/tmp", false}, {"/dev/shm", false}};
    struct stat st;
    bool have = lstat(abs, &st) == 0;
    if (have && S_ISSOCK(st.st_mode)) {
        pc_warn(c, n, field, "%s is a unix socket: reading it is not connecting to it (declare "
                "it in permissions.unix_sockets for that, or the connect asks as Connect)", abs);
        return;
    }
    const char *known = NULL;
    for (size_t i = 0; i < SG_ARRAY_LEN(socket_dirs); i++)
        if (socket_dirs[i].deep ? path_within(abs, socket_dirs[i].dir)
                                : !strcmp(abs, socket_dirs[i].dir))
            known = socket_dirs[i].dir;
    cleanup_free char *seen = NULL;
    DIR *d = have && S_ISDIR(st.st_mode) ? opendir(abs) : NULL;
    for (int k = 0; d && k < 4096 && !seen; k++) {
        struct dirent *e = readdir(d);
        if (!e)
            break;
        if (e->d_type == DT_SOCK)
            seen = sg_xasprintf("%s/%s", abs, e->d_name);
    }
    if (d)
        closedir(d);
    static const char *const tail = "the skill may read files there but not connect to a "
                                    "daemon's socket (unless permissions.unix_sockets declares "
                                    "it, or a Connect request is allowed)";
    if (seen)
        pc_warn(c, n, field, "%s holds unix sockets, such as %s: %s", abs, seen, tail);
    else if (known && !strcmp(abs, known))
        pc_warn(c, n, field, "%s is a folder where daemons keep their sockets: %s", abs, tail);
    else if (known)
        pc_warn(c, n, field, "%s is in %s, where daemons keep their sockets: %s", abs, known, tail);
}

void sg_policy_add_path(struct sg_pctx *c, bool write, const struct sg_ynode *n,
                        const char *field, const char *declared)
{
    static const char *const system_dirs[] = {"/",    "/bin", "/boot", "/dev", "/etc", "/lib",
                                              "/lib64", "/proc", "/sbin", "/sys", "/usr",
                                              "/var", "/root", "/home"};
    struct sg_policy *p = &c->sk->policy;
    cleanup_free char *abs = NULL;
    const char *why = NULL;
    if (sg_path_resolve(c->sk->root ? c->sk->root : ".", declared, &abs, &why) < 0) {
        pc_err(c, n, field, "\"%.200s\" %s", declared, why);
        return;
    }
    /* a home, or a folder above one, bound over the private home shows the
     * real one: every program's tokens, which no mask names (homes.h) */
    struct sg_homes hs;
    sg_homes_get(&hs);
    const struct sg_home *home_hit = NULL;
    enum sg_home_rel hr = sg_homes_relation(&hs, abs, &home_hit);
    if (hr != SG_HOME_NONE) {
        char what[PATH_MAX + 64];
        pc_err(c, n, field, "refusing %s access to %s: it is %s, and the skill would see "
               "everything in it (tokens and keys no mask names); name the folder the skill "
               "needs", write ? "write" : "read", abs,
               sg_homes_describe(hr, home_hit, what, sizeof what));
        sg_homes_free(&hs);
        return;
    }
    sg_homes_free(&hs);
    for (size_t i = 0; i < SG_ARRAY_LEN(system_dirs); i++) {
        if (!strcmp(abs, system_dirs[i])) {
            if (write) {
                pc_err(c, n, field, "refusing write access to %s: name the directory the skill "
                       "needs", abs);
                return;
            }
            if (!strcmp(abs, "/"))
                pc_warn(c, n, field, "reads the whole filesystem (masked paths stay masked)");
        }
    }
    if (write && c->sk->root && !strcmp(abs, c->sk->root)) {
        /* what a person vetted must be what runs: a skill that may write
         * its own folder rewrites its manifests and widens its next run */
        pc_err(c, n, field, "refusing write access to the skill's own folder %s: its manifests "
               "and code are what was vetted; declare a folder inside it (out/, cache/)", abs);
        return;
    }
    const char *home = sg_invoking_home();
    if (home) {
        if (write && !strcmp(abs, home)) {
            pc_err(c, n, field, "refusing write access to the whole home directory %s", abs);
            return;
        }
        size_t covered = 0;
        for (size_t i = 0; sg_sensitive_home_paths[i]; i++) {
            cleanup_free char *s = sg_xasprintf("%s/%s", home, sg_sensitive_home_paths[i]);
            if (path_within(abs, s))
                pc_warn(c, n, field, "%s is always masked by skillgate; the skill will not see it",
                        abs);
            else if (path_within(s, abs))
                covered++;
        }
        if (covered && strcmp(abs, "/") != 0)
            pc_warn(c, n, field, "covers %zu credential paths under %s (~/.ssh, ~/.aws, ...); "
                    "they stay masked", covered, home);
    }
    if (!own_dirs_ok(c, write, n, field, abs) || !agent_dirs_ok(c, write, n, field, abs))
        return;
    warn_sockets(c, n, field, abs);
    struct sg_path **v = write ? &p->write : &p->read;
    size_t *nv = write ? &p->nwrite : &p->nread;
    for (size_t i = 0; i < *nv; i++)
        if (!strcmp((*v)[i].path, abs))
            return;
    *v = sg_xrealloc(*v, (*nv + 1) * sizeof **v);
    struct sg_path *e = &(*v)[(*nv)++];
    e->path = steal_pointer(&abs);
    e->declared = sg_xstrdup(declared);
    sg_origin_set(&e->origin, c->origin, n ? n->line : 0, n ? n->col : 0, field);
}

/* A host unix socket the skill may connect to. It is the host's by
 * nature, so only an absolute or ~/ path names one (a path in the skill
 * would be the skill's own). What is there now is looked at only to warn:
 * the plan pins the socket by inode when the run starts, and refuses a
 * path that is not a socket then. */
void sg_policy_add_cwd_write(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                             const char *declared)
{
    const char *rest = declared + 4;
    if (*rest && *rest != '/') {
        pc_err(c, n, field, "\"%.200s\": $CWD is the working folder; a folder in it is "
                            "$CWD/NAME", declared);
        return;
    }
    while (*rest == '/')
        rest++;
    size_t len = strlen(rest);
    while (len && rest[len - 1] == '/')
        len--;
    if (len > 1024) {
        pc_err(c, n, field, "\"%.80s...\" is longer than 1024 characters", declared);
        return;
    }
    cleanup_free char *rel = sg_xstrndup(rest, len);
    for (const char *s = rel; *s;) { /* a folder in the working folder, named plainly */
        size_t k = strcspn(s, "/");
        if (k == 0 || (k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.')) {
            pc_err(c, n, field, "\"%.200s\": name a folder inside the working folder, "
                                "without \".\", \"..\" or \"//\"", declared);
            return;
        }
        s += k + (s[k] == '/');
    }
    struct sg_policy *p = &c->sk->policy;
    for (size_t i = 0; i < p->ncwd_write; i++)
        if (!strcmp(p->cwd_write[i].path, rel))
            return;
    p->cwd_write = sg_xrealloc(p->cwd_write, (p->ncwd_write + 1) * sizeof *p->cwd_write);
    struct sg_path *w = &p->cwd_write[p->ncwd_write++];
    memset(w, 0, sizeof *w);
    w->path = steal_pointer(&rel);
    w->declared = sg_xstrdup(declared);
    sg_origin_set(&w->origin, c->origin, n->line, n->col, field);
}

void sg_policy_add_program(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                           const char *scope)
{
    if (!*scope || strpbrk(scope, "()\n\r") || strlen(scope) > 512) {
        pc_err(c, n, field, "\"%.80s\" is not a program as a Bash scope names it (pdfinfo, "
                            "pdftoppm:*, git diff:*)", scope);
        return;
    }
    struct sg_policy *p = &c->sk->policy;
    bool restricted = p->tools_restricted;
    unsigned caps = p->caps;
    cleanup_free char *tok = sg_xasprintf("Bash(%s)", scope);
    size_t had = p->ntools;
    add_tool(c, n, field, tok, strlen(tok));
    p->tools_restricted = restricted; /* it declares; it restricts no other tool */
    p->caps = caps;
    if (p->ntools > had)
        p->tools[p->ntools - 1].sandboxed = true;
}

void sg_policy_add_socket(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *declared)
{
    struct sg_policy *p = &c->sk->policy;
    if (declared[0] != '/' && strncmp(declared, "~/", 2) != 0) {
        pc_err(c, n, field, "\"%.200s\" must be an absolute path or ~/...: a declared socket is "
               "a host daemon's", declared);
        return;
    }
    cleanup_free char *abs = NULL;
    const char *why = NULL;
    if (sg_path_resolve(c->sk->root ? c->sk->root : ".", declared, &abs, &why) < 0) {
        pc_err(c, n, field, "\"%.200s\" %s", declared, why);
        return;
    }
    if (!strcmp(abs, "/")) {
        pc_err(c, n, field, "\"%.200s\" is no socket", declared);
        return;
    }
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    size_t w = 0;
    enum sg_own_rel rel = sg_own_dirs_relation(&own, abs, &w);
    if (rel == SG_OWN_INSIDE)
        pc_err(c, n, field, "%s is in skillgate's own %s folder %s: a skill may never connect "
               "there", abs, own.v[w].what, own.v[w].path);
    sg_own_dirs_free(&own);
    if (rel == SG_OWN_INSIDE)
        return;
    const char *home = sg_invoking_home();
    for (size_t i = 0; home && sg_sensitive_home_paths[i]; i++) {
        cleanup_free char *s = sg_xasprintf("%s/%s", home, sg_sensitive_home_paths[i]);
        if (path_within(abs, s))
            pc_warn(c, n, field, "%s is inside %s, which is always masked: the skill will not "
                    "reach it", abs, s);
    }
    struct stat st;
    if (stat(abs, &st) < 0)
        pc_warn(c, n, field, "%s: no socket there now (%s); a run pins the socket that is there "
                "when it starts", abs, strerror(errno));
    else if (!S_ISSOCK(st.st_mode))
        pc_warn(c, n, field, "%s is not a unix socket; a run refuses to start with it", abs);
    for (size_t i = 0; i < p->nsockets; i++)
        if (!strcmp(p->sockets[i].path, abs)) {
            pc_warn(c, n, field, "%s is listed twice", abs);
            return;
        }
    p->sockets = sg_xrealloc(p->sockets, (p->nsockets + 1) * sizeof *p->sockets);
    struct sg_path *e = &p->sockets[p->nsockets++];
    e->path = steal_pointer(&abs);
    e->declared = sg_xstrdup(declared);
    sg_origin_set(&e->origin, c->origin, n ? n->line : 0, n ? n->col : 0, field);
}

/* Blocks both formats share: {read: [...], write: [...]} and {allow: [...]}. */
void pc_field_filesystem(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"read", f_read}, {"write", f_write}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}

void pc_field_env(struct sg_pctx *c, const struct sg_ynode *v, const char *field)
{
    static const struct pc_field f[] = {{"allow", f_allow}};
    pc_walk_map(c, v, field, f, SG_ARRAY_LEN(f));
}
