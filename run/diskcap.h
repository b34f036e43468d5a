/* Declared write paths: how much a run may put there.
 *
 * A declared write path is the host's disk: a skill once filled 385 MiB and
 * 20,000 files in one run. Two caps, from the manifest's resources
 * (max_files, max_disk_mb) or their defaults, hold for all the declared
 * write paths of a run together:
 *
 *   - files: every open that may create (O_CREAT, O_TMPFILE) and every
 *     mkdir under a declared write path is done by the broker, beneath the
 *     folder pinned before launch (pin.h), as the skill would do it (as root:
 *     the skill's fsuid, fsgid and no groups, so the kernel checks the same
 *     permissions; the skill's umask; as root without sudo, a new name that
 *     nobody may not make in root's folder is made as root, the person who
 *     declared it), and the descriptor is handed over
 *     (SECCOMP_ADDFD_FLAG_SEND). The broker knows exactly what it made; past
 *     the cap a new name gets EDQUOT and a resource_limit_hit event. A path
 *     through a symlink is opened by the broker too, the links followed only
 *     while they stay beneath the pinned folder; one that leads out (an
 *     absolute link, "..") or a creation or truncation of an object that is
 *     no regular file or folder is refused (EACCES, an fs_blocked event;
 *     an existing FIFO opened plainly is the kernel's, since its open may
 *     block): the kernel is never left to
 *     make a file there, since it would read the path again from the
 *     skill's memory and nothing would hold the file. link, symlink and
 *     mknod count as a creation each.
 *   - bytes: every file opened for writing there is held (O_PATH) with its
 *     size when first seen; the growth of all of them is summed every 100 ms,
 *     and the last 8 of them are looked at again on every open the broker
 *     does, so a writer that fills file after file is seen at its next open;
 *     past the cap the run is stopped (resource_limit_hit, every process
 *     killed) and nothing more is opened meanwhile. One file also stops at
 *     RLIMIT_FSIZE. Files already open and written at once can pass the cap
 *     by what they take in 100 ms.
 *
 * Cost: a write-intent open under a declared path is done by the broker (an
 * openat2 and an ADDFD, tens of microseconds more than letting it continue),
 * one fstat per held file every 100 ms, and 8 per brokered open. */
#ifndef SG_DISKCAP_H
#define SG_DISKCAP_H

#include <seccomp.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "events.h"
#include "sandbox.h"

struct sg_diskcap;

/* A call done by the broker as the skill would do it: as root, this
 * thread's fsuid and fsgid become the skill's and its groups none, so the
 * kernel checks the same permissions; the umask is 0 meanwhile, and the
 * skill's (sg_skill_umask) is applied by hand. */
struct sg_skill_creds {
    mode_t umask;
    gid_t groups[256];
    int ngroups;
    bool switched;
};
void sg_become_skill(const struct sg_plan *p, struct sg_skill_creds *s);
void sg_become_broker(struct sg_skill_creds *s);
/* What the broker does on the host for a skill that a person approved is
 * done as that person: under sudo the invoking user's fsuid, fsgid and
 * groups (never root's, which would pass every permission check the
 * person fails); as root without sudo root is the person, and an ordinary
 * user is already. Undone by sg_become_broker. */
void sg_become_person(const struct sg_plan *p, struct sg_skill_creds *s);
/* As root without sudo, what root makes for the skill (nobody) is root's,
 * in the skill's group with the owner's bits for the group (a folder
 * setgid), as the folders skillgate makes for it: o, a descriptor of the
 * new file or folder (O_PATH will do). 0 or -errno. */
int sg_give_skills_group(const struct sg_plan *p, int o);
mode_t sg_skill_umask(pid_t tid);

struct sg_diskcap *sg_diskcap_new(const struct sg_plan *p, struct sg_event_bus *bus);
void sg_diskcap_free(struct sg_diskcap *d);
/* The devices of the sandbox's writable private views (/tmp, HOME,
 * /dev/shm, from sg_sandbox.view_fd): a write the broker does there for the
 * skill must land on one of them. */
void sg_diskcap_own_fs(struct sg_diskcap *d, const dev_t *own, size_t n);
bool sg_diskcap_is_own_fs(const struct sg_diskcap *d, dev_t dev);

/* An allowed write-intent open (open, openat, openat2, creat: flags, mode)
 * or mkdir/mkdirat (mode) of rel beneath dfd, a declared write path's pinned
 * folder. 1: answered (resp set for the caller to send); 2: the descriptor
 * was sent as the call's result; 0: continue, only for an existing FIFO or
 * device opened without O_CREAT or O_TRUNC (its open may block). */
int sg_diskcap_perform(struct sg_diskcap *d, int notify_fd, const struct seccomp_notif *req,
                       const char *syscall, int dfd, const char *rel, unsigned long long flags,
                       unsigned long long mode, const char *path, struct seccomp_notif_resp *resp);
/* A FIFO or device the skill opens for writing without O_CREAT or
 * O_TRUNC (obj: an O_PATH descriptor of the very object, found in a
 * declared write path or a private view; taken): opened by the broker, as
 * the skill, never blocking, and handed over. A blocking open of a FIFO
 * with no reader yet waits here, not in the broker: the open is tried
 * again every 20 ms while the skill's thread waits in its call, as the
 * kernel would have it wait (at most SG_DISKCAP_FIFO_WAITS at once, then
 * ENXIO). Never let continue: the kernel would read the name again from
 * the skill's memory, where another thread can have put `.git/config`.
 * 1: resp set; 2: answered, or answered later. */
#define SG_DISKCAP_FIFO_WAITS 64
int sg_diskcap_special(struct sg_diskcap *d, int notify_fd, const struct seccomp_notif *req,
                       int obj, unsigned long long flags, struct seccomp_notif_resp *resp);
/* True once per run: the first write the broker decides learns the
 * repositories of the run's write folders and working folder (gitnamed.h). */
bool sg_diskcap_learn_once(struct sg_diskcap *d);
/* link, symlink, mknod under a declared write path: may it make one more
 * name? false (EDQUOT, the event emitted) past the cap. */
bool sg_diskcap_may_create(struct sg_diskcap *d, const char *syscall, const char *path);
/* The files a person (or a rule) let this run write outside the writable
 * paths, by where the skill sees them and the host object they were then:
 * a later change to that same file (chmod within the user's bits, utime,
 * truncate, a rename of it, its removal, another open) is done without
 * asking again, so an approved output behaves like a file (shutil.copy2,
 * an atomic save). Both must match: a path that now names another object
 * is asked. */
void sg_diskcap_approve(struct sg_diskcap *d, const char *path, const struct stat *st);
bool sg_diskcap_approved(const struct sg_diskcap *d, const char *path, const struct stat *st);
void sg_diskcap_forget(struct sg_diskcap *d, const char *path);
/* A write into the sandbox's own /var, /run or /dev, refused without a
 * question: the first is an event, the rest a count at the end. */
void sg_diskcap_private_refused(struct sg_diskcap *d, const char *syscall, const char *path);
/* ms until the held files want another look; -1 when none is held. */
int sg_diskcap_timeout(const struct sg_diskcap *d);
/* Sum the growth when a look is due: true once, when the run passed the
 * byte cap (the event emitted; the caller stops the run). */
bool sg_diskcap_over(struct sg_diskcap *d);

#endif
