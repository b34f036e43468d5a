/* sandbox/: Linux enforcement and the launch of the skill process. It knows
 * nothing of prompts, UI or JSON: it builds a Plan from a Policy, launches
 * the skill under it, and hands file descriptors up to the broker. Functions
 * return -errno; nothing here prints. */
#ifndef SG_SANDBOX_H
#define SG_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "skill.h"

enum sg_mount_kind {
    SG_MNT_BIND_RO,   /* host path, read-only */
    SG_MNT_BIND_RW,   /* host path, writable */
    SG_MNT_TMPFS,     /* private, size-capped */
    SG_MNT_PROC,      /* fresh /proc of the sandbox's pid namespace */
    SG_MNT_DEV,       /* minimal /dev: null zero full random urandom, shm */
    SG_MNT_MASK,      /* hide a path: empty read-only dir, or /dev/null for a file */
    SG_MNT_SYMLINK,   /* recreate a host symlink (merged /usr: /bin -> usr/bin) */
};

struct sg_mount {
    enum sg_mount_kind kind;
    char *src;        /* host path (binds), link target (symlinks) */
    char *dst;        /* path inside the sandbox */
    long long size;   /* tmpfs bytes */
    long long inodes; /* tmpfs nr_inodes: files, folders, links and user xattrs (plan.c) */
    unsigned mode;    /* tmpfs root mode */
    bool owned;       /* tmpfs owned by the skill's uid (HOME) */
    bool declared;    /* a bind the manifest asked for (filesystem.read or write) */
    bool planned;     /* a bind whose object was there at plan time: */
    dev_t pdev;       /* the object every check and question was about, which the */
    ino_t pino;       /* launch must find at src (sg_plan_build, launch.c pin_paths) */
    bool named;       /* a file named on the run's command line (named.h) */
    char *why;        /* for the plan and the trace */
};

/* How each limit is enforced on this machine. X(ID, "name") */
#define SG_MECHANISMS(X)                 \
    X(NONE, "not enforced")              \
    X(CGROUP2, "cgroup v2")              \
    X(CGROUP1, "cgroup v1")              \
    X(RLIMIT, "rlimit")                  \
    X(BROKER, "broker")                  \
    X(RESIDENT, "resident watch")        \
    X(TMPFS, "tmpfs size")               \
    X(TMPFS_INODES, "tmpfs nr_inodes")

enum sg_mechanism {
#define X(id, name) SG_MECH_##id,
    SG_MECHANISMS(X)
#undef X
};
const char *sg_mechanism_name(enum sg_mechanism m);

struct sg_plan_limit {
    const char *name;
    long long value;
    const char *unit;
    enum sg_mechanism mech;
    char *how; /* detail: "memory.limit_in_bytes", "RLIMIT_NPROC" */
};

enum { SG_PL_TIMEOUT, SG_PL_MEMORY, SG_PL_PIDS, SG_PL_CPU, SG_PL_OUTPUT, SG_PL_FSIZE, SG_PL_TMPFS,
       SG_PL_INODES, SG_PL_DISK, SG_PL_FILES, SG_PL_NOFILE, SG_PL_COUNT };
/* open files a skill may hold when no cgroup counts their buffers */
#define SG_NOFILE_NO_CGROUP 1024

/* --resolve NAME:PORT:ADDR[:PORT2]: connections to NAME:PORT go to ADDR
 * (on PORT2 when given) instead of what DNS says. */
struct sg_resolve {
    char *name;
    uint16_t port, to_port;
    char *addr; /* numeric v4 or v6 */
};

/* One allowed destination, copied from the policy. */
struct sg_plan_egress {
    char *domain; /* "*.example.com" keeps its "*." */
    bool wildcard;
    uint16_t ports[SG_MAX_PORTS];
    size_t nports;
};

/* A host unix socket the manifest declares (permissions.unix_sockets),
 * pinned when the plan is made: the broker lets a connect through to this
 * very object (device and inode), whatever path reached it (hostsock.c). */
