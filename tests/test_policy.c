/* The tool -> capability table and risk levels, checked against the seed
 * table in DESIGN.md written out independently here. */
#include "helpers.h"

#include <string.h>

#include "policy.h"
#include "skill.h"
#include "util.h"

static void tool_table_matches_design(void **st)
{
    (void)st;
    static const struct {
        const char *name;
        enum sg_risk risk;
        bool read, write, exec, net;
    } want[] = {
        {"Read", SG_RISK_LOW, true, false, false, false},
        {"Grep", SG_RISK_LOW, true, false, false, false},
        {"Glob", SG_RISK_LOW, true, false, false, false},
        {"LS", SG_RISK_LOW, true, false, false, false},
        {"Write", SG_RISK_MEDIUM, true, true, false, false},
        {"Edit", SG_RISK_MEDIUM, true, true, false, false},
        {"MultiEdit", SG_RISK_MEDIUM, true, true, false, false},
        {"WebSearch", SG_RISK_MEDIUM, false, false, false, true},
        {"Fetch", SG_RISK_MEDIUM, false, false, false, true},
        {"WebFetch", SG_RISK_MEDIUM, false, false, false, true},
        {"Bash", SG_RISK_HIGH, true, true, true, false},
        {"Terminal", SG_RISK_HIGH, true, true, true, false},
        {"Delete", SG_RISK_HIGH, true, true, false, false},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(want); i++) {
        enum sg_tool_id id = sg_tool_lookup(want[i].name);
        if (id == SG_TOOL_UNKNOWN)
            fail_msg("%s is not a known tool", want[i].name);
        unsigned caps = sg_tool_caps(id);
        if (sg_tool_risk(id) != want[i].risk || !!(caps & SG_CAP_READ_ROOT) != want[i].read ||
            !!(caps & SG_CAP_WRITE_ROOT) != want[i].write || !!(caps & SG_CAP_EXEC) != want[i].exec ||
            !!(caps & SG_CAP_NETWORK) != want[i].net)
            fail_msg("%s: risk %s caps %#x differ from the design table", want[i].name,
                     sg_risk_name(sg_tool_risk(id)), caps);
    }
}

static void unknown_tools_are_high_risk(void **st)
{
    (void)st;
    assert_int_equal(sg_tool_lookup("Teleport"), SG_TOOL_UNKNOWN);
    assert_int_equal(sg_tool_lookup("bash"), SG_TOOL_UNKNOWN); /* names are case-sensitive */
    assert_int_equal(sg_tool_risk(SG_TOOL_UNKNOWN), SG_RISK_HIGH);
    assert_int_equal(sg_tool_caps(SG_TOOL_UNKNOWN), 0);
}

static void max_risk(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill("---\nname: demo\ndescription: x\nallowed-tools: Read LS\n---\n",
                                   NULL);
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_LOW);
    sg_skill_free(sk);
    sk = th_skill("---\nname: demo\ndescription: x\nallowed-tools: Read Fetch\n---\n", NULL);
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_MEDIUM);
    sg_skill_free(sk);
    /* an empty list allows every tool, so the skill may ask for Bash */
    sk = th_skill("---\nname: demo\ndescription: x\nallowed-tools: []\n---\n", NULL);
    assert_false(sk->policy.tools_restricted);
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_HIGH);
    /* ...but it never widens what the kernel allows: no write path at all */
    assert_int_equal(sk->policy.nwrite, 0);
    assert_int_equal(sk->policy.negress, 0);
    sg_skill_free(sk);
}

static void profiles(void **st)
{
    (void)st;
    enum sg_seccomp_profile p;
    assert_int_equal(sg_seccomp_profile_from_name("strict", &p), 0);
    assert_int_equal(p, SG_SECCOMP_STRICT);
    assert_string_equal(sg_seccomp_profile_name(SG_SECCOMP_PERMISSIVE), "permissive");
    assert_int_equal(sg_seccomp_profile_from_name("Strict", &p), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tool_table_matches_design),
        cmocka_unit_test(unknown_tools_are_high_risk),
        cmocka_unit_test(max_risk),
        cmocka_unit_test(profiles),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
