#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dns.h"
#include "netns.h"
#include "publish.h"
#include "route.h"
#include "sniff.h"
#include "parse.h"
#include "util.h"

#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

#define PIPE_CAP (1 << 20)
/* Empty pipes kept from closed connections for the next ones: a short
 * connection (a request, an answer) otherwise pays pipe2, F_SETPIPE_SZ and
 * two closes per direction, more than its splices. */
#define PIPE_POOL 16
#define DNS_TTL 5

enum cstate { C_ASKING, C_RESOLVING, C_CONNECTING, C_RELAY, C_DNSTCP };

struct dir {
    int p[2];
    size_t cap;    /* the pipe's size as the kernel gave it (F_SETPIPE_SZ may fail) */
    size_t inpipe;
    bool eof, shut;
    uint64_t bytes;
};

struct conn {
    uint64_t serial;
    enum cstate st;
    int cfd, ufd;
    char name[SG_DNS_NAME_MAX + 1];
    uint16_t port;
    char upstream[INET6_ADDRSTRLEN + 8];
    /* The skill's bytes before they go up. TLS and other protocols: only the
     * first message, then splice. Plain HTTP: every byte, for as long as the
     * connection lives; the buffer then holds what was not yet sent or not
     * yet checked, and fwd_limit is where the checker stands. */
    uint8_t sniff[SG_SNIFF_MAX];
    size_t sniff_len, sniff_sent, fwd_limit; /* read, sent up, cleared to send */
    bool sniff_done, connected;
    bool http;         /* plain HTTP: every request is checked (hs) */
    struct sg_http hs;
    int64_t grace_ms; /* when a bare method prefix ("GE") may go up */
    struct dir up, down; /* up: skill -> world, down: world -> skill */
    int64_t started_ms, deadline_ms;
};

struct resolve_job {
    uint64_t serial;
    char name[SG_DNS_NAME_MAX + 1];
    uint16_t port;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int err;
    int wfd;
};

struct sg_net {
    const struct sg_plan *plan;
    struct sg_event_bus *bus;
    int lfd[SG_EGRESS_FDS];
    struct conn *conns[SG_EGRESS_MAX_CONNS];
    uint64_t next_serial;
    char *names[SG_EGRESS_MAX_NAMES]; /* synthetic address i+1 <-> names[i] */
    size_t nnames;
    int rpipe[2]; /* resolver threads report here */
    const struct sg_fetch_asker *asker; /* NULL: every undeclared one refused */
    char *approved[256]; /* names a person let through for this run (any port) */
    size_t napproved;
    struct dns_wait *waiting; /* queries held while a person decides */
    /* what the last sg_egress_pollfds call listed */
    struct {
        int kind; /* 0 listener, 1 client fd, 2 upstream fd, 3 resolver */
        int idx;
    } tags[SG_EGRESS_FDS + 2 * SG_EGRESS_MAX_CONNS + 1];
    size_t ntags;
    char *search[8]; /* resolv.conf's search domains, which a resolver appends */
    size_t nsearch;
    int64_t lookup_patience_ms; /* a held lookup's resolver gave up past this silence */
    struct {
        int p[2];
        size_t cap;
    } pool[PIPE_POOL]; /* empty pipes for the next connections */
    size_t npool;
    struct sg_pub *pub; /* ports published on the host's loopback (publish.h) */
    size_t pub_first, pub_n; /* its slice of the last sg_egress_pollfds */
    struct sg_route route; /* asks the kernel whether an upstream is this machine */
    int route_err;         /* why it could not be opened */
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- policy ---- */

static bool name_matches(const struct sg_plan_egress *r, const char *name)
{
    if (!r->wildcard)
        return !strcmp(r->domain, name);
    const char *suffix = r->domain + 1; /* ".example.com" */
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && !strcmp(name + n - s, suffix);
}

bool sg_egress_allowed(const struct sg_plan *plan, const char *name, int port)
{
    for (size_t i = 0; i < plan->negress; i++) {
        const struct sg_plan_egress *r = &plan->egress[i];
        if (!name_matches(r, name))
            continue;
        if (port == 0)
            return true;
        for (size_t k = 0; k < r->nports; k++)
            if (r->ports[k] == port)
                return true;
    }
    return false;
}

/* Addresses no upstream may be unless the person allows one (sg_addr_private). */
static bool forbidden_upstream(const struct sockaddr *sa)
{
    char text[INET6_ADDRSTRLEN];
    const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                                             : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (!inet_ntop(sa->sa_family, a, text, sizeof text))
        return true;
    return sg_addr_private(text);
}

/* ---- synthetic addresses ---- */

static const uint8_t v6_prefix[8] = {0xfd, 0x53, 0x6b, 0x69, 0x6c, 0x6c, 0x67, 0x61};

static long name_index(struct sg_net *e, const char *name, bool create)
{
    for (size_t i = 0; i < e->nnames; i++)
        if (!strcmp(e->names[i], name))
            return (long)i;
    if (!create || e->nnames >= SG_EGRESS_MAX_NAMES)
        return -1;
    e->names[e->nnames] = sg_xstrdup(name);
    return (long)e->nnames++;
}

static void synth_v4(long i, uint8_t out[4])
{
    uint32_t a = (198u << 24) | (18u << 16) | (uint32_t)(i + 1);
    out[0] = (uint8_t)(a >> 24), out[1] = (uint8_t)(a >> 16), out[2] = (uint8_t)(a >> 8);
    out[3] = (uint8_t)a;
}

static void synth_v6(long i, uint8_t out[16])
{
    memset(out, 0, 16);
    memcpy(out, v6_prefix, 8);
    uint32_t n = (uint32_t)(i + 1);
    out[12] = (uint8_t)(n >> 24), out[13] = (uint8_t)(n >> 16), out[14] = (uint8_t)(n >> 8);
    out[15] = (uint8_t)n;
}

/* The name an original destination was handed out for, or NULL. */
static const char *name_of(struct sg_net *e, const struct sockaddr *sa)
{
    long i = -1;
    if (sa->sa_family == AF_INET) {
        uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
        if ((a >> 17) == ((198u << 7) | (18u >> 1)))
            i = (long)(a - ((198u << 24) | (18u << 16))) - 1;
    } else {
        const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (!memcmp(b, v6_prefix, 8) && !b[8] && !b[9] && !b[10] && !b[11])
            i = (long)(((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 |
                        b[15])) - 1;
    }
    return i >= 0 && (size_t)i < e->nnames ? e->names[i] : NULL;
}

static void addr_text(const struct sockaddr *sa, char *out, size_t n, int *port)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s->sin_addr, out, (socklen_t)n);
        *port = ntohs(s->sin_port);
    } else {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, out, (socklen_t)n);
        *port = ntohs(s->sin6_port);
    }
}

/* ---- Fetch: asking about what was not declared ---- */