struct sg_plan_socket {
    char *path;     /* as declared, ~/ expanded: where the skill finds it */
    char *origin;   /* "skillsandbox.yaml:7:5 permissions.unix_sockets[0]" */
    bool present;   /* a socket was there at plan time (else nothing is pinned) */
    bool bound;     /* the plan binds the socket file at path (no other bind shows it) */
    int fd;         /* O_PATH, held while the plan lives: the inode cannot be freed, so
                     * its number cannot be reused by another socket (-1: none) */
    dev_t dev;
    ino_t ino;
    uid_t uid;      /* its owner, for the plan */
    unsigned mode;
};

/* A port the skill serves, published on this machine's 127.0.0.1 (see
 * egress/publish.h): the skill's own port inside the sandbox, and the host's
 * port a browser uses, 0 while the kernel is to pick it. */
struct sg_publish {
    uint16_t port, host;
};

/* Ports of this machine that skillgate's own settings point at: the OTLP
 * exporter's endpoints (the environment's and config.yaml's, whether or not
 * export is on), every number of the permission programs' words (run's and
 * the hook's) and the loopback ports --resolve and config.yaml's resolve:
 * send a name to. A
 * published port never takes one on the host: a skill would answer in the
 * service's place (the policy service's questions, the collector's spans
 * with their Authorization header). A set of every port, so that nothing
 * read is cut off. */
enum { SG_OWN_OTEL, SG_OWN_PROMPT, SG_OWN_RESOLVE, SG_OWN_KINDS };
struct sg_own_ports {
    uint64_t bits[SG_OWN_KINDS][65536 / 64];
};
static inline void sg_own_ports_add(struct sg_own_ports *o, int kind, uint16_t port)
{
    o->bits[kind][port / 64] |= 1ull << (port % 64);
}
/* Which setting points at port: SG_OWN_*, or -1 none. */
static inline int sg_own_ports_which(const struct sg_own_ports *o, uint16_t port)
{
    for (int k = 0; o && k < SG_OWN_KINDS; k++)
        if (o->bits[k][port / 64] & (1ull << (port % 64)))
            return k;
    return -1;
}

struct sg_run_opts {
    const char *input;       /* JSON text for SKILL_INPUT and stdin; NULL: "{}" */
    bool stdin_empty;        /* a script given no input: stdin at end of file at once (a
                              * question it asks gets no "{}" for an answer) */
    long long timeout_s;     /* 0: the policy's */
    long long memory_mb;     /* 0: the policy's (--memory) */
    bool allow_degraded;     /* run without Landlock (said on every report) */
    char *const *host_env;   /* the environment to filter (environ) */
    const struct sg_resolve *resolve;
    size_t nresolve;
    char *const *allow_upstream; /* loopback, private or metadata addresses the person allows */
    size_t nallow_upstream;
    /* one script of the skill instead of its entrypoint: a path inside the
     * skill (scripts/x.py), run by the interpreter its name or #! line
     * names, with these arguments byte for byte */
    const char *script;
    char *const *args;
    size_t nargs;
    /* the skill's working folder, shown read-only at its own path (writes
     * there are Write requests); NULL: the skill's folder, or for a script
     * the caller's current folder */
    const char *work_dir;
    /* the Python a run gets: a virtual environment's folder or a Python
     * program (in one); NULL: VIRTUAL_ENV of host_env, when set; neither:
     * the system's python3 */
    const char *python;
    /* skillgate record: every open, reads too, goes to the broker, which
     * notes the path (run/reads.h) */
    bool observe_reads;
    /* the person's --publish: ports published as if declared, at the host
     * port it names (each port and host port once) */
    const struct sg_publish *publish;
    size_t npublish;
    /* skillgate wrap: a command of the person's or their agent's, not a
     * skill. The home is shown read-only with the credentials masked (not
     * a private one), the environment's PATH and HOME are kept, stdin is
     * the broker's own, and with copy_output the command's stdout and
     * stderr reach the broker's unchanged as they come (run/session.c). */
    bool wrap;
    bool copy_output;
    /* skillgate vet: the arguments came from the skill's own text, so a
     * file they name is never shown (named.h) */
    bool no_named;
    /* more places masked, each with why ("denyRead in FILE") */
    char *const *masks;
    size_t nmasks;
    /* the host folder the skill's private HOME is kept in between its runs
     * (run/keephome.h), or NULL: the home is new each run */
    const char *keep_home;
};

