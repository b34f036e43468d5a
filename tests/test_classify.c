/* What a run's enforcement events classify as (classify.c): an honest
 * program's own config and its registry's refused lookup, tmux's refused
 * socket, a program the manifest does not grant stay low; a sweep of
 * credentials, a credential read followed by a reach for another host,
 * data in DNS names, a container runtime's socket, a swapped program stay
 * critical or high (issue 36, item 5). The events are shaped as the broker
 * emits them (session.c read_decoy, egress.c answer and block, sockconn.c
 * refuse_path, exec.c refuse and swapped). */
#include <string.h>

#include "helpers.h"

#include "classify.h"
#include "util.h"

#define HOME "/home/sg"

static json_t *decoy(const char *rel)
{
    cleanup_free char *p = sg_xasprintf("%s/%s", HOME, rel);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:b, s:b}}", "kind", "fs_blocked",
                     "message", "read of a decoy", "data", "syscall", "open", "path", p, "access",
                     "read", "class", "credential", "decoy", 1, "prevented", 1);
}

static json_t *lookup(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:i, s:s, s:s, s:b, s:b}}", "kind", "dns_blocked",
                     "message", name, "data", "name", name, "qtype", 1, "via", "udp", "reason",
                     "not declared", "exfil_suspect", 0, "prevented", 1);
}

static json_t *smuggled(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:i, s:s, s:s, s:b, s:b}}", "kind", "dns_blocked",
                     "message", "smuggled", "data", "name",
                     "nbswy3dpeb3w64tmmqqgc3tfebzw63lffz2gk3ll.exfil.attacker.test", "qtype", 16,
                     "via", "udp", "reason", "not declared", "exfil_suspect", 1, "prevented", 1);
}

static json_t *packet(const char *dst, int port)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:i, s:s, s:s, s:b}}", "kind",
                     "network_egress_blocked", "message", dst, "data", "protocol", "TCP", "dst",
                     dst, "port", port, "name", "", "reason",
                     "an address the DNS stub never handed out", "prevented", 1);
}

static json_t *unix_connect(const char *path)
{
    return json_pack("{s:s, s:s, s:{s:s, s:i, s:s, s:s, s:s, s:b}}", "kind", "syscall_blocked",
                     "message", path, "data", "syscall", "connect", "pid", 7, "path", path,
                     "family", "unix", "reason", "not declared", "prevented", 1);
}

static json_t *exec_refused(const char *reason)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:i, s:s, s:b}}", "kind", "syscall_blocked",
                     "message", reason, "data", "syscall", "execve", "program", "/usr/bin/pdfinfo",
                     "pid", 7, "reason", reason, "prevented", 1);
}

/* The summary of events (a NULL-ended list, each reference taken). */
static json_t *summary_of(json_t *first, ...)
{
    json_t *evs = json_array();
    va_list ap;
    va_start(ap, first);
    for (json_t *e = first; e; e = va_arg(ap, json_t *))
        json_array_append_new(evs, e);
    va_end(ap);
    json_t *s = sg_classify(evs);
    json_decref(evs);
    return s;
}

static const char *max_of(json_t *s)
{
    return json_string_value(json_object_get(s, "max_severity"));
}

static json_int_t count_of(json_t *s, const char *cls)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(s, "classifications"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "class")), cls))
            return json_integer_value(json_object_get(c, "count"));
    return 0;
}

static size_t nclasses(json_t *s)
{
    return json_array_size(json_object_get(s, "classifications"));
}

/* npm install: reads ~/.npmrc (a decoy), its registry lookups refused */
static void npm_reading_its_config_and_its_registry_is_low(void **st)
{
    (void)st;
    json_t *s = summary_of(decoy(".npmrc"), lookup("registry.npmjs.org"),
                           lookup("registry.npmjs.org"), lookup("REGISTRY.NPMJS.ORG"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "credential_read"), 1);
    assert_int_equal(nclasses(s), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "total_enforcements")), 4);
    json_decref(s);
}