#define MAX_WAITERS 8
struct dns_wait {
    struct sg_net *e;
    struct dns_wait *next;
    char name[SG_DNS_NAME_MAX + 1];
    int64_t last_ms; /* when the skill last asked for this name */
    char gone[96];   /* why it stopped waiting, as dns_gone says it */
    int n;
    struct {
        int fd;
        struct sockaddr_storage from;
        socklen_t fromlen;
        uint8_t query[SG_DNS_MAX];
        size_t len;
    } w[MAX_WAITERS];
};

static bool fetch_may_ask(const struct sg_net *e)
{
    return e->asker && e->asker->may_ask(e->asker->ctx);
}

static bool net_allowed(const struct sg_net *e, const char *name, int port)
{
    if (sg_egress_allowed(e->plan, name, port))
        return true;
    for (size_t i = 0; i < e->napproved; i++)
        if (!strcmp(e->approved[i], name))
            return true;
    return false;
}

static void approve(struct sg_net *e, const char *name)
{
    if (!net_allowed(e, name, 0) && e->napproved < SG_ARRAY_LEN(e->approved))
        e->approved[e->napproved++] = sg_xstrdup(name);
}

static int answer(struct sg_net *e, const uint8_t *buf, size_t len, uint8_t *out, size_t max,
                  const char *via);

static void dns_decided(void *ctx, bool allowed, const char *by)
{
    (void)by;
    struct dns_wait *w = ctx;
    struct sg_net *e = w->e;
    if (allowed)
        approve(e, w->name);
    for (struct dns_wait **pp = &e->waiting; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    for (int i = 0; i < w->n; i++) {
        uint8_t out[SG_DNS_MAX];
        int r = answer(e, w->w[i].query, w->w[i].len, out, sizeof out, "udp");
        if (r > 0)
            sendto(w->w[i].fd, out, (size_t)r, MSG_DONTWAIT, (struct sockaddr *)&w->w[i].from,
                   w->w[i].fromlen);
    }
    free(w);
}

/* Whether the skill stopped waiting for the held lookup w: a lookup has
 * no close, but its resolver asks again within a try's timeout while it
 * waits; no query for the name for longer than that, and it gave up. A
 * later lookup of the name is asked afresh. Never blocks. */
static const char *dns_gone(void *ctx)
{
    struct dns_wait *w = ctx;
    int64_t quiet = now_ms() - w->last_ms;
    if (quiet <= w->e->lookup_patience_ms)
        return NULL;
    snprintf(w->gone, sizeof w->gone, "its lookup timed out: no query for %lld s",
             (long long)(quiet / 1000));
    return w->gone;
}

/* ---- DNS stub ---- */

/* The sandbox's own names: its host name (sethostname in launch.c),
 * localhost and *.localhost (RFC 6761), each also with a search domain of
 * resolv.conf appended (a resolver tries those first). They are the
 * sandbox's loopback: answered here, never asked, never sent on. A server
 * that looks its own name up (Python's http.server) then starts with no
 * question a person could not sensibly answer. */
static bool own_name(const struct sg_net *e, const char *name)
{
    static const char *const own[] = {SG_SANDBOX_HOSTNAME, "localhost", "localhost.localdomain"};
    if (sg_str_has_suffix(name, ".localhost"))
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(own); i++) {
        size_t n = strlen(own[i]);
        if (!strcmp(name, own[i]))
            return true;
        if (strncmp(name, own[i], n) || name[n] != '.')
            continue;
        for (size_t k = 0; k < e->nsearch; k++)
            if (!strcmp(name + n + 1, e->search[k]))
                return true;
    }
    return false;
}

static bool is_own(const struct sg_net *e, const struct sg_dns_query *q)
{
    return own_name(e, q->name) || (q->qtype == SG_DNS_PTR && sg_dns_loopback_reverse(q->name));
}

/* How long a held lookup's resolver waits for one answer: the last
 * "timeout:N" of resolv.conf's options lines (the sandbox reads this
 * machine's), which glibc, musl, Go and c-ares honour, the last one
 * winning as in glibc; 0 when line sets none. line is cut up. */
static int resolver_timeout_s(char *line)
{
    int n = 0;
    if (strncmp(line, "options", 7) || (line[7] != ' ' && line[7] != '\t'))
        return 0;
    for (char *save = NULL, *w = strtok_r(line + 8, " \t\r", &save); w;
         w = strtok_r(NULL, " \t\r", &save)) {
        if (strncmp(w, "timeout:", 8))
            continue;
        long v = strtol(w + 8, NULL, 10);
        n = v < 1 ? 1 : v > 30 ? 30 : (int)v; /* glibc's own bounds */
    }
    return n;
}

/* resolv.conf's search (and domain) lines: what a resolver appends; and
 * how long a held lookup may go unasked before its resolver has given up:
 * c-ares doubles a try's timeout each round (5, 10, 20 s with three
 * tries), glibc and musl ask again within one; past four timeouts and
 * 2 s, no resolver of theirs still waits for that answer. */
static void read_search(struct sg_net *e)
{
    cleanup_free char *text = NULL;
    size_t len;
    e->lookup_patience_ms = (4 * 5 + 2) * 1000;
    if (sg_read_file_capped("/etc/resolv.conf", 65536, &text, &len) < 0)
        return;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "options", 7)) {
            int t = resolver_timeout_s(line);
            if (t)
                e->lookup_patience_ms = (4 * (int64_t)t + 2) * 1000;
            continue;
        }
        if (strncmp(line, "search", 6) && strncmp(line, "domain", 6))
            continue;
        if (line[6] != ' ' && line[6] != '\t')
            continue;
        for (char *s2 = NULL, *w = strtok_r(line + 7, " \t\r", &s2); w;
             w = strtok_r(NULL, " \t\r", &s2)) {
            size_t n = strlen(w);
            while (n && w[n - 1] == '.')
                w[--n] = '\0';
            if (!n || e->nsearch >= SG_ARRAY_LEN(e->search))
                continue;
            for (char *c = w; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            e->search[e->nsearch++] = sg_xstrdup(w);
        }
    }
}

/* An own name's answer: 127.0.0.1, ::1 (when the sandbox has IPv6),
 * localhost for a loopback reverse name, else no record. */
static int own_answer(struct sg_net *e, const uint8_t *buf, const struct sg_dns_query *q,
                      uint8_t *out, size_t max, const char *via)
{
    static const uint8_t lo4[4] = {127, 0, 0, 1}, lo6[16] = {[15] = 1};
    const char *shown = "no record";
    int r;
    if (q->qclass == 1 && q->qtype == SG_DNS_PTR) {
        shown = "localhost";
        r = sg_dns_build_ptr(buf, q, "localhost", DNS_TTL, out, max);
    } else if (q->qclass == 1 && q->qtype == SG_DNS_A) {
        shown = "127.0.0.1";
        r = sg_dns_build_answer(buf, q, SG_RCODE_NOERROR, lo4, 4, DNS_TTL, out, max);
    } else if (q->qclass == 1 && q->qtype == SG_DNS_AAAA && e->lfd[SG_EG_PROXY6] >= 0) {
        shown = "::1";
        r = sg_dns_build_answer(buf, q, SG_RCODE_NOERROR, lo6, 16, DNS_TTL, out, max);
    } else {
        r = sg_dns_build_answer(buf, q, SG_RCODE_NOERROR, NULL, 0, 0, out, max);
    }
    sg_bus_emit(e->bus, SG_EV_DNS_RESOLUTION,
                json_pack("{s:s, s:i, s:s, s:s, s:b}", "name", q->name, "qtype", q->qtype,
                          "answer", shown, "via", via, "local", 1),
                "%s (type %u) -> %s: the sandbox's own name, answered locally", q->name,
                q->qtype, shown);
    return r;
}

