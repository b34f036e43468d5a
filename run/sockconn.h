/* connect(): the broker's, for every socket of the skill.
 *
 * A folder declared readable may hold a host daemon's socket (docker, dbus,
 * an ssh agent); the mounts, Landlock and DAC let a process that can see a
 * socket file talk to it, and reading is not talking. So every connect()
 * stops in seccomp and the broker makes the connection itself, on the
 * skill's own socket (pidfd_getfd: the same socket, in the sandbox's
 * network namespace), with an address it checked:
 *
 *   - a pathname unix socket is opened in the skill's root (O_PATH,
 *     RESOLVE_IN_ROOT) and allowed only when the file lies on a tmpfs
 *     instance the sandbox made itself (a server the skill runs itself),
 *     told by its device, which pid 1 reported right after mounting and
 *     before any skill code ran (sandbox.h: own_dev). Never by a path or
 *     a mount point's name: a host bind stacked on /tmp (a --script run
 *     started in /tmp), /run or ~ has the same mount point string. A
 *     socket anywhere else is the host's, whatever path reached it: it is
 *     connected only when it is the very socket the manifest declares
 *     (permissions.unix_sockets, pinned by device and inode at plan time:
 *     hostsock.h), or when a Connect request about it is allowed (rules,
 *     grants, a person; decided on the object's own path, read back from
 *     the opened file, so a symlink of the skill's names what it leads to).
 *     Each is a host_socket_connected event and an audit record; anything
 *     else is refused (EACCES, a syscall_blocked event naming it, and a
 *     decision record). While a person decides, only that call waits. The
 *     connection is made to the opened file (/proc/self/fd/N), never to
 *     the string again;
 *   - abstract unix sockets live in the sandbox's own network namespace,
 *     and inet, inet6 and netlink go through nftables: connected as asked.
 *
 * Letting the call continue instead would be a race: another thread can
 * put a unix socket at the same fd number, and a host path in the address,
 * after the broker looked. Here the kernel never reads the skill's memory
 * or fd table again.
 *
 * The connect is made non-blocking for the moment of the call; a blocking
 * TCP connect that has settled when the call returns (loopback: the
 * proxy's listener) is answered at once; one still in progress waits here
 * (the notification stays open, the loop polls the socket) and gets
 * SO_ERROR's answer. A unix
 * connect whose listener's backlog is full gets EAGAIN instead of waiting.
 * The peer of a unix connection sees the broker's credentials
 * (SO_PEERCRED): pid 0, and the overflow uid when skillgate runs as root.
 *
 * Unix datagram sockets are refused at socket() and socketpair() (seccomp):
 * sendto and sendmsg name a destination per message, which no connect
 * check sees. Cost: one notification, pidfd_getfd and connect per connect
 * (tens of microseconds): about a dozen syscalls of the broker's, the
 * address read with process_vm_readv (the same ptrace access check as
 * /proc/TID/mem, one call), the family asked of the socket held
 * (SO_DOMAIN; ENOTSOCK for any other file), and the last connecting
 * thread's pidfd kept for its next connect. */
#ifndef SG_SOCKCONN_H
#define SG_SOCKCONN_H

#include <poll.h>
#include <seccomp.h>

#include "events.h"
#include "sandbox.h"

struct sg_sockconn;

/* Blocking connects in progress at once: one per blocked thread, so the
 * pids limit bounds them in practice, this in any case (EAGAIN past it). */
#define SG_SOCKCONN_MAX_PENDING 64

/* own: the devices of the sandbox's own tmpfs instances (sg_sandbox);
 * perm: where a Connect to an undeclared host socket is decided (NULL:
 * refused). */
struct sg_perm;
struct sg_sockconn *sg_sockconn_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                                    struct sg_perm *perm, int notify_fd, const dev_t *own,
                                    size_t nown);
/* Answers what still waits (EINTR) and frees s. Connect requests still
 * waiting for a person must be settled first (sg_perm_cancel_all). */
void sg_sockconn_free(struct sg_sockconn *s);
/* A connect notification: answered now, or when the connection settles. */
void sg_sockconn_handle(struct sg_sockconn *s, const struct seccomp_notif *req);
/* The sockets of connects in progress, POLLOUT. */
size_t sg_sockconn_pollfds(struct sg_sockconn *s, struct pollfd *p, size_t max);
void sg_sockconn_dispatch(struct sg_sockconn *s, const struct pollfd *p, size_t n);

/* Is dev one of the sandbox's own tmpfs instances? */
bool sg_sockconn_own_fs(const struct sg_sockconn *s, dev_t dev);

#endif
