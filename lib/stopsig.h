/* SIGINT, SIGTERM and SIGHUP as a person expects of a run, with or without
 * a terminal: the first stops the run and lets its records be written (a
 * loop source hands the signal to on_signal); a second one while they are
 * written gives them SG_STOPSIG_GRACE_S more seconds, then skillgate exits
 * 128 + the first signal (what is not written yet, the run's journal keeps
 * for the next start). The handler only writes a byte to a pipe.
 * SIGINT or SIGHUP ignored when the handlers are installed stays ignored
 * (`nohup skillgate run … &`, as the agent hook keeps a background run:
 * the run outlives the terminal, as the person asked); SIGTERM always
 * stops it. */
#ifndef SG_STOPSIG_H
#define SG_STOPSIG_H

#include "loop.h"

#define SG_STOPSIG_GRACE_S 2

/* Install the handlers (once per process). 0 or -errno. */
int sg_stopsig_install(void);
/* The loop source: on_signal(ctx, signo) for each signal received. */
struct sg_loop_source sg_stopsig_source(void (*on_signal)(void *ctx, int signo), void *ctx);
/* The first signal received, or 0. */
int sg_stopsig_first(void);

#endif