static int answer(struct sg_net *e, const uint8_t *buf, size_t len, uint8_t *out, size_t max,
                  const char *via)
{
    struct sg_dns_query q;
    if (sg_dns_parse_query(buf, len, &q) < 0) {
        /* bytes sent to port 53 that are no query: a tunnel, not a lookup */
        sg_bus_emit(e->bus, SG_EV_DNS_BLOCKED,
                    json_pack("{s:s, s:s, s:s, s:I, s:b, s:b}", "name", "", "via", via, "reason",
                              "not a DNS query", "bytes", (json_int_t)len, "exfil_suspect", 1,
                              "prevented", 1),
                    "%zu bytes to port 53 (%s) that are not a DNS query: refused", len, via);
        if (len < 12)
            return -1;
        /* echo the header with FORMERR and no question */
        memset(out, 0, 12);
        memcpy(out, buf, 2);
        out[2] = 0x80;
        out[3] = SG_RCODE_FORMERR;
        return 12;
    }
    bool allowed = net_allowed(e, q.name, 0);
    if (!allowed && is_own(e, &q))
        return own_answer(e, buf, &q, out, max, via);
    if (!allowed) {
        bool exfil = sg_dns_looks_like_exfil(q.name);
        /* the manifest's own refusal: no rule or person reaches it */
        const char *why = e->asker && e->asker->ctx && !fetch_may_ask(e)
                              ? "not declared; allowed-tools has no Fetch"
                              : "not declared";
        sg_bus_emit(e->bus, SG_EV_DNS_BLOCKED,
                    json_pack("{s:s, s:i, s:s, s:s, s:b, s:b}", "name", q.name, "qtype", q.qtype,
                              "via", via, "reason", why, "exfil_suspect", exfil, "prevented", 1),
                    "%s (type %u) refused: %s%s", q.name, q.qtype, why,
                    exfil ? "; its labels look like smuggled data (DNS exfiltration)" : "");
        return sg_dns_build_answer(buf, &q, SG_RCODE_NXDOMAIN, NULL, 0, 0, out, max);
    }
    if (q.qclass != 1 || (q.qtype != SG_DNS_A && q.qtype != SG_DNS_AAAA) ||
        (q.qtype == SG_DNS_AAAA && e->lfd[SG_EG_PROXY6] < 0))
        return sg_dns_build_answer(buf, &q, q.qtype == SG_DNS_AAAA ? SG_RCODE_NOERROR
                                                                   : SG_RCODE_REFUSED,
                                   NULL, 0, 0, out, max);
    long i = name_index(e, q.name, true);
    if (i < 0)
        return sg_dns_build_answer(buf, &q, SG_RCODE_REFUSED, NULL, 0, 0, out, max);
    uint8_t a[16];
    char text[INET6_ADDRSTRLEN];
    size_t alen = q.qtype == SG_DNS_A ? 4 : 16;
    if (alen == 4)
        synth_v4(i, a);
    else
        synth_v6(i, a);
    inet_ntop(alen == 4 ? AF_INET : AF_INET6, a, text, sizeof text);
    sg_bus_emit(e->bus, SG_EV_DNS_RESOLUTION,
                json_pack("{s:s, s:s, s:s, s:b}", "name", q.name, "type", alen == 4 ? "A" : "AAAA",
                          "answer", text, "synthetic", 1),
                "%s %s -> %s (synthetic; the real address is looked up at connect time)", q.name,
                alen == 4 ? "A" : "AAAA", text);
    return sg_dns_build_answer(buf, &q, SG_RCODE_NOERROR, a, alen, DNS_TTL, out, max);
}

