/* Bash: the programs a running skill asks to execute.
 *
 * Every execve/execveat after the entrypoint's own is stopped by seccomp and
 * shown here. The program is named as the skill's view resolves it
 * (notifpath.h); a manifest scope (Bash(ls:*)), a rule, a grant or a person
 * decides. The path was read from the skill's memory, and another thread
 * (or a process sharing that memory) can change it between that read and
 * the kernel's own, so an approval is bound to the file it named, not to
 * the string: before the call continues the broker opens the approved
 * program in the skill's root (device and inode; for a script, also its
 * interpreter) and becomes the thread's tracer (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT, which the kernel delivers only when the call returns,
 * because the notification wait is killable only:
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV). The new image stops in
 * PTRACE_EVENT_EXEC before its first instruction; /proc/PID/exe must be the
 * approved file (or, for a script, its interpreter with the approved script
 * as the file the kernel named), and /proc/PID/cmdline the decided
 * arguments (a thread can flip them in the skill's memory after the
 * broker read them), else the process is killed there, before
 * the other program runs an instruction, and the attempt is a critical
 * event (sandbox_escape_attempt in the trace and the run's audit record).
 * The run goes on: each retry ends the same way, and a person vetting the
 * skill sees what else it does. A failed exec stops at the interrupt instead and is let go.
 * Cost: one ptrace attach and detach per checked exec, and up to a
 * millisecond of wait (the loop looks at pending checks every ms).
 *
 * Without the killable wait (kernels before 5.19) or without ptrace (the
 * thread already has a tracer) a checked exec is refused, never let through
 * unbound. Unscoped Bash allows every program, so nothing is bound there. */
#ifndef SG_EXEC_H
#define SG_EXEC_H

#include <seccomp.h>
#include <stdbool.h>

#include "events.h"
#include "sandbox.h"

struct sg_perm;
struct sg_exec;

struct sg_exec *sg_exec_new(const struct sg_plan *plan, struct sg_perm *perm,
                            struct sg_event_bus *bus, int notify_fd);
/* Lets every traced thread go (or die with the sandbox) and frees x. */
void sg_exec_free(struct sg_exec *x);
/* An execve (at false) or execveat notification: answered now or later. */
void sg_exec_handle(struct sg_exec *x, const struct seccomp_notif *req, bool at);
/* ms until pending checks want another look; -1 when none is pending. */
int sg_exec_timeout(const struct sg_exec *x);
/* Settle the checks whose thread has stopped. */
void sg_exec_dispatch(struct sg_exec *x);

#endif
