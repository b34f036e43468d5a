/* The Plan: everything a run will get, computed from the Policy before
 * anything is executed. `run --dry-run` prints it; launch.c carries it out. */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agentdirs.h"
#include "cgroup.h"
#include "config.h"
#include "homes.h"
#include "hostsock.h"
#include "memwatch.h"
#include "named.h"
#include "parse.h"
#include "pyenv.h"
#include "sandbox.h"
#include "skill.h"
#include "util.h"
#include "wasm.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define SG_INPUT_MAX (64 * 1024)  /* SKILL_INPUT must fit one exec string */
#define SG_TMPFS_BYTES (64LL << 20)

static const char *const mech_names[] = {
#define X(id, name) [SG_MECH_##id] = name,
    SG_MECHANISMS(X)
#undef X
};

const char *sg_mechanism_name(enum sg_mechanism m)
{
    return mech_names[m];
}

/* Host directories the skill sees read-only. Everything else (home, /tmp,
 * /run, /var, /srv, /mnt, /media, other users' files) is absent or private:
 * an allowlist, so host sockets in unexpected places stay out of reach. */
static const char *const system_dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32",
                                          "/lib64", "/libx32", "/etc", "/opt"};

/* Variables skillgate sets itself; a declared one of these is not passed. */
static const char *const reserved_env[] = {"SKILL_ID", "SKILL_NAME", "SKILL_INPUT", "SKILL_ROOT",
                                           "TIMEOUT_MS", "PATH", "HOME", "TMPDIR",
                                           "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE",
                                           "VIRTUAL_ENV"};

static void add_mount(struct sg_plan *p, enum sg_mount_kind k, const char *src, const char *dst,
                      const char *why)
{
    p->mounts = sg_xrealloc(p->mounts, (p->nmounts + 1) * sizeof *p->mounts);
    struct sg_mount *m = &p->mounts[p->nmounts++];
    memset(m, 0, sizeof *m);
    m->kind = k;
    m->src = src ? sg_xstrdup(src) : NULL;
    m->dst = sg_xstrdup(dst);
    m->why = sg_xstrdup(why);
}

/* A private tmpfs's nr_inodes: one per 4 KiB page of its size, at least 64.
 * Each inode is kernel memory the mount's size= does not count (~0.9 KiB
 * unreclaimable slab for an empty file, plus its dentry), and tmpfs (Linux
 * 6.6+) gives user xattrs the same pool, 1 KiB of "inode space" per inode,
 * so this one number stops a flood of files, folders, hard links (each
 * takes an inode's worth), symlinks and xattrs with ENOSPC. A mount that
 * may hold size/4K one-page files may hold as many empty ones; the default
 * (half the host's RAM in pages) let memory_mb: 64 pin gigabytes.
 *
 * Measured (Linux 6.18, 24 GiB host, 2 cores; memory_mb: 64 in /tmp; each
 * flood stops at 1e6 tries or 20 s; /proc/meminfo read in the run before
 * and after; slab growth as SUnreclaim / SReclaimable):
 *                  ordinary user, no cgroup                  root, cgroup v1
 *                  no nr_inodes         nr_inodes=4096       nr_inodes=16384
 *   empty files    290,430 in 20 s,     4,092, ENOSPC:       16,380, ENOSPC:
 *                  +241 MB / +57 MB     +3.2 MB / +0.7 MB    +13 MB / +2.9 MB
 *   hard links     463,271 in 20 s,     4,091, ENOSPC:       16,379, ENOSPC:
 *                  +12 MB / +88 MB      +0.1 MB / +0.4 MB    +0.2 MB / +3.0 MB
 *   4 KB user      776,712, ENOSPC:     refused, ENOTSUP     4,125, ENOSPC:
 *   xattrs         +3.1 GB / 0          (seccomp.c)          +16 MB / 0
 *   nested dirs    2,045 (the broker's PATH_MAX), +1.4-1.9 MB, either way
 *   stat of 1e6 missing names: in /usr (a host filesystem) +8.8 MB / +190 MB
 *   as the user, +0 / +11 MB as root (the cgroup counts dentries and
 *   reclaims them); in /tmp about nothing (tmpfs keeps no negative dentry).
 *   Negative dentries are reclaimable: the kernel drops them under memory
 *   pressure (their long names' kmalloc is the unreclaimable part until
 *   then); no mount option or rlimit bounds them. Tiny xattrs cost 1.8x
 *   their inode space in slab (82,418 one-byte values: 7.3 MB for 4 MiB). */
static long long tmpfs_inodes(long long size)
{
    long long n = size / 4096;
    return n < 64 ? 64 : n;
}

static void add_tmpfs(struct sg_plan *p, const char *dst, long long size, unsigned mode,
                      bool owned, const char *why)
{
    add_mount(p, SG_MNT_TMPFS, NULL, dst, why);
    p->mounts[p->nmounts - 1].size = size;
    p->mounts[p->nmounts - 1].inodes = tmpfs_inodes(size);
    p->mounts[p->nmounts - 1].mode = mode;
    p->mounts[p->nmounts - 1].owned = owned;
}

static void add_str(char ***v, size_t *n, const char *s)
{
    *v = sg_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = sg_xstrdup(s);
}


int sg_landlock_abi(void)
{
    long r = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U /* VERSION */);
    return r < 0 ? 0 : (int)r;
}

static void set_limit(struct sg_plan *p, int i, const char *name, long long v, const char *unit,
                      enum sg_mechanism m, const char *how)
{
    p->limits[i] = (struct sg_plan_limit){.name = name, .value = v, .unit = unit, .mech = m,
                                          .how = sg_xstrdup(how)};
}