static void dns_udp(struct sg_net *e, int fd)
{
    for (int rounds = 0; rounds < 64; rounds++) {
        uint8_t buf[SG_DNS_MAX + 1], out[SG_DNS_MAX];
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return;
        if ((size_t)n > SG_DNS_MAX)
            continue; /* over the cap: not a query we answer */
        /* an undeclared name the skill may ask for: hold the query for a person */
        struct sg_dns_query q;
        if (fetch_may_ask(e) && sg_dns_parse_query(buf, (size_t)n, &q) == 0 &&
            !net_allowed(e, q.name, 0) && !is_own(e, &q) && !sg_dns_looks_like_exfil(q.name)) {
            struct dns_wait *w;
            for (w = e->waiting; w && strcmp(w->name, q.name); w = w->next)
                ;
            bool fresh = !w;
            if (fresh) {
                w = sg_xcalloc(1, sizeof *w);
                w->e = e;
                snprintf(w->name, sizeof w->name, "%s", q.name);
                w->next = e->waiting;
                e->waiting = w;
            }
            w->last_ms = now_ms();
            if (w->n < MAX_WAITERS) {
                w->w[w->n].fd = fd;
                w->w[w->n].from = from;
                w->w[w->n].fromlen = fl;
                memcpy(w->w[w->n].query, buf, (size_t)n);
                w->w[w->n].len = (size_t)n;
                w->n++;
            }
            if (fresh) {
                e->asker->ask(e->asker->ctx, q.name, 0,
                              "a DNS lookup; an approval lets it connect to any port of "
                              "this name",
                              dns_decided, dns_gone, w);
            }
            continue;
        }
        int r = answer(e, buf, (size_t)n, out, sizeof out, "udp");
        if (r > 0)
            sendto(fd, out, (size_t)r, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
    }
}

/* ---- connections ---- */

static void emit_closed(struct sg_net *e, struct conn *c)
{
    if (c->st == C_DNSTCP || !c->connected)
        return;
    sg_bus_emit(e->bus, SG_EV_NETWORK_CONNECTION_CLOSED,
                json_pack("{s:s, s:i, s:s, s:I, s:I, s:I}", "name", c->name, "port", c->port,
                          "upstream", c->upstream, "bytes_up", (json_int_t)c->up.bytes,
                          "bytes_down", (json_int_t)c->down.bytes, "duration_ms",
                          (json_int_t)(now_ms() - c->started_ms)),
                "%s:%u closed: %llu bytes up, %llu down", c->name, c->port,
                (unsigned long long)c->up.bytes, (unsigned long long)c->down.bytes);
}

/* A direction's pipe goes back to the pool when it is empty by the count
 * and by the kernel's word (FIONREAD): no byte of one connection is ever
 * spliced into another's. */
static void close_dir(struct sg_net *e, struct dir *d)
{
    int left = -1;
    if (d->p[0] >= 0 && d->inpipe == 0 && e->npool < PIPE_POOL &&
        ioctl(d->p[0], FIONREAD, &left) == 0 && left == 0) {
        e->pool[e->npool].p[0] = d->p[0];
        e->pool[e->npool].p[1] = d->p[1];
        e->pool[e->npool++].cap = d->cap;
    } else {
        for (int i = 0; i < 2; i++)
            if (d->p[i] >= 0)
                close(d->p[i]);
    }
    d->p[0] = d->p[1] = -1;
}

/* Is there room in d's pipe (or none made yet)? */
static bool room(const struct dir *d)
{
    return d->p[0] < 0 || d->inpipe < d->cap;
}

static void conn_free(struct sg_net *e, int idx, bool reset)
{
    struct conn *c = e->conns[idx];
    if (!c)
        return;
    emit_closed(e, c);
    if (reset && c->cfd >= 0) {
        struct linger l = {1, 0}; /* RST, not FIN: the skill learns it was refused */
        setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    if (c->cfd >= 0)
        close(c->cfd);
    if (c->ufd >= 0)
        close(c->ufd);
    close_dir(e, &c->up);
    close_dir(e, &c->down);
    free(c);
    e->conns[idx] = NULL;
}

static void block(struct sg_net *e, int idx, const char *dst, int port, const char *name,
                  const char *reason)
{
    char shown[INET6_ADDRSTRLEN + 8];
    snprintf(shown, sizeof shown, strchr(dst, ':') && dst[0] != '[' ? "[%s]" : "%s", dst);
    sg_bus_emit(e->bus, SG_EV_NETWORK_EGRESS_BLOCKED,
                json_pack("{s:s, s:s, s:i, s:s, s:s, s:b}", "protocol", "TCP", "dst", dst, "port",
                          port, "name", name ? name : "", "reason", reason, "prevented", 1),
                "TCP %s%s%s:%d refused: %s", name && strcmp(name, dst) ? name : "",
                name && strcmp(name, dst) ? " at " : "", shown, port, reason);
    conn_free(e, idx, true);
}

/* An allowed connection this machine could not make: the name does not
 * resolve here, or the upstream refused or never answered. Not a refusal
 * of skillgate's, and said as such (no rule, grant or person changes it). */
static void upstream_failed(struct sg_net *e, int idx, const char *dst, const char *why)
{
    struct conn *c = e->conns[idx];
    sg_bus_emit(e->bus, SG_EV_NETWORK_EGRESS_BLOCKED,
                json_pack("{s:s, s:s, s:i, s:s, s:s, s:b, s:b}", "protocol", "TCP", "dst", dst,
                          "port", c->port, "name", c->name, "reason", why, "upstream_failed", 1,
                          "prevented", 1),
                "TCP %s:%d was allowed, but this machine could not reach it: %s (no refusal: "
                "this machine's DNS or network; --resolve %s:%d:ADDR points the name elsewhere)",
                c->name, c->port, why, c->name, c->port);
    conn_free(e, idx, true);
}

static void *resolver(void *arg)
{
    struct resolve_job *j = arg;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    char port[8];
    snprintf(port, sizeof port, "%u", j->port);
    j->err = getaddrinfo(j->name, port, &hints, &res);
    if (!j->err && res) {
        memcpy(&j->addr, res->ai_addr, res->ai_addrlen);
        j->addrlen = res->ai_addrlen;
    }
    if (res)
        freeaddrinfo(res);
    if (write(j->wfd, &j, sizeof j) != (ssize_t)sizeof j)
        free(j);
    return NULL;
}

/* Is sa the numeric address text names (v4, v6, or v4-mapped v6)? */
static bool same_address(const char *text, const struct sockaddr *sa)
{
    unsigned char want[16], got[16];
    size_t n;
    if (inet_pton(AF_INET, text, want) == 1)
        n = 4;
    else if (inet_pton(AF_INET6, text, want) == 1)
        n = 16;
    else
        return false;
    if (sa->sa_family == AF_INET) {
        memcpy(got, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return n == 4 && !memcmp(want, got, 4);
    }
    memcpy(got, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    if (n == 16)
        return !memcmp(want, got, 16);
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(got, mapped, 12) && !memcmp(got + 12, want, 4);
}

static void upstream_ready(struct sg_net *e, int idx);

/* May the proxy not connect to sa (text)? Never to a private, loopback or
 * metadata address, nor to one the kernel routes to this machine itself
 * (an address of any of its interfaces, v4 or v6, as they are now, or a
 * broadcast, anycast or multicast one), unless the person named it with
 * --allow-upstream; a route the kernel does not give is a refusal too.
 * Says why in why. */
static bool upstream_refused(struct sg_net *e, const struct conn *c, const struct sockaddr *sa,
                             const char *text, char *why, size_t n)
{
    char who[SG_DNS_NAME_MAX + INET6_ADDRSTRLEN + 16];
    if (strcmp(c->name, text))
        snprintf(who, sizeof who, "%s resolves to %s,", c->name, text);
    else
        snprintf(who, sizeof who, "%s is", text);
    if (forbidden_upstream(sa)) {
        snprintf(why, n, "%s a private, loopback or metadata address%s (only --allow-upstream %s "
                 "lets a run reach it)", who, strcmp(c->name, text) ? "" : ", declared or not",
                 text);
        return true;
    }
    int type = sg_route_type(&e->route, sa);
    if (type >= 0 && !sg_route_stays_here(type))
        return false;
    if (type >= 0)
        snprintf(why, n,
                 "%s an address of this machine (its route is %s: it never leaves the host)%s "
                 "(only --allow-upstream %s lets a run reach it)", who, sg_route_type_name(type),
                 strcmp(c->name, text) ? "" : ", declared or not", text);
    else
        snprintf(why, n, "%s an address the kernel %s (%s): whether it is an address of this "
                 "machine is unknown, so it is refused (--allow-upstream %s skips the question)",
                 who, e->route.fd < 0 ? "could not be asked about" : "gives no route to",
                 strerror(e->route.fd < 0 ? -e->route_err : -type), text);
    return true;
}

static void start_connect(struct sg_net *e, int idx, const struct sockaddr *sa, socklen_t len,
                          bool trusted)
{
    struct conn *c = e->conns[idx];
    int port;
    char text[INET6_ADDRSTRLEN];
    addr_text(sa, text, sizeof text, &port);
    snprintf(c->upstream, sizeof c->upstream, sa->sa_family == AF_INET6 ? "[%s]:%d" : "%s:%d",
             text, port);
    bool allowed = trusted;
    for (size_t i = 0; !allowed && i < e->plan->nallow_upstream; i++)
        allowed = same_address(e->plan->allow_upstream[i], sa);
    char why[SG_DNS_NAME_MAX + 640];
    if (!allowed && upstream_refused(e, c, sa, text, why, sizeof why)) {
        block(e, idx, text, c->port, c->name, why);
        return;
    }
    c->ufd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->ufd < 0 || (connect(c->ufd, sa, len) < 0 && errno != EINPROGRESS)) {
        snprintf(why, sizeof why, "upstream %s unreachable: %s", c->upstream, strerror(errno));
        upstream_failed(e, idx, text, why);
        return;
    }
    c->st = C_CONNECTING;
    /* a loopback upstream (--resolve, --allow-upstream) is connected as the
     * call returns: go on now, not a poll round later */
    struct pollfd p = {.fd = c->ufd, .events = POLLOUT};
    if (poll(&p, 1, 0) == 1)
        upstream_ready(e, idx);
}

static void begin(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    /* --resolve overrides DNS, and is the user's own choice of address */
    for (size_t i = 0; i < e->plan->nresolve; i++) {
        const struct sg_resolve *r = &e->plan->resolve[i];
        if (strcmp(r->name, c->name) != 0 || r->port != c->port)
            continue;
        struct sockaddr_storage ss = {0};
        socklen_t len;
        uint16_t to = htons(r->to_port ? r->to_port : r->port);
        if (strchr(r->addr, ':')) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            s6->sin6_family = AF_INET6;
            s6->sin6_port = to;
            inet_pton(AF_INET6, r->addr, &s6->sin6_addr);
            len = sizeof *s6;
        } else {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            s4->sin_family = AF_INET;
            s4->sin_port = to;
            inet_pton(AF_INET, r->addr, &s4->sin_addr);
            len = sizeof *s4;
        }
        start_connect(e, idx, (struct sockaddr *)&ss, len, true);
        return;
    }
    /* an IP literal the manifest names is its own upstream, and is checked
     * like any other: a declared "127.0.0.1" or "169.254.169.254" once
     * reached the host's loopback services and the metadata address */
    struct sockaddr_storage lit = {0};
    struct sockaddr_in *l4 = (struct sockaddr_in *)&lit;
    struct sockaddr_in6 *l6 = (struct sockaddr_in6 *)&lit;
    if (inet_pton(AF_INET, c->name, &l4->sin_addr) == 1) {
        l4->sin_family = AF_INET;
        l4->sin_port = htons(c->port);
        start_connect(e, idx, (struct sockaddr *)l4, sizeof *l4, false);
        return;
    }
    if (inet_pton(AF_INET6, c->name, &l6->sin6_addr) == 1) {
        l6->sin6_family = AF_INET6;
        l6->sin6_port = htons(c->port);
        start_connect(e, idx, (struct sockaddr *)l6, sizeof *l6, false);
        return;
    }
    /* .invalid and .localhost never resolve (RFC 6761 lets applications
     * treat them so: asking would only send the name out). .test and
     * .example are looked up like any other declared name, as RFC 6761 asks
     * of applications: it is where developers run local services (Valet,
     * Herd, puma-dev), through /etc/hosts or a local resolver. */
    static const char *const reserved[] = {".invalid", ".localhost"};
    for (size_t i = 0; i < SG_ARRAY_LEN(reserved); i++) {
        size_t n = strlen(c->name), s = strlen(reserved[i]);
        if ((n > s && !strcmp(c->name + n - s, reserved[i])) || !strcmp(c->name, reserved[i] + 1)) {
            block(e, idx, c->name, c->port, c->name,
                  "a reserved name that never resolves (RFC 6761); point it somewhere with "
                  "--resolve");
            return;
        }
    }
    /* the real name, looked up now, off the loop */
    struct resolve_job *j = sg_xcalloc(1, sizeof *j);
    j->serial = c->serial;
    snprintf(j->name, sizeof j->name, "%s", c->name);
    j->port = c->port;
    j->wfd = e->rpipe[1];
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, resolver, j) != 0) {
        free(j);
        block(e, idx, c->name, c->port, c->name, "cannot start a lookup");
    }
    pthread_attr_destroy(&at);
    c->st = C_RESOLVING;
}

