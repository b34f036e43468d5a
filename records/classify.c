#include "classify.h"

#include <arpa/inet.h>

#include <string.h>
#include <strings.h>

#include "util.h"

enum {
#define X(id, name, sev, tactic, tech, desc, by) C_##id,
    SG_THREAT_CLASSES(X)
#undef X
    C_COUNT,
    C_NONE = -1
};

static const struct {
    const char *name, *severity, *tactic, *technique, *description, *prevented_by;
} classes[] = {
#define X(id, name, sev, tactic, tech, desc, by) [C_##id] = {name, sev, tactic, tech, desc, by},
    SG_THREAT_CLASSES(X)
#undef X
};

static int class_of(const char *name)
{
    for (int k = 0; name && k < C_COUNT; k++)
        if (!strcmp(classes[k].name, name))
            return k;
    return C_NONE;
}

const char *sg_class_description(const char *cls)
{
    int k = class_of(cls);
    return k == C_NONE ? NULL : classes[k].description;
}

const char *sg_class_prevented_by(const char *cls)
{
    int k = class_of(cls);
    return k == C_NONE ? NULL : classes[k].prevented_by;
}

/* Denied syscalls by what trying them means. */
static const struct {
    const char *syscall;
    int cls;
} syscall_class[] = {
    {"ptrace", C_PRIVILEGE_ESCALATION},        {"process_vm_readv", C_PRIVILEGE_ESCALATION},
    {"process_vm_writev", C_PRIVILEGE_ESCALATION}, {"pidfd_getfd", C_PRIVILEGE_ESCALATION},
    {"kcmp", C_PRIVILEGE_ESCALATION},          {"keyctl", C_CREDENTIAL_HARVESTING},
    {"add_key", C_CREDENTIAL_HARVESTING},      {"request_key", C_CREDENTIAL_HARVESTING},
    {"ioctl", C_TERMINAL_INJECTION},           {"reboot", C_RESOURCE_ABUSE},
    {"swapon", C_RESOURCE_ABUSE},              {"swapoff", C_RESOURCE_ABUSE},
    {"acct", C_RESOURCE_ABUSE},                {"settimeofday", C_RESOURCE_ABUSE},
    {"clock_settime", C_RESOURCE_ABUSE},       {"adjtimex", C_RESOURCE_ABUSE},
    {"clock_adjtime", C_RESOURCE_ABUSE},       {"fork", C_RESOURCE_ABUSE},
    {"vfork", C_RESOURCE_ABUSE},               {"socket", C_RESOURCE_ABUSE},
    {"socketpair", C_RESOURCE_ABUSE},
    /* a program placing its own memory on NUMA nodes (node, Chromium):
     * refused and counted, no attack (vetting ClawHub's skills, issue 53) */
    {"set_mempolicy", C_NONE},                 {"mbind", C_NONE},
};

/* Credential places, by the program that keeps them, and the services that
 * program talks to with them: a run that read ~/.npmrc and then had its
 * lookup of registry.npmjs.org refused is npm at work; one that read it and
 * reached for collector.attacker.test is sending it somewhere else. "*":
 * any host (~/.netrc names its own hosts, and Python's requests reads it
 * before every request). A place ending in '/' is a folder. */
static const struct {
    const char *place;    /* under HOME */
    const char *services; /* domain suffixes, space separated */
} cred_places[] = {
    {".ssh/", "github.com gitlab.com bitbucket.org"},
    {".aws/", "amazonaws.com aws.amazon.com"},
    {".netrc", "*"},
    {".git-credentials", "github.com gitlab.com bitbucket.org"},
    {".docker/", "docker.io docker.com ghcr.io quay.io gcr.io pkg.dev"},
    {".kube/", ""},
    {".npmrc", "npmjs.org npmjs.com yarnpkg.com"},
    {".pypirc", "pypi.org pythonhosted.org"},
    {".config/gcloud/", "googleapis.com google.com"},
    {".gnupg/", "keys.openpgp.org keyserver.ubuntu.com"},
    {".azure/", "azure.com microsoftonline.com windows.net"},
    {".gitconfig", "github.com gitlab.com bitbucket.org"},
};
enum { CRED_AGENT = SG_ARRAY_LEN(cred_places), CRED_OTHER, CRED_COUNT };
_Static_assert(CRED_COUNT < 32, "a bit of places per credential place");

