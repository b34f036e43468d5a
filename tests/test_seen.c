/* What a person last looked at: a skill is new, then the same, then
 * changed after an edit of either manifest, with the diff of what changed;
 * a mark makes it the same again. */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

#include "seen.h"
#include "skill.h"
#include "util.h"

static struct sg_skill *load(const char *dir)
{
    struct sg_skill *sk = NULL;
    int r = sg_skill_load(dir, &sk);
    if (r < 0)
        fail_msg("load %s: %s", dir, strerror(-r));
    return sk;
}

static void new_same_changed_and_the_diff(void **st)
{
    (void)st;
    char *state = th_tmpdir(), *tmp = th_tmpdir();
    setenv("XDG_STATE_HOME", state, 1);
    th_write(tmp, "s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n");
    th_write(tmp, "s/skillsandbox.yaml", "skill:\n  name: s\n");
    char *dir = sg_xasprintf("%s/s", tmp);
    struct sg_skill *sk = load(dir);
    struct sg_seen s;
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_NEW);
    assert_int_equal(sg_seen_mark(sk), 0);
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_true(s.when[0] != '\0');
    /* the skill widens itself */
    th_write(tmp, "s/skillsandbox.yaml",
             "skill:\n  name: s\npermissions:\n  network:\n    egress:\n      - domain: x.test\n");
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_CHANGED);
    assert_false(s.changed[0]);
    assert_true(s.changed[1]);
    char *d = NULL;
    assert_int_equal(sg_seen_diff(sk, 1, &d), 0);
    assert_non_null(strstr(d, "+      - domain: x.test\n"));
    assert_non_null(strstr(d, "--- skillsandbox.yaml as last seen "));
    assert_non_null(strstr(d, "+++ skillsandbox.yaml now"));
    free(d);
    /* a manifest that goes away is a change too, shown as all removed */
    th_write(tmp, "s/skillsandbox.yaml", "skill:\n  name: s\n");
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_int_equal(sg_seen_mark(sk), 0);
    char *y = sg_xasprintf("%s/s/skillsandbox.yaml", tmp);
    assert_int_equal(unlink(y), 0);
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_CHANGED);
    assert_int_equal(sg_seen_diff(sk, 1, &d), 0);
    assert_non_null(strstr(d, "-  name: s\n"));
    free(d);
    free(y);
    sg_skill_free(sk);
    free(dir);
    th_rmrf(tmp), th_rmrf(state);
    free(tmp), free(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_same_changed_and_the_diff),
    };
    return cmocka_run_group_tests_name("seen", tests, NULL, NULL);
}