struct conn_wait {
    struct sg_net *e;
    uint64_t serial;
};

static void literal_decided(void *ctx, bool allowed, const char *by)
{
    bool gave_up = by && !strncmp(by, "the skill stopped waiting", 25);
    struct conn_wait *w = ctx;
    struct sg_net *e = w->e;
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        struct conn *c = e->conns[i];
        if (!c || c->serial != w->serial || c->st != C_ASKING)
            continue;
        if (allowed) {
            begin(e, i); /* "for this run" and "always" became rules in the engine */
        } else {
            block(e, i, c->name, c->port, NULL,
                  gave_up ? "an address the DNS stub never handed out (IP literal), and the "
                            "skill stopped waiting before anyone answered"
                          : "an address the DNS stub never handed out (IP literal), and the "
                            "request was denied");
        }
    }
    free(w);
}

/* Whether the skill closed the connection w asks for: gone, or its end
 * shut with nothing sent (a request and a half-close still waits for the
 * answer). Never reads, never blocks. */
static const char *literal_gone(void *ctx)
{
    static const char CLOSED[] = "it closed the connection";
    const struct conn_wait *w = ctx;
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        const struct conn *c = w->e->conns[i];
        if (!c || c->serial != w->serial || c->st != C_ASKING)
            continue;
        struct pollfd p = {.fd = c->cfd, .events = POLLIN | POLLRDHUP};
        if (poll(&p, 1, 0) <= 0)
            return NULL;
        int unread = 0;
        if (p.revents & (POLLHUP | POLLERR))
            return CLOSED;
        return (p.revents & POLLRDHUP) && ioctl(c->cfd, FIONREAD, &unread) == 0 && !unread
                   ? CLOSED
                   : NULL;
    }
    return CLOSED;
}

static void accept_proxy(struct sg_net *e, int lfd)
{
    for (int rounds = 0; rounds < 32; rounds++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        int idx = -1;
        for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++)
            if (!e->conns[i]) {
                idx = i;
                break;
            }
        struct sockaddr_storage od = {0};
        socklen_t ol = sizeof od;
        int r = lfd == e->lfd[SG_EG_PROXY6]
                    ? getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &od, &ol)
                    : getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &od, &ol);
        if (idx < 0 || r < 0) {
            struct linger l = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            close(fd);
            continue;
        }
        struct conn *c = sg_xcalloc(1, sizeof *c);
        c->serial = ++e->next_serial;
        c->cfd = fd;
        c->ufd = -1;
        c->up.p[0] = c->up.p[1] = c->down.p[0] = c->down.p[1] = -1;
        c->started_ms = now_ms();
        c->deadline_ms = c->started_ms + SG_SNIFF_TIMEOUT_MS;
        e->conns[idx] = c;
        char dst[INET6_ADDRSTRLEN];
        int port;
        addr_text((struct sockaddr *)&od, dst, sizeof dst, &port);
        c->port = (uint16_t)port;
        const char *name = name_of(e, (struct sockaddr *)&od);
        if (!name) {
            if (!net_allowed(e, dst, port)) {
                if (fetch_may_ask(e)) {
                    /* a person may let this address through (Fetch) */
                    snprintf(c->name, sizeof c->name, "%s", dst);
                    c->st = C_ASKING;
                    struct conn_wait *w = sg_xmalloc(sizeof *w);
                    w->e = e;
                    w->serial = c->serial;
                    e->asker->ask(e->asker->ctx, dst, port,
                                  "an address literal: no name was looked up through the "
                                  "sandbox",
                                  literal_decided, literal_gone, w);
                    continue;
                }
                block(e, idx, dst, port, NULL,
                      "an address the DNS stub never handed out (IP literal)");
                continue;
            }
            name = dst; /* the manifest names this literal, or a person allowed it */
        }
        snprintf(c->name, sizeof c->name, "%s", name);
        if (!net_allowed(e, c->name, port)) {
            char why[640];
            snprintf(why, sizeof why, "port %d is not declared for %s", port, c->name);
            block(e, idx, dst, port, c->name, why);
            continue;
        }
        begin(e, idx);
    }
}

