/* The input the TUI's input line offers: what SKILL.md presents as the
 * input, never the example of what the skill prints (issue 54, item 6). */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

#include "docinput.h"
#include "util.h"

static char *doc(const char *text)
{
    return sg_documented_input(text, strlen(text));
}

static void expect(const char *text, const char *want)
{
    char *got = doc(text);
    if (want)
        assert_non_null(got), assert_string_equal(got, want);
    else
        assert_null(got);
    free(got);
}

static void the_input_not_the_output(void **st)
{
    (void)st;
    /* weather's SKILL.md: the input in prose, the output in a block after "prints:" */
    expect("# Weather\n\nRun the skill with input `{\"city\": \"Oslo\"}`. It calls one API\n"
           "and prints:\n\n```json\n{\"city\": \"Oslo\", \"temperature_c\": 4.5}\n```\n",
           "{\"city\": \"Oslo\"}");
    /* a block after a line about the output is never the input */
    expect("It prints:\n\n```json\n{\"temperature_c\": 4.5}\n```\n", NULL);
    expect("Output, on stdout:\n\n```json\n{\"files\": []}\n```\n", NULL);
    /* a block presented otherwise is taken, compact */
    expect("Call it like this:\n\n```json\n{\"name\":\n  \"Ada\"}\n```\n", "{\"name\":\"Ada\"}");
}

static void prose_and_tables(void **st)
{
    (void)st;
    expect("Input: `{\"dir\": \".\"}` (relative to the folder).\n", "{\"dir\": \".\"}");
    /* a table whose header names the input: its first row */
    expect("Input selects the action:\n\n| input | what |\n|---|---|\n"
           "| `{\"action\": \"extract\"}` | text |\n| `{\"action\": \"info\"}` | info |\n",
           "{\"action\": \"extract\"}");
    /* a span before the word is not the input; one after it on the line is */
    expect("Prints `{\"a\": 1}` when given input `{\"b\": 2}`.\n", "{\"b\": 2}");
    /* the paragraph ends at a blank line or a heading */
    expect("The input is JSON.\n\n`{\"x\": 1}` is printed.\n", NULL);
    expect("The input is JSON.\n# Output\n`{\"x\": 1}`\n", NULL);
    /* SKILL_INPUT is a name, not the word */
    expect("Reads SKILL_INPUT `{\"x\": 1}`.\n", NULL);
}

static void nothing_documented(void **st)
{
    (void)st;
    expect("", NULL);
    expect("# Code review\n\nYou review code; you never change it.\n", NULL);
    expect("Input: `[1, 2]` or `\"text\"` (not objects).\n", NULL);
    expect("Input:\n\n```json\n{\"unclosed\": true}\n", NULL); /* no end to the block */
    expect("Input:\n```json\n```\n", NULL);                  /* an empty block */
    expect("Input: `{\"unclosed\": 1}\n", NULL);            /* a span never closed */
}

static void long_ones_are_not_offered_cut(void **st)
{
    (void)st;
    struct sg_buf b;
    sg_buf_init(&b, 8192);
    sg_buf_printf(&b, "Input: `{\"k\": \"");
    for (int i = 0; i < SG_DOCINPUT_JSON_MAX; i++)
        sg_buf_printf(&b, "x");
    sg_buf_printf(&b, "\"}`\n");
    char *text = sg_buf_steal(&b);
    expect(text, NULL);
    free(text);
    /* a NUL ends the text; past the cap nothing is read */
    static const char nul[] = "Input:\0 `{\"a\": 1}`";
    assert_null(sg_documented_input(nul, sizeof nul - 1));
    assert_null(sg_documented_input("Input: `{\"a\": 1}`", SG_DOCINPUT_MAX + 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_input_not_the_output),
        cmocka_unit_test(prose_and_tables),
        cmocka_unit_test(nothing_documented),
        cmocka_unit_test(long_ones_are_not_offered_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
