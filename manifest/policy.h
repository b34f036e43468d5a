/* The Skill and its Policy: everything a run may get, each capability with
 * the file, line and field it came from. Both manifest formats fold into
 * this one structure (see skill.c). */
#ifndef SG_POLICY_H
#define SG_POLICY_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

enum sg_risk { SG_RISK_LOW, SG_RISK_MEDIUM, SG_RISK_HIGH };

/* Capabilities a tool grants (DESIGN.md, the seed table). */
enum {
    SG_CAP_READ_ROOT = 1u << 0,
    SG_CAP_WRITE_ROOT = 1u << 1,
    SG_CAP_EXEC = 1u << 2,
    SG_CAP_NETWORK = 1u << 3,
};

#define SG_CAPS_RW (SG_CAP_READ_ROOT | SG_CAP_WRITE_ROOT)

/* One list, many uses: the tool enum, names, risks and capabilities.
 * X(ID, "Name", RISK, CAPS) — a new tool is one line. */
#define SG_TOOLS(X)                                                   \
    X(READ, "Read", LOW, SG_CAP_READ_ROOT)                            \
    X(GREP, "Grep", LOW, SG_CAP_READ_ROOT)                            \
    X(GLOB, "Glob", LOW, SG_CAP_READ_ROOT)                            \
    X(LS, "LS", LOW, SG_CAP_READ_ROOT)                                \
    X(WRITE, "Write", MEDIUM, SG_CAPS_RW)                             \
    X(EDIT, "Edit", MEDIUM, SG_CAPS_RW)                               \
    X(MULTIEDIT, "MultiEdit", MEDIUM, SG_CAPS_RW)                     \
    X(WEBSEARCH, "WebSearch", MEDIUM, SG_CAP_NETWORK)                 \
    X(FETCH, "Fetch", MEDIUM, SG_CAP_NETWORK)                         \
    X(WEBFETCH, "WebFetch", MEDIUM, SG_CAP_NETWORK)                   \
    X(BASH, "Bash", HIGH, SG_CAP_EXEC | SG_CAPS_RW)                   \
    X(TERMINAL, "Terminal", HIGH, SG_CAP_EXEC | SG_CAPS_RW)           \
    X(DELETE, "Delete", HIGH, SG_CAPS_RW)                             \
    /* connect to a host unix socket: a daemon acts for the skill outside \
     * the sandbox (tmux runs commands, an ssh agent signs) */           \
    X(CONNECT, "Connect", HIGH, 0)                                    \
    /* Claude Code's own tools: the agent's conversation and bookkeeping, \
     * notebooks, background shells, subagents and other skills */      \
    X(NOTEBOOKREAD, "NotebookRead", LOW, SG_CAP_READ_ROOT)            \
    X(NOTEBOOKEDIT, "NotebookEdit", MEDIUM, SG_CAPS_RW)               \
    X(ASKUSERQUESTION, "AskUserQuestion", LOW, 0)                     \
    X(TODOWRITE, "TodoWrite", LOW, 0)                                 \
    X(TODOREAD, "TodoRead", LOW, 0)                                   \
    X(EXITPLANMODE, "ExitPlanMode", LOW, 0)                           \
    X(BASHOUTPUT, "BashOutput", LOW, 0)                               \
    X(KILLSHELL, "KillShell", LOW, 0)                                 \
    /* work with the same tools (they add no capability of their own) */ \
    X(TASK, "Task", LOW, 0)                                           \
    X(AGENT, "Agent", LOW, 0)                                         \
    X(SKILL, "Skill", LOW, 0)                                         \
    X(SLASHCOMMAND, "SlashCommand", MEDIUM, 0)                        \
    /* mcp__server__tool: an MCP server's tool, asked unless a rule says */ \
    X(MCP, "mcp__*", MEDIUM, 0)

enum sg_tool_id {
#define X(id, name, risk, caps) SG_TOOL_##id,
    SG_TOOLS(X)
#undef X
    SG_TOOL_UNKNOWN,
};

/* X(ID, "name", "what it means") */
#define SG_SECCOMP_PROFILES(X)                                                       \
    X(DEFAULT, "default", "deny kernel, mount, tracing and namespace calls")        \
    X(STRICT, "strict", "default, plus no new processes, sockets or ioctls beyond tty basics") \
    X(PERMISSIVE, "permissive", "only the calls that escape a sandbox are denied")

enum sg_seccomp_profile {
#define X(id, name, desc) SG_SECCOMP_##id,
    SG_SECCOMP_PROFILES(X)
#undef X
};