/* the same read, then a reach for a host npm never talks to */
static void npmrc_then_another_host_is_exfiltration(void **st)
{
    (void)st;
    json_t *s = summary_of(decoy(".npmrc"), lookup("registry.npmjs.org"),
                           lookup("collector.attacker.test"), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    assert_int_equal(count_of(s, "supply_chain_attack"), 1);
    assert_int_equal(count_of(s, "credential_read"), 1);
    json_decref(s);
    /* a name that only ends like the registry is not it */
    s = summary_of(decoy(".npmrc"), lookup("evilnpmjs.org"), NULL);
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    json_decref(s);
    /* an address straight away, after the read */
    s = summary_of(packet("203.0.113.7", 443), decoy(".npmrc"), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    json_decref(s);
}

/* Python's requests reads ~/.netrc before every request, to any host */
static void netrc_before_any_request_is_low(void **st)
{
    (void)st;
    json_t *s = summary_of(decoy(".netrc"), lookup("api.weather.test"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "credential_exfiltration"), 0);
    json_decref(s);
    /* git over https: ~/.netrc and ~/.git-credentials, then its forge */
    s = summary_of(decoy(".netrc"), decoy(".git-credentials"), lookup("github.com"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "credential_read"), 2);
    json_decref(s);
}

/* ~/.ssh, ~/.aws and ~/.npmrc: a sweep, whatever host follows */
static void a_sweep_is_harvesting_and_any_host_after_it_exfiltration(void **st)
{
    (void)st;
    json_t *s = summary_of(decoy(".ssh/id_rsa"), decoy(".ssh/id_ed25519"),
                           decoy(".aws/credentials"), NULL);
    /* two places (both ssh keys are one): still a program's own */
    assert_string_equal(max_of(s), "low");
    json_decref(s);
    s = summary_of(decoy(".ssh/id_rsa"), decoy(".aws/credentials"), decoy(".npmrc"), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "credential_harvesting"), 3);
    assert_int_equal(count_of(s, "credential_read"), 0);
    assert_int_equal(count_of(s, "credential_exfiltration"), 0);
    json_decref(s);
    s = summary_of(decoy(".ssh/id_rsa"), decoy(".aws/credentials"), decoy(".npmrc"),
                   lookup("registry.npmjs.org"), NULL);
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    assert_int_equal(count_of(s, "supply_chain_attack"), 1);
    json_decref(s);
}

/* The decoys share one fanotify group: its queue overflowed (a flood of
 * ~/.npmrc opens from many processes), so which decoys the lost opens were
 * of is not known. Shaped as session.c decoy_event emits it. */
static json_t *decoys_lost(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:b, s:b, s:b}}", "kind", "fs_blocked",
                     "message", "some opens were lost", "data", "syscall", "open", "path", HOME,
                     "access", "read", "class", "credential", "decoy", 1, "lost", 1,
                     "prevented", 1);
}

/* a sweep hidden in the overflow is still a sweep */
static void lost_decoy_opens_count_as_the_sweep_they_could_hide(void **st)
{
    (void)st;
    json_t *s = summary_of(decoy(".npmrc"), decoys_lost(), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "credential_harvesting"), 2);
    json_decref(s);
}

/* no credential touched: a refused lookup or packet is nothing */
static void refused_network_alone_is_nothing(void **st)
{
    (void)st;
    json_t *s = summary_of(lookup("registry.npmjs.org"), packet("192.0.2.1", 443), NULL);
    assert_string_equal(max_of(s), "none");
    assert_int_equal(nclasses(s), 0);
    json_decref(s);
    /* data in the labels is exfiltration whatever else happened */
    s = summary_of(smuggled(), NULL);
    assert_string_equal(max_of(s), "high");
    assert_int_equal(count_of(s, "dns_exfiltration"), 1);
    json_decref(s);
}

static json_t *datagram(const char *dst, int port)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:i, s:s, s:b}}", "kind",
                     "network_egress_blocked", "message", dst, "data", "protocol", "UDP", "dst",
                     dst, "port", port, "reason", "no network in this sandbox", "prevented", 1);
}

/* SkillSandbox's data_exfiltration: a datagram carries its data in the
 * packet refused; a TCP connect or a lookup carried none. With a credential
 * place read it is credential exfiltration instead. The summary names the
 * classes as SkillSandbox does, each with what it means and what held. */
static void a_datagram_out_is_data_exfiltration(void **st)
{
    (void)st;
    json_t *s = summary_of(datagram("198.51.100.9", 9999), packet("192.0.2.1", 443), NULL);
    assert_string_equal(max_of(s), "medium");
    assert_int_equal(count_of(s, "data_exfiltration"), 1);
    assert_int_equal(nclasses(s), 1);
    json_t *c = json_array_get(json_object_get(s, "classifications"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "mitre_tactic")), "exfiltration");
    assert_string_equal(json_string_value(json_object_get(c, "prevented_by")),
                        "network_egress_policy");
    assert_non_null(strstr(json_string_value(json_object_get(c, "description")), "datagram"));
    assert_string_equal(json_string_value(json_array_get(json_object_get(s, "classes"), 0)),
                        "dataexfiltration");
    json_decref(s);
    s = summary_of(datagram("198.51.100.9", 53), NULL); /* port 53: the DNS stub's */
    assert_int_equal(nclasses(s), 0);
    json_decref(s);
    s = summary_of(decoy(".aws/credentials"), datagram("198.51.100.9", 9999), NULL);
    assert_int_equal(count_of(s, "data_exfiltration"), 0);
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    json_decref(s);
    /* ~/.netrc's services are any host: a datagram is still no request of it */
    s = summary_of(decoy(".netrc"), datagram("198.51.100.9", 4444), NULL);
    assert_int_equal(count_of(s, "credential_exfiltration"), 1);
    json_decref(s);
    /* a QUIC retry to a declared name's address, a discovery broadcast */
    s = summary_of(datagram("198.18.0.7", 443), datagram("fd53:6b69:6c6c:6761::7", 443),
                   datagram("239.255.255.250", 1900), datagram("255.255.255.255", 67),
                   datagram("ff02::fb", 5353), NULL);
    assert_int_equal(nclasses(s), 0);
    json_decref(s);
    /* 0fff:: is no multicast address, whatever its text starts with */
    s = summary_of(datagram("fff::1", 9999), NULL);
    assert_int_equal(count_of(s, "data_exfiltration"), 1);
    json_decref(s);
}

