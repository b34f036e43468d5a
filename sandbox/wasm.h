/* WASM skills: a WASI preview-1 module run by Node.js's node:wasi (the
 * runner, wasi_runner.mjs, embedded in the binary) inside the same kernel
 * sandbox as a native skill. Two layers hold at once: the WASI
 * capabilities the runner gives the module (preopens, environment,
 * arguments, memory pages), and the kernel sandbox around the runtime
 * process, whose Landlock rules for a WASM run also confine reads to the
 * runtime's own files and the preopens. */
#ifndef SG_WASM_H
#define SG_WASM_H

#include <stdbool.h>
#include <stddef.h>

struct sg_plan;
struct sg_skill;
struct sg_run_opts;

struct sg_wasm_preopen {
    char *guest; /* the path the module opens: /skill, or the host path */
    char *host;
    bool write;
};

struct sg_plan_wasm {
    char *runtime;            /* the node program */
    char *module;             /* absolute */
    struct sg_wasm_preopen *pre;
    size_t npre;
    char **env;               /* the module's environment: names only, for the plan */
    size_t nenv;
    long long module_mb;      /* memory_mb: the module's memory, held by the runtime */
    long long runtime_mb;     /* what the kernel limit adds for the runtime itself */
    bool seeded;
    long long seed;
    bool network_declared;    /* wasm.network.allow was given */
    char *config;             /* the runner's configuration, JSON: it holds the module's
                               * environment and input, so it goes in a sealed memfd
                               * (fd 4), never in the runtime's environment or argv */
};

/* The runtime a WASM run needs beside memory_mb, resident (a cgroup or
 * the broker's watch counts it; no address-space limit holds V8's
 * reservations). Measured: node 20's resident set is about 50 MB. */
#define SG_WASM_RUNTIME_RSS_MB 128

/* Fill p->wasm and the program (node, its flags, the runner), the
 * runtime's environment (the module's goes in its configuration) and the
 * Landlock read rules. After plan_limits, plan_mounts and plan_env.
 * Returns 0 or -errno with *why set. */
int sg_wasm_plan(struct sg_plan *p, const struct sg_skill *sk, const char **why);
void sg_wasm_plan_free(struct sg_plan_wasm *w);

/* The runtime's version as its Debian package says ("20.20.2-1 (package
 * nodejs)"), for the dry run and inspect, which execute nothing; the
 * runner reports the running one in a run. */
const char *sg_wasm_runtime_version(const char *runtime);

/* Where node is: /usr/local/bin, /usr/bin or /bin; NULL if none. */
char *sg_wasm_find_runtime(void);

#endif