static void plan_limits(struct sg_plan *p, const struct sg_policy *pol, const struct sg_run_opts *o)
{
    int cg = p->cgroup_version;
    enum sg_mechanism cgm = cg == 2 ? SG_MECH_CGROUP2 : SG_MECH_CGROUP1;
    long long timeout = o->timeout_s > 0 ? o->timeout_s : pol->limits.runtime_s.value;
    set_limit(p, SG_PL_TIMEOUT, "timeout", timeout, "s", SG_MECH_BROKER,
              "broker timer, paused while a person decides a request, then SIGKILL to the "
              "sandbox's pid 1 (kills every process in it)");
    /* which bound holds, said in the plan and so in every trace */
    cleanup_free char *where = cg && p->cgroup_delegated
                                   ? sg_xasprintf(", in the user's delegated cgroup %s",
                                                  p->cgroup_base[0])
                                   : sg_xstrdup("");
    cleanup_free char *mem = cg == 2   ? sg_xasprintf("memory.max, memory.swap.max=0%s", where)
                             : cg == 1 ? sg_xasprintf("memory.limit_in_bytes (+memsw)%s", where)
                                       : sg_xasprintf(
                                             "the broker sums what the sandbox's processes hold "
                                             "resident (anonymous and shared pages, swap, page "
                                             "tables) every "
                                             "%d ms and stops the run past the limit (what they "
                                             "only reserve is not counted); tmpfs sizes, memfd "
                                             "and SysV shared memory, queues and semaphores "
                                             "refused, RLIMIT_NOFILE (%s); kernel memory "
                                             "(inodes, dentries, xattrs) counts against no "
                                             "limit: bounded by nr_inodes, xattrs refused",
                                             SG_MEMWATCH_MS, p->cgroup_why);
    set_limit(p, SG_PL_MEMORY, "memory", o->memory_mb > 0 ? o->memory_mb : pol->limits.memory_mb.value,
              "MB", cg ? cgm : SG_MECH_RESIDENT, mem);
    set_limit(p, SG_PL_PIDS, "pids", pol->limits.pids.value, "processes",
              cg ? cgm : SG_MECH_RLIMIT,
              cg ? "pids.max" : "RLIMIT_NPROC (counted in the sandbox's user namespace)");
    bool cpu = cg && p->cgroup_base[2];
    set_limit(p, SG_PL_CPU, "cpu", pol->limits.cpu_percent.value, "%",
              cpu ? cgm : SG_MECH_NONE,
              !cpu ? "needs a cgroup cpu controller" : cg == 2 ? "cpu.max" : "cpu.cfs_quota_us");
    /* without a cgroup, what descriptors hold (pipe buffers, sockets'
     * queues) counts against no memory limit: a cap on how many */
    set_limit(p, SG_PL_NOFILE, "open files", cg ? 0 : SG_NOFILE_NO_CGROUP, "descriptors",
              cg ? SG_MECH_NONE : SG_MECH_RLIMIT,
              cg ? "none needed: the cgroup counts the memory that descriptors hold"
                 : "RLIMIT_NOFILE: a cap on how many; what a socket's buffers hold (up "
                   "to the host's wmem_max and rmem_max, TCP's autotuning) no watch counts");
    set_limit(p, SG_PL_OUTPUT, "output", pol->limits.output_bytes.value, "bytes per stream",
              SG_MECH_BROKER, "the broker keeps reading, drops what is past the cap and counts it");
    long long disk = pol->limits.disk_mb.value << 20;
    set_limit(p, SG_PL_FSIZE, "file size", disk < SG_TMPFS_BYTES ? disk : SG_TMPFS_BYTES, "bytes",
              SG_MECH_RLIMIT, "RLIMIT_FSIZE");
    set_limit(p, SG_PL_DISK, "disk", pol->limits.disk_mb.value, "MB in the write paths",
              SG_MECH_BROKER, "the broker holds every file opened for writing in a declared "
                              "write path and sums their growth (every 100 ms and at each open); past the cap the "
                              "run is stopped");
    set_limit(p, SG_PL_FILES, "files", pol->limits.files.value,
              "new files and folders in the write paths", SG_MECH_BROKER,
              "the broker makes every new file and folder there itself and counts them; past "
              "the cap EDQUOT");
    /* Without a cgroup, tmpfs pages count against no memory limit: the
     * private /tmp, HOME and /dev/shm then share the memory budget (a
     * quarter each), and memfd and SysV shared memory are refused
     * (session.c), so what a skill can hold is bounded by them, the
     * broker's watch of resident memory (memwatch.h) and the
     * file-descriptor cap. */
    long long tmpfs = SG_TMPFS_BYTES;
    long long mem_mb = p->limits[SG_PL_MEMORY].value;
    if (!cg && mem_mb > 0 && (mem_mb << 20) / 4 < tmpfs)
        tmpfs = (mem_mb << 20) / 4;
    set_limit(p, SG_PL_TMPFS, "tmpfs", tmpfs, "bytes each for /tmp, HOME and /dev/shm",
              SG_MECH_TMPFS,
              cg ? "size= on the private tmpfs mounts (their pages count in the cgroup)"
                 : "size= on the private tmpfs mounts, a quarter of the memory limit each "
                   "(no cgroup counts their pages); memfd and SysV shared memory refused");
    /* what the kernel holds for a skill's files, beside their pages
     * (tmpfs_inodes says why this number and what it measured) */
    long long inodes = tmpfs_inodes(tmpfs);
    set_limit(p, SG_PL_INODES, "inodes", inodes, "each for /tmp, HOME and /dev/shm",
              SG_MECH_TMPFS_INODES,
              cg ? "nr_inodes= on the private tmpfs mounts (one per 4 KiB of size): files, "
                   "folders, links past it get ENOSPC; user xattrs share it (1 KiB an inode); "
                   "the cgroup counts their kernel memory"
                 : "nr_inodes= on the private tmpfs mounts (one per 4 KiB of size): files, "
                   "folders, links past it get ENOSPC; no cgroup counts their kernel memory "
                   "(~1 KiB each), so setting an xattr is refused (ENOTSUP, a "
                   "resource_limit_hit event); negative dentries (failed lookups) are "
                   "reclaimable and not bounded");
}

static const char *env_value(char *const *env, const char *name);

