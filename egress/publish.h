/* Ports a skill serves for the person, published on the host's loopback.
 *
 * A skill's review page (skill-creator's viewer, a webapp-testing server)
 * listens inside the sandbox's network namespace, where nothing on the host
 * reaches it. A port the manifest declares (permissions.network.listen) is
 * published as `docker -p 127.0.0.1::P` does: the broker listens on the
 * host's 127.0.0.1 (never another address), on a port the kernel picks,
 * and forwards each connection it accepts to the skill's 127.0.0.1:P (or
 * ::1:P) inside the sandbox. The port_published event says where ("the
 * skill's :8080 is at http://127.0.0.1:41234/"), and the run's end (the
 * CLI's summary, the TUI's events) says it again.
 *
 * Never the declared number on the host: any port from 1024 up was bound
 * there unasked, and a skill that declared the port of a service that was
 * down (the manual's own policy service, 8787; an OTLP collector, 4318)
 * answered in its place: its own Write request, or skillgate's spans with
 * the collector's Authorization header. A fixed host port only when the
 * person names it (run --publish HOSTPORT:P), and never one that
 * skillgate's own settings point at (sg_plan.own_ports: the OTLP
 * exporter's endpoints, every number of the permission program's words;
 * a picked port that is one is held while the kernel picks another) nor
 * one another process holds: such a port is refused with a
 * port_not_published event saying why, never moved to another.
 *
 * The inner sockets come from a helper process the broker forks once per
 * run: it joins the sandbox's user and network namespaces through pid 1's
 * pidfd (setns; the broker's other threads make that impossible in the
 * broker itself), closes every other descriptor, and from then on only
 * answers "connect to port P" with a connected socket (SCM_RIGHTS); it is
 * forked at the first connection, so a run that publishes nothing pays no
 * fork. Every SG_PUB_SCAN_MS the broker asks the sandbox's listening TCP
 * sockets of a sock_diag socket pid 1 made there (netns.c): one
 * on a port the manifest did not declare is asked (Fetch 127.0.0.1:P, as a
 * browser on this machine would fetch it); allowed, it is published like
 * a declared one; refused, a port_not_published event names it. The listen
 * itself is never refused: inside the sandbox it reaches nothing, and a
 * skill that serves and drives its own page (webapp-testing) keeps working.
 * --publish P publishes the skill's P from the start, declared or not.
 *
 * Any user of the machine reaches 127.0.0.1: each accepted connection's
 * client socket is looked up on this machine (one exact sock_diag query)
 * for its owner; connections of other users (or of an owner that cannot be
 * told) get SG_PUB_MAX_FOREIGN places at most, and SG_PUB_FOREIGN_PER_S new
 * ones a second (so resetting each at once does not pour them into the
 * skill's server); the rest are reset, and the person's (or root's) take
 * another user's place at the cap at once.
 *
 * Bounded: at most SG_PUB_MAX_CONNS connections at once (the rest wait in
 * the listen backlog; at the cap, one that moved no byte for SG_PUB_IDLE_MS,
 * or SG_PUB_IDLE_SENT_MS once its client sent something, is closed for a
 * waiting one, the longest past its limit first, so that connections that
 * never send cannot lock the page out and a request waiting for a slow
 * answer is not handed to them), SG_PUB_MAX_PORTS published ports, 16 KiB in flight
 * per direction; every connection is an inbound event (peer, port, uid) and a
 * network_connection_closed event (bytes, duration). sg_pub_free closes
 * every listener and kills the helper: nothing listens after the run. */
#ifndef SG_PUBLISH_H
#define SG_PUBLISH_H

#include <poll.h>
#include <stddef.h>

#include "ask.h"
#include "events.h"
#include "sandbox.h"

#define SG_PUB_MAX_CONNS 32
#define SG_PUB_MAX_PORTS 32
#define SG_PUB_SCAN_MS 250
#define SG_PUB_IDLE_MS 1000
#define SG_PUB_IDLE_SENT_MS 10000
#define SG_PUB_MAX_FOREIGN 8
#define SG_PUB_FOREIGN_PER_S 8
#define SG_PUB_BUF (16 * 1024)

struct sg_pub;

/* Publish plan's declared ports and watch for undeclared listens in the
 * sandbox whose pid 1 pidfd is given (borrowed), through diag, a sock_diag
 * netlink socket made in its network (taken; -1: nothing is watched).
 * Undeclared ones are asked through asker (borrowed; NULL: refused). Returns NULL only when there
 * is nothing to do (no pidfd). */
struct sg_pub *sg_pub_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                          const struct sg_fetch_asker *asker, bool may_ask, int pidfd,
                          int diag);
size_t sg_pub_pollfds(struct sg_pub *p, struct pollfd *out, size_t max);
void sg_pub_dispatch(struct sg_pub *p, const struct pollfd *pfds, size_t n);
int sg_pub_timeout(const struct sg_pub *p);
void sg_pub_free(struct sg_pub *p);

/* Add the listening ports of one recv of a sock_diag dump (messages of
 * sequence seq) to ports[*n] (at most max, each once). 1 when the dump
 * ended (NLMSG_DONE or an error), else 0. For tests. */
/* The owner uid of the socket one exact sock_diag lookup (sequence seq)
 * for the 4-tuple want answered in buf: 1, or 0 when it found none, or a
 * socket that is not the one asked for (a listener, another tuple) or that
 * no process holds any more (its owner cannot be told). For tests. */
struct inet_diag_sockid;
int sg_pub_parse_owner(const void *buf, size_t len, uint32_t seq,
                       const struct inet_diag_sockid *want, uint32_t *uid);
int sg_pub_parse_diag(const void *buf, size_t len, uint32_t seq, uint16_t *ports, size_t max,
                      size_t *n);

#endif
