/* skillsandbox.yaml: the whole schema, its defaults and its errors, and the
 * fold of both formats into one Policy. */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "sandbox.h"
#include "skill.h"
#include "util.h"

#define HEAD "skill:\n  name: demo\n  description: d\n"

static void defaults(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(NULL, HEAD);
    if (sk->diags.n)
        th_dump(&sk->diags);
    assert_int_equal(sk->diags.n, 0);
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->limits.memory_mb.value, 256);
    assert_int_equal(p->limits.runtime_s.value, 60);
    assert_int_equal(p->limits.output_bytes.value, 1048576);
    assert_string_equal(p->limits.memory_mb.origin.file, "default");
    assert_int_equal(p->profile, SG_SECCOMP_DEFAULT);
    assert_int_equal(p->negress, 0);
    assert_int_equal(p->nenv, 0);
    assert_int_equal(p->nwrite, 0);
    assert_int_equal(p->nread, 1); /* the skill's own files */
    assert_string_equal(p->read[0].path, "/nonexistent/demo");
    sg_skill_free(sk);
}

static void full_schema(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, "skill:\n  name: demo\n  version: \"2.0\"\n  description: d\n  author: me\n"
              "permissions:\n  network:\n    egress:\n      - domain: api.example.test\n"
              "      - domain: \"*.cdn.example.test\"\n        ports: [80, 8443]\n"
              "      - plain.example.test\n"
              "  filesystem:\n    read: [/usr/share/dict]\n    write: [/tmp/demo-cache]\n"
              "  env_vars:\n    allow: [API_KEY, LANG]\n  syscalls:\n    profile: strict\n"
              "resources:\n  memory_mb: 128\n  max_runtime_seconds: 30\n  max_cpu_percent: 50\n"
              "  max_pids: 8\n  max_output_bytes: 4096\n"
              "entrypoint:\n  command: python3\n  args: [main.py, --fast]\n");
    if (sk->diags.n)
        th_dump(&sk->diags);
    assert_int_equal(sk->diags.n, 0);
    const struct sg_policy *p = &sk->policy;
    assert_string_equal(sk->version, "2.0");
    assert_string_equal(sk->author, "me");
    assert_int_equal(p->negress, 3);
    assert_int_equal(p->egress[0].nports, 1);
    assert_int_equal(p->egress[0].ports[0], 443);
    assert_int_equal(p->egress[0].origin.line, 9);
    assert_string_equal(p->egress[0].origin.field, "permissions.network.egress[0].domain");
    assert_true(p->egress[1].wildcard);
    assert_int_equal(p->egress[1].nports, 2);
    assert_int_equal(p->egress[1].ports[1], 8443);
    assert_string_equal(p->egress[2].domain, "plain.example.test");
    assert_string_equal(p->read[1].path, "/usr/share/dict");
    assert_string_equal(p->write[0].path, "/tmp/demo-cache");
    assert_int_equal(p->nenv, 2);
    assert_int_equal(p->profile, SG_SECCOMP_STRICT);
    assert_int_equal(p->limits.memory_mb.value, 128);
    assert_int_equal(p->limits.runtime_s.value, 30);
    assert_int_equal(p->limits.cpu_percent.value, 50);
    assert_int_equal(p->limits.pids.value, 8);
    assert_int_equal(p->limits.output_bytes.value, 4096);
    assert_string_equal(p->limits.pids.origin.field, "resources.max_pids");
    assert_string_equal(p->entry.command, "python3");
    assert_int_equal(p->entry.nargs, 2);
    assert_string_equal(p->entry.args[1], "--fast");
    assert_int_equal(p->mode, SG_MODE_NATIVE);
    sg_skill_free(sk);
}