static void plan_env(struct sg_plan *p, const struct sg_skill *sk, const struct sg_run_opts *o)
{
    const struct sg_policy *pol = &sk->policy;
    for (char *const *e = o->host_env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        cleanup_free char *name = sg_xstrndup(*e, (size_t)(eq - *e));
        bool allowed = false, reserved = false;
        const struct sg_origin *from = NULL;
        for (size_t i = 0; i < pol->nenv; i++)
            if (!strcmp(pol->env[i].name, name))
                allowed = true, from = from ? from : &pol->env[i].origin;
        for (size_t i = 0; i < SG_ARRAY_LEN(reserved_env); i++)
            reserved |= !strcmp(reserved_env[i], name);
        reserved |= sg_env_own(name) != NULL; /* skillgate's own settings, however named */
        if (allowed && !reserved) {
            add_str(&p->envp, &p->nenv, *e);
            size_t n = p->npassed;
            cleanup_free char *why = from && from->line
                ? sg_xasprintf("%s:%d:%d %s", from->file, from->line, from->col,
                               from->field ? from->field : "")
                : sg_xstrdup(from && from->file ? from->file : "declared");
            add_str(&p->passed_from, &n, why);
            add_str(&p->passed, &p->npassed, name);
        } else {
            add_str(&p->stripped, &p->nstripped, name);
        }
    }
    char buf[64];
    cleanup_free char *v = NULL;
    if (p->wrap) { /* as the command would run bare: its PATH, your HOME */
        const char *path = env_value(o->host_env, "PATH");
        v = sg_xasprintf("PATH=%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
        add_str(&p->envp, &p->nenv, v), free(v);
        v = sg_xasprintf("HOME=%s", p->home), add_str(&p->envp, &p->nenv, v), free(v);
        add_str(&p->envp, &p->nenv, "TMPDIR=/tmp");
        v = NULL;
        p->envp = sg_xrealloc(p->envp, (p->nenv + 1) * sizeof *p->envp);
        p->envp[p->nenv] = NULL;
        return;
    }
    v = sg_xasprintf("SKILL_ID=%s", p->run_id), add_str(&p->envp, &p->nenv, v), free(v);
    v = sg_xasprintf("SKILL_NAME=%s", p->skill_name), add_str(&p->envp, &p->nenv, v), free(v);
    v = sg_xasprintf("SKILL_INPUT=%s", p->input), add_str(&p->envp, &p->nenv, v), free(v);
    v = sg_xasprintf("SKILL_ROOT=%s", p->skill_root), add_str(&p->envp, &p->nenv, v), free(v);
    snprintf(buf, sizeof buf, "TIMEOUT_MS=%lld", p->limits[SG_PL_TIMEOUT].value * 1000);
    add_str(&p->envp, &p->nenv, buf);
    if (p->python_env) {
        v = sg_xasprintf("VIRTUAL_ENV=%s", p->python_env), add_str(&p->envp, &p->nenv, v), free(v);
        v = sg_xasprintf("PATH=%s/bin:/usr/local/bin:/usr/bin:/bin", p->python_env);
        add_str(&p->envp, &p->nenv, v), free(v);
    } else {
        add_str(&p->envp, &p->nenv, "PATH=/usr/local/bin:/usr/bin:/bin");
    }
    v = sg_xasprintf("HOME=%s", p->home), add_str(&p->envp, &p->nenv, v), free(v);
    add_str(&p->envp, &p->nenv, "TMPDIR=/tmp");
    add_str(&p->envp, &p->nenv, "PYTHONNOUSERSITE=1");
    add_str(&p->envp, &p->nenv, "PYTHONDONTWRITEBYTECODE=1");
    v = NULL;
    p->envp = sg_xrealloc(p->envp, (p->nenv + 1) * sizeof *p->envp);
    p->envp[p->nenv] = NULL;
}

static void drop_rw_path(struct sg_plan *p, const char *path)
{
    for (size_t i = 0; i < p->nrw; i++) {
        if (!strcmp(p->rw_paths[i], path)) {
            free(p->rw_paths[i]);
            memmove(p->rw_paths + i, p->rw_paths + i + 1, (p->nrw - i - 1) * sizeof *p->rw_paths);
            p->nrw--;
            return;
        }
    }
}

/* dir + rest, where rest is "" or starts with '/'. */
static char *join_in(const char *dir, const char *rest)
{
    return !strcmp(dir, "/") && rest[0] ? sg_xstrdup(rest) : sg_xasprintf("%s%s", dir, rest);
}

/* Masks to add after the walk over the binds (each place once). */
struct masks {
    char **dst, **why;
    size_t n;
};

static void masks_add(struct masks *ms, const char *dst, const char *why)
{
    for (size_t j = 0; j < ms->n; j++)
        if (!strcmp(ms->dst[j], dst))
            return;
    size_t n = ms->n;
    add_str(&ms->dst, &ms->n, dst);
    add_str(&ms->why, &n, why);
}

static void masks_apply(struct sg_plan *p, struct masks *ms)
{
    for (size_t j = 0; j < ms->n; j++) {
        add_mount(p, SG_MNT_MASK, NULL, ms->dst[j], ms->why[j]);
        free(ms->dst[j]);
        free(ms->why[j]);
    }
    free(ms->dst);
    free(ms->why);
    memset(ms, 0, sizeof *ms);
}

/* Hide a host path (as written, and real: its symlinks resolved) wherever
 * a bind shows it. Each bind is compared with symlinks resolved, as the
 * kernel follows them when it binds: a bind that shows it from the inside
 * becomes a mask; one that holds it gets a mask over it where the sandbox
 * sees it (at the bind's place plus the real path below the bind's real
 * source, so no symlink is followed there), and with ro_holder a writable
 * one is made read-only, since a skill that may write a folder's parent can
 * rename the folder aside and put its own in its place (a mount point moves
 * with its parent). */
static void hide_host_path(struct sg_plan *p, const char *path, const char *real,
                           const char *why_inside, const char *why_mask, bool ro_holder,
                           const char *keep, struct masks *ms)
{
    for (size_t k = 0; k < p->nmounts; k++) {
        struct sg_mount *m = &p->mounts[k];
        if (m->kind != SG_MNT_BIND_RO && m->kind != SG_MNT_BIND_RW)
            continue;
        cleanup_free char *rs = sg_path_real(m->src);
        if (keep && sg_path_within(rs, keep))
            continue; /* a skill kept in an agent's skill folder: its own files */
        if (sg_path_within(rs, real) || sg_path_within(m->src, path)) {
            drop_rw_path(p, m->dst);
            m->kind = SG_MNT_MASK;
            free(m->src);
            m->src = NULL;
            free(m->why);
            m->why = sg_xstrdup(why_inside);
            continue;
        }
        const char *rest;
        if (sg_path_within(real, rs))
            rest = real + (strcmp(rs, "/") ? strlen(rs) : 0);
        else if (sg_path_within(path, m->src))
            rest = path + (strcmp(m->src, "/") ? strlen(m->src) : 0);
        else
            continue;
        if (ro_holder && m->kind == SG_MNT_BIND_RW) {
            drop_rw_path(p, m->dst);
            m->kind = SG_MNT_BIND_RO;
            free(m->why);
            m->why = sg_xasprintf("declared write path, read-only: %s", why_mask);
        }
        cleanup_free char *t = join_in(m->dst, rest);
        masks_add(ms, t, why_mask);
    }
}

/* skillgate's own folders (manifest/config.h: its grants and config, its
 * traces and audit log, its run directories and attach socket) are never
 * shown to a skill, whatever was declared; the manifest check refuses such
 * paths, and this holds even if it was not asked, or the host changed
 * since. */
static void mask_own_dirs(struct sg_plan *p, struct masks *ms)
{
    struct sg_own_dirs own;
    sg_own_dirs_get(&own);
    for (size_t i = 0; i < own.n; i++) {
        cleanup_free char *inside =
            sg_xasprintf("skillgate's own %s folder, never shown to a skill", own.v[i].what);
        cleanup_free char *mask = sg_xasprintf("skillgate's own %s folder, always masked",
                                               own.v[i].what);
        hide_host_path(p, own.v[i].path, own.v[i].real, inside, mask, true, NULL, ms);
    }
    sg_own_dirs_free(&own);
}

/* Credential paths stay masked even inside a declared path that covers
 * them, found by where they really are: a declared /tmp/x that is a
 * symlink to the home, or a ~/.ssh that is a symlink elsewhere, once
 * showed them (they were compared as strings). */
/* skillgate wrap shows your own home, not a private one: beyond the list
 * a skill run masks, the stores where tools keep tokens, keys and
 * passwords, and the shells' and tools' histories (commands typed with a
 * secret in them). ~/.gitconfig is shown there: git needs your identity,
 * and the credentials it points to are masked. */
static const char *const wrap_secrets[] = {
    ".config/gh", ".config/hub", ".config/glab-cli", ".cargo/credentials",
    ".cargo/credentials.toml", ".pgpass", ".my.cnf", ".vault-token", ".bash_history",
    ".zsh_history", ".histfile", ".python_history", ".psql_history", ".mysql_history",
    ".node_repl_history", ".sqlite_history", ".rediscli_history", ".lesshst", ".local/share/fish",
    ".local/share/keyrings", ".password-store", ".mozilla", ".config/google-chrome",
    ".config/chromium", ".config/BraveSoftware", ".config/rclone", ".config/op",
    ".config/Bitwarden", ".config/doctl", ".config/hcloud", ".terraform.d", ".s3cfg", ".boto",
    ".oci", ".gem/credentials", ".m2/settings.xml", ".m2/settings-security.xml",
    ".gradle/gradle.properties", ".config/configstore", ".config/heroku", ".config/netlify",
    ".config/vercel", ".fly", ".wrangler", ".config/sops", ".age", ".config/age",
    ".local/share/atuin", ".ipython", ".jupyter", ".kaggle", ".huggingface",
    ".cache/huggingface/token", ".config/openai", ".anthropic", ".codex", ".gemini",
    ".cursor", ".continue", ".aider.conf.yml", ".env", ".config/git/credentials",
    ".config/containers/auth.json", ".local/share/com.vercel.cli", ".config/flyctl",
    ".pulumi", ".supabase", ".tsh", ".databrickscfg", ".snowflake", ".dbt", ".yarnrc.yml",
    ".yarnrc", ".composer/auth.json", ".config/composer/auth.json", ".config/pip",
    ".pip/pip.conf", ".nuget", ".config/NuGet", ".sentryclirc", ".cloudflared",
    ".mylogin.cnf", ".vault_pass", ".config/stripe", ".zlogin", ".zlogout", ".bash_aliases",
    ".bash_logout", ".config/zsh", ".oh-my-zsh/custom", ".config/Slack", ".config/discord",
    ".thunderbird", ".electrum", ".bitcoin", ".ethereum", ".config/Signal",
    ".local/share/TelegramDesktop", ".config/autostart", ".netlify", ".config/railway",
    ".config/render", ".config/twilio-cli", ".config/linode-cli", ".config/scw",
    ".config/exoscale", ".config/gandi", ".npm/_auth", ".bowerrc", ".config/yarn",
    ".config/kube", ".minikube", ".talos", ".config/helm", ".local/share/helm", ".vagrant.d",
    ".ansible", ".chef", ".puppetlabs", ".saltstack", ".config/1Password", ".local/share/keybase",
    ".config/keybase", ".gnome2/keyrings", ".kde/share/apps/kwallet",
    ".local/share/kwalletd", ".config/vlc", ".wget-hsts", ".config/filezilla", ".remmina",
    ".config/remmina", ".ssh2", ".putty", ".irssi", ".weechat", ".config/hexchat", NULL};

/* A named file in one of the places a wrapped command never sees (tokens,
 * keys, histories: wrap_secrets) or a credential path, by the path written
 * or where it really is: named.c refuses it as it refuses a masked one. A
 * skill's private home hides them from it; naming one must not show it. */
static const char *secret_in(const char *home, const char *abs, const char *real)
{
    const char *const *lists[] = {wrap_secrets, sg_sensitive_home_paths};
    for (size_t l = 0; l < SG_ARRAY_LEN(lists); l++)
        for (size_t i = 0; lists[l][i]; i++) {
            cleanup_free char *s = sg_xasprintf("%s/%s", home, lists[l][i]);
            cleanup_free char *rs = sg_path_real(s);
            if (sg_path_within(abs, s) || sg_path_within(real, s) ||
                (rs && (sg_path_within(abs, rs) || sg_path_within(real, rs))))
                return l ? "credentials, never shown to a skill"
                         : "tokens, keys or history, never shown to a skill";
        }
    return NULL;
}

const char *sg_plan_secret_place(const struct sg_plan *p, const char *abs, const char *real)
{
    const char *why = secret_in(p->home, abs, real);
    /* and in every account's home: as root, /home/alice/.aws is no less
     * a credential than root's own */
    struct sg_homes hs;
    sg_homes_get(&hs);
    for (size_t i = 0; !why && i < hs.n; i++) {
        const struct sg_home *h = &hs.v[i];
        if (!strcmp(h->path, "/") || (h->real && !strcmp(h->real, "/")))
            continue;
        if (sg_path_within(abs, h->path) || sg_path_within(real, h->path))
            why = secret_in(h->path, abs, real);
        else if (h->real && (sg_path_within(abs, h->real) || sg_path_within(real, h->real)))
            why = secret_in(h->real, abs, real);
    }
    sg_homes_free(&hs);
    return why;
}

/* Each place of list (relative to the home) that is there, hidden; skip:
 * one the list names that stays shown. */
static void mask_home_list(struct sg_plan *p, const char *const *list, const char *skip,
                           const char *inside, const char *mask, struct masks *ms)
{
    for (size_t i = 0; list[i]; i++) {
        if (skip && !strcmp(list[i], skip))
            continue;
        cleanup_free char *s = sg_xasprintf("%s/%s", p->home, list[i]);
        struct stat st;
        if (lstat(s, &st) < 0)
            continue;
        cleanup_free char *real = sg_path_real(s);
        hide_host_path(p, s, real, inside, mask, false, NULL, ms);
    }
}

static void mask_credentials(struct sg_plan *p, struct masks *ms)
{
    if (p->wrap)
        mask_home_list(p, wrap_secrets, NULL,
                       "tokens, keys or history, never shown to a wrapped command",
                       "tokens, keys or history, always masked", ms);
    mask_home_list(p, sg_sensitive_home_paths, p->wrap ? ".gitconfig" : NULL,
                   "credentials, never shown to a skill", "credentials, always masked", ms);
}

/* AI agents' own folders (agentdirs.h), in every home, as the credentials
 * and more strictly: a folder that holds one is made read-only (a skill
 * that could rename the folder aside would put its own settings.json in
 * its place). A skill kept in one of the agent's skill folders keeps its
 * own folder and the paths it declared in it (plan_declared refused one
 * kept anywhere else in it). */
static void mask_agent_dirs(struct sg_plan *p, struct masks *ms)
{
    struct sg_agent_paths ap;
    sg_agent_paths_get(&ap);
    cleanup_free char *root = sg_path_real(p->skill_root);
    for (size_t i = 0; i < ap.n; i++) {
        struct stat st;
        if (lstat(ap.v[i].path, &st) < 0 &&
            (!ap.v[i].real || !strcmp(ap.v[i].path, ap.v[i].real) ||
             lstat(ap.v[i].real, &st) < 0))
            continue; /* (the same name is not asked twice) */
        cleanup_free char *inside = sg_xasprintf("%s, never shown to a skill", ap.v[i].what);
        cleanup_free char *mask = sg_xasprintf("%s, always masked", ap.v[i].what);
        hide_host_path(p, ap.v[i].path, ap.v[i].real, inside, mask, true,
                       sg_agent_path_in_skills(&ap.v[i], root) ? root : NULL, ms);
    }
    sg_agent_paths_free(&ap);
}

static void plan_mounts(struct sg_plan *p, const struct sg_skill *sk, const struct sg_run_opts *o)
{
    const struct sg_policy *pol = &sk->policy;
    for (size_t i = 0; i < SG_ARRAY_LEN(system_dirs); i++) {
        struct stat st;
        const char *d = system_dirs[i];
        if (lstat(d, &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlink(d, target, sizeof target - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            add_mount(p, SG_MNT_SYMLINK, target, d, "host symlink");
        } else if (S_ISDIR(st.st_mode)) {
            add_mount(p, SG_MNT_BIND_RO, d, d, "host system files, read-only");
        }
    }
    add_tmpfs(p, "/tmp", p->limits[SG_PL_TMPFS].value, 01777, false, "private /tmp");
    add_tmpfs(p, "/run", 1 << 20, 0755, false, "empty: host sockets stay out of reach");
    add_tmpfs(p, "/var", 1 << 20, 0755, false, "empty: host sockets stay out of reach");
    add_str(&p->rw_paths, &p->nrw, "/tmp");
    struct stat hst;
    if (p->wrap && stat(p->home, &hst) == 0 && S_ISDIR(hst.st_mode)) {
        /* a command of yours: your home as it is, read-only, the
         * credentials and agents' folders masked below */
        add_mount(p, SG_MNT_BIND_RO, p->home, p->home,
                  "your home, read-only (a write there is a Write request)");
    } else {
        cleanup_free char *why = o->keep_home
            ? sg_xasprintf("private HOME (your files are not in it), the skill's own: what it "
                           "leaves there is kept for its next runs (%s)", o->keep_home)
            : NULL;
        add_tmpfs(p, p->home, p->limits[SG_PL_TMPFS].value, 0700, true,
                  why ? why : "private HOME (your files are not in it)");
        p->keep_home = o->keep_home ? sg_xstrdup(o->keep_home) : NULL;
        add_str(&p->rw_paths, &p->nrw, p->home);
    }

    /* the working folder before the skill's own folder and the declared
     * paths: one inside it is bound over it and wins (rw …/work/pdf stays
     * writable); a declared write path that holds it shows it writable */
    bool cwd_declared = false;
    for (size_t i = 0; p->cwd_is_work && i < pol->nwrite; i++)
        cwd_declared |= sg_path_within(p->cwd, pol->write[i].path);
    if (p->cwd_is_work && !sg_path_within(p->cwd, sk->root) && !cwd_declared)
        add_mount(p, SG_MNT_BIND_RO, p->cwd, p->cwd,
                  "your working folder, read-only (a write there is a Write request)");
    bool root_rw = false;
    for (size_t i = 0; i < pol->nwrite; i++)
        root_rw |= !strcmp(pol->write[i].path, sk->root);
    add_mount(p, root_rw ? SG_MNT_BIND_RW : SG_MNT_BIND_RO, sk->root, sk->root,
              root_rw ? "the skill's folder, writable (Write/Bash granted)"
                      : "the skill's folder, read-only");
    if (root_rw)
        add_str(&p->rw_paths, &p->nrw, sk->root);
    for (size_t i = 0; i < pol->nread; i++) {
        if (!strcmp(pol->read[i].path, sk->root))
            continue;
        struct stat st;
        if (stat(pol->read[i].path, &st) < 0)
            continue; /* nothing to show: the skill sees it missing */
        add_mount(p, SG_MNT_BIND_RO, pol->read[i].path, pol->read[i].path, "declared read path");
        p->mounts[p->nmounts - 1].declared = true;
    }
    for (size_t i = 0; i < pol->nwrite; i++) {
        if (!strcmp(pol->write[i].path, sk->root))
            continue;
        add_mount(p, SG_MNT_BIND_RW, pol->write[i].path, pol->write[i].path,
                  "declared write path (created if missing)");
        p->mounts[p->nmounts - 1].declared = true;
        add_str(&p->rw_paths, &p->nrw, pol->write[i].path);
    }
    const char *py[] = {p->python_env, p->python_base};
    for (size_t i = 0; i < SG_ARRAY_LEN(py); i++)
        if (py[i] && !sg_path_within(py[i], sk->root) &&
            !(p->cwd_is_work && !cwd_declared && sg_path_within(py[i], p->cwd)))
            add_mount(p, SG_MNT_BIND_RO, py[i], py[i],
                      i ? "the Python installation the environment was made from, read-only"
                        : "the Python environment, read-only");
    add_mount(p, SG_MNT_DEV, NULL, "/dev", "minimal /dev: null zero full random urandom, no tty");
    add_str(&p->rw_paths, &p->nrw, "/dev/shm");
    add_mount(p, SG_MNT_PROC, NULL, "/proc", "fresh /proc: only the sandbox's processes");

    sg_plan_sockets_mounts(p); /* declared host sockets no bind shows (hostsock.h) */
    sg_plan_named_mounts(p, o);   /* files named on the command line (named.h) */

    struct masks ms = {0};
    for (size_t i = 0; i < o->nmasks; i += 2) { /* path, why */
        cleanup_free char *real = sg_path_real(o->masks[i]);
        hide_host_path(p, o->masks[i], real, o->masks[i + 1], o->masks[i + 1], false, NULL, &ms);
    }
    mask_credentials(p, &ms);
    mask_agent_dirs(p, &ms);
    mask_own_dirs(p, &ms);
    masks_apply(p, &ms);
}

static void plan_identity(struct sg_plan *p)
{
    p->host_uid = getuid();
    p->host_gid = getgid();
    /* never real root: the skill runs as the sudo user, or nobody */
    struct sg_run_identity id;
    sg_run_identity(&id);
    p->as_root = id.as_root;
    p->via_sudo = id.via_sudo;
    p->skill_uid = id.uid;
    p->skill_gid = id.gid;
    if (p->via_sudo) {
        /* the person's groups, as their own login gets them; none when
         * they cannot be told (the safe side: fewer rights, never root's) */
        struct passwd pw, *res = NULL;
        char buf[4096];
        int n = (int)SG_ARRAY_LEN(p->person_groups);
        if (getpwuid_r(p->skill_uid, &pw, buf, sizeof buf, &res) == 0 && res &&
            getgrouplist(pw.pw_name, p->skill_gid, p->person_groups, &n) >= 0)
            p->nperson_groups = n;
    }
    if (p->as_root) {
        p->uid_map = sg_xasprintf("0 0 1\n%u %u 1\n", p->skill_uid, p->skill_uid);
        p->gid_map = sg_xasprintf("0 0 1\n%u %u 1\n", p->skill_gid, p->skill_gid);
    } else {
        p->uid_map = sg_xasprintf("%u %u 1\n", p->host_uid, p->host_uid);
        p->gid_map = sg_xasprintf("%u %u 1\n", p->host_gid, p->host_gid);
    }
    const char *home = sg_invoking_home();
    p->home = sg_xstrdup(home && strcmp(home, "/") != 0 ? home : "/home/skill");
}

static char *new_run_id(void)
{
    unsigned char r[8];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, r, sizeof r) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        memcpy(r, &x, sizeof r);
    }
    if (fd >= 0)
        close(fd);
    /* "<broker pid>-<random>": a later broker can tell a dead run's leftovers. */
    return sg_xasprintf("%d-%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0], r[1], r[2], r[3],
                        r[4], r[5]);
}

static char why_buf[PATH_MAX + 256];

static const char *say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why_buf, sizeof why_buf, fmt, ap);
    va_end(ap);
    return why_buf;
}

