#include "nflog.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

const char *sg_proto_name(int proto)
{
    switch (proto) {
    case IPPROTO_TCP: return "TCP";
    case IPPROTO_UDP: return "UDP";
    case IPPROTO_UDPLITE: return "UDPLite";
    case IPPROTO_ICMP: return "ICMP";
    case IPPROTO_ICMPV6: return "ICMPv6";
    case IPPROTO_SCTP: return "SCTP";
    }
    return "IP";
}

static void parse_ip(const uint8_t *p, size_t n, struct sg_pkt *out)
{
    memset(out, 0, sizeof *out);
    out->dport = -1;
    snprintf(out->dst, sizeof out->dst, "?");
    if (n < 1)
        return;
    size_t l4 = 0;
    if ((p[0] >> 4) == 4 && n >= 20) {
        size_t ihl = (size_t)(p[0] & 0x0f) * 4;
        out->family = 4;
        out->proto = p[9];
        inet_ntop(AF_INET, p + 16, out->dst, sizeof out->dst);
        l4 = ihl >= 20 ? ihl : 0;
    } else if ((p[0] >> 4) == 6 && n >= 40) {
        out->family = 6;
        out->proto = p[6];
        inet_ntop(AF_INET6, p + 24, out->dst, sizeof out->dst);
        l4 = 40;
    }
    if (l4 && (out->proto == IPPROTO_TCP || out->proto == IPPROTO_UDP) && n >= l4 + 4)
        out->dport = (p[l4 + 2] << 8) | p[l4 + 3];
}

int sg_nflog_parse(const void *buf, size_t len, void (*cb)(void *ctx, const struct sg_pkt *p),
                   void *ctx)
{
    const uint8_t *b = buf;
    int found = 0;
    if (len > SG_NFLOG_MAX)
        len = SG_NFLOG_MAX;
    size_t off = 0;
    while (len - off >= sizeof(struct nlmsghdr)) {
        struct nlmsghdr h;
        memcpy(&h, b + off, sizeof h);
        if (h.nlmsg_len < sizeof h || h.nlmsg_len > len - off)
            break;
        size_t end = off + h.nlmsg_len;
        size_t a = off + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        if (h.nlmsg_type == ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET)) {
            while (a + sizeof(struct nlattr) <= end) {
                struct nlattr at;
                memcpy(&at, b + a, sizeof at);
                if (at.nla_len < sizeof at || at.nla_len > end - a)
                    break;
                if ((at.nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD) {
                    struct sg_pkt p;
                    parse_ip(b + a + NLA_HDRLEN, at.nla_len - NLA_HDRLEN, &p);
                    if (p.family) {
                        cb(ctx, &p);
                        found++;
                    }
                }
                a += NLA_ALIGN(at.nla_len);
            }
        }
        if (NLMSG_ALIGN(h.nlmsg_len) > len - off)
            break;
        off += NLMSG_ALIGN(h.nlmsg_len);
    }
    return found;
}