static void bad_ports(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  network:\n    egress:\n"
                   "      - {domain: a.example.test, ports: [0]}\n"
                   "      - {domain: b.example.test, ports: [65536]}\n"
                   "      - {domain: c.example.test, ports: [https]}\n"
                   "      - {domain: d.example.test, ports: []}\n"
                   "      - {domain: e.example.test, ports: [-1]}\n"
                   "      - {domain: f.example.test, ports: [\"443\"]}\n"
                   "      - {domain: g.example.test, ports: [443, 443]}\n");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 42, "permissions.network.egress[0].ports[0]",
                   "out of range (1..65535)");
    th_assert_diag(&sk->diags, SG_ERROR, 8, 0, "permissions.network.egress[1].ports[0]",
                   "out of range");
    th_assert_diag(&sk->diags, SG_ERROR, 9, 0, "permissions.network.egress[2].ports[0]",
                   "whole number, not \"https\"");
    th_assert_diag(&sk->diags, SG_ERROR, 10, 0, "permissions.network.egress[3].ports", "is empty");
    th_assert_diag(&sk->diags, SG_ERROR, 11, 0, "permissions.network.egress[4].ports[0]",
                   "out of range");
    th_assert_diag(&sk->diags, SG_ERROR, 12, 0, "permissions.network.egress[5].ports[0]",
                   "whole number");
    th_assert_diag(&sk->diags, SG_WARNING, 13, 0, "permissions.network.egress[6].ports[1]",
                   "listed twice");
    /* Only the good entry made it into the policy. */
    assert_int_equal(sk->policy.negress, 1);
    assert_string_equal(sk->policy.egress[0].domain, "g.example.test");
    sg_skill_free(sk);
}

static void listen_ports(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(NULL, HEAD "permissions:\n  network:\n    listen: [8000, 8001]\n");
    if (sk->diags.n)
        th_dump(&sk->diags);
    assert_int_equal(sk->diags.n, 0);
    assert_int_equal(sk->policy.nlisten, 2);
    assert_int_equal(sk->policy.listen[0], 8000);
    assert_int_equal(sk->policy.listen[1], 8001);
    assert_string_equal(sk->policy.listen_origin.field, "permissions.network.listen");
    assert_int_equal(sk->policy.listen_origin.line, 6);
    sg_skill_free(sk);
    sk = th_skill(NULL, HEAD "permissions:\n  network:\n    listen: 8080\n");
    assert_int_equal(sk->diags.n, 0);
    assert_int_equal(sk->policy.nlisten, 1);
    assert_int_equal(sk->policy.listen[0], 8080);
    sg_skill_free(sk);
    sk = th_skill(NULL, HEAD "permissions:\n  network:\n    listen: [0, http]\n");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 0, "permissions.network.listen[0]", "out of range");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 0, "permissions.network.listen[1]", "whole number");
    assert_int_equal(sk->policy.nlisten, 0); /* nothing half-published */
    sg_skill_free(sk);
    sk = th_skill(NULL, HEAD "permissions:\n  network:\n    listen: []\n");
    assert_int_equal(sk->diags.n, 0);
    assert_int_equal(sk->policy.nlisten, 0);
    sg_skill_free(sk);
}

static void domains(void **st)
{
    (void)st;
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"https://api.example.test/v1", "not a URL"},
        {"*", "would allow every host"},
        {"*.test", "too broad"},
        {"a..example.test", "empty label"},
        {"-a.example.test", "starts or ends with '-'"},
        {"a-.example.test", "starts or ends with '-'"},
        {"api.example.test:443", "must not carry a port"},
        {"a_b.example.test", "may only contain"},
        {"api.*.example.test", "only allowed as a leading"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.test", "longer than 63"},
        {"", "is empty"},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(bad); i++) {
        char *out = NULL;
        const char *why = NULL;
        assert_int_equal(sg_domain_normalize(bad[i].in, &out, &why), -EINVAL);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: \"%s\" does not mention \"%s\"", bad[i].in, why, bad[i].why);
        assert_null(out);
    }
    static const struct {
        const char *in, *out;
    } good[] = {
        {"API.Example.TEST.", "api.example.test"},
        {"*.example.test", "*.example.test"},
        {"192.0.2.10", "192.0.2.10"},
        {"2001:db8::1", "2001:db8::1"},
        {"x-1.example.test", "x-1.example.test"},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(good); i++) {
        char *out = NULL;
        const char *why = NULL;
        assert_int_equal(sg_domain_normalize(good[i].in, &out, &why), 0);
        assert_string_equal(out, good[i].out);
        free(out);
    }
    /* and through the manifest, with the position of the bad value */
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  network:\n    egress:\n      - domain: \"*\"\n");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 17, "permissions.network.egress[0].domain",
                   "every host");
    sg_skill_free(sk);
    sk = th_skill(NULL, HEAD "permissions:\n  network:\n    egress:\n      - ports: [443]\n");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 9, "permissions.network.egress[0].domain", "missing");
    sg_skill_free(sk);
}