/* The interpreter of a script: by its name, else its #! line (an
 * executable runs as it is). NULL when there is none. */
static char **script_command(const char *abs, const char *shown, size_t *n, const char **why)
{
    char **v = sg_xcalloc(4, sizeof *v);
    *n = 0;
    const char *interp = sg_script_interpreter(abs);
    if (interp) {
        v[(*n)++] = sg_xstrdup(interp);
        v[(*n)++] = sg_xstrdup(abs);
        return v;
    }
    char head[SG_SHEBANG_MAX], prog[PATH_MAX], arg[SG_SHEBANG_MAX + 1];
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); /* never a FIFO's wait */
    ssize_t r = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0)
        close(fd);
    if (r > 0 && sg_shebang_parse(head, (size_t)r, prog, sizeof prog, arg, sizeof arg) == 0) {
        v[(*n)++] = sg_xstrdup(prog);
        if (arg[0])
            v[(*n)++] = sg_xstrdup(arg);
        v[(*n)++] = sg_xstrdup(abs);
        return v;
    }
    free(v);
    *why = say("%s has no interpreter: a .py, .sh or .js name, or a #! line, says which", shown);
    return NULL;
}

/* The script the person picked: inside the skill's folder (no "..", no
 * absolute path, no symlink leading out), a regular file. */
