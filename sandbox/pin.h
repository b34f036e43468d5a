/* Declared host paths, pinned before launch.
 *
 * A declared read or write path is bound into the sandbox, and an approved
 * Write is done by the broker beneath the host folder it maps to. Both used
 * to name the folder by path, at mount time and again at decision time, so
 * another local user who owns a parent of it could swap a component for a
 * symlink in between, and root's approved write landed in a folder the
 * person never saw. Here each declared path is walked from / a component at
 * a time (O_PATH | O_NOFOLLOW), and what it names is held as a descriptor:
 * the broker opens beneath it (openat2, RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and before the skill runs, each bind that pid 1
 * made in its own namespace must show that same object (sg_pin_check).
 *
 * The walk refuses what someone else could have swapped: a component in a
 * folder that others may write without the sticky bit; in a sticky folder
 * (/tmp), one that is not the invoking user's or root's; a symlink that is
 * not the invoking user's or root's (the kernel's protected_symlinks rule).
 * A writable path must itself be the invoking user's, root's or the skill's. */
#ifndef SG_PIN_H
#define SG_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* An O_PATH descriptor of what path names, or -errno with why filled in.
 * owner is the invoking user (root's own files and folders are trusted
 * too); writable asks for the stricter check of a declared write path,
 * which must be owner's, root's, or writer's (the skill's uid: as root the
 * skill runs as nobody, and a folder it may write is often nobody's). */
int sg_pin_path(const char *path, uid_t owner, uid_t writer, bool writable, char *why,
                size_t whylen);

/* Does dst, in the mount namespace and root of process pid, show the very
 * object pin holds (device and inode)? 0, or -ESTALE when it does not. */
int sg_pin_check(pid_t pid, const char *dst, int pin);

#endif