struct sg_plan {
    char *skill_name, *skill_root, *run_id;
    /* identity */
    bool as_root;
    bool via_sudo; /* as_root, and the skill runs as SUDO_UID: the person who invoked it */
    uid_t host_uid, skill_uid;
    gid_t host_gid, skill_gid;
    /* under sudo, the invoking user's groups (/etc/group): the broker's
     * host operations for the skill are done with them, as that user */
    gid_t person_groups[64];
    int nperson_groups;
    char *uid_map, *gid_map;
    char *home; /* the private HOME's path (the invoking user's home) */
    char *keep_home; /* sg_run_opts.keep_home, when the home is private */
    char *keep_digest; /* the content digest the kept home was prepared for (keephome.h) */
    /* filesystem */
    struct sg_mount *mounts;
    size_t nmounts;
    char **rw_paths; /* inside paths Landlock lets the skill write */
    size_t nrw;
    /* with confine_reads (a WASM run), Landlock also handles reading and
     * executing: only these paths, and the rw_paths, may be read */
    bool confine_reads;
    char **ro_paths;
    size_t nro;
    int landlock_abi; /* 0: not available */
    bool degraded;
    /* environment */
    char **envp;
    size_t nenv;
    char **passed, **stripped; /* names only */
    size_t npassed, nstripped;
    char **passed_from;        /* each passed name's origin: "SKILL.md:10:11 requires.env[0]" */
    /* program */
    char *exec_path; /* resolved before launch: the one exec that is pre-approved */
    char **argv;
    size_t argc;
    char *cwd;
    char *script;        /* the script run instead of the entrypoint, as given, or NULL */
    size_t script_args;  /* how many of argv's last entries are its arguments */
    bool cwd_is_work;    /* cwd is the person's working folder, not the skill's */
    char **unshown;      /* paths named on the command line the skill does not see, each
                          * said with how to show it (named.h) */
    size_t nunshown;
    /* a Python environment, shown read-only at its own path: its program
     * runs the run's Python, its bin/ leads PATH, VIRTUAL_ENV names it */
    char *python;        /* the program, absolute, or NULL */
    char *python_env;    /* the environment's folder, or NULL */
    char *python_base;   /* the installation it was made from, when not in view otherwise */
    const char *python_from; /* "--python" or "VIRTUAL_ENV" */
    char *input;
    bool stdin_empty;   /* sg_run_opts' */
    bool observe_reads; /* sg_run_opts.observe_reads */
    bool wrap, copy_output; /* sg_run_opts' */
    struct sg_plan_wasm *wasm; /* a WASM run (wasm.h), else NULL */
    size_t network_dropped;    /* a WASM run: declared hosts and ports not allowed (wasm.h) */
    /* network */
    struct sg_plan_egress *egress;
    size_t negress;
    struct sg_plan_socket *sockets; /* declared host unix sockets */
    size_t nsockets;
    struct sg_resolve *resolve;
    size_t nresolve;
    char **allow_upstream; /* numeric addresses, as given with --allow-upstream */
    size_t nallow_upstream;
    uint16_t listen[SG_MAX_PORTS]; /* declared listening ports, published on the
                                    * host's 127.0.0.1 (egress/publish.h) */
    size_t nlisten;
    struct sg_publish publish[SG_MAX_PORTS]; /* --publish: the person's */
    size_t npublish;
    struct sg_own_ports *own_ports; /* set by the run (owned; NULL: none known) */
    /* seccomp */
    enum sg_seccomp_profile profile;
    /* limits */
    struct sg_plan_limit limits[SG_PL_COUNT];
    int cgroup_version; /* 0, 1 or 2 */
    char *cgroup_base[3]; /* where the run's cgroups go (cgroup.h: sg_cgroup_find) */
    bool cgroup_delegated; /* not root's: the invoking user's own, delegated to it */
    char cgroup_why[256];  /* without one: what is missing */
};

/* Build the plan for a skill. Never executes anything and never changes the
 * host. Returns 0, or -errno with *why set (static, or valid until the next
 * call: a message naming a refused script or folder). */
int sg_plan_build(const struct sg_skill *sk, const struct sg_run_opts *o, struct sg_plan *p,
                  const char **why);
void sg_plan_free(struct sg_plan *p);

/* Is path the sandbox's own (a tmpfs of the plan's) rather than a host
 * folder bound at or above it? */
