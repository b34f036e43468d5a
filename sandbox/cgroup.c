#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <limits.h>
#include <unistd.h>

#include "util.h"

#define TOP "/sys/fs/cgroup"

static int write_file(const char *dir, const char *file, const char *val)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return sg_write_file(path, val);
}

static long long read_key(const char *dir, const char *file, const char *key)
{
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "re");
    long long v = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        size_t kl = strlen(key);
        if (!*key) {
            v = strtoll(line, NULL, 10);
            break;
        }
        if (!strncmp(line, key, kl) && line[kl] == ' ') {
            v = strtoll(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

static bool has_words(const char *dir, const char *file, const char *const *words, size_t n)
{
    char path[PATH_MAX], line[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    for (size_t i = 0; ok && i < n; i++) {
        size_t l = strlen(words[i]);
        const char *p = line;
        bool found = false;
        while (!found && (p = strstr(p, words[i]))) {
            found = (p == line || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\n' || !p[l]);
            p += l;
        }
        ok = found;
    }
    return ok;
}

/* Does dir/cgroup.procs list only this process? */
static bool only_us(const char *dir)
{
    char path[PATH_MAX], line[32];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    int n = 0;
    bool us = true;
    while (fgets(line, sizeof line, f)) {
        n++;
        us &= strtol(line, NULL, 10) == getpid();
    }
    fclose(f);
    return n == 1 && us;
}

char *sg_cgroup_user_service(const char *top, const char *path, uid_t uid)
{
    char unit[64];
    snprintf(unit, sizeof unit, "/user@%u.service", (unsigned)uid);
    size_t ul = strlen(unit);
    const char *at = path;
    /* the unit as a whole component of the path, never a prefix of one */
    while ((at = strstr(at, unit)) && at[ul] != '/' && at[ul] != '\0')
        at += ul;
    if (!at || strstr(path, "/.."))
        return NULL;
    static const char *const need[] = {"memory", "pids"};
    char *dir = sg_xasprintf("%s%.*s", top, (int)(at + ul - path), path);
    if (access(dir, W_OK | X_OK) != 0 || !has_words(dir, "cgroup.subtree_control", need, 2)) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* v2, not root: the cgroup this process was started in when it is
 * delegated, else the user's systemd service (sg_cgroup_user_service);
 * 2 with base[] filled, or 0 with why said. */
static int find_v2_user(char *base[SG_CGROUP_V1_MAX], char *why, size_t whylen)
{
    static const char *const need[] = {"memory", "pids"}, *const cpu[] = {"cpu"};
    const char *b = base[0];
    if (!b || access(b, W_OK) != 0 || access(b, X_OK) != 0) {
        snprintf(why, whylen, "its own cgroup %s is not delegated to this user (run it "
                 "under systemd-run --user -p Delegate=yes --scope)", b ? b : "?");
    } else if (!has_words(b, "cgroup.controllers", need, 2)) {
        snprintf(why, whylen, "its own cgroup %s does not offer the memory and pids "
                 "controllers", b);
    } else if (!has_words(b, "cgroup.subtree_control", need, 2) && !only_us(b)) {
        snprintf(why, whylen, "its own cgroup %s holds other processes, so it cannot "
                 "give its children controllers (run skillgate in a scope of its own)", b);
    } else {
        base[2] = has_words(b, "cgroup.controllers", cpu, 1) ? sg_xstrdup(b) : NULL;
        return 2;
    }
    /* systemd's user@UID.service, delegated to the user with memory and
     * pids on for its children: the run's cgroup goes beside the
     * manager's own (a move from this process's cgroup, which lies in it,
     * needs write access to it, which the user has) */
    char *svc = b ? sg_cgroup_user_service(TOP, b + strlen(TOP), getuid()) : NULL;
    free(base[0]), base[0] = svc;
    if (!svc) {
        size_t l = strlen(why);
        snprintf(why + l, whylen - l, "; no systemd user@%u.service with memory and pids on "
                 "for its children holds it", (unsigned)getuid());
        return 0;
    }
    base[2] = has_words(svc, "cgroup.subtree_control", cpu, 1) ? sg_xstrdup(svc) : NULL;
    return 2;
}

int sg_cgroup_find(bool as_root, char *base[SG_CGROUP_V1_MAX], bool *delegated, char *why,
                   size_t whylen)
{
    struct statfs s;
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
        base[i] = NULL;
    *delegated = !as_root;
    snprintf(why, whylen, "no cgroup");
    bool v2 = statfs(TOP, &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC;
    if (as_root && v2) {
        if (access(TOP "/cgroup.subtree_control", W_OK) != 0)
            return 0;
        base[0] = sg_xstrdup(TOP);
        base[2] = sg_xstrdup(TOP);
        return 2;
    }
    if (as_root) {
        if (access(TOP "/memory", W_OK) != 0 || access(TOP "/pids", W_OK) != 0)
            return 0;
        base[0] = sg_xstrdup(TOP "/memory"), base[1] = sg_xstrdup(TOP "/pids");
        base[2] = access(TOP "/cpu", W_OK) == 0 ? sg_xstrdup(TOP "/cpu") : NULL;
        return 1;
    }
    /* the cgroup this process was started in: "N:controllers:/path" */
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[PATH_MAX + 64];
    static const char *const ctls[SG_CGROUP_V1_MAX] = {"memory", "pids", "cpu"};
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || strstr(c2 + 1, "/.."))
            continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *path = c2 + 1;
        if (v2 && !*ctl && !base[0])
            base[0] = sg_xasprintf(TOP "%s", path);
        for (size_t i = 0; !v2 && i < SG_CGROUP_V1_MAX; i++) {
            /* "cpu,cpuacct" names both */
            char list[128];
            snprintf(list, sizeof list, ",%s,", ctl);
            char want[32];
            snprintf(want, sizeof want, ",%s,", ctls[i]);
            if (strstr(list, want) && !base[i])
                base[i] = sg_xasprintf(TOP "/%s%s", ctl, path);
        }
    }
    if (f)
        fclose(f);
    if (v2)
        return find_v2_user(base, why, whylen);
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++) {
        char tasks[PATH_MAX];
        snprintf(tasks, sizeof tasks, "%s/tasks", base[i] ? base[i] : "");
        if (base[i] && access(base[i], W_OK | X_OK) == 0 && access(tasks, W_OK) == 0)
            continue;
        if (i < 2) { /* memory and pids are a must; cpu is a bonus */
            snprintf(why, whylen, "its own %s cgroup %s is not delegated to this user", ctls[i],
                     base[i] ? base[i] : "(none)");
            for (size_t k = 0; k < SG_CGROUP_V1_MAX; k++)
                free(base[k]), base[k] = NULL;
            return 0;
        }
        free(base[i]), base[i] = NULL;
    }
    return 1;
}

static char *make_dir(const char *base, const char *run_id)
{
    char *parent = sg_xasprintf("%s/skillgate", base);
    mkdir(parent, 0755);
    free(parent);
    char *dir = sg_xasprintf("%s/skillgate/%s", base, run_id);
    if (mkdir(dir, 0755) < 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* v2 delegated: a cgroup that has processes gives its children no
 * controllers, so this process (alone there, sg_cgroup_find) moves into a
 * leaf of its own first. */
static int give_controllers(const char *base, bool delegated, bool cpu)
{
    static const char *const want[] = {"memory", "pids", "cpu"};
    /* on already (systemd's user@UID.service): its settings stay the
     * manager's */
    if (delegated && has_words(base, "cgroup.subtree_control", want, cpu ? 3 : 2))
        return 0;
    const char *ctl = "+memory +pids +cpu";
    if (write_file(base, "cgroup.subtree_control", ctl) == 0 ||
        write_file(base, "cgroup.subtree_control", "+memory +pids") == 0)
        return 0;
    if (!delegated)
        return -EBUSY;
    cleanup_free char *leaf = sg_xasprintf("%s/skillgate-broker-%d", base, (int)getpid());
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
        return -errno;
    int r = write_file(leaf, "cgroup.procs", pid);
    if (r < 0)
        return r;
    if (write_file(base, "cgroup.subtree_control", ctl) == 0)
        return 0;
    return write_file(base, "cgroup.subtree_control", "+memory +pids");
}

int sg_cgroup_setup(const struct sg_plan *p, pid_t pid, struct sg_sandbox *sb)
{
    char buf[64], pidbuf[32];
    int r = 0;
    long long mem = p->limits[SG_PL_MEMORY].value << 20;
    if (p->cgroup_version != 2)
        return 0; /* v1: pid 1 entered its cgroups itself (sg_cgroup_enter) */
    snprintf(pidbuf, sizeof pidbuf, "%d", pid);
    r = give_controllers(p->cgroup_base[0], p->cgroup_delegated, p->cgroup_base[2] != NULL);
    if (r < 0)
        return r;
    cleanup_free char *mine = sg_xasprintf("%s/skillgate", p->cgroup_base[0]);
    mkdir(mine, 0755);
    write_file(mine, "cgroup.subtree_control", "+memory +pids +cpu");
    write_file(mine, "cgroup.subtree_control", "+memory +pids");
    char *dir = sg_xasprintf("%s/%s", mine, p->run_id);
    if (mkdir(dir, 0755) < 0) {
        free(dir);
        return -errno;
    }
    sb->cgroup[sb->ncgroup++] = dir;
    snprintf(buf, sizeof buf, "%lld", mem);
    r = write_file(dir, "memory.max", buf);
    write_file(dir, "memory.swap.max", "0");
    snprintf(buf, sizeof buf, "%lld", p->limits[SG_PL_PIDS].value);
    if (!r)
        r = write_file(dir, "pids.max", buf);
    snprintf(buf, sizeof buf, "%lld 100000", p->limits[SG_PL_CPU].value * 1000);
    if (!r && p->cgroup_base[2])
        r = write_file(dir, "cpu.max", buf);
    if (!r)
        r = write_file(dir, "cgroup.procs", pidbuf);
    return r;
}

int sg_cgroup_prepare(const struct sg_plan *p, struct sg_sandbox *sb, int tasks[SG_CGROUP_V1_MAX])
{
    char buf[64];
    int r = 0;
    long long mem = p->limits[SG_PL_MEMORY].value << 20;
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
        tasks[i] = -1;
    if (p->cgroup_version != 1)
        return 0;
    for (size_t i = 0; i < SG_CGROUP_V1_MAX && !r; i++) {
        if (!p->cgroup_base[i])
            continue; /* cpu, not delegated */
        char *dir = make_dir(p->cgroup_base[i], p->run_id);
        if (!dir)
            return -errno;
        sb->cgroup[sb->ncgroup++] = dir;
        if (i == 0) {
            snprintf(buf, sizeof buf, "%lld", mem);
            r = write_file(dir, "memory.limit_in_bytes", buf);
            write_file(dir, "memory.memsw.limit_in_bytes", buf); /* absent without swap accounting */
        } else if (i == 1) {
            snprintf(buf, sizeof buf, "%lld", p->limits[SG_PL_PIDS].value);
            r = write_file(dir, "pids.max", buf);
        } else {
            write_file(dir, "cpu.cfs_period_us", "100000");
            snprintf(buf, sizeof buf, "%lld", p->limits[SG_PL_CPU].value * 1000);
            r = write_file(dir, "cpu.cfs_quota_us", buf);
        }
        if (r)
            break;
        char path[512];
        snprintf(path, sizeof path, "%s/tasks", dir);
        if ((tasks[i] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            r = -errno;
    }
    if (r < 0)
        for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
            if (tasks[i] >= 0)
                close(tasks[i]), tasks[i] = -1;
    return r;
}

int sg_cgroup_enter(int *tasks, size_t n)
{
    int r = 0;
    for (size_t i = 0; i < n; i++) {
        if (tasks[i] < 0)
            continue;
        if (!r && write(tasks[i], "0", 1) != 1)
            r = -errno;
        close(tasks[i]);
        tasks[i] = -1;
    }
    return r;
}

void sg_cgroup_hits(const struct sg_sandbox *sb, struct sg_limit_hits *h)
{
    for (size_t i = 0; i < sb->ncgroup; i++) {
        const char *d = sb->cgroup[i];
        if (strstr(d, "/memory/"))
            h->memory |= read_key(d, "memory.failcnt", "") > 0 ||
                         read_key(d, "memory.oom_control", "oom_kill") > 0;
        else if (strstr(d, "/pids/"))
            h->pids |= read_key(d, "pids.events", "max") > 0;
        else if (!strstr(d, "/cpu/")) { /* v2 */
            h->memory |= read_key(d, "memory.events", "oom_kill") > 0 ||
                         read_key(d, "memory.events", "max") > 0;
            h->pids |= read_key(d, "pids.events", "max") > 0;
        }
    }
}

long long sg_cgroup_memory(const struct sg_sandbox *sb)
{
    for (size_t i = 0; i < sb->ncgroup; i++) {
        const char *d = sb->cgroup[i];
        if (strstr(d, "/memory/"))
            return read_key(d, "memory.max_usage_in_bytes", "");
        if (!strstr(d, "/pids/") && !strstr(d, "/cpu/")) {
            long long peak = read_key(d, "memory.peak", ""); /* Linux 5.19 */
            return peak >= 0 ? peak : read_key(d, "memory.current", "");
        }
    }
    return -1;
}

long long sg_cgroup_pids_peak(const struct sg_sandbox *sb)
{
    for (size_t i = 0; i < sb->ncgroup; i++) {
        const char *d = sb->cgroup[i];
        if (strstr(d, "/pids/") || (!strstr(d, "/memory/") && !strstr(d, "/cpu/")))
            return read_key(d, "pids.peak", "");
    }
    return -1;
}

/* Kill what is left in dir and remove it; true when it is gone. */
static bool remove_cg(const char *dir)
{
    for (int tries = 0; tries < 50; tries++) {
        if (rmdir(dir) == 0 || errno == ENOENT)
            return true;
        if (errno != EBUSY)
            return false;
        char path[512], line[32];
        snprintf(path, sizeof path, "%s/cgroup.procs", dir);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f)) {
            long long pid;
            line[strcspn(line, "\n")] = '\0';
            if (sg_parse_ll(line, 1, INT32_MAX, &pid) == 0)
                kill((pid_t)pid, SIGKILL);
        }
        if (f)
            fclose(f);
        usleep(10000);
    }
    return false;
}

void sg_cgroup_remove(struct sg_sandbox *sb)
{
    for (size_t i = 0; i < sb->ncgroup; i++) {
        remove_cg(sb->cgroup[i]);
        free(sb->cgroup[i]);
        sb->cgroup[i] = NULL;
    }
    sb->ncgroup = 0;
}

/* A run's cgroup is stale when the broker that made it is gone: its name
 * is "<broker pid>-<random>". */
static int clean_dir(const char *base)
{
    DIR *d = opendir(base);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long long pid;
        char num[16];
        if (e->d_name[0] == '.' || sscanf(e->d_name, "%15[0-9]-", num) != 1 ||
            sg_parse_ll(num, 1, INT32_MAX, &pid) < 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
            continue; /* its broker still runs */
        char *dir = sg_xasprintf("%s/%s", base, e->d_name);
        n += remove_cg(dir);
        free(dir);
    }
    closedir(d);
    return n;
}

int sg_cgroup_clean_stale(void)
{
    char *base[SG_CGROUP_V1_MAX], why[256];
    bool delegated;
    int n = 0;
    if (sg_cgroup_find(geteuid() == 0, base, &delegated, why, sizeof why) == 0)
        return 0;
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++) {
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= base[k] && base[i] && !strcmp(base[k], base[i]);
        if (base[i] && !seen) {
            cleanup_free char *dir = sg_xasprintf("%s/skillgate", base[i]);
            n += clean_dir(dir);
        }
    }
    for (size_t i = 0; i < SG_CGROUP_V1_MAX; i++)
        free(base[i]);
    return n;
}