static int plan_script(struct sg_plan *p, const struct sg_skill *sk, const struct sg_run_opts *o,
                       const char **why)
{
    const char *s = o->script;
    cleanup_free char *abs = NULL;
    const char *rwhy = NULL;
    struct stat st;
    if (!s[0] || s[0] == '/')
        return *why = say("the script %s must be a path inside the skill's folder "
                          "(such as scripts/name.py)", s[0] ? s : "\"\""),
               -EINVAL;
    if (sg_path_resolve(sk->root, s, &abs, &rwhy) < 0)
        return *why = say("the script %s %s", s, rwhy ? rwhy : "is outside the skill's folder"),
               -EINVAL;
    if (stat(abs, &st) < 0) {
        /* the skill's Markdown often names a script without its ".py" */
        static const char *const exts[] = {".py", ".sh", ".js"};
        for (size_t i = 0; i < SG_ARRAY_LEN(exts); i++) {
            cleanup_free char *alt = sg_xasprintf("%s%s", abs, exts[i]);
            if (stat(alt, &st) == 0 && S_ISREG(st.st_mode))
                return *why = say("the script %s does not exist in %s (did you mean %s%s?)", s,
                                  sk->root, s, exts[i]),
                       -ENOENT;
        }
        return *why = say("the script %s does not exist in %s", s, sk->root), -ENOENT;
    }
    if (!S_ISREG(st.st_mode))
        return *why = say("the script %s is not a file", s), -EINVAL;
    size_t n = 0;
    char **cmd = script_command(abs, s, &n, why);
    if (!cmd)
        return -ENOEXEC;
    p->argv = sg_xcalloc(n + o->nargs + 1, sizeof *p->argv);
    memcpy(p->argv, cmd, n * sizeof *cmd);
    free(cmd);
    for (size_t i = 0; i < o->nargs; i++)
        p->argv[n + i] = sg_xstrdup(o->args[i]);
    p->argc = n + o->nargs;
    p->script = sg_xstrdup(s);
    p->script_args = o->nargs;
    return 0;
}

