#include "route.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

int sg_route_open(struct sg_route *r)
{
    r->seq = 0;
    r->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (r->fd < 0)
        return -errno;
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    if (bind(r->fd, (struct sockaddr *)&me, sizeof me) < 0) {
        int e = -errno;
        sg_route_close(r);
        return e;
    }
    return 0;
}

void sg_route_close(struct sg_route *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

bool sg_route_stays_here(int type)
{
    return type == RTN_LOCAL || type == RTN_BROADCAST || type == RTN_ANYCAST ||
           type == RTN_MULTICAST;
}

const char *sg_route_type_name(int type)
{
    switch (type) {
    case RTN_UNICAST: return "unicast";
    case RTN_LOCAL: return "local";
    case RTN_BROADCAST: return "broadcast";
    case RTN_ANYCAST: return "anycast";
    case RTN_MULTICAST: return "multicast";
    case RTN_BLACKHOLE: return "blackhole";
    case RTN_UNREACHABLE: return "unreachable";
    case RTN_PROHIBIT: return "prohibit";
    }
    return "other";
}

/* The answer to request seq among the messages in buf, if there is one:
 * *type is then the route's type or the kernel's -errno. */
static bool answer(const char *buf, size_t n, uint32_t seq, int *type)
{
    int len = (int)n;
    for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(h, len);
         h = mnl_nlmsg_next(h, &len)) {
        if (h->nlmsg_seq != seq)
            continue; /* an answer to an earlier request, given up on */
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *err = mnl_nlmsg_get_payload(h);
            if (h->nlmsg_len < mnl_nlmsg_size(sizeof *err))
                *type = -EBADMSG;
            else
                *type = err->error < 0 ? err->error : -ENODATA; /* an ack is no route */
        } else if (h->nlmsg_type != RTM_NEWROUTE ||
                   h->nlmsg_len < mnl_nlmsg_size(sizeof(struct rtmsg))) {
            *type = -EBADMSG;
        } else {
            *type = ((const struct rtmsg *)mnl_nlmsg_get_payload(h))->rtm_type;
        }
        return true;
    }
    return false;
}

int sg_route_type(struct sg_route *r, const struct sockaddr *sa)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    unsigned char addr[16];
    size_t alen;
    int family;
    if (sa->sa_family == AF_INET) {
        memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        family = AF_INET, alen = 4;
    } else if (sa->sa_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (!memcmp(a, mapped, 12)) /* a v6 socket's connect there goes out as v4 */
            memcpy(addr, a + 12, 4), family = AF_INET, alen = 4;
        else
            memcpy(addr, a, 16), family = AF_INET6, alen = 16;
    } else {
        return -EAFNOSUPPORT;
    }
    if (r->fd < 0)
        return -EBADF;
    char buf[8192]; /* a route answer is a few hundred bytes */
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETROUTE;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    nlh->nlmsg_seq = ++r->seq;
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
    rtm->rtm_family = (unsigned char)family;
    rtm->rtm_dst_len = (unsigned char)(alen * 8);
    mnl_attr_put(nlh, RTA_DST, alen, addr);
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    ssize_t sent;
    do
        sent = sendto(r->fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel);
    while (sent < 0 && errno == EINTR);
    if (sent < 0)
        return -errno;
    /* The kernel queued its answer before sendto returned: read what is
     * there (answers to requests given up on before are skipped), never
     * wait for more. */
    for (int reads = 0; reads < 8; reads++) {
        struct sockaddr_nl from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(r->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? -ETIMEDOUT : -errno;
        if (fl != sizeof from || from.nl_pid != 0)
            continue; /* only the kernel answers */
        int type;
        if (answer(buf, (size_t)n, r->seq, &type))
            return type;
    }
    return -ETIMEDOUT;
}
