#include "netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "util.h"

const char *sg_nft_ruleset_text(void)
{
    return "table inet " SG_NFT_TABLE " {\n"
           "    chain nat {\n"
           "        type nat hook output priority dstnat; policy accept;\n"
           "        udp dport 53 redirect to :15053\n"
           "        tcp dport 53 redirect to :15053\n"
           "        oif \"lo\" ip daddr 127.0.0.0/8 return\n"
           "        oif \"lo\" ip6 daddr ::1 return\n"
           "        meta l4proto tcp redirect to :15001\n"
           "    }\n"
           "    chain output {\n"
           "        type filter hook output priority filter; policy accept;\n"
           "        oif \"lo\" ip daddr 127.0.0.0/8 accept\n"
           "        oif \"lo\" ip6 daddr ::1 accept\n"
           "        log group 7\n"
           "        meta l4proto tcp reject with tcp reset\n"
           "        reject with icmpx admin-prohibited\n"
           "    }\n"
           "}\n"
           "routes: default dev lo (IPv4 and IPv6), so nothing bypasses the table\n";
}

static int lo_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int r = 0;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        r = -errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (!r && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        r = -errno;
    close(s);
    return r;
}

/* Send one request on one of the namespace's netlink sockets and wait for
 * its ack. */
static int talk(int fd, void *msg, size_t len, uint32_t seq)
{
    struct sockaddr_nl me;
    socklen_t ml = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0)
        return -errno;
    if (send(fd, msg, len, 0) < 0)
        return -errno;
    char buf[8192];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        int cb = mnl_cb_run(buf, (size_t)n, seq, me.nl_pid, NULL, NULL);
        if (cb < 0)
            return -errno;
        if (cb == MNL_CB_STOP)
            return 0;
    }
}

/* A default route through lo with a loopback source address, so that the
 * table's TCP reset finds its way back to the socket at once. */
static int default_route(int fd, int family, unsigned ifindex, uint32_t seq)
{
    char buf[256];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWROUTE;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
    nlh->nlmsg_seq = seq;
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
    rtm->rtm_family = (unsigned char)family;
    rtm->rtm_dst_len = 0;
    rtm->rtm_table = RT_TABLE_MAIN;
    rtm->rtm_protocol = RTPROT_STATIC;
    rtm->rtm_scope = RT_SCOPE_LINK;
    rtm->rtm_type = RTN_UNICAST;
    mnl_attr_put_u32(nlh, RTA_OIF, ifindex);
    if (family == AF_INET) {
        struct in_addr src = {htonl(INADDR_LOOPBACK)};
        mnl_attr_put(nlh, RTA_PREFSRC, sizeof src, &src);
    } else {
        struct in6_addr src = IN6ADDR_LOOPBACK_INIT;
        mnl_attr_put(nlh, RTA_PREFSRC, sizeof src, &src);
    }
    return talk(fd, nlh, nlh->nlmsg_len, seq);
}

static void add(struct nftnl_rule *r, struct nftnl_expr *e)
{
    nftnl_rule_add_expr(r, e);
}

static struct nftnl_expr *meta(uint32_t key)
{
    struct nftnl_expr *e = nftnl_expr_alloc("meta");
    nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
    nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
    return e;
}

static struct nftnl_expr *cmp_eq(const void *data, uint32_t len)
{
    struct nftnl_expr *e = nftnl_expr_alloc("cmp");
    nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
    nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
    nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
    return e;
}

/* payload load of the destination address, masked to a prefix */
static void daddr_in(struct nftnl_rule *r, bool v6, const void *net, const void *mask,
                     uint32_t len)
{
    struct nftnl_expr *e = nftnl_expr_alloc("payload");
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, v6 ? 24 : 16);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
    add(r, e);
    if (mask) {
        e = nftnl_expr_alloc("bitwise");
        uint8_t zero[16] = {0};
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
        add(r, e);
    }
    add(r, cmp_eq(net, len));
}

