/* The run options a person gives for one run (`run --env NAME`,
 * `--write DIR`, `--module M`; MCP run_skill's env, write, module):
 * checked, then folded into a view of the skill whose policy declares
 * them, so the plan treats them exactly as declared ones (masks, homes,
 * the write broker) with "--env" / "--write" / "--module" as their
 * origin; the plan shows them by that origin. */
#ifndef SG_RUNOPTS_H
#define SG_RUNOPTS_H

#include "runner.h"
#include "sandbox.h"

/* sk with the options in its policy. Its arrays are the view's own;
 * everything else is sk's, borrowed (the view lives no longer than sk). */
struct sg_opt_view {
    struct sg_skill sk;
    struct sg_path *write;
    struct sg_envname *env;
    struct sg_entrypoint entry; /* python3 -c <runpy> ROOT MODULE ARG... for --module */
    char **reals;               /* each --write folder's real path, as given in order */
    size_t nreals;
};

/* 0, or -errno with *why (static, until the next call) naming the option:
 * an unset or reserved --env name, a --write folder that is missing, /,
 * the home, skillgate's or an AI agent's own; a --module that is no
 * Python name or comes with --script. env: where --env names are read.
 * The manifest's $CWD write folders (policy.h cwd_write) are taken in the
 * working folder work (the skill's root when NULL) as --write folders are,
 * a missing one made there first (never through a symbolic link). */
int sg_opt_view_make(struct sg_opt_view *v, const struct sg_skill *sk, const char *work,
                     const struct sg_run_request *rq, char *const *env, const char **why);
/* --write DIR (opt names it in why: "--write", "allowWrite in FILE"): an
 * existing folder by its real path (*out, caller frees); never /, the
 * home, skillgate's own folders or an AI agent's (homes and folders above
 * one the plan refuses as it refuses a declared write path). 0 or -errno. */
int sg_runopts_check_write(const char *opt, const char *dir, char **out, const char **why);
/* nwrite0, nenv0: sk's own counts (what the view borrowed). */
void sg_opt_view_free(struct sg_opt_view *v, size_t nwrite0, size_t nenv0);
/* The name says it holds a secret (KEY, TOKEN, SECRET, PASSWORD, ...):
 * passed when the person names it, since that is the point, and said. */
bool sg_runopts_secret_name(const char *n);
/* A variable that changes what code runs (LD_PRELOAD, PYTHONPATH, ...,
 * the manifest check's list): passed when named, and said. */
bool sg_runopts_code_name(const char *n);

/* --publish [HOSTPORT:]PORT: the skill's PORT published on this
 * machine's 127.0.0.1:HOSTPORT (0 when not given: the kernel picks it),
 * each from 1024 to 65535. 0 or -EINVAL. */
int sg_runopts_publish_one(const char *arg, struct sg_publish *out);
/* Every --publish of rq into out (at most max): 0, or -EINVAL with *why
 * (a bad one, or a port or host port given twice). */
int sg_runopts_publish(const struct sg_run_request *rq, struct sg_publish *out, size_t max,
                       size_t *n, const char **why);
/* Every number from 1 to 65535 written in the permission program's words
 * (its program and arguments: "http://127.0.0.1:8787/decide", "--port
 * 8787"), added to o as SG_OWN_PROMPT: more than the ports it talks to,
 * never fewer of those its words name. */
void sg_runopts_prompt_ports(char *const *words, struct sg_own_ports *o);

#endif
