/* Threat classification, computed only from enforcement events that
 * actually happened in the run: a benign run classifies as nothing.
 *
 * Critical and high mean the behaviour itself was hostile: many credential
 * files swept, a credential read followed by a reach for a host that is not
 * that credential's own service, data smuggled in DNS, a persistence write,
 * a real escape attempt (ptrace, mount, namespaces, kernel attack surface).
 * What honest programs do every day is low, information only: a program
 * reading its own configuration that happens to be a credential place
 * (~/.npmrc, ~/.netrc, ~/.docker/config.json), a refused lookup of that
 * configuration's own registry, a refused program or a refused connect to
 * a host unix socket such as tmux's (issue 36, item 5). */
#ifndef SG_CLASSIFY_H
#define SG_CLASSIFY_H

#include <jansson.h>

/* X(ID, "class", "severity", "MITRE tactic", "MITRE technique", "description",
 *   "prevented_by"): the last two as SkillSandbox's trace has them (what the
 * class means here; the layer that held) */
#define SG_THREAT_CLASSES(X)                                                                 \
    X(CREDENTIAL_HARVESTING, "credential_harvesting", "critical", "credential-access", "T1555", \
      "three or more credential places reached for in one run, or the kernel keyring: empty " \
      "decoys answered", "credential_masking")                                               \
    X(CREDENTIAL_EXFILTRATION, "credential_exfiltration", "critical", "exfiltration", "T1041", \
      "after a credential place was read, a host that is not its own service reached for, " \
      "or domain fronting: refused", "network_egress_policy")                                \
    X(DATA_EXFILTRATION, "data_exfiltration", "medium", "exfiltration", "T1048",              \
      "a datagram carrying data out, with no credential place read: refused",               \
      "network_egress_policy")                                                    \
    X(DNS_EXFILTRATION, "dns_exfiltration", "high", "exfiltration", "T1048.003",            \
      "data smuggled in DNS labels, or bytes to port 53 that are no query: refused",         \
      "dns_stub")                                                                            \
    X(UNAUTHORIZED_FILE_ACCESS, "unauthorized_file_access", "medium", "collection", "T1005", \
      "a write outside the declared paths: refused", "filesystem_isolation")                 \
    X(PRIVILEGE_ESCALATION, "privilege_escalation", "critical", "privilege-escalation", "T1055", \
      "reaching into another process (ptrace, process_vm_readv/writev, pidfd_getfd, kcmp): " \
      "refused", "seccomp_bpf")                                                              \
    X(SANDBOX_ESCAPE_ATTEMPT, "sandbox_escape_attempt", "critical", "privilege-escalation",  \
      "T1611", "a system call, socket or host socket that leads out of the sandbox: refused", \
      "seccomp_bpf")                                                                         \
    X(PERSISTENCE, "persistence", "high", "persistence", "T1546.004",                       \
      "a write at a place that runs code later (shell startup files, autostart, git hooks)", \
      "filesystem_isolation")                                                                \
    X(RESOURCE_ABUSE, "resource_abuse", "medium", "impact", "T1496",                        \
      "a resource limit reached, or calls that hoard or disturb the machine: stopped",       \
      "resource_limits")                                                                     \
    X(TERMINAL_INJECTION, "terminal_injection", "high", "execution", "T1059",               \
      "terminal control sequences in the output, or terminal ioctls: stopped",              \
      "output_sanitizer")                                                                    \
    X(SUPPLY_CHAIN_ATTACK, "supply_chain_attack", "critical", "initial-access", "T1195.002", \
      "credential places read and an exfiltration attempt in the same run (a poisoned "      \
      "package's pattern)", "credential_masking + network_egress_policy")                    \
    X(CREDENTIAL_READ, "credential_read", "low", "credential-access", "T1552.001",          \
      "one or two credential places read (often a program's own configuration): empty "      \
      "decoys answered", "credential_masking")                                               \
    X(UNDECLARED_PROGRAM, "undeclared_program", "low", "execution", "T1059",                \
      "a program the manifest does not grant: refused", "exec_broker")                       \
    X(HOST_SOCKET_REFUSED, "host_socket_refused", "low", "execution", "T1559",              \
      "a connect to a host unix socket: refused", "socket_broker")

/* How many different credential places (~/.ssh, ~/.aws, ~/.npmrc, an ssh
 * agent ...) a run must reach for to have swept them: one program reads
 * its own, git over https two (~/.netrc, ~/.git-credentials). */
#define SG_CREDENTIAL_SWEEP 3

/* A class's description and prevented_by (SG_THREAT_CLASSES), NULL for a
 * name that is none of ours. */
const char *sg_class_description(const char *cls);
const char *sg_class_prevented_by(const char *cls);

/* Build violation_summary from the trace's events array. */
json_t *sg_classify(json_t *events);

/* The same, one event at a time, as they happen: counts stay exact however
 * many events the trace keeps (a flood of a million refused calls is a
 * million). message(ctx) gives the event's text, asked only for evidence
 * (the first five of each class). */
struct sg_classifier;
struct sg_classifier *sg_classifier_new(void);
void sg_classifier_free(struct sg_classifier *c);
void sg_classifier_add(struct sg_classifier *c, const char *kind, json_t *data,
                       const char *(*message)(void *ctx), void *ctx);
json_t *sg_classifier_summary(const struct sg_classifier *c);

#endif