bool sg_path_private(const struct sg_plan *p, const char *path);

/* Is path where the plan puts a mount (exactly there)? Once the sandbox is
 * gone its mount point is left in the private view that held it: an
 * empty folder or file of the sandbox's, not the skill's. */
bool sg_plan_mount_at(const struct sg_plan *p, const char *path);

/* A named file's place that is never shown (plan.c): why, or NULL. */
const char *sg_plan_secret_place(const struct sg_plan *p, const char *abs, const char *real);

/* Does a bind of the plan show the host's path at that same path? */
bool sg_plan_shows(const struct sg_plan *p, const char *path);

/* The private views a skill may write into and that go with the run: its
 * HOME (when private), /tmp and /dev/shm. What it left there is reported at
 * the end (run/views.c). */
enum { SG_VIEW_HOME, SG_VIEW_TMP, SG_VIEW_SHM, SG_VIEWS };
/* The view's path in the sandbox, or NULL when the plan has no such view. */
const char *sg_view_path(const struct sg_plan *p, int view);

/* The Landlock ABI of the running kernel (0 when absent). */
int sg_landlock_abi(void);

/* ---- seccomp profiles ---- */

/* Each denied syscall or rule of a profile, for the plan and the docs. */
struct sg_seccomp_rule {
    const char *syscall;
    const char *action; /* "deny (EPERM, event)" or "ENOSYS" */
    const char *when;   /* condition, or "" */
};
/* Fill at most max rules of profile p; returns how many there are. */
size_t sg_seccomp_rules(enum sg_seccomp_profile p, struct sg_seccomp_rule *out, size_t max);
/* Is this notification (name as libseccomp resolves it, or NULL; number on
 * the native architecture) one of the calls that set an extended attribute?
 * setxattrat is newer than some libseccomp, which then has no name for it. */
bool sg_seccomp_sets_xattr(const char *name, long nr);

/* ---- launching ---- */

#define SG_MAX_DECOYS 10
/* A decoy's file handle, as name_to_handle_at gives it and a FAN_REPORT_FID
 * event reports it (decoy.h): how the one fanotify group's events are told
 * apart. bytes 0: the decoy is not watched. The private HOME is our tmpfs,
 * whose handles are 12 bytes. */
#define SG_DECOY_FH_MAX 64
struct sg_decoy_fh {
    uint32_t bytes;
    int32_t type;
    unsigned char f[SG_DECOY_FH_MAX];
};
/* proxy v4, proxy v6, DNS udp v4, udp v6, tcp v4, tcp v6, and a sock_diag
 * netlink socket of the sandbox's network (its listening sockets, for the
 * ports the broker may publish: egress/publish.h) */
enum { SG_EG_PROXY4, SG_EG_PROXY6, SG_EG_DNSU4, SG_EG_DNSU6, SG_EG_DNST4, SG_EG_DNST6,
       SG_EG_DIAG, SG_EGRESS_FDS };

#define SG_OWN_FS_MAX 16
struct sg_sandbox {
    pid_t pid;      /* pid 1 of the sandbox, in our namespace */
    int pidfd;
    int stdin_fd;   /* write end: the input JSON */
    int stdout_fd, stderr_fd;
    int ctl_fd;     /* control socket: exit status, errors */
    int notify_fd;  /* seccomp user notifications */
    int nflog_fd;   /* packets the nft table refused */
    int wasi_fd;    /* a WASM run: what its WASI layer refused (wasm.h), else -1 */
    int decoy_fd;                /* fanotify: a credential decoy was opened (decoy.h) */
    struct sg_decoy_fh decoy_fh[SG_MAX_DECOYS]; /* which decoy an event is about */
    int decoy_err;               /* errno of why decoys are not (all) watched, or 0 */
    char decoy_fail[64];         /* ... and the call that failed */
    int decoy_hold_fd;           /* closing it lets the decoys' holder exit (launch.c) */
    pid_t decoy_hold_pid;        /* the holder (reaped by sg_sandbox_reap) */
    int egress_fd[SG_EGRESS_FDS]; /* listeners inside the sandbox (netns.h) */
    int view_fd[SG_VIEWS];        /* the private views' roots (sg_view_path), or -1 */
    /* The filesystem instances the sandbox made itself (its tmpfs mounts
     * that no bind covers), by device: learnt from pid 1 right after it
     * mounted them, before any skill code ran. A socket is the sandbox's
     * own only when it lies on one of these; a path or a mount point's
     * name never decides (a host bind stacked on /tmp has the same name). */
    dev_t own_dev[SG_OWN_FS_MAX];
    size_t nown_dev;
    char *rundir;   /* host directory used as the new root's mount point */
    int *pins;      /* per mount: the bound host path, held since before launch (pin.h); -1 */
    size_t npins;
    char *cgroup[3];/* cgroup folders to remove afterwards */
    size_t ncgroup;
};

