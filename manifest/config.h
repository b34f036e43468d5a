/* The user's config file, $XDG_CONFIG_HOME/skillgate/config.yaml. */
#ifndef SG_CONFIG_H
#define SG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

/* One "action: keys" line of the keys: section, checked by the TUI. */
struct sg_config_key {
    char *action, *keys;
    int line, col;         /* of the keys (a bad key name is there) */
    int key_line, key_col; /* of the action (an unknown action is there) */
};

struct sg_config {
    char *path;        /* the file read, or NULL when there was none */
    char **skill_dirs; /* absolute */
    size_t nskill_dirs;
    char *theme;       /* theme: NAME (or NULL) */
    int theme_line;
    struct sg_config_key *keys; /* keys: {action: "k Down"} */
    size_t nkeys;
    long long audit_rotate_kb; /* audit_rotate_kb: the log goes on in a new file past it (0: 65536) */
    long long trace_keep;      /* trace_keep: traces kept, the oldest removed past it (0: 1000) */
    char **resolve;            /* resolve: [NAME:PORT:ADDR[:PORT2]], as --resolve for every run */
    size_t nresolve;
    /* hook: {policy: PATH, rewrite_scripts: BOOL, sandbox_bash: BOOL}, for `skillgate hook` */
    char *hook_policy;         /* absolute; NULL: <config dir>/hook-policy.yaml when it exists */
    bool hook_no_rewrite;      /* rewrite_scripts: false */
    bool hook_sandbox_bash;    /* sandbox_bash: true: the agent's Bash runs under skillgate wrap */
    long long hook_prompt_s;   /* prompt_timeout: a person's time to answer (0: the default) */
    /* quiet_programs: false, or {add: [NAME], remove: [NAME]} (see below) */
    bool quiet_off;
    char **quiet_add, **quiet_remove;
    size_t nquiet_add, nquiet_remove;
    /* otel: {endpoint: URL, traces_endpoint: URL, headers: {K: V}, timeout: MS,
     * protocol: http/protobuf, service_name: NAME, resource_attributes: {K: V},
     * sdk_disabled: BOOL}: each as OTEL_<KEY upper case> (OTEL_EXPORTER_OTLP_
     * for the exporter's), headers and resource_attributes as "k=v,k2=v2"
     * (values percent-encoded); the environment wins (records/otel.h) */
    char *otel_keys[8], *otel_vals[8];
    size_t notel;
    /* prompt_exec: [PROGRAM, ARG...]: OpenSkills' custom callback, asked
     * before a person (decisions/execprompt.h); hook: {prompt_exec: [...]}
     * for `skillgate hook`. NULL-terminated, or NULL. */
    char **prompt_exec, **hook_prompt_exec;
};

/* ---- ordinary programs a skill's own scripts run without a question ----
 *
 * A shell script that runs find, wc and sort once raised a question per
 * program. These read and compute inside the sandbox: they reach no file,
 * host or socket the script itself could not (every write, connection and
 * further exec they make is brokered on its own), so an exec of one by the
 * skill is allowed without asking, still as an event and an audit record
 * ("an ordinary program (config: quiet_programs)"). The person's deny and
 * ask rules and the manifest's allowed-tools come first. Names are matched
 * as the sandbox's PATH finds them, on the file the kernel runs
 * (run/exec.c). config.yaml changes the set:
 *   quiet_programs: false                      # ask for every program
 *   quiet_programs: {add: [jq], remove: [find]}
 * X(name) */
#define SG_QUIET_PROGRAMS(X)                                                                   \
    X("cat") X("head") X("tail") X("wc") X("sort") X("uniq") X("cut") X("tr") X("tac")        \
    X("paste") X("join") X("comm") X("fold") X("nl") X("expand") X("unexpand") X("column")    \
    X("grep") X("egrep") X("fgrep") X("sed") X("awk") X("gawk") X("mawk") X("find")           \
    X("xargs") X("ls") X("stat") X("du") X("basename") X("dirname") X("realpath")             \
    X("readlink") X("pwd") X("date") X("mktemp") X("test") X("[") X("true") X("false")        \
    X("echo") X("printf") X("expr") X("seq") X("diff") X("cmp") X("od") X("md5sum")           \
    X("sha1sum") X("sha256sum") X("sha512sum") X("base64")
/* Programs that reach out of the sandbox's files (network, packages,
 * another user, mounts): never quiet, whatever the config says. A name
 * followed by a version (pip3, pip3.12) counts as the name. */
#define SG_NEVER_QUIET(X)                                                                      \
    X("curl") X("wget") X("ssh") X("scp") X("sftp") X("rsync") X("nc") X("ncat")              \
    X("netcat") X("socat") X("telnet") X("ftp") X("tftp") X("git") X("npm") X("npx")          \
    X("pnpm") X("yarn") X("pip") X("pipx") X("uv") X("uvx") X("poetry") X("gem") X("bundle")  \
    X("cargo") X("go") X("apt") X("apt-get") X("dpkg") X("rpm") X("dnf") X("yum") X("snap")   \
    X("flatpak") X("brew") X("sudo") X("su") X("doas") X("pkexec") X("mount") X("umount")     \
    X("chroot") X("nsenter") X("unshare") X("setpriv") X("docker") X("podman") X("kubectl")   \
    X("gh") X("aws") X("gcloud") X("az") X("dig") X("nslookup") X("host") X("ping")           \
    X("crontab") X("systemctl") X("gpg")

