/* The memory a run uses when no cgroup counts it: what its processes
 * touched, not what they reserved.
 *
 * RLIMIT_AS (the bound before) counts address space: V8 reserves a 4 GiB
 * pointer cage and 8 GiB guard regions per WebAssembly memory, a JVM its
 * whole heap, glibc 64 MiB per thread arena, LibreOffice gigabytes of
 * stacks and arenas, all of it untouched; under the 256 MB default node
 * could not start and LibreOffice died by SIGSEGV as an ordinary user
 * (issue 52). Here the broker sums, over the sandbox's processes (pid 1
 * and its descendants, through the kernel's own
 * /proc/PID/task/TID/children, so no name a skill controls decides who
 * counts), resident anonymous and shared-memory pages and swap
 * (RssAnon + RssShmem + VmSwap + VmPTE of /proc/PID/status: counters, no page
 * walk; a live thread's folder where the leader called pthread_exit and
 * its own shows none; a vfork child, which runs in its parent's memory
 * until it execs, adds nothing). A page shared copy-on-write after fork counts in every process
 * there, so a sum past the limit is taken again with proportional counts
 * (Pss_Anon + Pss_Shmem + SwapPss of smaps_rollup, a page-table walk,
 * plus VmPTE; skipped where the tables alone are past the limit, and
 * given up once the sum is) before the run is stopped. Measured (2-core VM): a look at the counters
 * of 9 processes of 25 threads takes about 120 us, the broker's CPU over
 * a run about 2% of a core; a proportional look at 4 processes sharing
 * 100 MB takes 1.7 ms, and is taken every look while the counters are
 * past the limit and the proportional sum is not.
 *
 * It is a watch, not a fence: between two looks a program can touch what
 * it allocates in SG_MEMWATCH_MS (measured in tests/memory_test.py), and
 * memory no process maps (tmpfs files, descriptors' buffers, kernel
 * memory) is bounded by the other limits the plan names. */
#ifndef SG_MEMWATCH_H
#define SG_MEMWATCH_H

#include <stdbool.h>
#include <sys/types.h>

/* how often the broker looks, and how many processes one look can visit:
 * max_pids's own maximum (policy.h), so no look leaves a process out */
#define SG_MEMWATCH_MS 20
#define SG_MEMWATCH_MAX_PROCS 32768

/* Bytes the processes of the sandbox whose pid 1 is pid1 (in the
 * broker's namespace) hold, page tables included: the counters (past 0),
 * or the smaps_rollup counts (the counters where that cannot be read),
 * given up as soon as the sum is over past bytes (then the sum so far).
 * A process sharing its parent's memory (vfork) adds nothing. *nprocs:
 * processes visited. -1 when pid 1 is gone. */
long long sg_memwatch_sample(pid_t pid1, long long past, int *nprocs);

#endif
