/* The egress broker: a DNS stub and a transparent proxy, both fed by the
 * sandbox's nftables redirects and run inside the session's poll loop.
 *
 * The stub answers declared names with synthetic addresses (198.18.0.0/15,
 * fd53:6b69:6c6c:6761::/64), stable for the run, and refuses every other
 * name, so no query for an undeclared name leaves the machine. The proxy
 * maps a synthetic address back to its name, checks name:port against the
 * policy, resolves the real upstream in the broker's own namespace at
 * connect time (or takes it from --resolve), refuses private, loopback and
 * metadata addresses and every address the kernel routes to this machine
 * (route.h), however declared, unless --allow-upstream names one, and
 * checks that the client
 * asks for that name (no domain fronting): the SNI of a TLS ClientHello,
 * read whole, then the rest relayed with splice(2); on plain HTTP, every
 * request on the connection, read strictly by sniff.c before it goes up
 * (copied through a 16-KiB buffer rather than spliced: a keep-alive
 * connection's second request is the fronting one). */
#ifndef SG_EGRESS_H
#define SG_EGRESS_H

#include <poll.h>
#include <stddef.h>

#include "ask.h"
#include "events.h"
#include "sandbox.h"

#define SG_EGRESS_MAX_CONNS 256
#define SG_EGRESS_MAX_NAMES 4096
#define SG_SNIFF_TIMEOUT_MS 5000

struct sg_net;

/* Takes the listener fds (fds[i] set to -1). Undeclared names and
 * addresses are asked through asker (borrowed; ask.h) when it lets the
 * skill ask; NULL refuses them. */
struct sg_net *sg_egress_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                             const struct sg_fetch_asker *asker, int fds[SG_EGRESS_FDS]);
/* Publish the ports the skill serves for the person on the host's loopback
 * (publish.h), reaching the sandbox through pid 1's pidfd (borrowed). */
void sg_egress_publish(struct sg_net *e, int pidfd);
/* The fds to poll now; at most max. */
size_t sg_egress_pollfds(struct sg_net *e, struct pollfd *out, size_t max);
/* Handle what poll said about the fds sg_egress_pollfds gave (same order). */
void sg_egress_dispatch(struct sg_net *e, const struct pollfd *pfds, size_t n);
/* Milliseconds until the next deadline, or -1. */
int sg_egress_timeout(const struct sg_net *e);
/* Close everything (connections report their bytes). */
void sg_egress_free(struct sg_net *e);

/* Does name match an allowed destination (any port when port is 0)? */
bool sg_egress_allowed(const struct sg_plan *plan, const char *name, int port);

#endif