/* Host unix sockets whose daemon runs containers or services as root:
 * reaching one is the classic way out of a container (T1611). */
static const char *const escape_sockets[] = {
    "docker.sock", "containerd.sock", "podman.sock", "crio.sock", "libvirt-sock",
    "snapd.socket", "/systemd/private", "lxd/unix.socket", "incus/unix.socket",
};

static int severity_rank(const char *s)
{
    static const char *const order[] = {"none", "low", "medium", "high", "critical"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, order[i]))
            return i;
    return 0;
}

static bool names_place(const char *path, const char *place)
{
    size_t n = strlen(place);
    for (const char *p = strstr(path, place); p; p = strstr(p + 1, place))
        if (p > path && p[-1] == '/' && (place[n - 1] == '/' || p[n] == '\0' || p[n] == '/'))
            return true;
    return false;
}

/* Which credential place a path names (CRED_OTHER: one sg_fs_class calls
 * credential that the table does not list). */
static int cred_place(const char *path)
{
    for (size_t i = 0; path && i < SG_ARRAY_LEN(cred_places); i++)
        if (names_place(path, cred_places[i].place))
            return (int)i;
    return CRED_OTHER;
}

/* An ssh or gpg agent, or a keyring daemon: a credential place too. */
static bool agent_socket(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return (strstr(path, "ssh-") && strstr(path, "agent")) || strstr(base, "gpg-agent") ||
           strstr(path, "/keyring") || !strcmp(base, "ssh-agent.sock");
}

static bool is_escape_socket(const char *path)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(escape_sockets); i++)
        if (strstr(path, escape_sockets[i]))
            return true;
    return false;
}

/* Is host (a name, or an address for "*") one of the services list names? */
static bool serves(const char *services, const char *host)
{
    if (!strcmp(services, "*"))
        return true;
    size_t hn = strlen(host);
    for (const char *s = services; *s;) {
        size_t n = strcspn(s, " ");
        if (n && hn >= n && !strncasecmp(host + hn - n, s, n) &&
            (hn == n || host[hn - n - 1] == '.'))
            return true;
        s += n + (s[n] == ' ');
    }
    return false;
}

/* The credential places whose own services include host. */
static unsigned services_of(const char *host)
{
    unsigned mask = 0;
    for (size_t i = 0; i < SG_ARRAY_LEN(cred_places); i++)
        if (serves(cred_places[i].services, host ? host : ""))
            mask |= 1u << i;
    if (host && *host && serves(cred_places[0].services, host))
        mask |= 1u << CRED_AGENT; /* an ssh agent serves what the keys serve */
    return mask;
}

enum { C_DEFERRED = -2 };

