/* The sandbox's network namespace: loopback up, default routes (v4 and v6)
 * through lo so that every outgoing packet meets the nftables table, and
 * that table (built with libnftnl): a nat chain sends every TCP connection
 * to the broker's proxy and everything for port 53 to its DNS stub; a filter
 * chain logs each other packet to an NFLOG group and rejects it (TCP with a
 * reset, the rest with ICMP admin-prohibited). Reject, never drop. */
#ifndef SG_NETNS_H
#define SG_NETNS_H

#include <stddef.h>

#define SG_NFLOG_GROUP 7
#define SG_PROXY_PORT 15001 /* every TCP connection out is redirected here */
#define SG_DNS_PORT 15053   /* every UDP or TCP packet to port 53 is redirected here */
#define SG_NFT_TABLE "skillgate"
/* The sandbox's host name (its UTS namespace); the DNS stub answers it
 * with the sandbox's own loopback (egress.c) */
#define SG_SANDBOX_HOSTNAME "skillgate"

/* The namespace is set up from two sides, so that the two cores share the
 * work (bench/): pid 1, inside, brings loopback up and opens a route and a
 * netfilter netlink socket there (sg_net_open); the broker, as the
 * namespace's owner, sends the table and the routes through them
 * (sg_net_setup) while pid 1 mounts. Both return 0 or -errno. */
enum { SG_NL_ROUTE, SG_NL_NFT, SG_NL_FDS };
int sg_net_open(int fds[SG_NL_FDS]);
int sg_net_setup(const int fds[SG_NL_FDS], char *step, size_t steplen);
/* The proxy and DNS stub listeners, inside the namespace, to hand to the
 * broker: fds[SG_EG_*] (-1 for the IPv6 ones when the host has no IPv6),
 * and fds[SG_EG_DIAG], a sock_diag netlink socket of the namespace (-1
 * without one). */
int sg_egress_listeners(int fds[]);
/* A netlink socket bound to the NFLOG group, to hand to the broker. */
int sg_nflog_open(void);
/* The ruleset as nft(8) would print it, for the dry run. Static text. */
const char *sg_nft_ruleset_text(void);

#endif
