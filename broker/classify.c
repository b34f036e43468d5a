#include "classify.h"

#include <string.h>

#include "util.h"

enum {
#define X(id, name, sev, tactic, tech) C_##id,
    SG_THREAT_CLASSES(X)
#undef X
    C_COUNT,
    C_NONE = -1
};

static const struct {
    const char *name, *severity, *tactic, *technique;
} classes[] = {
#define X(id, name, sev, tactic, tech) [C_##id] = {name, sev, tactic, tech},
    SG_THREAT_CLASSES(X)
#undef X
};

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
};

static int severity_rank(const char *s)
{
    static const char *const order[] = {"none", "low", "medium", "high", "critical"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, order[i]))
            return i;
    return 0;
}

static int classify_event(const char *kind, json_t *data, bool touched_credentials)
{
    const char *sc = json_string_value(json_object_get(data, "syscall"));
    if (!strcmp(kind, "syscall_blocked") && sc) {
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
        for (size_t i = 0; i < SG_ARRAY_LEN(syscall_class); i++)
            if (!strcmp(sc, syscall_class[i].syscall))
                return syscall_class[i].cls;
        return C_SANDBOX_ESCAPE_ATTEMPT; /* mount, unshare, bpf, modules, io_uring ... */
    }
    if (!strcmp(kind, "permission_decided"))
        return C_NONE; /* a refused request is counted; what it meant is in its own event */
    if (!strcmp(kind, "resource_limit_hit"))
        return C_RESOURCE_ABUSE;
    /* A refused packet alone says nothing about intent while a run has no
     * network at all (a benign skill's API call looks the same); after the
     * skill reached for credentials, it is an exfiltration attempt. */
    if (!strcmp(kind, "network_egress_blocked")) {
        const char *reason = json_string_value(json_object_get(data, "reason"));
        if (reason && strstr(reason, "domain fronting"))
            return C_CREDENTIAL_EXFILTRATION; /* hiding where data goes is the point of it */
        return touched_credentials ? C_CREDENTIAL_EXFILTRATION : C_NONE;
    }
    /* data in DNS labels is exfiltration whatever else happened; another
     * undeclared name only after the skill reached for credentials */
    if (!strcmp(kind, "dns_blocked")) {
        if (json_is_true(json_object_get(data, "exfil_suspect")))
            return C_DNS_EXFILTRATION;
        return touched_credentials ? C_CREDENTIAL_EXFILTRATION : C_NONE;
    }
    if (!strcmp(kind, "write_discarded"))
        return C_PERSISTENCE;
    if (!strcmp(kind, "output_escapes"))
        return C_TERMINAL_INJECTION;
    if (!strcmp(kind, "fs_blocked")) {
        const char *why = json_string_value(json_object_get(data, "class"));
        if (why && !strcmp(why, "persistence"))
            return C_PERSISTENCE;
        if (why && !strcmp(why, "credential"))
            return C_CREDENTIAL_HARVESTING;
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

/* What has been seen so far, one event at a time: exact however many
 * events the trace itself keeps. A refused packet or name is held apart
 * until the end, since what it means depends on whether the skill reached
 * for credentials at any point of the run (classify_event). */
struct sg_classifier {
    size_t count[C_COUNT];
    json_t *evidence[C_COUNT];
    size_t total;
    bool all_prevented, creds;
    size_t maybe;          /* refused packets and names: exfiltration if creds */
    json_t *maybe_evidence;
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
    json_decref(c->maybe_evidence);
    free(c);
}

static void keep_evidence(json_t **ev, const char *message)
{
    if (!*ev)
        *ev = json_array();
    if (json_array_size(*ev) < 5)
        json_array_append_new(*ev, json_string(message));
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
    if (!strcmp(kind, "fs_blocked") && cls && !strcmp(cls, "credential"))
        c->creds = true;
    c->total++;
    if (!json_is_true(json_object_get(data, "prevented")))
        c->all_prevented = false;
    /* asked as if credentials were touched: C_NONE then means "no class" */
    int k = classify_event(kind, data, true);
    bool depends = k == C_CREDENTIAL_EXFILTRATION && classify_event(kind, data, false) == C_NONE;
    if (k == C_NONE)
        return;
    if (depends) {
        c->maybe++;
        if (!c->maybe_evidence || json_array_size(c->maybe_evidence) < 5)
            keep_evidence(&c->maybe_evidence, message(ctx));
        return;
    }
    c->count[k]++;
    if (!c->evidence[k] || json_array_size(c->evidence[k]) < 5)
        keep_evidence(&c->evidence[k], message(ctx));
}

json_t *sg_classifier_summary(const struct sg_classifier *c0)
{
    size_t count[C_COUNT];
    json_t *evidence[C_COUNT];
    memcpy(count, c0->count, sizeof count);
    for (int i = 0; i < C_COUNT; i++)
        evidence[i] = c0->evidence[i] ? json_deep_copy(c0->evidence[i]) : NULL;
    if (c0->creds && c0->maybe) { /* after the skill reached for credentials */
        count[C_CREDENTIAL_EXFILTRATION] += c0->maybe;
        if (!evidence[C_CREDENTIAL_EXFILTRATION])
            evidence[C_CREDENTIAL_EXFILTRATION] = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(c0->maybe_evidence, i, m)
            if (json_array_size(evidence[C_CREDENTIAL_EXFILTRATION]) < 5)
                json_array_append(evidence[C_CREDENTIAL_EXFILTRATION], m);
    }
    /* A skill that both reaches for credentials and tries to send data out
     * behaves like a poisoned package. */
    if (count[C_CREDENTIAL_HARVESTING] &&
        (count[C_CREDENTIAL_EXFILTRATION] || count[C_DNS_EXFILTRATION])) {
        count[C_SUPPLY_CHAIN_ATTACK] = 1;
        json_decref(evidence[C_SUPPLY_CHAIN_ATTACK]);
        evidence[C_SUPPLY_CHAIN_ATTACK] = json_pack("[s]", "credential harvesting combined with "
                                                           "an exfiltration attempt");
    }
    json_t *list = json_array();
    const char *max = "none";
    for (int k = 0; k < C_COUNT; k++) {
        if (!count[k]) {
            json_decref(evidence[k]);
            continue;
        }
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:s, s:I, s:o}", "class", classes[k].name,
                            "severity", classes[k].severity, "mitre_tactic", classes[k].tactic,
                            "mitre_technique", classes[k].technique, "count",
                            (json_int_t)count[k], "evidence",
                            evidence[k] ? evidence[k] : json_array()));
        if (severity_rank(classes[k].severity) > severity_rank(max))
            max = classes[k].severity;
    }
    return json_pack("{s:I, s:o, s:b, s:s}", "total_enforcements", (json_int_t)c0->total,
                     "classifications", list, "all_prevented", c0->all_prevented, "max_severity",
                     max);
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