static int classify_syscall(const char *sc, json_t *data)
{
    if (!strcmp(sc, "socket")) {
        json_int_t dom = json_integer_value(json_object_get(data, "arg0"));
        json_int_t type = json_integer_value(json_object_get(data, "arg1"));
        if ((type & 0xf) == 3 /* SOCK_RAW */ || dom == 17 /* AF_PACKET */)
            return C_SANDBOX_ESCAPE_ATTEMPT;
        return C_RESOURCE_ABUSE;
    }
    if (!strcmp(sc, "clone")) {
        json_int_t a0 = json_integer_value(json_object_get(data, "arg0"));
        return (a0 & 0x7e020000) ? C_SANDBOX_ESCAPE_ATTEMPT : C_RESOURCE_ABUSE;
    }
    const char *family = json_string_value(json_object_get(data, "family"));
    const char *path = json_string_value(json_object_get(data, "path"));
    if (!strcmp(sc, "connect") && family && !strcmp(family, "unix") && path) {
        /* tmux's, a display's or a session bus's socket is a program's own
         * business; a container runtime's is a way out */
        if (is_escape_socket(path))
            return C_SANDBOX_ESCAPE_ATTEMPT;
        return agent_socket(path) ? C_CREDENTIAL_READ : C_HOST_SOCKET_REFUSED;
    }
    const char *reason = json_string_value(json_object_get(data, "reason"));
    if (!strcmp(sc, "execve") && reason) {
        /* a program the manifest does not grant, or one the broker cannot
         * hold still on this kernel, is no attack; a swapped one is */
        if (!strcmp(reason, "Bash is not in allowed-tools") ||
            !strcmp(reason, "cannot bind the approval to the program"))
            return C_UNDECLARED_PROGRAM;
        if (!strcmp(reason, "too many execs at once"))
            return C_RESOURCE_ABUSE;
    }
    for (size_t i = 0; i < SG_ARRAY_LEN(syscall_class); i++)
        if (!strcmp(sc, syscall_class[i].syscall))
            return syscall_class[i].cls;
    return C_SANDBOX_ESCAPE_ATTEMPT; /* mount, unshare, bpf, modules, io_uring ... */
}

/* The class of one event; C_DEFERRED: a refused packet or name, whose
 * meaning depends on what credentials the whole run reached for. */
static int classify_event(const char *kind, json_t *data)
{
    const char *sc = json_string_value(json_object_get(data, "syscall"));
    if (!strcmp(kind, "syscall_blocked") && sc)
        return classify_syscall(sc, data);
    if (!strcmp(kind, "permission_decided"))
        return C_NONE; /* a refused request is counted; what it meant is in its own event */
    if (!strcmp(kind, "resource_limit_hit")) {
        /* a run that outlived its time (npm retrying a registry it cannot
         * reach) ends as "timeout", which says it; floods and hoarding
         * meet the other limits */
        const char *limit = json_string_value(json_object_get(data, "limit"));
        return limit && !strcmp(limit, "timeout") ? C_NONE : C_RESOURCE_ABUSE;
    }
    /* A refused packet alone says nothing about intent while a run has no
     * network at all (a benign skill's API call looks the same). */
    if (!strcmp(kind, "network_egress_blocked")) {
        const char *reason = json_string_value(json_object_get(data, "reason"));
        if (reason && strstr(reason, "domain fronting"))
            return C_CREDENTIAL_EXFILTRATION; /* hiding where data goes is the point of it */
        return C_DEFERRED;
    }
    /* data in DNS labels is exfiltration whatever else happened */
    if (!strcmp(kind, "dns_blocked"))
        return json_is_true(json_object_get(data, "exfil_suspect")) ? C_DNS_EXFILTRATION
                                                                     : C_DEFERRED;
    if (!strcmp(kind, "write_discarded"))
        return C_PERSISTENCE;
    if (!strcmp(kind, "output_escapes"))
        return C_TERMINAL_INJECTION;
    if (!strcmp(kind, "fs_blocked")) {
        const char *why = json_string_value(json_object_get(data, "class"));
        if (why && !strcmp(why, "persistence"))
            return C_PERSISTENCE;
        if (why && !strcmp(why, "credential"))
            return C_CREDENTIAL_READ; /* a sweep of several: harvesting (summary) */
        /* a shell script's ">/dev/tty": a skill has no terminal, and
         * opening one is no access to anybody's files */
        const char *path = json_string_value(json_object_get(data, "path"));
        if (path && !strcmp(path, "/dev/tty"))
            return C_NONE;
        /* the sandbox's own /var, /run, /dev (fontconfig's cache), or a
         * folder on the way that is a link no write follows: nothing of
         * anybody's was reached, and nothing there is kept */
        const char *reason = json_string_value(json_object_get(data, "reason"));
        if (json_is_true(json_object_get(data, "private")) ||
            (reason && !strcmp(reason, "a symbolic link on the way")))
            return C_NONE;
        return C_UNAUTHORIZED_FILE_ACCESS;
    }
    return C_NONE;
}

