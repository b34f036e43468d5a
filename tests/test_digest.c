/* The content digest: stable for the same code, different for any change
 * that could change what runs. */
#include "helpers.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "util.h"

static char *digest_of(const char *dir)
{
    char d[SG_DIGEST_STRLEN];
    int r = sg_skill_digest(dir, d, NULL);
    if (r < 0)
        fail_msg("digest %s: %s", dir, strerror(-r));
    return sg_xstrdup(d);
}

static void stable_and_order_independent(void **st)
{
    (void)st;
    char *a = th_tmpdir(), *b = th_tmpdir();
    /* same files, created in a different order */
    th_write(a, "SKILL.md", "---\nname: x\n---\n");
    th_write(a, "scripts/run.py", "print('hi')\n");
    th_write(a, "z.txt", "z");
    th_write(b, "z.txt", "z");
    th_write(b, "scripts/run.py", "print('hi')\n");
    th_write(b, "SKILL.md", "---\nname: x\n---\n");
    char *da = digest_of(a), *da2 = digest_of(a), *db = digest_of(b);
    assert_string_equal(da, da2);
    assert_string_equal(da, db);
    assert_int_equal(strlen(da), SG_DIGEST_STRLEN - 1);
    assert_true(sg_str_has_prefix(da, "sha256:"));
    free(da), free(da2), free(db);
    th_rmrf(a), th_rmrf(b);
    free(a), free(b);
}

static void every_change_that_matters_changes_it(void **st)
{
    (void)st;
    char *a = th_tmpdir();
    th_write(a, "SKILL.md", "---\nname: x\n---\n");
    th_write(a, "run.sh", "echo safe\n");
    char *base = digest_of(a);
    char *p = sg_xasprintf("%s/run.sh", a);

    /* content */
    th_write(a, "run.sh", "echo evil\n");
    char *d1 = digest_of(a);
    assert_string_not_equal(base, d1);
    th_write(a, "run.sh", "echo safe\n");
    char *back = digest_of(a);
    assert_string_equal(base, back);

    /* executable bit */
    chmod(p, 0755);
    char *d2 = digest_of(a);
    assert_string_not_equal(base, d2);
    /* other mode bits do not matter (they differ between checkouts) */
    chmod(p, 0600);
    char *d3 = digest_of(a);
    assert_string_equal(base, d3);

    /* a new file, even a hidden one, and bytecode python would run */
    th_write(a, "__pycache__/run.cpython-311.pyc", "x");
    char *d4 = digest_of(a);
    assert_string_not_equal(base, d4);
    char *pyc = sg_xasprintf("%s/__pycache__", a);
    th_rmrf(pyc);

    /* a rename */
    char *q = sg_xasprintf("%s/run2.sh", a);
    rename(p, q);
    char *d5 = digest_of(a);
    assert_string_not_equal(base, d5);
    rename(q, p);

    /* a symlink and its target */
    char *l = sg_xasprintf("%s/link", a);
    assert_int_equal(symlink("run.sh", l), 0);
    char *d6 = digest_of(a);
    unlink(l);
    assert_int_equal(symlink("SKILL.md", l), 0);
    char *d7 = digest_of(a);
    assert_string_not_equal(d6, d7);
    unlink(l);

    /* .git is not the skill's code */
    th_write(a, ".git/HEAD", "ref: refs/heads/main\n");
    char *d8 = digest_of(a);
    assert_string_equal(base, d8);

    free(base), free(d1), free(back), free(d2), free(d3), free(d4), free(d5), free(d6), free(d7),
        free(d8);
    free(p), free(q), free(l), free(pyc);
    th_rmrf(a);
    free(a);
}

static void missing_root(void **st)
{
    (void)st;
    char d[SG_DIGEST_STRLEN];
    assert_int_equal(sg_skill_digest("/nonexistent/skill", d, NULL), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stable_and_order_independent),
        cmocka_unit_test(every_change_that_matters_changes_it),
        cmocka_unit_test(missing_root),
    };
    return cmocka_run_group_tests_name("digest", tests, NULL, NULL);
}