/* A place the sandbox would bind (what, at path) that is a home or a
 * folder above one (homes.h): bound over the private home, it would show
 * the real one. -EPERM with why naming both; 0 when it is neither. */
static int refuse_home(const struct sg_homes *hs, const char *what, const char *path,
                       const char *advice, const char **why)
{
    const struct sg_home *h = NULL;
    enum sg_home_rel rel = sg_homes_relation(hs, path, &h);
    if (rel == SG_HOME_NONE)
        return 0;
    char desc[PATH_MAX + 64];
    sg_homes_describe(rel, h, desc, sizeof desc);
    if (rel == SG_HOME_IS && h->yours)
        *why = say("%s may not be your home: the skill would see everything in it; %s", what,
                   advice);
    else
        *why = say("%s %s may not be %s: the skill would see that home (tokens and keys no "
                   "mask names); %s", what, path, desc, advice);
    return -EPERM;
}

/* The working folder: the person's (a script's default) or --cwd's, by
 * its real path; never /, a home or a folder above one (everything would
 * be in view). */
static int plan_work_dir(struct sg_plan *p, const struct sg_run_opts *o,
                         const struct sg_homes *hs, const char **why)
{
    char here[PATH_MAX];
    const char *want = o->work_dir;
    if (!want) {
        if (!getcwd(here, sizeof here))
            return *why = say("the current folder cannot be named (%s)", strerror(errno)), -errno;
        want = here;
    }
    cleanup_free char *real = realpath(want, NULL);
    struct stat st;
    if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
        return *why = say("the working folder %s is not a folder", want), -ENOTDIR;
    if (!strcmp(real, "/"))
        return *why = say("the working folder may not be /: the skill would see everything in "
                          "it; cd into a project folder or give --cwd DIR"),
               -EPERM;
    /* want as given too: a link to a home is that home (the object decides) */
    int e;
    if ((e = refuse_home(hs, "the working folder", real, "cd into a project folder or give "
                         "--cwd DIR", why)) < 0 ||
        (e = refuse_home(hs, "the working folder", want, "cd into a project folder or give "
                         "--cwd DIR", why)) < 0)
        return e;
    p->cwd = steal_pointer(&real);
    p->cwd_is_work = true;
    return 0;
}