static bool is_enforcement(const char *kind)
{
    return !strcmp(kind, "syscall_blocked") || !strcmp(kind, "resource_limit_hit") ||
           !strcmp(kind, "network_egress_blocked") || !strcmp(kind, "fs_blocked") ||
           !strcmp(kind, "dns_blocked") || !strcmp(kind, "permission_decided") ||
           !strcmp(kind, "write_discarded") || !strcmp(kind, "output_escapes");
}

/* Refused packets and names, by the credential places whose services they
 * name (mask): held apart until the end. Past DEFERRED_MAX different masks
 * the rest count as naming no service, the stricter reading. */
#define DEFERRED_MAX 32
struct deferred {
    unsigned mask;
    size_t count;
    json_t *evidence;
};

/* What has been seen so far, one event at a time: exact however many
 * events the trace itself keeps. */
struct sg_classifier {
    size_t count[C_COUNT];
    json_t *evidence[C_COUNT];
    size_t total;
    bool all_prevented;
    unsigned places; /* credential places reached for (bits of cred_places, agent, other) */
    size_t datagrams; /* refused datagrams with data to an outside address (not port 53) */
    json_t *datagram_evidence;
    struct deferred deferred[DEFERRED_MAX];
    size_t ndeferred;
};

struct sg_classifier *sg_classifier_new(void)
{
    struct sg_classifier *c = sg_xcalloc(1, sizeof *c);
    c->all_prevented = true;
    return c;
}

void sg_classifier_free(struct sg_classifier *c)
{
    if (!c)
        return;
    for (int i = 0; i < C_COUNT; i++)
        json_decref(c->evidence[i]);
    for (size_t i = 0; i < c->ndeferred; i++)
        json_decref(c->deferred[i].evidence);
    json_decref(c->datagram_evidence);
    free(c);
}

static void keep_evidence(json_t **ev, const char *(*message)(void *ctx), void *ctx)
{
    if (!*ev)
        *ev = json_array();
    if (json_array_size(*ev) < 5)
        json_array_append_new(*ev, json_string(message(ctx)));
}

/* The host a refused packet or name was for: its name when it had one. */
static const char *refused_host(json_t *data)
{
    const char *name = json_string_value(json_object_get(data, "name"));
    if (name && *name)
        return name;
    return json_string_value(json_object_get(data, "dst"));
}

static void defer(struct sg_classifier *c, json_t *data, const char *(*message)(void *ctx),
                  void *ctx)
{
    unsigned mask = services_of(refused_host(data));
    size_t i = 0;
    while (i < c->ndeferred && c->deferred[i].mask != mask)
        i++;
    if (i == c->ndeferred && c->ndeferred == DEFERRED_MAX)
        for (i = 0; i < c->ndeferred && c->deferred[i].mask; i++)
            ;
    if (i == c->ndeferred) {
        if (i == DEFERRED_MAX)
            i = 0, c->deferred[0].mask = 0; /* the first one is folded into "no service" */
        else
            c->deferred[c->ndeferred++].mask = mask;
    }
    c->deferred[i].count++;
    keep_evidence(&c->deferred[i].evidence, message, ctx);
}

/* A refused UDP (or UDP-Lite) datagram that carried data out: not to the
 * DNS port (the stub's: dns_exfiltration says what is smuggled there), not
 * to an address the stub handed out for a declared name (a browser's QUIC
 * retry of a declared site: 198.18.0.0/15, fd53:6b69:6c6c:6761::/64), not
 * multicast or broadcast (a library's discovery). */