static void unix_sockets_by_what_they_serve(void **st)
{
    (void)st;
    json_t *s = summary_of(unix_connect("/tmp/tmux-1000/default"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "host_socket_refused"), 1);
    json_decref(s);
    s = summary_of(unix_connect("/run/docker.sock"), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "sandbox_escape_attempt"), 1);
    json_decref(s);
    s = summary_of(unix_connect("/tmp/ssh-XXXXabcd/agent.4242"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "credential_read"), 1);
    json_decref(s);
    /* an agent, keys and a cloud's credentials: three places swept */
    s = summary_of(unix_connect("/run/user/1000/gnupg/S.gpg-agent"), decoy(".ssh/id_rsa"),
                   decoy(".aws/credentials"), NULL);
    assert_int_equal(count_of(s, "credential_harvesting"), 3);
    json_decref(s);
}

/* a run that outlived its time is no abuse (its status says timeout); a
 * limit that stopped a flood is */
static void limits_by_which_one(void **st)
{
    (void)st;
    json_t *s = summary_of(json_pack("{s:s, s:s, s:{s:s, s:i, s:s, s:b}}", "kind",
                                     "resource_limit_hit", "message", "timeout", "data", "limit",
                                     "timeout", "value", 60, "mechanism", "broker", "prevented", 1),
                           NULL);
    assert_string_equal(max_of(s), "none");
    assert_int_equal(json_integer_value(json_object_get(s, "total_enforcements")), 1);
    json_decref(s);
    s = summary_of(json_pack("{s:s, s:s, s:{s:s, s:b}}", "kind", "resource_limit_hit", "message",
                             "pids", "data", "limit", "pids", "prevented", 1),
                   NULL);
    assert_string_equal(max_of(s), "medium");
    assert_int_equal(count_of(s, "resource_abuse"), 1);
    json_decref(s);
}

static void programs_by_why_they_were_refused(void **st)
{
    (void)st;
    json_t *s = summary_of(exec_refused("Bash is not in allowed-tools"), NULL);
    assert_string_equal(max_of(s), "low");
    assert_int_equal(count_of(s, "undeclared_program"), 1);
    json_decref(s);
    s = summary_of(exec_refused("program swapped"), NULL);
    assert_string_equal(max_of(s), "critical");
    assert_int_equal(count_of(s, "sandbox_escape_attempt"), 1);
    json_decref(s);
}

static json_t *sys_refused(const char *sc)
{
    return json_pack("{s:s, s:s, s:{s:s, s:b}}", "kind", "syscall_blocked", "message", sc, "data",
                     "syscall", sc, "prevented", 1);
}

static void numa_placement_is_no_escape(void **st)
{
    (void)st;
    json_t *s = summary_of(sys_refused("set_mempolicy"), NULL);
    assert_int_equal(count_of(s, "sandbox_escape_attempt"), 0);
    json_decref(s);
    s = summary_of(sys_refused("unshare"), NULL);
    assert_int_equal(count_of(s, "sandbox_escape_attempt"), 1);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(npm_reading_its_config_and_its_registry_is_low),
        cmocka_unit_test(npmrc_then_another_host_is_exfiltration),
        cmocka_unit_test(netrc_before_any_request_is_low),
        cmocka_unit_test(a_sweep_is_harvesting_and_any_host_after_it_exfiltration),
        cmocka_unit_test(lost_decoy_opens_count_as_the_sweep_they_could_hide),
        cmocka_unit_test(refused_network_alone_is_nothing),
        cmocka_unit_test(a_datagram_out_is_data_exfiltration),
        cmocka_unit_test(unix_sockets_by_what_they_serve),
        cmocka_unit_test(limits_by_which_one),
        cmocka_unit_test(programs_by_why_they_were_refused),
        cmocka_unit_test(numa_placement_is_no_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
