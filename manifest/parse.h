/* Internal to manifest/: the parse context shared by the SKILL.md and
 * skillsandbox.yaml readers, typed field accessors that report problems with
 * file, line, column and field, and the checks both formats use. */
#ifndef SG_PARSE_H
#define SG_PARSE_H

#include "diag.h"
#include "policy.h"
#include "ynode.h"

struct sg_pctx {
    struct sg_skill *sk;
    const char *file;   /* path shown in diagnostics */
    const char *origin; /* "SKILL.md" or "skillsandbox.yaml" */
    struct sg_diags *d;
    /* the frontmatter was read line by line, as OpenClaw reads one YAML
     * cannot parse (fmlines.h): every value is a string */
    bool lines;
};

void pc_err(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void pc_warn(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* What the Agent Skills spec refuses and the agents' loaders take, in a
 * field that is shown only (a description's length, a compatibility that
 * is a list): under OpenClaw's rules a warning; else an error marked
 * spec_only, so validate fails and the skill still runs. The message says
 * how the loaders stand. */
void pc_spec(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Typed reads. Each reports a type error itself and returns false/NULL. */
const char *pc_string(struct sg_pctx *c, const struct sg_ynode *n, const char *field);
bool pc_int(struct sg_pctx *c, const struct sg_ynode *n, const char *field, long long min,
            long long max, long long *out);
bool pc_bool(struct sg_pctx *c, const struct sg_ynode *n, const char *field, bool *out);
/* A list of strings; fn is called for each item with its node and field path. */
void pc_string_list(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                    void (*fn)(struct sg_pctx *, const struct sg_ynode *, const char *, void *),
                    void *arg);

/* Replace *dst with a copy of the string at v (type errors reported). */
void pc_set_string(char **dst, struct sg_pctx *c, const struct sg_ynode *v, const char *field);

struct pc_field {
    const char *key;
    void (*fn)(struct sg_pctx *c, const struct sg_ynode *val, const char *field);
    /* a field that is shown, or that only gives (another ecosystem's
     * fields, such as OpenClaw's metadata, whose own loader ignores a key
     * it does not know): a key near it ("models", "authors",
     * "requirements") is a warning that names it, since missing it allows
     * nothing more; near any other field, an error */
    bool lenient;
};
/* A key no handler knows. Near a known key of its level (near, from
 * util.h's sg_nearest) it is a misspelling that would leave what it meant
 * at its default without a word ("max_runtime_secs", "allowed_tools"): an
 * error that names the key meant (a warning for a lenient field's, from
 * pc_walk_map). Near none (NULL), a warning: manifests carry keys of other
 * tools. */
void pc_unknown_key(struct sg_pctx *c, const struct sg_ynode *k, const char *field,
                    const char *near);
/* Walk a mapping: known keys go to their handler, unknown ones to
 * pc_unknown_key with the nearest known key. */
void pc_walk_map(struct sg_pctx *c, const struct sg_ynode *map, const char *prefix,
                 const struct pc_field *fields, size_t nfields);

/* Field handlers for the blocks both formats share: filesystem{read, write}
 * and env{allow} (env_vars in skillsandbox.yaml). */
void pc_field_filesystem(struct sg_pctx *c, const struct sg_ynode *v, const char *field);
void pc_field_env(struct sg_pctx *c, const struct sg_ynode *v, const char *field);

/* Checks shared by both formats. Each returns true when the value is good and
 * reports problems itself. */
bool sg_check_name(struct sg_pctx *c, const struct sg_ynode *n, const char *field, const char *name);
bool sg_check_description(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *desc);

/* Add to the policy (validated, with origin). */
void sg_policy_add_path(struct sg_pctx *c, bool write, const struct sg_ynode *n,
                        const char *field, const char *declared);
/* filesystem.write[i] "$CWD" or "$CWD/DIR" (policy.h cwd_write). */
void sg_policy_add_cwd_write(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                             const char *declared);
/* permissions.programs[i]: a program the skill's scripts run, as a Bash
 * scope names it ("pdfinfo", "pdftoppm:*", "git diff:*"); it declares
 * that program and restricts no other tool (unlike allowed-tools). */
void sg_policy_add_program(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                           const char *scope);
/* permissions.unix_sockets[i]: an absolute or ~/ path, not one of
 * skillgate's own folders' (validated, with origin). */
void sg_policy_add_socket(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *declared);
void sg_policy_add_egress(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                          const char *domain, const uint16_t *ports, size_t nports);
void sg_policy_add_env(struct sg_pctx *c, const struct sg_ynode *n, const char *field,
                       const char *name);
void sg_policy_set_limit(struct sg_pctx *c, struct sg_limit *l, const struct sg_ynode *n,
                         const char *field, long long value);
void sg_policy_add_tools(struct sg_pctx *c, const struct sg_ynode *n, const char *field);

/* Domain syntax: 0 and a normalized copy in *out, or -EINVAL with *why. */
int sg_domain_normalize(const char *in, char **out, const char **why);
/* A numeric address (v4, v6, v4-mapped) no upstream may be unless the person
 * allows it: loopback, link-local (cloud metadata), private, CGNAT,
 * unspecified, unique-local, multicast. The proxy and validate both ask. */
bool sg_addr_private(const char *numeric);
/* A numeric address one of this machine's interfaces holds now (or the
 * broadcast address of one), by getifaddrs: validate's warning. The proxy
 * asks the kernel's routes at each connect (egress/route.h), which also
 * know every other address that never leaves the host. */
bool sg_addr_this_machine(const char *numeric);
/* Resolve a declared path against the skill root: 0 and *out, or -errno with
 * *why. Relative paths may not leave the root, by ".." or by symlink. */
int sg_path_resolve(const char *root, const char *declared, char **out, const char **why);

/* A SKILL.md field skillgate enforces, which no lenient reading may guess
 * at (allowed-tools, context, hooks, wasm: the fields not lenient). */
bool sg_skillmd_enforced(const char *key);

/* The two readers (skillmd.c, sandboxyaml.c). */
void sg_skillmd_apply(struct sg_pctx *c, const struct sg_ynode *root);
void sg_sandbox_yaml_apply(struct sg_pctx *c, const struct sg_ynode *root);

#endif