static bool data_datagram(const char *kind, json_t *data)
{
    const char *proto = json_string_value(json_object_get(data, "protocol"));
    const char *dst = json_string_value(json_object_get(data, "dst"));
    if (strcmp(kind, "network_egress_blocked") || !proto || !dst ||
        (strcasecmp(proto, "udp") && strcasecmp(proto, "udplite")))
        return false;
    if (json_integer_value(json_object_get(data, "port")) == 53)
        return false;
    unsigned char a[16];
    if (inet_pton(AF_INET, dst, a) == 1)
        return !(a[0] == 198 && (a[1] == 18 || a[1] == 19)) && !(a[0] >= 224 && a[0] <= 239) &&
               !(a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
    if (inet_pton(AF_INET6, dst, a) == 1) {
        static const unsigned char stub[8] = {0xfd, 0x53, 0x6b, 0x69, 0x6c, 0x6c, 0x67, 0x61};
        return memcmp(a, stub, 8) && a[0] != 0xff;
    }
    return true;
}

void sg_classifier_add(struct sg_classifier *c, const char *kind, json_t *data,
                       const char *(*message)(void *ctx), void *ctx)
{
    if (!kind || !is_enforcement(kind))
        return;
    if (!strcmp(kind, "permission_decided") && !json_is_true(json_object_get(data, "prevented")))
        return; /* an approval is not an enforcement */
    const char *cls = json_string_value(json_object_get(data, "class"));
    /* a write the private views took is listed, not classified, unless it
     * aimed at a persistence location (~/.bashrc, autostart, git hooks) */
    if (!strcmp(kind, "write_discarded") && !(cls && !strcmp(cls, "persistence")))
        return;
    c->total++;
    if (!json_is_true(json_object_get(data, "prevented")))
        c->all_prevented = false;
    int k = classify_event(kind, data);
    if (k == C_NONE)
        return;
    if (k == C_DEFERRED && data_datagram(kind, data)) {
        /* a datagram carries its data in the packet refused (a TCP connect
         * carried none yet): data leaving, whatever host it names
         * (SkillSandbox's data_exfiltration; after a credential read,
         * credential exfiltration: no credential's own service takes one) */
        c->datagrams++;
        keep_evidence(&c->datagram_evidence, message, ctx);
        return;
    }
    if (k == C_DEFERRED) {
        defer(c, data, message, ctx);
        return;
    }
    if (k == C_CREDENTIAL_READ) {
        const char *path = json_string_value(json_object_get(data, "path"));
        if (json_is_true(json_object_get(data, "lost")))
            /* the decoys' one queue overflowed: the opens lost may be of
             * any decoy (a flood of ~/.npmrc hides a sweep of ~/.ssh,
             * ~/.aws ...), so they count as the sweep they could hide */
            c->places |= (1u << CRED_COUNT) - 1;
        else
            c->places |= 1u << (!strcmp(kind, "syscall_blocked") ? CRED_AGENT : cred_place(path));
    }
    c->count[k]++;
    keep_evidence(&c->evidence[k], message, ctx);
}

static void add_evidence(json_t **to, json_t *from)
{
    if (!*to)
        *to = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(from, i, m)
        if (json_array_size(*to) < 5)
            json_array_append(*to, m);
}

/* What credentials, and refused hosts, mean together: several places swept
 * is harvesting; a refused host after any of them is exfiltration unless it
 * is a service of a place the run read (npm's registry after ~/.npmrc),
 * and after a sweep it is exfiltration whatever it names. */
static void judge_credentials(const struct sg_classifier *c, size_t count[C_COUNT],
                              json_t *evidence[C_COUNT])
{
    bool sweep = (size_t)__builtin_popcount(c->places) >= SG_CREDENTIAL_SWEEP;
    if (sweep) {
        count[C_CREDENTIAL_HARVESTING] += count[C_CREDENTIAL_READ];
        add_evidence(&evidence[C_CREDENTIAL_HARVESTING], evidence[C_CREDENTIAL_READ]);
        count[C_CREDENTIAL_READ] = 0;
        json_decref(evidence[C_CREDENTIAL_READ]);
        evidence[C_CREDENTIAL_READ] = NULL;
    }
    for (size_t i = 0; c->places && i < c->ndeferred; i++) {
        const struct deferred *d = &c->deferred[i];
        if (!sweep && (d->mask & c->places))
            continue; /* the service of a place it read: its own registry */
        count[C_CREDENTIAL_EXFILTRATION] += d->count;
        add_evidence(&evidence[C_CREDENTIAL_EXFILTRATION], d->evidence);
    }
}

json_t *sg_classifier_summary(const struct sg_classifier *c0)
{
    size_t count[C_COUNT];
    json_t *evidence[C_COUNT];
    memcpy(count, c0->count, sizeof count);
    for (int i = 0; i < C_COUNT; i++)
        evidence[i] = c0->evidence[i] ? json_deep_copy(c0->evidence[i]) : NULL;
    judge_credentials(c0, count, evidence);
    if (c0->datagrams) {
        int k = c0->places ? C_CREDENTIAL_EXFILTRATION : C_DATA_EXFILTRATION;
        count[k] += c0->datagrams;
        add_evidence(&evidence[k], c0->datagram_evidence);
    }
    /* A skill that both reaches for credentials and tries to send data out
     * behaves like a poisoned package. */
    if ((count[C_CREDENTIAL_HARVESTING] || count[C_CREDENTIAL_READ]) &&
        (count[C_CREDENTIAL_EXFILTRATION] || count[C_DNS_EXFILTRATION])) {
        count[C_SUPPLY_CHAIN_ATTACK] = 1;
        json_decref(evidence[C_SUPPLY_CHAIN_ATTACK]);
        evidence[C_SUPPLY_CHAIN_ATTACK] = json_pack("[s]", "credential harvesting combined with "
                                                           "an exfiltration attempt");
    }
    json_t *list = json_array(), *names = json_array();
    const char *max = "none";
    for (int k = 0; k < C_COUNT; k++) {
        if (!count[k]) {
            json_decref(evidence[k]);
            continue;
        }
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:o}", "class",
                            classes[k].name, "severity", classes[k].severity, "description",
                            classes[k].description, "prevented_by", classes[k].prevented_by,
                            "mitre_tactic", classes[k].tactic, "mitre_technique",
                            classes[k].technique, "count", (json_int_t)count[k], "evidence",
                            evidence[k] ? evidence[k] : json_array()));
        /* SkillSandbox's classes: its class names as Rust's Debug prints
         * them, lower-cased ("supplychainattack") */
        char ss[64];
        size_t n = 0;
        for (const char *p = classes[k].name; *p && n + 1 < sizeof ss; p++)
            if (*p != '_')
                ss[n++] = *p;
        ss[n] = '\0';
        json_array_append_new(names, json_string(ss));
        if (severity_rank(classes[k].severity) > severity_rank(max))
            max = classes[k].severity;
    }
    return json_pack("{s:I, s:o, s:b, s:o, s:s}", "total_enforcements", (json_int_t)c0->total,
                     "classifications", list, "all_prevented", c0->all_prevented, "classes",
                     names, "max_severity", max);
}

static const char *event_message(void *ctx)
{
    return json_string_value(json_object_get(ctx, "message"));
}

json_t *sg_classify(json_t *events)
{
    struct sg_classifier *c = sg_classifier_new();
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
        sg_classifier_add(c, json_string_value(json_object_get(ev, "kind")),
                          json_object_get(ev, "data"), event_message, ev);
    json_t *s = sg_classifier_summary(c);
    sg_classifier_free(c);
    return s;
}