enum sg_exec_mode {
    SG_MODE_NATIVE,       /* an entrypoint runs under the sandbox */
    SG_MODE_INSTRUCTIONS, /* instruction-only: the agent runs the tools */
    SG_MODE_WASM,         /* a WASI preview-1 module, run by node:wasi in the sandbox */
    SG_MODE_SCRIPTS,      /* several scripts, no entrypoint: the person picks one */
};

/* Where a capability came from. */
struct sg_origin {
    char *file;  /* "SKILL.md", "skillsandbox.yaml" or "default" */
    int line, col;
    char *field; /* "allowed-tools[2]", "permissions.network.egress[0]" */
};

struct sg_tool {
    enum sg_tool_id id;
    char *name;  /* as declared, without scope: "Bash", "WebFetch" */
    char *scope; /* "git diff:*" for Bash(git diff:*), or NULL */
    char *written; /* as the manifest wrote it: "Bash(git diff:*)" */
    enum sg_risk risk;
    unsigned caps;
    struct sg_origin origin;
    bool sandboxed; /* permissions.programs': what the skill's scripts run in its
                     * sandbox; never a declaration of an agent's own command */
};

struct sg_path {
    char *path;     /* absolute, normalized, symlinks in the skill root resolved */
    char *declared; /* as written */
    struct sg_origin origin;
};

#define SG_MAX_PORTS 32
struct sg_egress {
    char *domain; /* lower case; "*.example.com" keeps its "*." */
    bool wildcard;
    uint16_t ports[SG_MAX_PORTS];
    size_t nports;
    struct sg_origin origin;
};

struct sg_envname {
    char *name;
    struct sg_origin origin;
};

struct sg_limit {
    long long value;
    struct sg_origin origin;
};

/* X(field, "yaml key", default, min, max, "unit") */
#define SG_LIMITS(X)                                                      \
    X(memory_mb, "memory_mb", 256, 16, 65536, "MB")                     \
    X(runtime_s, "max_runtime_seconds", 60, 1, 86400, "s")              \
    X(cpu_percent, "max_cpu_percent", 100, 1, 6400, "%")                \
    X(pids, "max_pids", 64, 1, 32768, "processes")                      \
    X(output_bytes, "max_output_bytes", 1048576, 1024, 1073741824, "bytes") \
    X(disk_mb, "max_disk_mb", 1024, 1, 1048576, "MB")                     \
    X(files, "max_files", 10000, 1, 10000000, "files")

struct sg_limits {
#define X(f, key, def, min, max, unit) struct sg_limit f;
    SG_LIMITS(X)
#undef X
};

struct sg_entrypoint {
    char *command;  /* NULL when there is none */
    char **args;
    size_t nargs;
    bool detected;  /* found by convention rather than declared */
    struct sg_origin origin;
};

struct sg_policy {
    struct sg_tool *tools;
    size_t ntools;
    unsigned caps;            /* union of the declared tools' capabilities */
    bool tools_restricted;    /* a non-empty allowed-tools list */
    struct sg_path *read, *write;
    size_t nread, nwrite;
    /* filesystem.write entries "$CWD" and "$CWD/DIR": folders of the run's
     * working folder, made writable when a run starts there (as --write,
     * with its checks; a missing DIR is made); path is DIR ("" for the
     * folder itself), relative, without "." or ".." */
    struct sg_path *cwd_write;
    size_t ncwd_write;
    struct sg_egress *egress;
    size_t negress;
    struct sg_envname *env;
    size_t nenv;
    /* permissions.unix_sockets: host unix sockets the skill may connect
     * to; path is absolute (~/ expanded), symlinks left as written: the
     * plan pins the socket they lead to by inode */
    struct sg_path *sockets;
    size_t nsockets;
    /* permissions.network.listen: ports the skill serves for the person
     * (a review page in a browser), published on the host's loopback only
     * (egress/publish.h); an undeclared one is asked */
    uint16_t listen[SG_MAX_PORTS];
    size_t nlisten;
    struct sg_origin listen_origin;
    enum sg_seccomp_profile profile;
    struct sg_origin profile_origin;
    struct sg_limits limits;
    struct sg_entrypoint entry;
    enum sg_exec_mode mode;
    bool fork_context;        /* context: fork */
    bool has_random_seed;
    long long random_seed;
    /* SG_MODE_WASM: the module, relative to the skill's folder
     * (wasm/skill.wasm, scripts/x.wasm or x.wasm) */
    char *wasm_module;
    /* SKILL.md has a wasm: block (OpenSkills): a module must be there */
    bool wasm_declared;
    struct sg_origin wasm_origin;
    /* wasm.network.allow was given (WASI preview 1 has no sockets) */
    bool wasm_network;
    struct sg_origin wasm_network_origin;
    char **scripts;           /* scripts/ files one can run (scripts/x.py, scripts/sub/y.js) */
    char **script_usage;      /* per script: the first line of the skill's Markdown that
                                 names it (python scripts/x.py <in> <out>), or NULL */
    size_t nscripts;
};

