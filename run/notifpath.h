/* The paths a skill names in a stopped system call (seccomp user-notify),
 * made absolute in the skill's own view of the filesystem.
 *
 * Every byte here is the skill's: the string is read from its memory with a
 * cap (PATH_MAX), a dirfd-relative path is resolved through /proc/PID/fd/N
 * only when N is a folder whose name still leads to that same folder (device
 * and inode compared through /proc/PID/root), and anything that cannot be
 * made absolute exactly is refused with the errno the kernel would give
 * (ENOTDIR for a pipe, socket or anonymous inode as dirfd, ENOENT for a
 * deleted folder, ENAMETOOLONG, EFAULT). Callers refuse the call then: a
 * path the broker cannot name is never let through or shown wrongly. */
#ifndef SG_NOTIFPATH_H
#define SG_NOTIFPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Read a NUL-terminated string of at most max-1 bytes from the skill's
 * memory (memfd: /proc/PID/mem). -EFAULT for a bad pointer, -ENAMETOOLONG
 * when no NUL comes within max-1 bytes (buf then holds the first max-1). */
int sg_notif_read_str(int memfd, uint64_t addr, char *buf, size_t max);

/* The absolute, normalized path that (dirfd, the string at addr) names for
 * process pid. With at_empty (AT_EMPTY_PATH) an empty string names dirfd
 * itself. 0 or -errno. */
int sg_notif_path(pid_t pid, int memfd, int dirfd, uint64_t addr, int at_empty, char *out,
                  size_t max);

/* The same for a string already read (rel). */
int sg_notif_join(pid_t pid, int dirfd, const char *rel, int at_empty, char *out, size_t max);

/* Open path as process pid sees it: every symlink, "..", and absolute link
 * resolved inside its root (RESOLVE_IN_ROOT), never the broker's; the last
 * component followed only with follow. An fd or -errno. */
int sg_notif_open(pid_t pid, const char *path, int flags, bool follow);
/* lstat of path in pid's view. */
int sg_notif_lstat(pid_t pid, const char *path, struct stat *st);

/* Why a stopped call whose notification is no longer valid was given up,
 * for a prompt that closes on it: its process (or thread) is gone; on a
 * kernel before 5.19 (no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) a signal
 * may also have interrupted the call, which the skill may make again. */
const char *sg_notif_gone_why(void);
/* Whether this kernel has SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19): a
 * stopped call then waits for its answer killable only. Probed once (a
 * NULL filter: nothing is installed). */
bool sg_notif_waits_killable(void);

#endif