static void accept_dns_tcp(struct sg_net *e, int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        if (e->conns[i])
            continue;
        struct conn *c = sg_xcalloc(1, sizeof *c);
        c->serial = ++e->next_serial;
        c->st = C_DNSTCP;
        c->cfd = fd;
        c->ufd = -1;
        c->up.p[0] = c->up.p[1] = c->down.p[0] = c->down.p[1] = -1;
        c->started_ms = now_ms();
        c->deadline_ms = c->started_ms + SG_SNIFF_TIMEOUT_MS;
        e->conns[i] = c;
        return;
    }
    close(fd);
}

static void dns_tcp_read(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    size_t room = 2 + SG_DNS_TCP_MAX - c->sniff_len;
    ssize_t n = recv(c->cfd, c->sniff + c->sniff_len, room, MSG_DONTWAIT);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            conn_free(e, idx, false);
        return;
    }
    c->sniff_len += (size_t)n;
    if (c->sniff_len < 2)
        return;
    size_t want = (size_t)(c->sniff[0] << 8 | c->sniff[1]);
    if (want > SG_DNS_TCP_MAX) {
        conn_free(e, idx, true);
        return;
    }
    if (c->sniff_len < 2 + want)
        return;
    uint8_t out[2 + SG_DNS_TCP_MAX];
    int r = answer(e, c->sniff + 2, want, out + 2, SG_DNS_TCP_MAX, "tcp");
    if (r > 0) {
        out[0] = (uint8_t)(r >> 8), out[1] = (uint8_t)r;
        ssize_t w = send(c->cfd, out, (size_t)r + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w; /* a 2-KiB answer into an empty socket buffer */
    }
    conn_free(e, idx, false);
}

/* Move bytes one way: src -> pipe -> dst, without copying through us, until
 * either side would block (one wake-up moves as much as it can). */
static int pump(struct sg_net *e, struct dir *d, int src, int dst)
{
    if (d->p[0] < 0 && e->npool) {
        e->npool--;
        d->p[0] = e->pool[e->npool].p[0];
        d->p[1] = e->pool[e->npool].p[1];
        d->cap = e->pool[e->npool].cap;
    } else if (d->p[0] < 0) {
        if (pipe2(d->p, O_CLOEXEC | O_NONBLOCK) < 0)
            return -errno;
        /* best effort: fewer, larger splices. The size is what the kernel
         * says, never assumed: a pipe left at 64 KiB and taken for 1 MiB
         * would keep its source polled while full, and the loop spinning */
        int got = fcntl(d->p[1], F_SETPIPE_SZ, PIPE_CAP);
        if (got < 0)
            got = fcntl(d->p[1], F_GETPIPE_SZ);
        d->cap = got > 0 ? (size_t)got : 4096; /* one page: the least a pipe holds */
    }
    for (int round = 0; round < 64; round++) {
        bool moved = false;
        if (!d->eof && d->inpipe < d->cap) {
            ssize_t n = splice(src, NULL, d->p[1], NULL, d->cap - d->inpipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                d->inpipe += (size_t)n;
                moved = true;
            } else if (n == 0) {
                d->eof = true;
            } else if (errno != EAGAIN && errno != EINTR) {
                return -errno;
            }
        }
        if (d->inpipe > 0) {
            ssize_t n = splice(d->p[0], NULL, dst, NULL, d->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                d->inpipe -= (size_t)n;
                d->bytes += (uint64_t)n;
                moved = true;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return -errno;
            }
        }
        if (!moved)
            break;
    }
    if (d->eof && d->inpipe == 0 && !d->shut) {
        shutdown(dst, SHUT_WR);
        d->shut = true;
    }
    return 0;
}

/* A first message that is only the beginning of an HTTP method ("G", "PO")
 * cannot carry a name yet: after a short grace it may go up while the rest
 * is still checked, so a client that sends just that and waits is not stuck
 * (sg_sniff_nameless_prefix). It never ends the checking: a request line
 * that does not complete in time is refused. */
#define SNIFF_GRACE_MS 300

/* Plain HTTP: run the checker over what it has not seen; what it clears may
 * go up (flush_sniffed), what it refuses ends the connection with nothing
 * of that request sent. */
static void http_check(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    while (c->fwd_limit < c->sniff_len) {
        size_t used = 0;
        char why[640];
        enum sg_http_verdict v =
            sg_http_check(&c->hs, c->sniff + c->fwd_limit, c->sniff_len - c->fwd_limit, c->name,
                          c->port, &used, why, sizeof why);
        if (v == SG_HTTP_REFUSE) {
            block(e, idx, c->upstream[0] ? c->upstream : c->name, c->port, c->name, why);
            return;
        }
        if (v == SG_HTTP_MORE)
            break;
        c->fwd_limit += used;
    }
    if (!c->up.eof || c->fwd_limit == c->sniff_len)
        return;
    /* the client is done sending: blank lines after a body are harmless,
     * the start of a head is never sent unchecked */
    for (size_t i = c->fwd_limit; i < c->sniff_len; i++)
        if (c->sniff[i] != '\r' && c->sniff[i] != '\n') {
            block(e, idx, c->upstream[0] ? c->upstream : c->name, c->port, c->name,
                  "the client stopped sending in the middle of a request (nothing of it was "
                  "sent)");
            return;
        }
    c->fwd_limit = c->sniff_len;
}

/* Before a byte goes up: what name does the client's first message carry?
 * Reads into the sniff buffer and decides how much of it may be sent. */
