/* The shell reader behind Bash(scope) checks of an agent's commands
 * (broker/shellcmd.c): what sh splits into simple commands is split the
 * same way, and what only a running shell could read is refused. */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shellcmd.h"

/* The parse of line as "cmd1|cmd2|..." with words joined as sg_shell_join
 * quotes them. */
static char *shape(const char *line)
{
    struct sg_shell sh;
    const char *why = NULL;
    if (sg_shell_parse(line, &sh, &why) < 0) {
        assert_non_null(why);
        return NULL;
    }
    char out[4096] = "";
    for (size_t i = 0; i < sh.n; i++) {
        char *j = sg_shell_join(&sh.cmds[i]);
        strncat(out, i ? "|" : "", sizeof out - strlen(out) - 1);
        strncat(out, j, sizeof out - strlen(out) - 1);
        free(j);
    }
    sg_shell_free(&sh);
    return strdup(out);
}

static void reads_what_sh_reads(void **st)
{
    (void)st;
    static const char *const ok[][2] = {
        {"ls", "ls"},
        {"ls -la /tmp", "ls -la /tmp"},
        {"git status && git diff", "git status|git diff"},
        {"ls ; touch x", "ls|touch x"},
        {"wc | sh -c id", "wc|sh -c id"},
        {"echo 'a b' \"c d\" e\\ f", "echo 'a b' 'c d' 'e f'"},
        {"find . -name 'x:*'", "find . -name 'x:*'"},
        {"echo \"it's\"", "echo 'it'\\''s'"},
        {"'X=1' ls", "'X=1' ls"},
        {"ls &", "ls"},
        {"a\nb", "a|b"},
        {"a &&\n  b", "a|b"},
        {"ls --color=auto", "ls --color=auto"},
        {"echo \"x\\\"y\" 'if'", "echo 'x\"y' if"},
        {"npm run test:unit", "npm run test:unit"},
        {"a || b; c", "a|b|c"},
        {"\n\nls\n", "ls"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *s = shape(ok[i][0]);
        if (!s)
            fail_msg("refused: %s", ok[i][0]);
        assert_string_equal(s, ok[i][1]);
        free(s);
    }
}

static void refuses_what_only_a_shell_could_read(void **st)
{
    (void)st;
    static const char *const bad[] = {
        "ls $(id)", "ls `id`", "ls > x", "ls < x", "(ls)", "ls *", "ls ~", "FOO=1 ls",
        "if true; then ls; fi", "ls # c", "ls &&", "&& ls", "ls ;; x", "ls |& x", "ls 'x",
        "ls \"$HOME\"", "ls\\\nx", "{ ls; }", "! ls", "ls\r", "", "ls && && x", "ls x?",
        "ls [ab]", "cat <(ls)", "ls &> x", "LD_PRELOAD=/tmp/x.so ls", "ls \\", "  ", ";",
        "echo ${x}", "a |", "a | | b", "X+=1 touch F", "PATH+=:/tmp ls",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *s = shape(bad[i]);
        if (s)
            fail_msg("read %s as %s", bad[i], s);
    }
}

static void bounded(void **st)
{
    (void)st;
    char *big = malloc(SG_SHELL_MAX + 2);
    memset(big, 'a', SG_SHELL_MAX + 1);
    big[SG_SHELL_MAX + 1] = '\0';
    assert_null(shape(big));
    /* many commands: refused past the cap, never grown without bound */
    size_t n = 0;
    for (int i = 0; i < SG_SHELL_MAX_CMDS + 5; i++)
        n += (size_t)snprintf(big + n, SG_SHELL_MAX - n, "a;");
    assert_null(shape(big));
    free(big);
}

/* Each simple command keeps the operator after it, and its joined words
 * read back as the same words. */
static void operators_and_round_trip(void **st)
{
    (void)st;
    struct sg_shell sh;
    const char *why = NULL;
    assert_int_equal(sg_shell_parse("curl -s 'http://a.test/x y' | sh && ls;\necho 'it'\\''s' &",
                                    &sh, &why), 0);
    static const char *const ops[] = {"|", "&&", ";", "&"};
    assert_int_equal(sh.n, 4);
    for (size_t i = 0; i < sh.n; i++) {
        assert_string_equal(sh.cmds[i].op, ops[i]);
        char *j = sg_shell_join(&sh.cmds[i]);
        struct sg_shell back;
        assert_int_equal(sg_shell_parse(j, &back, &why), 0);
        assert_int_equal(back.n, 1);
        assert_int_equal(back.cmds[0].argc, sh.cmds[i].argc);
        for (size_t k = 0; k < back.cmds[0].argc; k++)
            assert_string_equal(back.cmds[0].argv[k], sh.cmds[i].argv[k]);
        sg_shell_free(&back);
        free(j);
    }
    sg_shell_free(&sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_what_sh_reads),
        cmocka_unit_test(refuses_what_only_a_shell_could_read),
        cmocka_unit_test(bounded),
        cmocka_unit_test(operators_and_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
