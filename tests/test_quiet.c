/* quiet_programs in config.yaml (issue 36, item 4): the ordinary programs a
 * skill's own scripts run without a question, and what the person's config
 * may change of them. */
#include "helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

static char *dir;

static int group_setup(void **st)
{
    (void)st;
    dir = th_tmpdir();
    return 0;
}

static int group_teardown(void **st)
{
    (void)st;
    th_rmrf(dir);
    free(dir);
    return 0;
}

static bool has(const char **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], name))
            return true;
    return false;
}

static int load(const char *name, const char *text, struct sg_config *cfg, struct sg_diags *d)
{
    th_write(dir, name, text);
    cleanup_free char *p = sg_xasprintf("%s/%s", dir, name);
    return sg_config_load(p, cfg, d);
}

static void defaults_read_and_compute(void **st)
{
    (void)st;
    size_t n;
    const char **v = sg_config_quiet_programs(NULL, &n);
    assert_true(n > 20);
    assert_null(v[n]);
    static const char *const yes[] = {"find", "wc", "sort", "grep", "sed", "awk", "head", "tail",
                                      "cut", "tr", "cat", "ls", "xargs", "basename", "dirname",
                                      "date", "mktemp", "test", "["};
    for (size_t i = 0; i < SG_ARRAY_LEN(yes); i++)
        assert_true(has(v, n, yes[i]));
    /* what reaches out, a shell or an interpreter: never by default */
    static const char *const no[] = {"curl", "wget", "ssh", "nc", "git", "npm", "pip", "sudo",
                                     "su", "mount", "bash", "sh", "python3", "env", "lsof"};
    for (size_t i = 0; i < SG_ARRAY_LEN(no); i++)
        assert_false(has(v, n, no[i]));
    free(v);
    assert_true(sg_quiet_never("curl"));
    assert_true(sg_quiet_never("pip3"));
    assert_true(sg_quiet_never("pip3.12"));
    assert_false(sg_quiet_never("sort"));
    assert_false(sg_quiet_never("gitk2x"));
}

static void config_adds_and_removes(void **st)
{
    (void)st;
    struct sg_config cfg;
    struct sg_diags d = {0};
    assert_int_equal(load("a.yaml", "quiet_programs:\n  add: [jq, curl, \"pip3\"]\n"
                                    "  remove: [find]\n",
                          &cfg, &d),
                     0);
    /* curl and pip3 reach out: a warning naming file, line and field */
    th_assert_diag(&d, SG_WARNING, 2, 13, "quiet_programs.add[1]", "never run without a question");
    th_assert_diag(&d, SG_WARNING, 2, 19, "quiet_programs.add[2]", "never run without a question");
    size_t n;
    const char **v = sg_config_quiet_programs(&cfg, &n);
    assert_true(has(v, n, "jq"));
    assert_false(has(v, n, "curl"));
    assert_false(has(v, n, "pip3"));
    assert_false(has(v, n, "find"));
    assert_true(has(v, n, "wc"));
    free(v);
    sg_config_free(&cfg);
    sg_diags_free(&d);

    assert_int_equal(load("b.yaml", "quiet_programs: false\n", &cfg, &d), 0);
    v = sg_config_quiet_programs(&cfg, &n);
    assert_int_equal(n, 0);
    assert_null(v[0]);
    free(v);
    sg_config_free(&cfg);

    assert_int_equal(load("c.yaml", "quiet_programs:\n  add: [/usr/bin/jq]\n  also: [x]\n",
                          &cfg, &d),
                     -EINVAL);
    th_assert_diag(&d, SG_ERROR, 2, 9, "quiet_programs.add[0]", "not a program's name");
    th_assert_diag(&d, SG_WARNING, 3, 3, "also", "unknown key of quiet_programs");
    sg_config_free(&cfg);
    sg_diags_free(&d);

    assert_int_equal(load("d.yaml", "quiet_programs: [find]\n", &cfg, &d), -EINVAL);
    th_assert_diag(&d, SG_ERROR, 1, 17, "quiet_programs", "must be true, false, or a mapping");
    sg_config_free(&cfg);
    sg_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_read_and_compute),
        cmocka_unit_test(config_adds_and_removes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
