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
           !strcmp(kind, "dns_blocked") || !strcmp(kind, "permission_decided");
}

json_t *sg_classify(json_t *events)
{
    size_t count[C_COUNT] = {0};
    json_t *evidence[C_COUNT] = {0};
    size_t total = 0;
    bool all_prevented = true;
    size_t i;
    json_t *ev;
    bool creds = false;
    json_array_foreach(events, i, ev)
    {
        json_t *data = json_object_get(ev, "data");
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        const char *cls = json_string_value(json_object_get(data, "class"));
        if (kind && !strcmp(kind, "fs_blocked") && cls && !strcmp(cls, "credential"))
            creds = true;
    }
    json_array_foreach(events, i, ev)
    {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        json_t *data = json_object_get(ev, "data");
        if (!kind || !is_enforcement(kind))
            continue;
        if (!strcmp(kind, "permission_decided") && !json_is_true(json_object_get(data, "prevented")))
            continue; /* an approval is not an enforcement */
        total++;
        if (!json_is_true(json_object_get(data, "prevented")))
            all_prevented = false;
        int c = classify_event(kind, data, creds);
        if (c == C_NONE)
            continue;
        count[c]++;
        if (!evidence[c])
            evidence[c] = json_array();
        if (json_array_size(evidence[c]) < 5)
            json_array_append(evidence[c], json_object_get(ev, "message"));
    }
    /* A skill that both reaches for credentials and tries to send data out
     * behaves like a poisoned package. */
    if (count[C_CREDENTIAL_HARVESTING] &&
        (count[C_CREDENTIAL_EXFILTRATION] || count[C_DNS_EXFILTRATION])) {
        count[C_SUPPLY_CHAIN_ATTACK] = 1;
        evidence[C_SUPPLY_CHAIN_ATTACK] = json_pack("[s]", "credential harvesting combined with "
                                                           "an exfiltration attempt");
    }
    json_t *list = json_array();
    const char *max = "none";
    for (int c = 0; c < C_COUNT; c++) {
        if (!count[c])
            continue;
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:s, s:I, s:o}", "class", classes[c].name,
                            "severity", classes[c].severity, "mitre_tactic", classes[c].tactic,
                            "mitre_technique", classes[c].technique, "count",
                            (json_int_t)count[c], "evidence", evidence[c]));
        if (severity_rank(classes[c].severity) > severity_rank(max))
            max = classes[c].severity;
    }
    return json_pack("{s:I, s:o, s:b, s:s}", "total_enforcements", (json_int_t)total,
                     "classifications", list, "all_prevented", all_prevented, "max_severity", max);
}