static struct nftnl_rule *rule_in(const char *chain)
{
    struct nftnl_rule *r = nftnl_rule_alloc();
    nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
    nftnl_rule_set_str(r, NFTNL_RULE_TABLE, SG_NFT_TABLE);
    nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
    return r;
}

static struct nftnl_rule *rule(void)
{
    return rule_in("output");
}

/* th dport == port (TCP and UDP keep it at the same offset) */
static void dport_is(struct nftnl_rule *r, uint16_t port)
{
    struct nftnl_expr *e = nftnl_expr_alloc("payload");
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, 2);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 2);
    nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
    nftnl_rule_add_expr(r, e);
    uint16_t be = htons(port);
    nftnl_rule_add_expr(r, cmp_eq(&be, 2));
}

/* redirect to :port (the local address of the outgoing interface, lo) */
static void redirect(struct nftnl_rule *r, uint16_t port)
{
    struct nftnl_expr *e = nftnl_expr_alloc("immediate");
    uint16_t be = htons(port);
    nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
    nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &be, sizeof be);
    nftnl_rule_add_expr(r, e);
    e = nftnl_expr_alloc("redir");
    nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
    nftnl_rule_add_expr(r, e);
}

static void verdict(struct nftnl_rule *r, int v)
{
    struct nftnl_expr *e = nftnl_expr_alloc("immediate");
    nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
    nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
    add(r, e);
}

static void put_rule(struct mnl_nlmsg_batch *b, struct nftnl_rule *r, uint32_t *seq)
{
    struct nlmsghdr *nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWRULE,
                                                      NFPROTO_INET, NLM_F_APPEND | NLM_F_CREATE,
                                                      (*seq)++);
    nftnl_rule_nlmsg_build_payload(nlh, r);
    nftnl_rule_free(r);
    mnl_nlmsg_batch_next(b);
}

/* A base chain of the table on the output hook. */
static void put_chain(struct mnl_nlmsg_batch *b, const char *name, const char *type, int prio,
                      uint32_t *seq)
{
    struct nftnl_chain *c = nftnl_chain_alloc();
    nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, SG_NFT_TABLE);
    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
    nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
    nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
    nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
    nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
    struct nlmsghdr *nlh = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(b),
                                                       NFT_MSG_NEWCHAIN, NFPROTO_INET,
                                                       NLM_F_CREATE, (*seq)++);
    nftnl_chain_nlmsg_build_payload(nlh, c);
    nftnl_chain_free(c);
    mnl_nlmsg_batch_next(b);
}

/* oif lo and daddr 127.0.0.0/8 (v4) or ::1 (v6): loopback stays loopback */
static void put_loopback_rule(struct mnl_nlmsg_batch *b, const char *chain, bool v6, unsigned lo,
                              int v, uint32_t *seq)
{
    static const uint8_t net4[4] = {127, 0, 0, 0}, mask4[4] = {255, 0, 0, 0};
    static const struct in6_addr one = IN6ADDR_LOOPBACK_INIT;
    uint32_t nfproto = v6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
    struct nftnl_rule *r = rule_in(chain);
    add(r, meta(NFT_META_OIF));
    add(r, cmp_eq(&lo, sizeof lo));
    add(r, meta(NFT_META_NFPROTO));
    add(r, cmp_eq(&nfproto, 1));
    if (v6)
        daddr_in(r, true, &one, NULL, 16);
    else
        daddr_in(r, false, net4, mask4, 4);
    verdict(r, v);
    put_rule(b, r, seq);
}