static const char *env_value(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* Outside the home and the private folders, the sandbox shows the host's
 * own files read-only; these it replaces. */
static bool hidden_in_sandbox(const struct sg_plan *p, const char *path)
{
    static const char *const priv[] = {"/tmp", "/var", "/run", "/dev", "/proc"};
    for (size_t i = 0; i < SG_ARRAY_LEN(priv); i++)
        if (sg_path_within(path, priv[i]))
            return true;
    return sg_path_within(path, p->home);
}

static bool too_wide(const char *real)
{
    const char *home = sg_invoking_home();
    cleanup_free char *rhome = home ? realpath(home, NULL) : NULL;
    return !strcmp(real, "/") || (rhome && !strcmp(real, rhome));
}

/* The run's Python (--python, else an active VIRTUAL_ENV): a folder with
 * bin/python3 (or bin/python), or a program; a program in an environment's
 * bin/ brings the environment. The program keeps its own path (a virtual
 * environment's python is a link to the base one: its folder is what makes
 * it the environment's); the installation it links to is shown too when
 * the sandbox would hide it (uv keeps Pythons in the home). */
static int plan_python(struct sg_plan *p, const struct sg_run_opts *o, const struct sg_homes *hs,
                       const char **why)
{
    const char *want = o->python, *from = "--python";
    if (!want) {
        want = env_value(o->host_env, "VIRTUAL_ENV");
        from = "VIRTUAL_ENV";
    }
    if (!want || !*want)
        return 0;
    char here[PATH_MAX];
    cleanup_free char *abs = want[0] == '/' ? sg_xstrdup(want)
                             : getcwd(here, sizeof here) ? sg_xasprintf("%s/%s", here, want)
                                                         : NULL;
    cleanup_free char *env = NULL, *prog = NULL;
    struct stat st;
    if (!abs || stat(abs, &st) < 0)
        return *why = say("%s %s does not exist", from, want), -ENOENT;
    /* the reading the agent hook vets (pyenv.h): what is digested is what runs */
    struct sg_pyenv pe;
    int r = sg_pyenv_read(abs, &pe);
    prog = steal_pointer(&pe.prog);
    env = pe.env ? steal_pointer(&pe.env) : S_ISDIR(st.st_mode) ? realpath(abs, NULL) : NULL;
    sg_pyenv_free(&pe);
    if (S_ISDIR(st.st_mode) && r < 0)
        return *why = say("%s %s has no bin/python3: it is not a Python environment", from,
                          want),
               -ENOEXEC;
    if (r < 0 || stat(prog, &st) < 0 || !S_ISREG(st.st_mode) || access(prog, X_OK) < 0)
        return *why = say("%s %s is not a program", from, want), -ENOEXEC;
    if (env && too_wide(env))
        return *why = say("the Python environment may not be %s: the skill would see everything "
                          "in it", strcmp(env, "/") ? "your home" : "/"),
               -EPERM;
    int e;
    if (env && (e = refuse_home(hs, "the Python environment", env, "make the environment in a "
                                "folder of its own", why)) < 0)
        return e;
    cleanup_free char *target = realpath(prog, NULL);
    if (target && (!env || !sg_path_within(target, env)) && hidden_in_sandbox(p, target)) {
        char *base = sg_xstrdup(target); /* <prefix>/bin/python3.12 */
        for (int up = 0; up < 2; up++) {
            char *sl = strrchr(base, '/');
            if (sl && sl != base)
                *sl = '\0';
        }
        if (too_wide(base) || !strcmp(base, p->home)) {
            free(base);
            return *why = say("%s's Python %s lies directly in your home: make the environment "
                              "from an installation in a folder of its own", from, target),
                   -EPERM;
        }
        if ((e = refuse_home(hs, "the Python installation", base, "make the environment from "
                             "an installation in a folder of its own", why)) < 0) {
            free(base);
            return e;
        }
        p->python_base = base;
    }
    p->python = steal_pointer(&prog);
    p->python_env = steal_pointer(&env);
    p->python_from = from;
    return 0;
}

/* The skill's folder and its declared paths, each a bind: the manifest
 * check refuses a declared home already (with file, line and field); this
 * holds for every policy, and for a host that changed since. */
static int plan_declared(const struct sg_skill *sk, const struct sg_homes *hs, const char **why)
{
    const struct sg_policy *pol = &sk->policy;
    static const char advice[] = "name the folder the skill needs";
    int e;
    if ((e = refuse_home(hs, "the skill's folder", sk->root, "keep the skill in a folder of "
                         "its own", why)) < 0)
        return e;
    /* in an agent's folder only where the agent keeps its skills: its
     * folder would show the agent's login and settings (agentdirs.h) */
    struct sg_agent_paths ap;
    sg_agent_paths_get(&ap);
    const struct sg_agent_path *a = NULL;
    cleanup_free char *real = sg_path_real(sk->root);
    bool refused = sg_agent_paths_relation(&ap, sk->root, NULL, &a) == SG_AGENT_INSIDE &&
                   !sg_agent_path_in_skills(a, real);
    if (refused)
        *why = say("the skill's folder %s is in %s, %s: a skill never sees an AI agent's own "
                   "files; keep it in a folder of its own%s%s", sk->root, a->path, a->what,
                   a->areas[0] ? " or in the agent's skill folders: " : "", a->areas);
    sg_agent_paths_free(&ap);
    if (refused)
        return -EPERM;
    for (size_t i = 0; i < pol->nread; i++)
        if ((e = refuse_home(hs, "the declared read path", pol->read[i].path, advice, why)) < 0)
            return e;
    for (size_t i = 0; i < pol->nwrite; i++)
        if ((e = refuse_home(hs, "the declared write path", pol->write[i].path, advice, why)) < 0)
            return e;
    return 0;
}

static int plan_build(const struct sg_skill *sk, const struct sg_run_opts *o, struct sg_plan *p,
                      const char **why);

int sg_plan_build(const struct sg_skill *sk, const struct sg_run_opts *o, struct sg_plan *p,
                  const char **why)
{
    sg_homes_hold(); /* the accounts' homes and the agents' paths, read once for the plan */
    int r = plan_build(sk, o, p, why);
    sg_homes_release();
    /* Every check of the plan and every question asked about a bound path
     * is about the object it names now: held by device and inode, so the
     * launch binds that object or nothing (a folder swapped for a symlink
     * between the question and the launch is refused there). */
    for (size_t i = 0; r == 0 && i < p->nmounts; i++) {
        struct sg_mount *m = &p->mounts[i];
        struct stat st;
        if ((m->kind == SG_MNT_BIND_RO || m->kind == SG_MNT_BIND_RW) && !m->planned &&
            stat(m->src, &st) == 0)
            m->planned = true, m->pdev = st.st_dev, m->pino = st.st_ino;
    }
    return r;
}
/* An entrypoint's argument as its manifest wrote it, relative to the
 * skill's folder ("python3 main.py"): run in another working folder
 * (--cwd, vet), a relative one naming a file of the skill's own becomes
 * that file's path, so the entrypoint still finds its code. */
static char *entry_arg(const struct sg_plan *p, const struct sg_skill *sk, const char *arg)
{
    struct stat st;
    if (!p->cwd_is_work || arg[0] == '/' || arg[0] == '-' || !arg[0])
        return sg_xstrdup(arg);
    cleanup_free char *in = sg_xasprintf("%s/%s", sk->root, arg);
    return lstat(in, &st) == 0 && S_ISREG(st.st_mode) ? steal_pointer(&in) : sg_xstrdup(arg);
}


static int plan_build(const struct sg_skill *sk, const struct sg_run_opts *o, struct sg_plan *p,
                      const char **why)
{
    memset(p, 0, sizeof *p);
    const struct sg_policy *pol = &sk->policy;
    if (!pol->entry.command && !o->script && pol->mode == SG_MODE_SCRIPTS) {
        struct sg_buf b;
        sg_buf_init(&b, 1024);
        for (size_t i = 0; i < pol->nscripts && i < 6; i++)
            sg_buf_printf(&b, "%s%s", i ? ", " : "", pol->scripts[i]);
        *why = say("it has %zu script%s and no entrypoint: pick one with --script PATH [--] "
                   "[ARG...] (%s%s)", pol->nscripts, pol->nscripts == 1 ? "" : "s",
                   b.data ? b.data : "", pol->nscripts > 6 ? ", ..." : "");
        sg_buf_free(&b);
        return -ENOEXEC;
    }
    bool wasm = pol->mode == SG_MODE_WASM && !pol->entry.command && !o->script;
    if (!pol->entry.command && !o->script && !wasm) {
        *why = "an instruction-only skill has no entrypoint to run";
        return -ENOEXEC;
    }
    const char *input = o->input ? o->input : "{}";
    if (strlen(input) > SG_INPUT_MAX) {
        *why = "the input is over 64 KiB";
        return -E2BIG;
    }
    p->input = sg_xstrdup(input);
    p->stdin_empty = o->stdin_empty;
    p->observe_reads = o->observe_reads;
    p->wrap = o->wrap;
    p->copy_output = o->copy_output;
    p->skill_name = sg_xstrdup(sk->name ? sk->name : sk->dirname);
    p->skill_root = sg_xstrdup(sk->root);
    p->run_id = new_run_id();
    plan_identity(p);
    p->landlock_abi = sg_landlock_abi();
    if (p->landlock_abi == 0) {
        if (!o->allow_degraded) {
            sg_plan_free(p);
            *why = "this kernel has no Landlock; --allow-degraded runs without it";
            return -ENOTSUP;
        }
        p->degraded = true;
    }
    p->cgroup_version = sg_cgroup_find(p->as_root, p->cgroup_base, &p->cgroup_delegated,
                                       p->cgroup_why, sizeof p->cgroup_why);
    p->profile = pol->profile;
    for (size_t i = 0; i < pol->negress; i++) {
        p->egress = sg_xrealloc(p->egress, (p->negress + 1) * sizeof *p->egress);
        struct sg_plan_egress *e = &p->egress[p->negress++];
        e->domain = sg_xstrdup(pol->egress[i].domain);
        e->wildcard = pol->egress[i].wildcard;
        memcpy(e->ports, pol->egress[i].ports, sizeof e->ports);
        e->nports = pol->egress[i].nports;
    }
    memcpy(p->listen, pol->listen, sizeof p->listen);
    p->nlisten = pol->nlisten;
    p->npublish = o->npublish < SG_MAX_PORTS ? o->npublish : SG_MAX_PORTS;
    if (p->npublish)
        memcpy(p->publish, o->publish, p->npublish * sizeof *p->publish);
    for (size_t i = 0; i < o->nallow_upstream; i++)
        add_str(&p->allow_upstream, &p->nallow_upstream, o->allow_upstream[i]);
    for (size_t i = 0; i < o->nresolve; i++) {
        p->resolve = sg_xrealloc(p->resolve, (p->nresolve + 1) * sizeof *p->resolve);
        struct sg_resolve *r = &p->resolve[p->nresolve++];
        *r = o->resolve[i];
        r->name = sg_xstrdup(o->resolve[i].name);
        r->addr = sg_xstrdup(o->resolve[i].addr);
    }
    int e;
    struct sg_homes hs;
    sg_homes_get(&hs);
    if ((o->script && (e = plan_script(p, sk, o, why)) < 0) ||
        ((o->script || o->work_dir) && (e = plan_work_dir(p, o, &hs, why)) < 0) ||
        (e = plan_python(p, o, &hs, why)) < 0 || (e = plan_declared(sk, &hs, why)) < 0 ||
        (e = sg_plan_sockets(p, &sk->policy, why)) < 0) {
        sg_homes_free(&hs);
        sg_plan_free(p);
        return e;
    }
    sg_homes_free(&hs);
    plan_limits(p, pol, o);
    plan_mounts(p, sk, o);
    if ((e = sg_plan_named_check(p, why)) < 0) {
        sg_plan_free(p);
        return e;
    }
    plan_env(p, sk, o);
    if (wasm && (e = sg_wasm_plan(p, sk, why)) < 0) {
        sg_plan_free(p);
        return e;
    }

    /* argv: a relative path with a '/' is inside the skill; a bare name is
     * looked up in the sandbox's PATH at exec time. */
    if (!p->argv) {
        const char *cmd = pol->entry.command;
        p->argv = sg_xcalloc(pol->entry.nargs + 2, sizeof *p->argv);
        p->argv[0] = strchr(cmd, '/') && cmd[0] != '/' ? sg_xasprintf("%s/%s", sk->root, cmd)
                                                       : sg_xstrdup(cmd);
        for (size_t i = 0; i < pol->entry.nargs; i++)
            p->argv[i + 1] = entry_arg(p, sk, pol->entry.args[i]);
        p->argc = pol->entry.nargs + 1;
    }
    if (!p->cwd)
        p->cwd = sg_xstrdup(sk->root);
    if (p->python && (!strcmp(p->argv[0], "python3") || !strcmp(p->argv[0], "python"))) {
        free(p->argv[0]);
        p->argv[0] = sg_xstrdup(p->python);
    }
    /* The sandbox's PATH holds the same read-only /usr as the host: resolve
     * the program now, so the skill makes exactly one exec to start. */
    if (strchr(p->argv[0], '/')) {
        p->exec_path = sg_xstrdup(p->argv[0]);
    } else {
        p->exec_path = sg_run_path_find(p->argv[0]);
        if (!p->exec_path)
            p->exec_path = sg_xasprintf("/usr/bin/%s", p->argv[0]);
    }
    return 0;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

bool sg_plan_mount_at(const struct sg_plan *p, const char *path)
{
    for (size_t i = 0; i < p->nmounts; i++)
        if (!strcmp(p->mounts[i].dst, path))
            return true;
    return false;
}

bool sg_plan_shows(const struct sg_plan *p, const char *path)
{
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        if ((m->kind == SG_MNT_BIND_RO || m->kind == SG_MNT_BIND_RW) && m->src &&
            !strcmp(m->src, m->dst) && strcmp(m->dst, "/") != 0 && sg_path_within(path, m->dst))
            return true;
    }
    return false;
}

bool sg_path_private(const struct sg_plan *p, const char *path)
{
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        size_t n = strlen(m->dst);
        if ((m->kind == SG_MNT_BIND_RO || m->kind == SG_MNT_BIND_RW) &&
            !strncmp(path, m->dst, n) && (path[n] == '\0' || path[n] == '/' || n == 1))
            return false;
    }
    return true;
}