/* Control messages from the sandbox. */
enum sg_ctl_type { SG_CTL_READY = 1, SG_CTL_GO, SG_CTL_MAPPED, SG_CTL_ERROR, SG_CTL_EXIT,
                   SG_CTL_EXEC_FAILED, SG_CTL_NFLOG, SG_CTL_DECOYS, SG_CTL_EGRESS,
                   SG_CTL_PLACED, SG_CTL_NETLINK, SG_CTL_VIEWS, SG_CTL_OWNFS };
#define SG_CTL_MAX_FDS 10
struct sg_ctl_msg {
    int type;
    int err;         /* errno for ERROR / EXEC_FAILED */
    int status;      /* wait status for EXIT */
    char step[64];   /* the setup step that failed */
};

/* The broker's own work done while pid 1 works (each may be NULL, ctx is
 * theirs): meanwhile, once pid 1 has all it needs from the broker, while it
 * mounts and the skill process starts (work the skill does not wait for);
 * views, once pid 1 has sent the private views' roots (sb->view_fd), all
 * made, decoys included, and nothing of the skill run yet: the views'
 * baseline is taken there, while the skill process is set up, rather
 * than between "ready" and "go". */
struct sg_launch_hooks {
    void (*meanwhile)(void *ctx);
    void (*views)(void *ctx, const struct sg_sandbox *sb);
    void *ctx;
};
/* Launch the skill under plan up to the point where everything is in place
 * and the skill waits for go: on return every fd is set. On failure returns
 * -errno and *step names the setup step (valid until the next call). */
int sg_sandbox_launch(const struct sg_plan *plan, struct sg_sandbox *sb, char *step,
                      size_t steplen, const struct sg_launch_hooks *hooks);
/* Let the skill exec. */
int sg_sandbox_go(struct sg_sandbox *sb);
/* The entrypoint has exec'd: work that must not compete with its start
 * (the decoys' holder) happens now. */
void sg_sandbox_started(struct sg_sandbox *sb);
/* Kill the whole sandbox (pid 1 takes every process with it). */
void sg_sandbox_kill(struct sg_sandbox *sb);
/* Read limit counters after the run: which limits were hit. */
struct sg_limit_hits {
    bool memory, pids;
};
void sg_sandbox_limit_hits(const struct sg_sandbox *sb, struct sg_limit_hits *h);
/* Memory the sandbox uses now: its cgroup's count, else (no cgroup) what
 * its processes hold resident (memwatch.h); -1 when neither can be read. */
long long sg_sandbox_memory_usage(const struct sg_sandbox *sb);
/* What the sandbox's processes hold resident now (memwatch.h), with
 * proportional counts when past > 0 (given up once over past bytes);
 * -1 once pid 1 is gone. */
long long sg_sandbox_resident(const struct sg_sandbox *sb, long long past);
/* The most processes and threads it held at once; -1 where nothing counts. */
long long sg_sandbox_pids_peak(const struct sg_sandbox *sb);
/* Close fds, remove the cgroups and the run directory. When pid 1 has said
 * "exit" (nothing of the skill runs any more) but the kernel is still
 * tearing its namespaces down, the cgroups and directory are left for
 * sg_sandbox_reap, which the next launch and exit() call, and which a
 * caller calls once its trace and audit record are written. */
void sg_sandbox_cleanup(struct sg_sandbox *sb);
void sg_sandbox_reap(void);
/* Remove what a killed broker left behind: run directories and cgroups whose
 * processes are gone. Returns how many were removed. */
int sg_sandbox_clean_stale(void);

#endif