static void limits_out_of_range(void **st)
{
    (void)st;
    struct sg_skill *sk =
        th_skill(NULL, HEAD "resources:\n  memory_mb: -5\n  max_runtime_seconds: ten\n"
                            "  max_cpu_percent: 0\n  max_pids: 1000000\n"
                            "  max_output_bytes: \"1024\"\n  swap_mb: 5\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 14, "resources.memory_mb", "-5 is out of range (16..65536)");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 24, "resources.max_runtime_seconds",
                   "whole number, not \"ten\"");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 20, "resources.max_cpu_percent", "out of range");
    th_assert_diag(&sk->diags, SG_ERROR, 8, 13, "resources.max_pids", "out of range (1..32768)");
    th_assert_diag(&sk->diags, SG_ERROR, 9, 21, "resources.max_output_bytes", "whole number");
    th_assert_diag(&sk->diags, SG_WARNING, 10, 3, "resources.swap_mb", "unknown key");
    sg_skill_free(sk);
    /* a misspelt limit would stay at its default without a word (issue 38) */
    sk = th_skill(NULL, HEAD "resources:\n  max_runtime_secs: 10\n  max_pid: 8\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 3, "resources.max_runtime_secs",
                   "unknown key; did you mean \"max_runtime_seconds\"?");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 3, "resources.max_pid",
                   "did you mean \"max_pids\"?");
    assert_true(sg_skill_has_errors(sk));
    /* Refused values leave the defaults in place, never a half-parsed number. */
    assert_int_equal(sk->policy.limits.memory_mb.value, 256);
    assert_int_equal(sk->policy.limits.pids.value, 64);
    sg_skill_free(sk);
    sk = th_skill(NULL, HEAD "resources:\n  memory_mb: 99999999999999999999999\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 14, "resources.memory_mb", "out of range");
    sg_skill_free(sk);
}

static void types_and_unknown_keys(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  network: [a]\n  filesystem:\n    read: /etc\n"
                   "  env_vars:\n    allow: [[A]]\n  syscalls:\n    profile: paranoid\n"
                   "  gpu: true\nentrypoint:\n  args: python3\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 12, "permissions.network", "must be a mapping, not a list");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 11, "permissions.filesystem.read",
                   "must be a list of strings, not a scalar");
    th_assert_diag(&sk->diags, SG_ERROR, 9, 13, "permissions.env_vars.allow[0]",
                   "must be a string, not a list");
    th_assert_diag(&sk->diags, SG_ERROR, 11, 14, "permissions.syscalls.profile",
                   "not a profile (default, strict, permissive)");
    th_assert_diag(&sk->diags, SG_WARNING, 12, 3, "permissions.gpu", "unknown key");
    th_assert_diag(&sk->diags, SG_ERROR, 14, 9, "entrypoint.args", "must be a list of strings");
    th_assert_diag(&sk->diags, SG_ERROR, 14, 3, "entrypoint.command", "missing");
    sg_skill_free(sk);
    sk = th_skill(NULL, "- just\n- a list\n");
    th_assert_diag(&sk->diags, SG_ERROR, 1, 1, NULL, "must be a mapping");
    sg_skill_free(sk);
    sk = th_skill(NULL, "permissions: {}\n");
    th_assert_diag(&sk->diags, SG_ERROR, 1, 1, "skill", "missing");
    sg_skill_free(sk);
    sk = th_skill(NULL, "skill:\n  name: demo\n");
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, "skill.description", "missing");
    sg_skill_free(sk);
}

