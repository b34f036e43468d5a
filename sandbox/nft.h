/* The sandbox's network namespace: loopback up, default routes (v4 and v6)
 * through lo so that every outgoing packet meets the nftables table, and
 * that table (built with libnftnl) logging each refused packet to an NFLOG
 * group and rejecting it: TCP with a reset, the rest with ICMP
 * admin-prohibited. Reject, never drop: a skill learns at once. */
#ifndef SG_NFT_H
#define SG_NFT_H

#include <stddef.h>

#define SG_NFLOG_GROUP 7
#define SG_NFT_TABLE "skillgate"

/* Set up the namespace; run inside it with CAP_NET_ADMIN there. Returns 0
 * or -errno with step set. */
int sg_net_setup(char *step, size_t steplen);
/* A netlink socket bound to the NFLOG group, to hand to the broker. */
int sg_nflog_open(void);
/* The ruleset as nft(8) would print it, for the dry run. Static text. */
const char *sg_nft_ruleset_text(void);

#endif
