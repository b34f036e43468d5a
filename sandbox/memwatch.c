#include "memwatch.h"

#include <dirent.h>
#include <linux/kcmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy.h"
#include "util.h"

/* every process the pids limit allows is looked at */
#define X(f, key, def, min, max, unit) enum { SG_MEMWATCH_LIMIT_MAX_##f = max };
SG_LIMITS(X)
#undef X
_Static_assert(SG_MEMWATCH_MAX_PROCS >= SG_MEMWATCH_LIMIT_MAX_pids, "a look would leave processes out");

/* The sum of "Key:  N kB" lines of a /proc file the kernel writes, for
 * the keys given; -1 when it cannot be read (the process is gone) or has
 * none of them (a process whose memory is gone). */
static long long sum_kb(const char *path, const char *const *keys, size_t nkeys)
{
    cleanup_file FILE *f = fopen(path, "re");
    char line[256];
    long long kb = 0;
    bool found = false;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < nkeys; i++) {
            size_t l = strlen(keys[i]);
            if (!strncmp(line, keys[i], l) && line[l] == ':') {
                long long v = strtoll(line + l + 1, NULL, 10);
                kb += v > 0 ? v : 0;
                found = true;
            }
        }
    }
    return found ? kb : -1;
}

/* The memory of the process whose /proc folder (or one thread's) is dir,
 * in KiB; -1 when that folder says none. Its page tables (VmPTE) count
 * as well: they are the kernel's memory, not its pages, yet a process
 * makes them at will (one read of a zero page every 2 MiB of a mapping
 * never written makes a 4 KiB table and no resident page: 525 MB of
 * tables under a 64 MB limit went unseen, and with no address-space
 * limit nothing else bounds them). The proportional look adds them from
 * status, which smaps_rollup does not have. */
static long long mm_kb(const char *dir, bool proportional, long long room_kb)
{
    static const char *const counters[] = {"RssAnon", "RssShmem", "VmSwap", "VmPTE",
                                           "HugetlbPages"};
    static const char *const pss[] = {"Pss_Anon", "Pss_Shmem", "SwapPss"};
    /* hugetlb pages (MAP_HUGETLB, where the machine keeps a pool) are in
     * no Rss count; counted whole, shared or not */
    static const char *const tables[] = {"VmPTE", "HugetlbPages"};
    char path[96];
    long long kb = -1;
    if (proportional) {
        /* the tables first: past the room left they decide alone, and
         * the walk (as long as they are large) is not taken */
        snprintf(path, sizeof path, "%s/status", dir);
        long long pt = sum_kb(path, tables, SG_ARRAY_LEN(tables));
        if (pt > room_kb)
            return pt;
        snprintf(path, sizeof path, "%s/smaps_rollup", dir);
        kb = pt < 0 ? -1 : sum_kb(path, pss, SG_ARRAY_LEN(pss));
        kb = kb < 0 ? -1 : kb + pt;
    }
    if (kb < 0) {
        snprintf(path, sizeof path, "%s/status", dir);
        kb = sum_kb(path, counters, SG_ARRAY_LEN(counters));
    }
    return kb;
}

/* A leader that called pthread_exit is a zombie whose folder shows no
 * memory while its other threads hold it all: then a live thread's
 * folder says the process's (one address space). */
static long long process_bytes(pid_t pid, bool proportional, long long room_kb)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d", (int)pid);
    long long kb = mm_kb(dir, proportional, room_kb);
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = kb < 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && kb < 0 && (e = readdir(d))) {
        long long tid;
        char tdir[96];
        if (sg_parse_ll(e->d_name, 1, INT32_MAX, &tid) < 0 || tid == pid)
            continue;
        snprintf(tdir, sizeof tdir, "/proc/%d/task/%lld", (int)pid, tid);
        kb = mm_kb(tdir, proportional, room_kb);
    }
    if (d)
        closedir(d);
    return kb < 0 ? 0 : kb << 10;
}

/* A child of vfork (posix_spawn, Python's subprocess) runs in its
 * parent's memory until it execs, and its /proc files say the parent's
 * numbers again: counted twice, a program of 150 MB spawning /bin/true
 * under a 256 MB limit was stopped as holding 309 MB. A process that
 * shares its parent's address space (kcmp says so) adds nothing. */
static bool same_mm(pid_t a, pid_t b)
{
    return syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0) == 0;
}

/* Push the children of every thread of pid onto the stack, each with its
 * parent. */
static void push_children(pid_t pid, pid_t *stack, pid_t *parent, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        long long tid, child;
        if (sg_parse_ll(e->d_name, 1, INT32_MAX, &tid) < 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%lld/children", (int)pid, tid);
        cleanup_file FILE *f = fopen(path, "re");
        while (f && *n < SG_MEMWATCH_MAX_PROCS && fscanf(f, "%lld", &child) == 1)
            if (child > 0 && child <= INT32_MAX) {
                parent[*n] = pid;
                stack[(*n)++] = (pid_t)child;
            }
    }
    if (d)
        closedir(d);
}

long long sg_memwatch_sample(pid_t pid1, long long past, int *nprocs)
{
    /* the broker's loop thread only */
    static pid_t stack[SG_MEMWATCH_MAX_PROCS], parent[SG_MEMWATCH_MAX_PROCS];
    size_t n = 0, seen = 0;
    long long bytes = 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid1);
    *nprocs = 0;
    if (pid1 <= 0 || access(path, F_OK) != 0)
        return -1;
    parent[n] = 0;
    stack[n++] = pid1;
    /* proportional: a sum of counts none of which is negative, so once it
     * is past the limit the rest need not be walked */
    while (n && seen < SG_MEMWATCH_MAX_PROCS && !(past > 0 && bytes > past)) {
        pid_t pid = stack[--n], up = parent[n];
        seen++;
        if (!up || !same_mm(pid, up))
            bytes += process_bytes(pid, past > 0, past > 0 ? ((past - bytes) >> 10) + 1 : 0);
        push_children(pid, stack, parent, &n);
    }
    *nprocs = (int)seen;
    return bytes;
}