static void env_names(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  env_vars:\n    allow: [GOOD_1, AWS_*, 1BAD, LD_PRELOAD, "
                   "PATH, GOOD_1]\n");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 21, "permissions.env_vars.allow[1]",
                   "no wildcards: list each variable");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 28, "permissions.env_vars.allow[2]",
                   "not an environment variable name");
    th_assert_diag(&sk->diags, SG_WARNING, 6, 34, "permissions.env_vars.allow[3]",
                   "change what code the skill runs");
    th_assert_diag(&sk->diags, SG_WARNING, 6, 46, "permissions.env_vars.allow[4]",
                   "set by skillgate");
    assert_int_equal(sk->policy.nenv, 3); /* GOOD_1 once, LD_PRELOAD, PATH */
    sg_skill_free(sk);
}

static void paths(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  filesystem:\n    read: [/, ./data/../data2, \"\"]\n"
                   "    write: [/, /etc, ../sibling, out/./x/]\n");
    /* "/" holds the home (issue 34, item 8): refused, no longer a warning */
    th_assert_diag(&sk->diags, SG_ERROR, 6, 12, "permissions.filesystem.read[0]",
                   "refusing read access to /: it is a folder that holds your home");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 32, "permissions.filesystem.read[2]",
                   "\"\" is empty");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 13, "permissions.filesystem.write[0]",
                   "refusing write access to /");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 16, "permissions.filesystem.write[1]",
                   "refusing write access to /etc");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 22, "permissions.filesystem.write[2]",
                   "climbs out of the skill root");
    const struct sg_policy *p = &sk->policy;
    assert_string_equal(p->read[1].path, "/nonexistent/demo/data2");
    assert_int_equal(p->nwrite, 1);
    assert_string_equal(p->write[0].path, "/nonexistent/demo/out/x");
    assert_string_equal(p->write[0].declared, "out/./x/");
    sg_skill_free(sk);
}

/* permissions.unix_sockets (issue 34): host sockets by absolute or ~/ path,
 * each with its origin; what is at the path now is only a warning (the plan
 * pins it when a run starts). */
static void unix_sockets(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        NULL, HEAD "permissions:\n  unix_sockets:\n    - /nonexistent/sg.sock\n"
                   "    - agent.sock\n    - ~other/s\n    - \"~/x.sock\"\n    - /\n"
                   "    - /etc/passwd\n    - /nonexistent/sg.sock\n    - [nested]\n");
    th_assert_diag(&sk->diags, SG_WARNING, 6, 7, "permissions.unix_sockets[0]",
                   "no socket there now");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 7, "permissions.unix_sockets[1]",
                   "must be an absolute path or ~/");
    th_assert_diag(&sk->diags, SG_ERROR, 8, 7, "permissions.unix_sockets[2]",
                   "must be an absolute path or ~/");
    th_assert_diag(&sk->diags, SG_ERROR, 10, 7, "permissions.unix_sockets[4]", "is no socket");
    th_assert_diag(&sk->diags, SG_WARNING, 11, 7, "permissions.unix_sockets[5]",
                   "not a unix socket");
    th_assert_diag(&sk->diags, SG_WARNING, 12, 7, "permissions.unix_sockets[6]", "listed twice");
    th_assert_diag(&sk->diags, SG_ERROR, 13, 7, "permissions.unix_sockets[7]", "string");
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->nsockets, 3);
    assert_string_equal(p->sockets[0].path, "/nonexistent/sg.sock");
    assert_int_equal(p->sockets[0].origin.line, 6);
    assert_string_equal(p->sockets[0].origin.field, "permissions.unix_sockets[0]");
    assert_true(p->sockets[1].path[0] == '/' && strstr(p->sockets[1].path, "/x.sock"));
    assert_string_equal(p->sockets[1].declared, "~/x.sock");
    assert_string_equal(p->sockets[2].path, "/etc/passwd");
    /* a declared host socket makes the skill high risk, whatever its tools */
    assert_int_equal(sg_policy_max_risk(p), SG_RISK_HIGH);
    sg_skill_free(sk);

    sk = th_skill(NULL, HEAD "permissions:\n  unix_sockets: /tmp/one.sock\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 17, "permissions.unix_sockets", "list of strings");
    assert_int_equal(sk->policy.nsockets, 0);
    sg_skill_free(sk);
}

/* skillgate's own folders (issue 14): declaring one, or a path inside one,
 * is an error; a write path that holds one too; a read path that holds one
 * is a warning (the run masks it). */
