/* Packets the sandbox's nftables table refused, as NFLOG reports them.
 * The bytes are the skill's own packets: the parser is bounded and fuzzed. */
#ifndef SG_NFLOG_H
#define SG_NFLOG_H

#include <stddef.h>
#include <stdint.h>

#define SG_NFLOG_MAX 65536 /* bytes read from the socket at once */

struct sg_pkt {
    int family;   /* 4 or 6 */
    int proto;    /* IPPROTO_* */
    char dst[46]; /* text address */
    int dport;    /* -1 when not TCP or UDP, or cut short */
};

/* Call cb for each packet message in buf; returns how many were found. */
int sg_nflog_parse(const void *buf, size_t len, void (*cb)(void *ctx, const struct sg_pkt *p),
                   void *ctx);
/* "TCP", "UDP", "ICMP"... */
const char *sg_proto_name(int proto);

#endif