static int nft_table(int fd, unsigned lo, uint32_t seq0)
{
    static char buf[16384];
    uint32_t seq = seq0;
    struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(buf, sizeof buf);
    nftnl_batch_begin(mnl_nlmsg_batch_current(b), seq++);
    mnl_nlmsg_batch_next(b);

    struct nftnl_table *t = nftnl_table_alloc();
    nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
    nftnl_table_set_str(t, NFTNL_TABLE_NAME, SG_NFT_TABLE);
    struct nlmsghdr *nlh = nftnl_table_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWTABLE,
                                                       NFPROTO_INET, NLM_F_CREATE, seq++);
    nftnl_table_nlmsg_build_payload(nlh, t);
    nftnl_table_free(t);
    mnl_nlmsg_batch_next(b);

    put_chain(b, "output", "filter", 0, &seq);
    put_chain(b, "nat", "nat", -100, &seq);

    /* every lookup to the stub first: a resolv.conf naming a loopback
     * resolver (systemd-resolved's 127.0.0.53, a local dnsmasq) must not
     * fall through to the loopback exemption and fail inside the sandbox */
    struct nftnl_rule *r;
    static const uint8_t l4s[] = {IPPROTO_UDP, IPPROTO_TCP};
    for (size_t k = 0; k < 2; k++) {
        r = rule_in("nat");
        add(r, meta(NFT_META_L4PROTO));
        add(r, cmp_eq(&l4s[k], 1));
        dport_is(r, 53);
        redirect(r, SG_DNS_PORT);
        put_rule(b, r, &seq);
    }
    put_loopback_rule(b, "nat", false, lo, NFT_RETURN, &seq);
    put_loopback_rule(b, "nat", true, lo, NFT_RETURN, &seq);
    r = rule_in("nat");
    add(r, meta(NFT_META_L4PROTO));
    add(r, cmp_eq(&l4s[1], 1));
    redirect(r, SG_PROXY_PORT);
    put_rule(b, r, &seq);

    put_loopback_rule(b, "output", false, lo, NF_ACCEPT, &seq);
    put_loopback_rule(b, "output", true, lo, NF_ACCEPT, &seq);

    r = rule();
    struct nftnl_expr *e = nftnl_expr_alloc("log");
    nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, SG_NFLOG_GROUP);
    nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, 128);
    add(r, e);
    put_rule(b, r, &seq);

    r = rule();
    uint8_t tcp = IPPROTO_TCP;
    add(r, meta(NFT_META_L4PROTO));
    add(r, cmp_eq(&tcp, 1));
    e = nftnl_expr_alloc("reject");
    nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
    nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 0);
    add(r, e);
    put_rule(b, r, &seq);

    r = rule();
    e = nftnl_expr_alloc("reject");
    nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
    nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
    add(r, e);
    /* the last message asks for the ack that ends the exchange */
    nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWRULE, NFPROTO_INET,
                                     NLM_F_APPEND | NLM_F_CREATE | NLM_F_ACK, seq);
    uint32_t ack_seq = seq++;
    nftnl_rule_nlmsg_build_payload(nlh, r);
    nftnl_rule_free(r);
    mnl_nlmsg_batch_next(b);

    nftnl_batch_end(mnl_nlmsg_batch_current(b), seq++);
    mnl_nlmsg_batch_next(b);
    int rc = talk(fd, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b), ack_seq);
    mnl_nlmsg_batch_stop(b);
    return rc;
}

static int netlink_socket(int proto)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
    if (fd < 0)
        return -errno;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK}; /* the kernel picks the port */
    /* the broker waits on it for the kernel's ack: never for ever */
    struct timeval limit = {.tv_sec = 5};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

int sg_net_open(int fds[SG_NL_FDS])
{
    fds[SG_NL_ROUTE] = fds[SG_NL_NFT] = -1;
    int r = lo_up();
    if (r < 0)
        return r;
    if ((fds[SG_NL_ROUTE] = netlink_socket(NETLINK_ROUTE)) < 0)
        return fds[SG_NL_ROUTE];
    if ((fds[SG_NL_NFT] = netlink_socket(NETLINK_NETFILTER)) < 0) {
        r = fds[SG_NL_NFT];
        close(fds[SG_NL_ROUTE]);
        fds[SG_NL_ROUTE] = -1;
        return r;
    }
    return 0;
}