static void own_folders(void **st)
{
    (void)st;
    setenv("XDG_CONFIG_HOME", "/nonexistent/cfg", 1);
    setenv("XDG_STATE_HOME", "/nonexistent/state", 1);
    /* the runtime folder is used only when it is a private folder of ours */
    cleanup_free char *rt = th_tmpdir();
    setenv("XDG_RUNTIME_DIR", rt, 1);
    cleanup_free char *yml = sg_xasprintf(
        HEAD "permissions:\n  filesystem:\n"
             "    read: [/nonexistent/cfg/skillgate, /nonexistent/state/skillgate/traces, "
             "/nonexistent/cfg, %s]\n"
             "    write: [/nonexistent/state, /nonexistent/cfg/skillgate/grants.yaml, "
             "%s/skillgate, /nonexistent/other]\n", rt, rt);
    struct sg_skill *sk = th_skill(NULL, yml);
    th_assert_diag(&sk->diags, SG_ERROR, 6, 12, "permissions.filesystem.read[0]",
                   "is skillgate's own config folder: a skill may never read it");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 40, "permissions.filesystem.read[1]",
                   "is inside skillgate's own state folder /nonexistent/state/skillgate");
    th_assert_diag(&sk->diags, SG_WARNING, 6, 77, "permissions.filesystem.read[2]",
                   "covers skillgate's own config folder /nonexistent/cfg/skillgate");
    cleanup_free char *covers = sg_xasprintf("covers skillgate's own runtime folder %s/skillgate",
                                             rt);
    th_assert_diag(&sk->diags, SG_WARNING, 6, 95, "permissions.filesystem.read[3]", covers);
    th_assert_diag(&sk->diags, SG_ERROR, 7, 13, "permissions.filesystem.write[0]",
                   "refusing write access to /nonexistent/state: it holds skillgate's own state");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 33, "permissions.filesystem.write[1]",
                   "inside skillgate's own config folder");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 73, "permissions.filesystem.write[2]",
                   "is skillgate's own runtime folder: a skill may never write it");
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->nread, 3); /* the root and the two warned about */
    assert_int_equal(p->nwrite, 1);
    assert_string_equal(p->write[0].path, "/nonexistent/other");
    sg_skill_free(sk);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_STATE_HOME");
    unsetenv("XDG_RUNTIME_DIR");
    th_rmrf(rt);
}

static const struct sg_mount *mount_at(const struct sg_plan *pl, const char *dst)
{
    const struct sg_mount *hit = NULL;
    for (size_t i = 0; i < pl->nmounts; i++)
        if (!strcmp(pl->mounts[i].dst, dst))
            hit = &pl->mounts[i]; /* the last one there is what the skill sees */
    return hit;
}

/* The second line: a policy that reached the plan without the check (the
 * host changed since, or a caller skipped it) still shows none of them. */
