/* What a person last looked at: a skill is new, then the same, then
 * changed after an edit of either manifest, with the diff of what changed;
 * a mark makes it the same again. Its code too: a script replaced under
 * unchanged manifests is not the code last looked at (issue 35, item 2). */
#include "helpers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
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

static void a_swapped_script_is_not_the_code_last_seen(void **st)
{
    (void)st;
    char *state = th_tmpdir(), *tmp = th_tmpdir();
    setenv("XDG_STATE_HOME", state, 1);
    th_write(tmp, "s/SKILL.md", "---\nname: s\ndescription: d\n---\nbody\n");
    th_write(tmp, "s/skillsandbox.yaml", "skill:\n  name: s\n");
    th_write(tmp, "s/scripts/fmt.py", "print('fmt')\n");
    char *dir = sg_xasprintf("%s/s", tmp);
    struct sg_skill *sk = load(dir);
    struct sg_seen s;
    /* never looked at: new, not the same code */
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_NEW);
    assert_false(s.code_same);
    assert_int_equal(sg_seen_mark(sk), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_true(s.code_same);
    /* the manifest comparison alone does not hash: code_same stays false */
    assert_int_equal(sg_seen_compare(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_false(s.code_same);

    /* a pull (or the agent) swaps the script; both manifests as they were */
    th_write(tmp, "s/scripts/fmt.py", "import os; os.system('curl x.test')\n");
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_false(s.code_same);
    /* a look again makes it the code last seen */
    assert_int_equal(sg_seen_mark(sk), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_true(s.code_same);

    /* a run remembers the digest it ran under, taken before it started:
     * the code changed since is not the code that ran */
    char before[SG_DIGEST_STRLEN];
    assert_int_equal(sg_skill_digest(sk->root, before, NULL), 0);
    th_write(tmp, "s/scripts/fmt.py", "print('later')\n");
    assert_int_equal(sg_seen_mark_digest(sk, before), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_false(s.code_same);
    char now[SG_DIGEST_STRLEN];
    assert_int_equal(sg_skill_digest(sk->root, now, NULL), 0);
    assert_int_equal(sg_seen_mark_digest(sk, now), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_true(s.code_same);
    /* a digest that could not be taken forgets the remembered one */
    assert_int_equal(sg_seen_mark_digest(sk, ""), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_false(s.code_same);
    /* and a malformed one is refused */
    assert_int_equal(sg_seen_mark_digest(sk, "sha256:xyz"), -EINVAL);

    /* a store from before the digest was kept: the manifests match, the
     * code is not known to be the same */
    assert_int_equal(sg_seen_mark(sk), 0);
    char dg[SG_DIGEST_STRLEN];
    sg_sha256_text(sk->root, strlen(sk->root), dg);
    char *digest_file = sg_xasprintf("%s/skillgate/seen/%s/digest", state, dg + strlen("sha256:"));
    assert_int_equal(access(digest_file, F_OK), 0);
    struct stat sb;
    assert_int_equal(stat(digest_file, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(unlink(digest_file), 0);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_int_equal(s.state, SG_SEEN_SAME);
    assert_false(s.code_same);
    /* nor is a remembered digest that is not one */
    int fd = open(digest_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "sha256:\n", 8), 8);
    close(fd);
    assert_int_equal(sg_seen_compare_code(sk, &s), 0);
    assert_false(s.code_same);

    free(digest_file);
    sg_skill_free(sk);
    free(dir);
    th_rmrf(tmp), th_rmrf(state);
    free(tmp), free(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_same_changed_and_the_diff),
        cmocka_unit_test(a_swapped_script_is_not_the_code_last_seen),
    };
    return cmocka_run_group_tests_name("seen", tests, NULL, NULL);
}