/* name is one of SG_QUIET_PROGRAMS (the built-in set, whatever the config). */
bool sg_quiet_builtin(const char *name);
/* name (a program's base name) is one that is never quiet. */
bool sg_quiet_never(const char *name);
/* The programs quiet under cfg (NULL: the defaults): the default set, plus
 * add, minus remove; none when quiet_programs is false. A NULL-terminated
 * array of borrowed strings (cfg's or static), *n set; caller frees the
 * array only. */
const char **sg_config_quiet_programs(const struct sg_config *cfg, size_t *n);

/* The records' settings from the default config file (defaults where it
 * has none, or is broken or untrusted: records are never kept less). */
void sg_config_records(long long *audit_rotate_bytes, long long *trace_keep);

/* The default location: $XDG_CONFIG_HOME/skillgate/config.yaml, or
 * ~/.config/skillgate/config.yaml. Caller frees. */
char *sg_config_default_path(void);
/* Read path (a missing file is an empty config, not an error). A file that
 * is not the user's own (sg_read_private_file) is ignored with a warning.
 * Problems go to d. Returns 0, or -EINVAL when the file has errors. */
int sg_config_load(const char *path, struct sg_config *cfg, struct sg_diags *d);
void sg_config_free(struct sg_config *cfg);

/* ---- skillgate's own folders ----
 *
 * Its settings and grants, its records, its runtime sockets and mount points.
 * A skill that could read them would learn other runs' traces and its own
 * digest; one that could write them would forge an "always" grant. They are
 * computed here, once, for every layer: the manifest check refuses a declared
 * path that is or is inside one (check.c), the plan masks each wherever a
 * declared path covers it (sandbox/plan.c), and the broker keeps its files
 * there (trace, audit, grants). Each returns a string the caller frees. */

/* $XDG_CONFIG_HOME/skillgate (absolute only), else ~/.config/skillgate:
 * config.yaml, grants.yaml, themes/. */
char *sg_config_dir(void);
/* $XDG_STATE_HOME/skillgate (absolute only), else ~/.local/state/skillgate:
 * traces/, audit.jsonl. */
char *sg_state_dir(void);

/* Open (and make, 0700, what is missing) a folder of skillgate's own records
 * for writing: an O_PATH | O_DIRECTORY descriptor to open files beneath
 * (openat, O_NOFOLLOW), or -errno. As root (under sudo the state folder is
 * in the invoking user's home) it is walked a component at a time without
 * following a symlink once the walk is inside a folder another user owns
 * (~/.local/state/skillgate -> /root/x once made root write there), every
 * such component must be that user's or root's, and what is made is theirs.
 * Without root the kernel's own checks already keep the user to what is
 * theirs: the path is opened as it is. */
int sg_open_records_dir(const char *dir);

/* Where run directories and the attach socket live: never a fixed name in
 * a folder others may write (another user who made /dev/shm/skillgate-0
 * first once stopped every root run). $XDG_RUNTIME_DIR/skillgate when that
 * folder is private; /run/skillgate for root; else <state dir>/run. Both
 * `run` and `tui --attach` find the same one from the same environment. */
char *sg_runtime_dir(void);

/* Every one of them, the runtime folder (sg_runtime_dir) included. real is path with the
 * symlinks of its existing part resolved (sg_path_real). */
#define SG_OWN_DIRS_MAX 5
struct sg_own_dirs {
    size_t n;
    struct {
        const char *what; /* "config", "state", "runtime" */
        char *path, *real;
    } v[SG_OWN_DIRS_MAX];
};
void sg_own_dirs_get(struct sg_own_dirs *o);
void sg_own_dirs_free(struct sg_own_dirs *o);

/* How an absolute path stands to them: it is one or lies inside one
 * (SG_OWN_INSIDE), or one lies inside it (SG_OWN_CONTAINS: "~", "/",
 * "~/.config"). Compared both as written and with symlinks resolved; *which
 * (may be NULL) is the index of the first folder concerned. */
enum sg_own_rel { SG_OWN_NONE, SG_OWN_INSIDE, SG_OWN_CONTAINS };
enum sg_own_rel sg_own_dirs_relation(const struct sg_own_dirs *o, const char *path,
                                     size_t *which);

/* An absolute path with the longest prefix that exists resolved by
 * realpath and the rest appended, so a path not made yet still has its
 * symlinks resolved. Caller frees. */
char *sg_path_real(const char *abs);
/* While the homes are held (homes.h) sg_path_real remembers what realpath
 * answered for each absolute name; sg_homes_release forgets it. */
void sg_path_real_forget(void);
/* path is dir or below it (both absolute and normalized; "/" holds all). */
bool sg_path_within(const char *path, const char *dir);

/* Read a settings file that can widen what a skill gets (grants.yaml,
 * config.yaml) only when it and its folder belong to the user running
 * skillgate (or to root) and no one else may write them; the file itself is
 * never followed through a symlink. Returns 0 with *buf NULL when there is
 * no such file; -EINVAL when it is not a regular file; 0 with the bytes in *buf (NUL-terminated, *len); -EPERM with
 * the reason in *why (caller frees) when it is not to be trusted; -EFBIG over
 * max; else -errno. */
int sg_read_private_file(const char *path, size_t max, char **buf, size_t *len, char **why);

#endif