static void plan_masks_own_folders(void **st)
{
    (void)st;
    cleanup_free char *t = th_tmpdir();
    th_mkdirs(t, "cfg/skillgate");
    th_mkdirs(t, "state/skillgate/traces");
    cleanup_free char *cfg = sg_xasprintf("%s/cfg", t), *state = sg_xasprintf("%s/state", t);
    cleanup_free char *link = sg_xasprintf("%s/link", t);
    assert_int_equal(symlink(cfg, link), 0);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    setenv("XDG_STATE_HOME", state, 1);
    struct sg_skill *sk = th_skill(NULL, HEAD "entrypoint:\n  command: python3\n");
    assert_false(sg_skill_has_errors(sk));
    struct sg_policy *p = &sk->policy;
    const char *writes[] = {cfg}, *reads[] = {link, state};
    cleanup_free char *traces = sg_xasprintf("%s/skillgate/traces", state);
    const char *reads2[] = {traces};
    p->write = sg_xrealloc(p->write, 2 * sizeof *p->write);
    memset(&p->write[0], 0, sizeof p->write[0]);
    p->write[0].path = sg_xstrdup(writes[0]);
    p->nwrite = 1;
    p->read = sg_xrealloc(p->read, (p->nread + 3) * sizeof *p->read);
    for (size_t i = 0; i < 3; i++) {
        struct sg_path *e = &p->read[p->nread++];
        memset(e, 0, sizeof *e);
        e->path = sg_xstrdup(i < 2 ? reads[i] : reads2[0]);
    }
    struct sg_run_opts o = {.allow_degraded = true};
    struct sg_plan pl;
    const char *why = NULL;
    assert_int_equal(sg_plan_build(sk, &o, &pl, &why), 0);
    cleanup_free char *cfg_own = sg_xasprintf("%s/skillgate", cfg);
    cleanup_free char *link_own = sg_xasprintf("%s/skillgate", link);
    cleanup_free char *state_own = sg_xasprintf("%s/skillgate", state);
    /* a writable folder that holds one is read-only, and it is masked */
    const struct sg_mount *m = mount_at(&pl, cfg);
    assert_non_null(m);
    assert_int_equal(m->kind, SG_MNT_BIND_RO);
    for (size_t i = 0; i < pl.nrw; i++)
        assert_string_not_equal(pl.rw_paths[i], cfg);
    assert_non_null((m = mount_at(&pl, cfg_own)));
    assert_int_equal(m->kind, SG_MNT_MASK);
    /* through a symlink: masked where the sandbox sees it */
    assert_non_null((m = mount_at(&pl, link_own)));
    assert_int_equal(m->kind, SG_MNT_MASK);
    assert_non_null((m = mount_at(&pl, state_own)));
    assert_int_equal(m->kind, SG_MNT_MASK);
    /* a path inside one is never bound */
    assert_non_null((m = mount_at(&pl, traces)));
    assert_int_equal(m->kind, SG_MNT_MASK);
    assert_null(m->src);
    sg_plan_free(&pl);
    sg_skill_free(sk);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_STATE_HOME");
    th_rmrf(t);
}

static void both_formats_fold(void **st)
{
    (void)st;
    const char *md = "---\nname: demo\ndescription: From SKILL.md\nallowed-tools: Read Write\n"
                     "wasm:\n  env:\n    allow: [FROM_MD]\n  memory_mb: 64\n---\n";
    struct sg_skill *sk = th_skill(
        md, "skill:\n  name: demo\n  description: From yaml\n"
            "permissions:\n  env_vars:\n    allow: [FROM_YAML, FROM_MD]\n"
            "resources:\n  memory_mb: 512\n");
    /* the stricter limit holds, and the conflict is said */
    th_assert_diag(&sk->diags, SG_WARNING, 8, 14, "resources.memory_mb", "the smaller applies");
    assert_false(sg_skill_has_errors(sk));
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->limits.memory_mb.value, 64);
    assert_string_equal(p->limits.memory_mb.origin.file, "SKILL.md");
    assert_int_equal(p->nenv, 2);
    assert_string_equal(p->env[0].origin.file, "SKILL.md");
    assert_string_equal(p->env[1].origin.file, "skillsandbox.yaml");
    /* SKILL.md's description wins; tools come from SKILL.md */
    assert_string_equal(sk->description, "From SKILL.md");
    assert_int_equal(p->ntools, 2);
    /* Write no longer makes the skill's own folder writable (issue 15:
     * a skill rewrote its manifests to widen its next run) */
    assert_int_equal(p->nwrite, 0);
    sg_skill_free(sk);

    sk = th_skill("---\nname: demo\ndescription: x\n---\n",
                  "skill:\n  name: other\n  description: y\n");
    th_assert_diag(&sk->diags, SG_ERROR, 2, 9, "skill.name", "must equal the folder name");
    sg_skill_free(sk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(full_schema),
        cmocka_unit_test(bad_ports),
        cmocka_unit_test(listen_ports),
        cmocka_unit_test(domains),
        cmocka_unit_test(limits_out_of_range),
        cmocka_unit_test(types_and_unknown_keys),
        cmocka_unit_test(env_names),
        cmocka_unit_test(paths),
        cmocka_unit_test(unix_sockets),
        cmocka_unit_test(both_formats_fold),
        cmocka_unit_test(own_folders),
        cmocka_unit_test(plan_masks_own_folders),
    };
    return cmocka_run_group_tests_name("sandbox_yaml", tests, NULL, NULL);
}