static void sniff_client(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    if (c->sniff_done)
        return;
    if (c->sniff_len < sizeof c->sniff && !c->up.eof) {
        ssize_t n = recv(c->cfd, c->sniff + c->sniff_len, sizeof c->sniff - c->sniff_len,
                         MSG_DONTWAIT);
        if (n < 0)
            return;
        if (n == 0) {
            /* the client is done sending: what it sent is all there is */
            c->up.eof = true;
        } else {
            if (c->sniff_len == c->fwd_limit) /* the first byte not yet checked */
                c->deadline_ms = now_ms() + SG_SNIFF_TIMEOUT_MS;
            c->sniff_len += (size_t)n;
        }
    }
    if (!c->http) {
        enum sg_sniff k = sg_sniff_kind(c->sniff, c->sniff_len);
        if (k == SG_SNIFF_TLS) {
            char seen[SG_DNS_NAME_MAX + 1];
            enum sg_sniff s = sg_sniff_name(c->sniff, c->sniff_len, seen, sizeof seen);
            if (s == SG_SNIFF_TLS && seen[0] && strcmp(seen, c->name) != 0) {
                char why[640];
                snprintf(why, sizeof why,
                         "the TLS SNI names %s, but the address was issued for %s "
                         "(domain fronting)",
                         seen, c->name);
                block(e, idx, c->upstream, c->port, c->name, why);
                return;
            }
            if (s == SG_SNIFF_TLS_BAD) {
                block(e, idx, c->upstream[0] ? c->upstream : c->name, c->port, c->name,
                      "a TLS ClientHello the proxy cannot read whole (malformed, or over "
                      "16384 bytes): its SNI cannot be checked");
                return;
            }
            if (s == SG_SNIFF_NEED_MORE && !c->up.eof)
                return; /* a hello in the making, checked whole */
        }
        if (k == SG_SNIFF_NEED_MORE && !c->up.eof) {
            if (!c->grace_ms && c->sniff_sent < c->sniff_len &&
                sg_sniff_nameless_prefix(c->sniff, c->sniff_len))
                c->grace_ms = now_ms() + SNIFF_GRACE_MS;
            return; /* a request line in the making, checked whole */
        }
        if (k != SG_SNIFF_HTTP) {
            c->sniff_done = true; /* TLS checked, or no protocol the proxy reads */
            c->fwd_limit = c->sniff_len;
            return;
        }
        /* plain HTTP: from here on every request is checked, from the first
         * byte (a prefix that went up after its grace is checked again) */
        c->http = true;
        c->fwd_limit = 0;
        c->grace_ms = 0;
    }
    http_check(e, idx);
}

/* Send what the sniffer cleared; then the up direction is spliced. */
static int flush_sniffed(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    while (c->sniff_sent < c->fwd_limit) {
        ssize_t w = send(c->ufd, c->sniff + c->sniff_sent, c->fwd_limit - c->sniff_sent,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 0;
            conn_free(e, idx, true);
            return -1;
        }
        c->sniff_sent += (size_t)w;
        c->up.bytes += (uint64_t)w;
    }
    if (c->http) {
        /* drop what went up and was checked; the checker goes on from there */
        size_t k = c->sniff_sent < c->fwd_limit ? c->sniff_sent : c->fwd_limit;
        if (k) {
            memmove(c->sniff, c->sniff + k, c->sniff_len - k);
            c->sniff_len -= k;
            c->sniff_sent -= k;
            c->fwd_limit -= k;
        }
        if (c->up.eof && c->sniff_len == 0 && !c->up.shut) {
            shutdown(c->ufd, SHUT_WR);
            c->up.shut = true;
        }
        return 0;
    }
    if (c->sniff_done && c->sniff_sent == c->sniff_len && c->up.eof && !c->up.shut) {
        shutdown(c->ufd, SHUT_WR);
        c->up.shut = true;
    }
    return 0;
}

static void upstream_ready(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    int err = 0;
    socklen_t l = sizeof err;
    getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err) {
        char why[640];
        snprintf(why, sizeof why, "upstream %s: %s", c->upstream, strerror(err));
        upstream_failed(e, idx, c->upstream, why);
        return;
    }
    c->connected = true;
    c->st = C_RELAY;
    /* say how it was allowed: the manifest, or a decision during the run */
    bool declared = sg_egress_allowed(e->plan, c->name, c->port);
    sg_bus_emit(e->bus, SG_EV_NETWORK_EGRESS_ALLOWED,
                json_pack("{s:s, s:i, s:s, s:s}", "name", c->name, "port", c->port, "upstream",
                          c->upstream, "allowed_by", declared ? "manifest" : "decision"),
                "%s:%u allowed (%s) -> %s", c->name, c->port,
                declared ? "declared" : "decided during this run", c->upstream);
}

/* Connected: the world's bytes flow down from the start; the skill's go up
 * through the sniffer until its first message is cleared, then by splice. */
static void relay(struct sg_net *e, int idx)
{
    struct conn *c = e->conns[idx];
    if (!c->sniff_done || c->sniff_sent < c->sniff_len) {
        if (!c->sniff_done)
            sniff_client(e, idx);
        if (!e->conns[idx] || flush_sniffed(e, idx) < 0)
            return;
    } else if (pump(e, &c->up, c->cfd, c->ufd) < 0) {
        conn_free(e, idx, true);
        return;
    }
    if (pump(e, &c->down, c->ufd, c->cfd) < 0) {
        conn_free(e, idx, true);
        return;
    }
    if (c->up.shut && c->down.shut)
        conn_free(e, idx, false);
}

static void on_resolved(struct sg_net *e)
{
    struct resolve_job *j;
    while (read(e->rpipe[0], &j, sizeof j) == (ssize_t)sizeof j) {
        for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
            struct conn *c = e->conns[i];
            if (!c || c->serial != j->serial || c->st != C_RESOLVING)
                continue;
            if (j->err) {
                char why[640];
                snprintf(why, sizeof why, "%s does not resolve: %s", c->name, gai_strerror(j->err));
                upstream_failed(e, i, c->name, why);
            } else {
                start_connect(e, i, (struct sockaddr *)&j->addr, j->addrlen, false);
            }
        }
        free(j);
    }
}

/* ---- the loop's view ---- */

struct sg_net *sg_egress_new(const struct sg_plan *plan, struct sg_event_bus *bus,
                             const struct sg_fetch_asker *asker, int fds[SG_EGRESS_FDS])
{
    struct sg_net *e = sg_xcalloc(1, sizeof *e);
    e->plan = plan;
    e->bus = bus;
    e->asker = asker;
    for (int i = 0; i < SG_EGRESS_FDS; i++) {
        e->lfd[i] = fds[i];
        fds[i] = -1;
    }
    if (pipe2(e->rpipe, O_CLOEXEC | O_NONBLOCK) < 0)
        e->rpipe[0] = e->rpipe[1] = -1;
    read_search(e);
    /* in the broker's namespace, where upstreams are connected; when it
     * cannot be opened every upstream is refused, saying why */
    e->route_err = sg_route_open(&e->route);
    return e;
}

void sg_egress_publish(struct sg_net *e, int pidfd)
{
    if (!e->pub) {
        e->pub = sg_pub_new(e->plan, e->bus, e->asker, fetch_may_ask(e), pidfd,
                            e->lfd[SG_EG_DIAG]);
        e->lfd[SG_EG_DIAG] = -1; /* the publisher's now */
    }
}