/* The largest WebAssembly module a skill may bring (the runtime reads it whole). */
#define SG_WASM_MODULE_MAX (64 << 20)

/* Scripts listed per skill (scripts/ and one level below it). */
#define SG_SCRIPTS_MAX 64

const char *sg_risk_name(enum sg_risk r);
const char *sg_mode_name(enum sg_exec_mode m);
const char *sg_seccomp_profile_name(enum sg_seccomp_profile p);
int sg_seccomp_profile_from_name(const char *s, enum sg_seccomp_profile *out);

/* Look a tool up by name (case-sensitive, as Claude Code writes them). */
enum sg_tool_id sg_tool_lookup(const char *name);
/* mcp__server__tool: Claude Code's name for an MCP server's tool. */
bool sg_tool_is_mcp_name(const char *name);
const char *sg_tool_canonical(enum sg_tool_id id);
enum sg_risk sg_tool_risk(enum sg_tool_id id);
unsigned sg_tool_caps(enum sg_tool_id id);
/* The highest risk among the skill's tools (an empty list means every tool
 * may be used, so High; a declared host socket is High too). */
enum sg_risk sg_policy_max_risk(const struct sg_policy *p);

/* skillgate's own settings in its environment: never passed to a skill,
 * whatever names them (env_vars.allow, requires.env, primaryEnv, the wasm
 * block's env.allow, --env); validate says why, the run strips them. They
 * configure skillgate itself: its OpenTelemetry export (OTEL_*, read from
 * the environment or config.yaml's otel:, the collector's token among
 * them), the trace context its spans continue, and every SKILLGATE_*.
 * Variables it only consults about its surroundings (HOME, PATH, TERM,
 * NO_COLOR, SUDO_UID, XDG_*, VIRTUAL_ENV, CLAUDE_CONFIG_DIR) are not here:
 * the sandbox sets HOME and PATH itself, and the rest configure other
 * programs as much as skillgate. X(name, what it is to skillgate); a name
 * ending in '_' is a prefix; the first match says why. */
#define SG_OWN_ENV(X)                                                            \
    X("OTEL_EXPORTER_OTLP_HEADERS", "the collector's token")                    \
    X("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "the collector's token")             \
    X("OTEL_", "how it exports its traces to a collector (OpenTelemetry)")      \
    X("TRACEPARENT", "the trace context its own spans continue")                \
    X("SKILLGATE_", "a name it keeps for itself")
/* What name is to skillgate (SG_OWN_ENV), or NULL when it is none of its own. */
const char *sg_env_own(const char *name);

/* Paths under the invoking user's home that the sandbox always masks. */
extern const char *const sg_sensitive_home_paths[];

void sg_origin_set(struct sg_origin *o, const char *file, int line, int col, const char *field);
void sg_origin_copy(struct sg_origin *dst, const struct sg_origin *src);
void sg_origin_free(struct sg_origin *o);
void sg_policy_init(struct sg_policy *p);
void sg_policy_free(struct sg_policy *p);

/* Whom a run by this process runs the skill as: the user itself; as root
 * the sudo user (SUDO_UID, SUDO_GID), or nobody (65534), never root. */
struct sg_run_identity {
    bool as_root, via_sudo;
    uid_t uid;
    gid_t gid;
};
void sg_run_identity(struct sg_run_identity *id);
/* A declared write folder that the skill's uid may not write by its mode
 * (as root: nobody or the sudo user): what happens there, for validate,
 * inspect and the dry run; NULL when it may, when the folder is not there
 * yet (it is made for the skill), or when skillgate is no root (the
 * skill is the user, as the kernel sees it). */
char *sg_write_folder_note(const char *path, const struct sg_run_identity *id);

/* What the manifest's allowed-tools lets a skill ask for: the broker's
 * vocabulary, never the sandbox's. */
struct sg_tools {
    bool restricted; /* a non-empty allowed-tools: unlisted tools are denied outright */
    bool bash_listed, bash_unscoped, fetch_listed, write_listed, connect_listed;
    char **bash_scopes; /* "git diff:*" of Bash(git diff:*) */
    size_t nbash_scopes;
};
void sg_tools_from_policy(const struct sg_policy *pol, struct sg_tools *t);
void sg_tools_free(struct sg_tools *t);

#endif
