#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define V1 "/sys/fs/cgroup"
#define V2 "/sys/fs/cgroup/skillgate"

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

int sg_cgroup_setup(const struct sg_plan *p, pid_t pid, struct sg_sandbox *sb)
{
    char buf[64], pidbuf[32];
    int r = 0;
    long long mem = p->limits[SG_PL_MEMORY].value << 20;
    if (p->cgroup_version != 2)
        return 0; /* v1: pid 1 entered its cgroups itself (sg_cgroup_enter) */
    snprintf(pidbuf, sizeof pidbuf, "%d", pid);
    mkdir(V2, 0755);
    write_file("/sys/fs/cgroup", "cgroup.subtree_control", "+memory +pids +cpu");
    write_file(V2, "cgroup.subtree_control", "+memory +pids +cpu");
    char *dir = sg_xasprintf("%s/%s", V2, p->run_id);
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
    if (!r)
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
    static const char *const ctls[SG_CGROUP_V1_MAX] = {"memory", "pids", "cpu"};
    for (size_t i = 0; i < SG_ARRAY_LEN(ctls) && !r; i++) {
        char *base = sg_xasprintf("%s/%s", V1, ctls[i]);
        char *dir = make_dir(base, p->run_id);
        free(base);
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
            return read_key(d, "memory.usage_in_bytes", "");
        if (!strstr(d, "/pids/") && !strstr(d, "/cpu/"))
            return read_key(d, "memory.current", "");
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
    if (geteuid() != 0)
        return 0;
    return clean_dir(V2) + clean_dir(V1 "/memory/skillgate") + clean_dir(V1 "/pids/skillgate") +
           clean_dir(V1 "/cpu/skillgate");
}