size_t sg_egress_pollfds(struct sg_net *e, struct pollfd *out, size_t max)
{
    size_t n = 0;
#define PUT(fd_, ev_, kind_, idx_)                                       \
    do {                                                                 \
        if (n < max) {                                                   \
            out[n] = (struct pollfd){.fd = (fd_), .events = (short)(ev_)}; \
            e->tags[n].kind = (kind_);                                   \
            e->tags[n].idx = (idx_);                                     \
            n++;                                                         \
        }                                                                \
    } while (0)
    for (int i = 0; i < SG_EGRESS_FDS; i++)
        if (e->lfd[i] >= 0 && i != SG_EG_DIAG)
            PUT(e->lfd[i], POLLIN, 0, i);
    if (e->rpipe[0] >= 0)
        PUT(e->rpipe[0], POLLIN, 3, 0);
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        struct conn *c = e->conns[i];
        if (!c)
            continue;
        short cev = 0, uev = 0;
        /* read the skill's bytes into the checker while there is room */
        bool gathering = !c->sniff_done && !c->up.eof && c->sniff_len < sizeof c->sniff;
        switch (c->st) {
        case C_ASKING:
            break; /* the client waits for a person's answer */
        case C_DNSTCP:
            cev = POLLIN;
            break;
        case C_RESOLVING:
            cev = gathering ? POLLIN : 0;
            break;
        case C_CONNECTING:
            cev = gathering ? POLLIN : 0;
            uev = POLLOUT;
            break;
        case C_RELAY: {
            bool sniffing = !c->sniff_done || c->sniff_sent < c->sniff_len;
            cev = (short)((!c->up.eof && (sniffing ? gathering : room(&c->up))
                               ? POLLIN
                               : 0) |
                          (c->down.inpipe ? POLLOUT : 0));
            uev = (short)((!c->down.eof && room(&c->down) ? POLLIN : 0) |
                          (c->up.inpipe || c->sniff_sent < c->fwd_limit ? POLLOUT : 0));
            break;
        }
        }
        if (cev)
            PUT(c->cfd, cev, 1, i);
        if (uev && c->ufd >= 0)
            PUT(c->ufd, uev, 2, i);
    }
#undef PUT
    e->ntags = n;
    e->pub_first = n;
    e->pub_n = e->pub ? sg_pub_pollfds(e->pub, out + n, max - n) : 0;
    return n + e->pub_n;
}

void sg_egress_dispatch(struct sg_net *e, const struct pollfd *p, size_t n)
{
    if (e->pub && n >= e->pub_first)
        sg_pub_dispatch(e->pub, p + e->pub_first, n - e->pub_first < e->pub_n
                                                      ? n - e->pub_first
                                                      : e->pub_n);
    for (size_t k = 0; k < n && k < e->ntags; k++) {
        if (!p[k].revents)
            continue;
        int idx = e->tags[k].idx;
        switch (e->tags[k].kind) {
        case 0:
            if (idx == SG_EG_PROXY4 || idx == SG_EG_PROXY6)
                accept_proxy(e, e->lfd[idx]);
            else if (idx == SG_EG_DNSU4 || idx == SG_EG_DNSU6)
                dns_udp(e, e->lfd[idx]);
            else
                accept_dns_tcp(e, e->lfd[idx]);
            break;
        case 3:
            on_resolved(e);
            break;
        default: {
            struct conn *c = e->conns[idx];
            if (!c)
                break;
            if (c->st == C_DNSTCP) {
                dns_tcp_read(e, idx);
                break;
            }
            if (c->st == C_RELAY) {
                relay(e, idx);
                break;
            }
            if (e->tags[k].kind == 1)
                sniff_client(e, idx); /* still connecting: gather, send nothing */
            else if (e->tags[k].kind == 2 && c->st == C_CONNECTING)
                upstream_ready(e, idx);
            if (e->conns[idx] && e->conns[idx]->st == C_RELAY)
                relay(e, idx);
            break;
        }
        }
    }
    /* deadlines */
    int64_t now = now_ms();
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        struct conn *c = e->conns[i];
        if (!c || c->sniff_done)
            continue;
        if (c->st == C_DNSTCP) {
            if (now >= c->deadline_ms)
                conn_free(e, i, true);
            continue;
        }
        if (c->http) {
            /* a request head (or chunk line) begun and never finished */
            if (c->fwd_limit < c->sniff_len && now >= c->deadline_ms)
                block(e, i, c->upstream[0] ? c->upstream : c->name, c->port, c->name,
                      "a request head never completed (cannot check its Host)");
            continue;
        }
        /* a bare method prefix may go up after its grace: no name in it */
        if (c->grace_ms && now >= c->grace_ms && sg_sniff_nameless_prefix(c->sniff, c->sniff_len)) {
            c->fwd_limit = c->sniff_len;
            c->grace_ms = 0;
            c->deadline_ms = now + SG_SNIFF_TIMEOUT_MS;
            if (c->st == C_RELAY)
                flush_sniffed(e, i);
            continue;
        }
        if (c->sniff_len == 0 || now < c->deadline_ms)
            continue; /* nothing said yet is fine: server-first protocols */
        /* a prefix that went up after its grace never settles the connection:
         * what follows it would go unchecked */
        block(e, i, c->upstream[0] ? c->upstream : c->name, c->port, c->name,
              "the first message never completed (cannot check its name)");
    }
}

int sg_egress_timeout(const struct sg_net *e)
{
    int64_t next = -1, now = now_ms();
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++) {
        const struct conn *c = e->conns[i];
        if (!c || c->sniff_done || (c->sniff_len == 0 && c->st != C_DNSTCP))
            continue;
        if (c->http && c->fwd_limit >= c->sniff_len)
            continue; /* between requests, or in a body: no deadline */
        int64_t d = c->grace_ms && !c->http ? c->grace_ms : c->deadline_ms;
        if (next < 0 || d < next)
            next = d;
    }
    int pt = e->pub ? sg_pub_timeout(e->pub) : -1;
    int t = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
    return t < 0 ? pt : pt < 0 || t < pt ? t : pt;
}

void sg_egress_free(struct sg_net *e)
{
    if (!e)
        return;
    sg_pub_free(e->pub); /* nothing listens on the host after the run */
    for (int i = 0; i < SG_EGRESS_MAX_CONNS; i++)
        conn_free(e, i, false);
    for (size_t i = 0; i < e->npool; i++)
        close(e->pool[i].p[0]), close(e->pool[i].p[1]);
    for (int i = 0; i < SG_EGRESS_FDS; i++)
        if (e->lfd[i] >= 0)
            close(e->lfd[i]);
    for (size_t i = 0; i < e->nnames; i++)
        free(e->names[i]);
    for (size_t i = 0; i < e->napproved; i++)
        free(e->approved[i]);
    for (size_t i = 0; i < e->nsearch; i++)
        free(e->search[i]);
    /* queries still held belong to pending prompts; the permission engine
     * answers them (deny) when it is freed, which the session does first */
    while (e->waiting) {
        struct dns_wait *w = e->waiting;
        e->waiting = w->next;
        free(w);
    }
    /* resolver threads still running own their jobs; their write fails once
     * the pipe is closed and they free the job themselves */
    if (e->rpipe[0] >= 0)
        close(e->rpipe[0]);
    if (e->rpipe[1] >= 0)
        close(e->rpipe[1]);
    sg_route_close(&e->route);
    free(e);
}