const char *sg_view_path(const struct sg_plan *p, int view)
{
    const char *path = view == SG_VIEW_HOME  ? p->home
                       : view == SG_VIEW_TMP ? "/tmp"
                       : view == SG_VIEW_SHM ? "/dev/shm"
                                             : NULL;
    return path && sg_path_private(p, path) ? path : NULL;
}

void sg_plan_free(struct sg_plan *p)
{
    free(p->skill_name), free(p->skill_root), free(p->run_id), free(p->uid_map);
    free(p->gid_map), free(p->home), free(p->keep_home), free(p->keep_digest), free(p->cwd), free(p->input);
    free(p->exec_path);
    free(p->script), free(p->python), free(p->python_env), free(p->python_base);
    for (size_t i = 0; i < SG_ARRAY_LEN(p->cgroup_base); i++)
        free(p->cgroup_base[i]);
    for (size_t i = 0; i < p->nmounts; i++) {
        free(p->mounts[i].src);
        free(p->mounts[i].dst);
        free(p->mounts[i].why);
    }
    free(p->mounts);
    free_strv(p->rw_paths, p->nrw);
    free_strv(p->ro_paths, p->nro);
    sg_wasm_plan_free(p->wasm);
    free_strv(p->envp, p->nenv);
    free_strv(p->passed_from, p->npassed);
    free_strv(p->passed, p->npassed);
    free_strv(p->stripped, p->nstripped);
    free_strv(p->argv, p->argc);
    free_strv(p->unshown, p->nunshown);
    for (int i = 0; i < SG_PL_COUNT; i++)
        free(p->limits[i].how);
    for (size_t i = 0; i < p->negress; i++)
        free(p->egress[i].domain);
    free(p->egress);
    for (size_t i = 0; i < p->nresolve; i++) {
        free(p->resolve[i].name);
        free(p->resolve[i].addr);
    }
    free(p->resolve);
    for (size_t i = 0; i < p->nallow_upstream; i++)
        free(p->allow_upstream[i]);
    free(p->allow_upstream);
    sg_plan_sockets_free(p);
    free(p->own_ports);
    memset(p, 0, sizeof *p);
}