int sg_net_setup(const int fds[SG_NL_FDS], char *step, size_t steplen)
{
    int r;
    /* every new namespace's loopback is interface 1 (the kernel insists) */
    const unsigned lo = 1;
    uint32_t seq = (uint32_t)time(NULL);
    if ((r = nft_table(fds[SG_NL_NFT], lo, seq)) < 0) {
        snprintf(step, steplen, "nftables table");
        return r;
    }
    if ((r = default_route(fds[SG_NL_ROUTE], AF_INET, lo, seq + 100)) < 0) {
        snprintf(step, steplen, "IPv4 default route via lo");
        return r;
    }
    /* IPv6 may be disabled on this host: then there is no v6 to leak. */
    r = default_route(fds[SG_NL_ROUTE], AF_INET6, lo, seq + 101);
    if (r < 0 && r != -EACCES && r != -EAFNOSUPPORT && r != -EOPNOTSUPP) {
        snprintf(step, steplen, "IPv6 default route via lo");
        return r;
    }
    return 0;
}

int sg_nflog_open(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0)
        return -errno;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        goto fail;
    char buf[256];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(SG_NFLOG_GROUP);
    struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
    mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof cmd, &cmd);
    struct nfulnl_msg_config_mode mode = {.copy_range = htonl(128), .copy_mode = NFULNL_COPY_PACKET};
    mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof mode, &mode);
    /* one packet per message, at once: the kernel batches for a second otherwise */
    mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
    mnl_attr_put_u32(nlh, NFULA_CFG_TIMEOUT, htonl(0));
    if (send(fd, nlh, nlh->nlmsg_len, 0) < 0)
        goto fail;
    return fd;
fail:;
    int e = -errno;
    close(fd);
    return e;
}

static int listener(int family, int type, uint16_t port)
{
    int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int r;
    if (family == AF_INET) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        r = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port),
                                 .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        r = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (r == 0 && type == SOCK_STREAM)
        r = listen(fd, SOMAXCONN); /* a burst of connects waits, not a SYN retry 1 s later */
    if (r < 0) {
        r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

int sg_egress_listeners(int fds[])
{
    static const struct {
        int family, type;
        uint16_t port;
    } want[SG_EGRESS_FDS] = {
        [SG_EG_PROXY4] = {AF_INET, SOCK_STREAM, SG_PROXY_PORT},
        [SG_EG_PROXY6] = {AF_INET6, SOCK_STREAM, SG_PROXY_PORT},
        [SG_EG_DNSU4] = {AF_INET, SOCK_DGRAM, SG_DNS_PORT},
        [SG_EG_DNSU6] = {AF_INET6, SOCK_DGRAM, SG_DNS_PORT},
        [SG_EG_DNST4] = {AF_INET, SOCK_STREAM, SG_DNS_PORT},
        [SG_EG_DNST6] = {AF_INET6, SOCK_STREAM, SG_DNS_PORT},
    };
    /* the sandbox's listening sockets, asked for by the broker: only a
     * netlink socket made in this namespace sees them (optional: without
     * NETLINK_SOCK_DIAG no undeclared port is offered for publishing) */
    fds[SG_EG_DIAG] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
                             NETLINK_SOCK_DIAG);
    if (fds[SG_EG_DIAG] < 0)
        fds[SG_EG_DIAG] = -1;
    for (int i = 0; i < SG_EGRESS_FDS; i++) {
        if (i == SG_EG_DIAG)
            continue;
        fds[i] = listener(want[i].family, want[i].type, want[i].port);
        /* IPv6 may be absent on the host: then nothing can leave by it either */
        if (fds[i] < 0 && want[i].family == AF_INET) {
            int r = fds[i];
            for (int k = 0; k < SG_EGRESS_FDS; k++)
                if (k != i && (k < i || k == SG_EG_DIAG) && fds[k] >= 0)
                    close(fds[k]);
            return r;
        }
    }
    return 0;
}
