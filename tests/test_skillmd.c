/* SKILL.md: frontmatter, every field, every error. */
#include "helpers.h"

#include "fmlines.h"
#include "openclaw.h"
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "homenamed.h"
#include "skill.h"
#include "util.h"

#define MD(body) "---\n" body "---\n# Body\n"

static void assert_clean(struct sg_skill *sk)
{
    if (sk->diags.n) {
        th_dump(&sk->diags);
        fail_msg("expected no problems");
    }
}

static void minimal_is_valid(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("name: demo\ndescription: Does a thing.\n"), NULL);
    assert_clean(sk);
    assert_string_equal(sk->name, "demo");
    assert_string_equal(sk->description, "Does a thing.");
    assert_false(sk->policy.tools_restricted);
    /* No allowed-tools: every tool may be asked for, so the skill is high risk. */
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_HIGH);
    assert_int_equal(sk->policy.mode, SG_MODE_INSTRUCTIONS);
    /* The body starts on the line after the closing ---. */
    assert_int_equal(sk->body_line, 5);
    sg_skill_free(sk);
}

static void frontmatter_must_open_and_close(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill("# Just markdown\nname: demo\n", NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 1, 1, NULL, "must start with a YAML frontmatter");
    sg_skill_free(sk);
    sk = th_skill("---\nname: demo\ndescription: x\n", NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 1, 1, NULL, "not closed");
    sg_skill_free(sk);
}

static void closing_line_without_newline(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill("---\nname: demo\ndescription: x\n---", NULL);
    assert_clean(sk);
    assert_string_equal(sk->name, "demo");
    sg_skill_free(sk);
    /* streaming: an incomplete last line may still become the delimiter */
    size_t yo, yl, bo;
    int bl;
    assert_int_equal(sg_frontmatter_split("---\nname: x\n--", 14, false, &yo, &yl, &bo, &bl), 1);
    assert_int_equal(sg_frontmatter_split("---\nname: x\n---", 15, true, &yo, &yl, &bo, &bl), 0);
    assert_int_equal(yo, 4);
    assert_int_equal(yl, 8);
    assert_int_equal(bo, 15);
    assert_int_equal(sg_frontmatter_split("--", 2, false, &yo, &yl, &bo, &bl), 1);
    assert_int_equal(sg_frontmatter_split("--", 2, true, &yo, &yl, &bo, &bl), -EINVAL);
    assert_int_equal(sg_frontmatter_split("# x\n", 4, false, &yo, &yl, &bo, &bl), -EINVAL);
}

static void bom_and_crlf_are_accepted(void **st)
{
    (void)st;
    struct sg_skill *sk =
        th_skill("\xef\xbb\xbf---\r\nname: demo\r\ndescription: x\r\n---  \r\nbody\r\n", NULL);
    assert_clean(sk);
    assert_string_equal(sk->name, "demo");
    sg_skill_free(sk);
}

static void missing_name_and_description(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("license: MIT\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 1, "name", "missing");
    th_assert_diag(&sk->diags, SG_ERROR, 2, 1, "description", "missing");
    sg_skill_free(sk);
    sk = th_skill(MD(""), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 1, NULL, "frontmatter is empty");
    sg_skill_free(sk);
}

static void name_rules(void **st)
{
    (void)st;
    static const struct {
        const char *name, *msg;
    } bad[] = {
        {"Demo", "only lower-case letters"},
        {"de_mo", "only lower-case letters"},
        {"-demo", "may not start or end"},
        {"demo-", "may not start or end"},
        {"de--mo", "may not contain \"--\""},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1-64 characters"},
        {"\"\"", "1-64 characters (it has 0)"},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(bad); i++) {
        char *md = sg_xasprintf("---\ndescription: x\nname: %s\n---\n", bad[i].name);
        struct sg_skill *sk = th_skill(md, NULL);
        th_assert_diag(&sk->diags, SG_ERROR, 3, 7, "name", bad[i].msg);
        assert_true(sg_skill_has_errors(sk));
        assert_null(sk->name);
        sg_skill_free(sk);
        free(md);
    }
    /* A name other than the folder's breaks the spec (an error validate
     * reports) but Claude Code loads such skills: the name is kept and the
     * skill still runs. */
    struct sg_skill *other = th_skill(MD("description: x\nname: other\n"), NULL);
    th_assert_diag(&other->diags, SG_ERROR, 3, 7, "name", "must equal the folder name \"demo\"");
    assert_int_equal(sg_diags_count(&other->diags, SG_ERROR), 1);
    assert_false(sg_skill_has_errors(other));
    assert_string_equal(other->name, "other");
    sg_skill_free(other);
    /* Reserved words are a warning, not an error. */
    struct sg_skill *sk = sg_skill_from_buffers("/x/claude-helper",
                                                MD("name: claude-helper\ndescription: x\n"), 44,
                                                NULL, 0);
    th_assert_diag(&sk->diags, SG_WARNING, 2, 7, "name", "reserved word");
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);
}

static void description_limits(void **st)
{
    (void)st;
    char *longd = sg_xmalloc(1100);
    memset(longd, 'x', 1025);
    longd[1025] = '\0';
    char *md = sg_xasprintf("---\nname: demo\ndescription: %s\n---\n", longd);
    struct sg_skill *sk = th_skill(md, NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, "description", "1025 characters; the limit is 1024");
    sg_skill_free(sk);
    free(md);
    longd[1024] = '\0';
    md = sg_xasprintf("---\nname: demo\ndescription: %s\n---\n", longd);
    sk = th_skill(md, NULL);
    assert_clean(sk);
    sg_skill_free(sk);
    free(md);
    free(longd);
    sk = th_skill(MD("name: demo\ndescription: \"   \"\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, "description", "must not be empty");
    sg_skill_free(sk);
}

/* n copies of the UTF-8 character ch */
static char *repeat(const char *ch, size_t n)
{
    size_t l = strlen(ch);
    char *s = sg_xmalloc(n * l + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * l, ch, l);
    s[n * l] = '\0';
    return s;
}

/* Limits in characters count what a person counts: code points, not bytes. */
static void lengths_are_counted_in_characters(void **st)
{
    (void)st;
    static const struct {
        const char *ch;
        size_t ok, over;
    } cases[] = {{"\xc3\xa9", 1024, 1025},             /* é: 2 bytes */
                 {"\xe6\xbc\xa2", 1024, 1025},         /* 漢: 3 bytes */
                 {"\xf0\x9f\x99\x82", 1024, 1025}};   /* 🙂: 4 bytes */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cleanup_free char *okd = repeat(cases[i].ch, cases[i].ok);
        cleanup_free char *md = sg_xasprintf("---\nname: demo\ndescription: %s\n---\n", okd);
        struct sg_skill *sk = th_skill(md, NULL);
        assert_clean(sk);
        sg_skill_free(sk);
        cleanup_free char *over = repeat(cases[i].ch, cases[i].over);
        cleanup_free char *md2 = sg_xasprintf("---\nname: demo\ndescription: %s\n---\n", over);
        sk = th_skill(md2, NULL);
        th_assert_diag(&sk->diags, SG_ERROR, 3, 14, "description",
                       "is 1025 characters; the limit is 1024");
        sg_skill_free(sk);
    }
    cleanup_free char *c500 = repeat("\xc3\xa9", 500), *c501 = repeat("\xc3\xa9", 501);
    cleanup_free char *m1 =
        sg_xasprintf("---\nname: demo\ndescription: d\ncompatibility: %s\n---\n", c500);
    struct sg_skill *sk = th_skill(m1, NULL);
    assert_clean(sk);
    sg_skill_free(sk);
    cleanup_free char *m2 =
        sg_xasprintf("---\nname: demo\ndescription: d\ncompatibility: %s\n---\n", c501);
    sk = th_skill(m2, NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "compatibility", "is 501 characters; the limit is 500");
    sg_skill_free(sk);
    /* bytes that are not UTF-8: refused where they are, never counted */
    sk = th_skill(MD("name: demo\ndescription: caf\xe9 au lait\n"), NULL);
    assert_true(sg_diags_count(&sk->diags, SG_ERROR) >= 1);
    assert_non_null(th_find(&sk->diags, "UTF-8", NULL));
    sg_skill_free(sk);
}

/* Claude Code's own tools are known, each with its real risk; unknown stays
 * for what is truly unknown. */
static void claude_code_tools_are_known(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: d\nallowed-tools: Read AskUserQuestion TodoWrite TodoRead "
           "Task Agent Skill ExitPlanMode BashOutput KillShell NotebookRead\n"),
        NULL);
    assert_clean(sk);
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_LOW);
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: d\nallowed-tools: Read NotebookEdit "
                     "mcp__github__create_issue SlashCommand\n"),
                  NULL);
    assert_clean(sk);
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_MEDIUM);
    assert_int_equal(sk->policy.tools[1].id, SG_TOOL_NOTEBOOKEDIT);
    assert_true(sk->policy.tools[1].caps & SG_CAP_WRITE_ROOT); /* writes like Edit */
    assert_int_equal(sk->policy.tools[2].id, SG_TOOL_MCP);
    assert_string_equal(sk->policy.tools[2].name, "mcp__github__create_issue");
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: d\nallowed-tools: Read mcp__nosep Telepor\n"), NULL);
    th_assert_diag(&sk->diags, SG_WARNING, 4, 16, "allowed-tools[1]", "unknown tool \"mcp__nosep\"");
    th_assert_diag(&sk->diags, SG_WARNING, 4, 16, "allowed-tools[2]", "unknown tool \"Telepor\"");
    assert_int_equal(sg_policy_max_risk(&sk->policy), SG_RISK_HIGH);
    sg_skill_free(sk);
}

/* ClawHub's metadata.openclaw: read, never refused; its variables are the
 * ones the skill may receive, with their origin; programs, config paths and
 * install steps are kept to be shown. */
static void openclaw_metadata_is_read(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: d\nmetadata:\n  openclaw:\n    requires:\n"
           "      env: [TODOIST_API_KEY]\n      bins: [curl]\n      anyBins: [jq, python3]\n"
           "      config: [\"~/.todoist.json\"]\n    primaryEnv: TODOIST_TOKEN\n"
           "    envVars:\n      - {name: TODOIST_REGION, required: false}\n"
           "    install:\n      - {id: brew, kind: brew, formula: todoist, bins: [todoist]}\n"
           "    os: [linux]\n    emoji: x\n  author-note: plain\n"),
        NULL);
    assert_int_equal(sg_diags_count(&sk->diags, SG_ERROR), 0);
    /* OpenClaw's format, so OpenClaw's rules, which want it a mapping */
    assert_null(th_find(&sk->diags, "metadata.openclaw", NULL));
    assert_string_equal(sk->openclaw_rules, "carries OpenClaw's metadata.openclaw");
    assert_non_null(sk->openclaw);
    const struct sg_openclaw *o = sk->openclaw;
    assert_int_equal(o->bins.n, 1);
    assert_string_equal(o->bins.v[0], "curl");
    assert_int_equal(o->any_bins.n, 2);
    assert_string_equal(o->config.v[0], "~/.todoist.json");
    assert_string_equal(o->install.v[0], "brew: todoist (gives todoist)");
    assert_int_equal(sk->policy.nenv, 3);
    assert_string_equal(sk->policy.env[0].name, "TODOIST_API_KEY");
    assert_string_equal(sk->policy.env[0].origin.field, "metadata.openclaw.requires.env[0]");
    assert_string_equal(sk->policy.env[1].name, "TODOIST_TOKEN");
    assert_string_equal(sk->policy.env[2].name, "TODOIST_REGION");
    assert_int_equal(sk->nmetadata, 1); /* the plain string stays metadata */
    sg_skill_free(sk);
    /* the aliases, written as JSON; any other non-string value is a warning */
    sk = th_skill(MD("name: demo\ndescription: d\nmetadata: {\"clawdbot\": {\"requires\": "
                     "{\"bins\": [\"git\"]}}, \"tags\": [a, b]}\n"),
                  NULL);
    assert_int_equal(sg_diags_count(&sk->diags, SG_ERROR), 0);
    assert_non_null(sk->openclaw);
    assert_string_equal(sk->openclaw->key, "clawdbot");
    assert_non_null(th_find(&sk->diags, "metadata.tags", "must be a string", NULL));
    sg_skill_free(sk);
}

static void allowed_tools_as_list(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\nallowed-tools:\n  - Read\n  - Write\n  - Bash\n"), NULL);
    assert_clean(sk);
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->ntools, 3);
    assert_true(p->tools_restricted);
    assert_string_equal(p->tools[0].name, "Read");
    assert_int_equal(p->tools[0].risk, SG_RISK_LOW);
    assert_int_equal(p->tools[1].risk, SG_RISK_MEDIUM);
    assert_int_equal(p->tools[2].risk, SG_RISK_HIGH);
    assert_int_equal(p->tools[2].origin.line, 7);
    assert_string_equal(p->tools[2].origin.field, "allowed-tools[2]");
    assert_int_equal(sg_policy_max_risk(p), SG_RISK_HIGH);
    sg_skill_free(sk);
}

static void allowed_tools_as_string_keeps_scopes_whole(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\n"
           "allowed-tools: \"Read, Grep Bash(git diff:*) Bash(npm run *),WebFetch\"\n"),
        NULL);
    assert_clean(sk);
    const struct sg_policy *p = &sk->policy;
    assert_int_equal(p->ntools, 5);
    assert_string_equal(p->tools[0].name, "Read");
    assert_string_equal(p->tools[1].name, "Grep");
    assert_string_equal(p->tools[2].name, "Bash");
    assert_string_equal(p->tools[2].scope, "git diff:*");
    assert_string_equal(p->tools[3].scope, "npm run *");
    assert_null(p->tools[0].scope);
    /* WebFetch is Claude Code's name for Fetch. */
    assert_int_equal(p->tools[4].id, SG_TOOL_WEBFETCH);
    assert_string_equal(sg_tool_canonical(p->tools[4].id), "Fetch");
    assert_int_equal(p->tools[4].risk, SG_RISK_MEDIUM);
    assert_true(p->caps & SG_CAP_NETWORK);
    assert_true(p->caps & SG_CAP_EXEC);
    sg_skill_free(sk);
}

static void allowed_tools_problems(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\nallowed-tools: Read Teleport Bash(git Read\n"), NULL);
    th_assert_diag(&sk->diags, SG_WARNING, 4, 16, "allowed-tools[1]", "unknown tool \"Teleport\"");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "allowed-tools[2]", "unbalanced '('");
    assert_int_equal(sk->policy.tools[1].risk, SG_RISK_HIGH);
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\nallowed-tools: [Read, Read]\n"), NULL);
    th_assert_diag(&sk->diags, SG_WARNING, 4, 23, "allowed-tools[1]", "listed twice");
    assert_int_equal(sk->policy.ntools, 1);
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\nallowed-tools: {Read: yes}\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "allowed-tools", "not a mapping");
    sg_skill_free(sk);
}

/* A key near a known one is its misspelling (allowed-tools would be left
 * empty, "every tool" to the agent): an error naming the key meant.
 * A key near none is another tool's: a warning (issue 38). */
static void unknown_keys_warn(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("name: demo\ndescription: x\nallowed_tools: Bash\n"
                                      "colour: red\nwasm:\n  timeout_msec: 5\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 1, "allowed_tools",
                   "unknown key; did you mean \"allowed-tools\"?");
    th_assert_diag(&sk->diags, SG_WARNING, 5, 1, "colour", "unknown key, ignored");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 3, "wasm.timeout_msec",
                   "did you mean \"timeout_ms\"?");
    assert_true(sg_skill_has_errors(sk));
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\ncolour: red\n"), NULL);
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);
}

static void yaml_refusals(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("name: demo\ndescription: x\nname: again\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 1, "name", "duplicate key (first at line 2)");
    sg_skill_free(sk);

    /* billion laughs: refused at the first alias, never expanded */
    sk = th_skill(MD("name: demo\ndescription: x\n"
                     "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                     "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                     "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"),
                  NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 5, 8, NULL, "aliases (*a) are refused");
    sg_skill_free(sk);

    /* a merge key: other loaders merge the mapping in (issue 35, item 10) */
    sk = th_skill(MD("name: demo\ndescription: x\nallowed-tools: Read\n"
                     "<<: {allowed-tools: Bash}\n"),
                  NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 5, 1, "<<", "merge keys (<<) are refused");
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\nmetadata:\n  a: b\n  \"<<\": {c: d}\n"),
                  NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 6, 3, "metadata.<<", "merge keys (<<) are refused");
    sg_skill_free(sk);

    sk = th_skill(MD("name: demo\ndescription: !!python/object:os.system x\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, NULL, "unsupported YAML tag");
    sg_skill_free(sk);

    sk = th_skill(MD("name: demo\ndescription: [unclosed\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "YAML syntax");
    assert_true(sk->diags.v[0].line >= 3);
    sg_skill_free(sk);

    /* an unclosed quote is reported where it opened, and where the parser
     * gave up (issue 24) */
    sk = th_skill(MD("name: demo\ndescription: \"unclosed\nallowed-tools: Read\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, NULL, "a quoted scalar that starts here");
    sg_skill_free(sk);

    /* a tab where YAML wants indentation is named, at the tab (issue 38):
     * at a line's start, after a space inside a list; the column counts
     * characters, not bytes, so a character after a wide one is the right one */
    sk = th_skill(MD("name: demo\ndescription: x\nallowed-tools:\n\t- Read\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 5, 1, NULL,
                   "YAML syntax: tabs are not allowed in YAML indentation; use spaces; Claude");
    assert_null(strstr(sk->diags.v[0].msg, "quote a value"));
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\nallowed-tools:\n  - Read\n \t- Grep\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 6, 2, NULL, "tabs are not allowed in YAML indentation");
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: x\nmetadata: {a: é}\t\t@\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 19, NULL, "cannot start any token"); /* '@' */
    assert_null(strstr(sk->diags.v[0].msg, "tabs are not allowed")); /* 18 bytes in: a tab */
    sg_skill_free(sk);
    /* a tab after the colon is YAML's separation space, fine */
    sk = th_skill(MD("name: demo\ndescription:\tx\n"), NULL);
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);

    struct sg_buf b;
    sg_buf_init(&b, 4096);
    sg_buf_printf(&b, "---\nname: demo\ndescription: x\nmetadata: ");
    for (int i = 0; i < 40; i++)
        sg_buf_append(&b, "[", 1);
    for (int i = 0; i < 40; i++)
        sg_buf_append(&b, "]", 1);
    sg_buf_printf(&b, "\n---\n");
    sk = th_skill(b.data, NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 0, NULL, "nesting deeper than 32");
    sg_skill_free(sk);
    sg_buf_free(&b);
}

/* A line break libyaml sees and OpenClaw, grep and an editor do not
 * (U+0085, U+2028, U+2029, a lone "\r") would hide a key in a line a person
 * reads as a description: refused where it is, lines counted by "\n". */
static void hidden_line_breaks_refused(void **st)
{
    (void)st;
    static const struct {
        const char *md, *y, *name;
        int line, col;
    } cases[] = {
        {MD("name: demo\ndescription: Formats.\xe2\x80\xa8wasm: {env: {allow: [T]}}\n"), NULL,
         "U+2028", 3, 22},
        {MD("name: demo\ndescription: \xc3\xa9t\xc3\xa9\xe2\x80\xa9" "context: fork\n"), NULL,
         "U+2029", 3, 17},
        {MD("name: demo\ndescription: x\xc2\x85" "allowed-tools: [Bash]\n"), NULL, "U+0085", 3, 15},
        {MD("name: demo\r\ndescription: x\rallowed-tools: [Bash]\r\n"), NULL, "carriage return",
         3, 15},
        {NULL, "skill:\n  name: demo\n  description: x # c\xe2\x80\xa8wasm: {}\n", "U+2028", 3,
         21},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++) {
        struct sg_skill *sk = th_skill(cases[i].md, cases[i].y);
        th_assert_diag(&sk->diags, SG_ERROR, cases[i].line, cases[i].col, NULL, cases[i].name);
        th_assert_diag(&sk->diags, SG_ERROR, cases[i].line, cases[i].col, NULL,
                       "is a line break to YAML but not to OpenClaw");
        assert_int_equal(sk->policy.ntools, 0);
        assert_false(sk->policy.fork_context);
        sg_skill_free(sk);
    }
    /* CRLF is a line break to every reader */
    struct sg_skill *sk = th_skill("---\r\nname: demo\r\ndescription: x\r\n---\r\n", NULL);
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);
}

static void non_utf8_is_an_error_with_position(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill("---\nname: demo\ndescription: caf\xe9 au lait\n---\n", NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 17, NULL, "not valid UTF-8 (byte 0xe9)");
    sg_skill_free(sk);
}

static void wrong_types(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("name: demo\ndescription: [a, b]\nuser-invocable: maybe\n"
                                      "metadata: {a: [1]}\ncontext: thread\nlicense: {x: 1}\n"),
                                   NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, "description", "must be a string, not a list");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 17, "user-invocable", "must be true or false");
    /* the spec's string-only metadata is stricter than ClawHub's: a warning */
    th_assert_diag(&sk->diags, SG_WARNING, 5, 15, "metadata.a", "must be a string (Agent Skills spec), not a list");
    th_assert_diag(&sk->diags, SG_ERROR, 6, 10, "context", "the only one is \"fork\"");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 10, "license", "not a mapping");
    sg_skill_free(sk);
}

static void claude_code_extras(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\nlicense: MIT\ncompatibility: Linux, python3\n"
           "metadata:\n  owner: team-a\n  tier: \"2\"\nmodel: sonnet\ncontext: fork\n"
           "agent: Explore\nuser-invocable: false\ndisable-model-invocation: true\n"
           "argument-hint: \"[file]\"\nhooks:\n  PreToolUse: []\n"),
        NULL);
    th_assert_diag(&sk->diags, SG_WARNING, 16, 3, "hooks", "not run by skillgate");
    assert_int_equal(sk->diags.n, 1);
    assert_string_equal(sk->license, "MIT");
    assert_string_equal(sk->compatibility, "Linux, python3");
    assert_int_equal(sk->nmetadata, 2);
    assert_string_equal(sk->metadata[1].key, "tier");
    assert_string_equal(sk->metadata[1].value, "2");
    assert_string_equal(sk->model, "sonnet");
    assert_string_equal(sk->agent, "Explore");
    assert_true(sk->policy.fork_context);
    assert_int_equal(sk->user_invocable, 0);
    assert_int_equal(sk->disable_model_invocation, 1);
    assert_true(sk->has_hooks);
    sg_skill_free(sk);

    char *big = sg_xmalloc(600);
    memset(big, 'c', 501);
    big[501] = '\0';
    char *md = sg_xasprintf("---\nname: demo\ndescription: x\ncompatibility: %s\n---\n", big);
    sk = th_skill(md, NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "compatibility", "limit is 500");
    sg_skill_free(sk);
    free(md);
    free(big);
}

/* issue 14: the wasm: block may not name skillgate's own folders either */
static void wasm_block_own_folders(void **st)
{
    (void)st;
    setenv("XDG_CONFIG_HOME", "/nonexistent/cfg", 1);
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\nwasm:\n  filesystem:\n"
           "    read: [/nonexistent/cfg/skillgate/grants.yaml]\n    write: [/nonexistent/cfg]\n"),
        NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 6, 12, "wasm.filesystem.read[0]",
                   "inside skillgate's own config folder /nonexistent/cfg/skillgate");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 13, "wasm.filesystem.write[0]",
                   "it holds skillgate's own config folder");
    assert_int_equal(sk->policy.nwrite, 0);
    sg_skill_free(sk);
    unsetenv("XDG_CONFIG_HOME");
}

static void wasm_block_folds_into_policy(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(
        MD("name: demo\ndescription: x\nwasm:\n  filesystem:\n    read: [data]\n"
           "    write: [out]\n  network:\n    allow: [api.example.test, \"*.cdn.example.test\"]\n"
           "  env:\n    allow: [API_KEY]\n  memory_mb: 64\n  timeout_ms: 1500\n"
           "  random_seed: 42\n  threads: 4\n"),
        NULL);
    th_assert_diag(&sk->diags, SG_WARNING, 15, 3, "wasm.threads", "unknown key");
    assert_false(sg_skill_has_errors(sk));
    const struct sg_policy *p = &sk->policy;
    /* the skill's own root comes first, then the declared folder */
    assert_int_equal(p->nread, 2);
    assert_string_equal(p->read[1].path, "/nonexistent/demo/data");
    assert_string_equal(p->read[1].origin.field, "wasm.filesystem.read[0]");
    assert_int_equal(p->nwrite, 1);
    assert_string_equal(p->write[0].path, "/nonexistent/demo/out");
    assert_int_equal(p->negress, 2);
    assert_string_equal(p->egress[0].domain, "api.example.test");
    assert_int_equal(p->egress[0].nports, 1);
    assert_int_equal(p->egress[0].ports[0], 443);
    assert_true(p->egress[1].wildcard);
    assert_int_equal(p->nenv, 1);
    assert_string_equal(p->env[0].name, "API_KEY");
    assert_int_equal(p->limits.memory_mb.value, 64);
    assert_int_equal(p->limits.runtime_s.value, 2); /* 1500 ms, rounded up */
    assert_true(p->has_random_seed);
    assert_int_equal(p->random_seed, 42);
    sg_skill_free(sk);
}

/* A ClawHub skill as published: OpenClaw's metadata under a former key,
 * a name in capitals that is not its folder's (the folder is the slug),
 * homepage, version and author, primaryEnv null, requires.env as one
 * comma-separated string. Judged by OpenClaw's rules: no error, the
 * variables it names are the ones it may receive, and only what the spec
 * would refuse is said, as a warning. The same frontmatter without the
 * metadata keeps the spec's rules, each refusal saying how OpenClaw's
 * loader stands. */
static void clawhub_skill_by_openclaw_rules(void **st)
{
    (void)st;
    static const char *const keys[] = {"clawdbot", "openclaw"};
    for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++) {
        char *md = sg_xasprintf(
            "---\nname: Weather Pro\ndescription: Forecasts.\nhomepage: https://w.test\n"
            "version: 1.2.0\nauthor: someone\nmetadata:\n  %s:\n    primaryEnv: null\n"
            "    requires: {env: \"W_KEY, W_REGION\", bins: [curl]}\n---\n",
            keys[k]);
        struct sg_skill *sk = th_skill(md, NULL);
        if (sg_diags_count(&sk->diags, SG_ERROR))
            th_dump(&sk->diags);
        assert_int_equal(sg_diags_count(&sk->diags, SG_ERROR), 0);
        assert_int_equal(sk->diags.n, 1);
        th_assert_diag(&sk->diags, SG_WARNING, 2, 7, "name", "OpenClaw takes any name");
        assert_string_equal(sk->name, "Weather Pro");
        assert_string_equal(sk->version, "1.2.0");
        assert_string_equal(sk->author, "someone");
        assert_non_null(strstr(sk->openclaw_rules, keys[k]));
        assert_null(sk->openclaw->primary_env);
        assert_int_equal(sk->policy.nenv, 2);
        assert_string_equal(sk->policy.env[0].name, "W_KEY");
        assert_string_equal(sk->policy.env[1].name, "W_REGION");
        sg_skill_free(sk);
        free(md);
    }
    /* no OpenClaw metadata: the spec's rules */
    struct sg_skill *sk = th_skill(MD("name: Weather Pro\ndescription: x\nhomepage: h\n"), NULL);
    assert_null(sk->openclaw_rules);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 7, "name", "OpenClaw's loader would take it");
    th_assert_diag(&sk->diags, SG_WARNING, 4, 1, "homepage", "unknown key");
    sg_skill_free(sk);
    /* what no loader's rules make usable here: run NAME would read a
     * plugin's skill; and what OpenClaw itself refuses */
    sk = th_skill(MD("name: \"pdf:pdf\"\ndescription: x\nmetadata: {openclaw: {}}\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 7, "name", "OpenClaw would take it, but skillgate");
    assert_null(sk->name);
    sg_skill_free(sk);
    sk = th_skill(MD("name: x\nmetadata: {openclaw: {primaryEnv: [A, B]}}\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 1, "description", "OpenClaw would refuse it too");
    th_assert_diag(&sk->diags, SG_WARNING, 3, 35, "metadata.openclaw.primaryEnv",
                   "OpenClaw ignores it too");
    sg_skill_free(sk);
    sk = th_skill("# no frontmatter\n", NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 1, 1, NULL, "OpenClaw would refuse it too");
    sg_skill_free(sk);
    sk = th_skill(MD("name: demo\ndescription: Use it: now\n"), NULL);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 0, NULL, "Claude Code would load it with every "
                                                     "field dropped");
    sg_skill_free(sk);
}

/* The block OpenClaw reads, openclaw before clawdbot, gives the
 * variables; clawdis and moltbot blocks, which OpenClaw ignores, none. */
static void openclaw_block_by_openclaws_priority(void **st)
{
    (void)st;
    static const struct {
        const char *meta, *env, *ignored;
    } cases[] = {
        {"{clawdbot: {requires: {env: [A]}}, openclaw: {requires: {env: [B]}}}", "B",
         "metadata.clawdbot"},
        {"{clawdis: {requires: {env: [A]}}, clawdbot: {requires: {env: [B]}}}", "B",
         "metadata.clawdis"},
        {"{moltbot: {requires: {env: [A]}}}", NULL, "metadata.moltbot"},
        {"{clawdis: {primaryEnv: A}}", NULL, "metadata.clawdis"},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++) {
        char *md = sg_xasprintf("---\nname: demo\ndescription: x\nmetadata: %s\n---\n",
                                cases[i].meta);
        struct sg_skill *sk = th_skill(md, NULL);
        th_assert_diag(&sk->diags, SG_WARNING, 4, 0, cases[i].ignored,
                       "OpenClaw reads metadata.openclaw, else metadata.clawdbot");
        assert_int_equal(sk->policy.nenv, cases[i].env ? 1 : 0);
        if (cases[i].env)
            assert_string_equal(sk->policy.env[0].name, cases[i].env);
        sg_skill_free(sk);
        free(md);
    }
}

/* OpenClaw's line-by-line reading (fmlines.h), case by case as its
 * parseLineFrontmatter reads them. */
static const char *fm_get(const struct sg_ynode *m, const char *k)
{
    const struct sg_ynode *v = sg_y_get(m, k);
    return v ? v->str : NULL;
}

static bool strict_name(const char *key)
{
    return !strcmp(key, "name");
}

static void frontmatter_lines(void **st)
{
    (void)st;
    static const char fm[] =
        "name: 'quoted'\r\ndescription: Use when: asked\rlone: \"\n  indented: no\n"
        "a.b: dotted\n-dash_1: yes\nblock:\n  - one\n\n  - two\nnext: x\nempty:\nname: last\n"
        "nul: a\0b\n";
    struct sg_ynode *m = NULL;
    struct sg_diags d = {0};
    assert_int_equal(sg_fmlines_parse(fm, sizeof fm - 1, 2, strict_name, "f", &d, &m), 0);
    th_assert_diag(&d, SG_ERROR, 14, 1, "name", "said again (first at line 2); YAML readers");
    th_assert_diag(&d, SG_ERROR, 14, 1, "name", "follows a value that opens a quote");
    assert_int_equal(d.n, 2);
    sg_diags_free(&d);
    assert_string_equal(fm_get(m, "name"), "last"); /* the last saying wins */
    assert_string_equal(m->kids[0]->str, "name");   /* in the first one's place */
    assert_string_equal(fm_get(m, "description"), "Use when: asked");
    assert_int_equal(sg_y_get(m, "description")->line, 3);
    assert_null(fm_get(m, "lone"));                  /* a lone quote is nothing */
    assert_null(fm_get(m, "indented"));
    assert_null(fm_get(m, "a.b"));
    assert_string_equal(fm_get(m, "-dash_1"), "yes");
    assert_string_equal(fm_get(m, "block"), "- one\n\n  - two");
    assert_int_equal(sg_y_get(m, "block")->line, 9);
    assert_int_equal(sg_y_get(m, "block")->col, 3);
    assert_string_equal(fm_get(m, "next"), "x");
    assert_null(fm_get(m, "empty"));
    const struct sg_ynode *nul = sg_y_get(m, "nul");
    assert_int_equal(nul->len, 3); /* kept whole: pc_string refuses it */
    sg_ynode_free(m);
    /* past the cap of fields: refused, not cut */
    struct sg_buf b;
    sg_buf_init(&b, 64 * 1024);
    for (int i = 0; i <= SG_FMLINES_MAX_KEYS; i++)
        sg_buf_printf(&b, "k%d: v\n", i);
    assert_int_equal(sg_fmlines_parse(b.data, b.len, 2, NULL, "f", &d, &m), -E2BIG);
    assert_null(m);
    sg_buf_free(&b);
}

/* What the line reading would take otherwise than YAML reads it, of a
 * field skillgate enforces (or metadata naming variables): refused. */
static void line_reading_refuses_what_yaml_reads_otherwise(void **st)
{
    (void)st;
    static const struct {
        const char *fm, *field, *want;
        int line, col;
    } cases[] = {
        {"name: x\nallowed-tools:\n\n  - Bash\n", "allowed-tools", "has no value", 3, 1},
        {"name: x\nhooks:\n- Bash\n", "hooks", "has no value", 3, 1},
        {"name: x\ncontext:\n", "context", "has no value", 3, 1},
        {"name: x\n\"allowed-tools\": [Bash]\n", NULL, "YAML may read this line", 3, 1},
        {"name: x\nallowed-tools : [Bash]\n", NULL, "YAML may read this line", 3, 1},
        {"name: x\n? hooks\n: {}\n", NULL, "YAML may read this line", 3, 1},
        {"name: x\nmetadata:\n  'context' : fork\n", NULL, "YAML may read this line", 4, 1},
        {"name: x\n----\nwasm: {}\n", NULL, "a line starting \"---\"", 3, 1},
        {"name: x\n...\n", NULL, "a line starting \"...\"", 3, 1},
        {"name: x\nwasm: {env: {allow: [T]}}\n", "wasm", "is OpenSkills' field", 3, 1},
        {"description: 'a: b\nallowed-tools: [Bash]\nx'\n", "allowed-tools",
         "opens a quote or bracket and does not close it on its line (line 2)", 3, 1},
        {"description: [a, {b: c}\ncontext: fork\n", "context", "(line 2)", 3, 1},
        {"description:\n  \"a: b\nmetadata: {\"openclaw\": {\"primaryEnv\": \"T\"}}\n",
         "metadata", "(line 3)", 4, 1},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++) {
        struct sg_ynode *m = NULL;
        struct sg_diags d = {0};
        assert_int_equal(sg_fmlines_parse(cases[i].fm, strlen(cases[i].fm), 2,
                                          sg_skillmd_enforced, "f", &d, &m), 0);
        th_assert_diag(&d, SG_ERROR, cases[i].line, cases[i].col, cases[i].field, cases[i].want);
        sg_diags_free(&d);
        sg_ynode_free(m);
    }
    /* what every reader reads alike stays clean: closed values, metadata
     * naming no variable after an open one, keys in a value's text */
    static const char ok[] = "name: x\ndescription: 'a: b' [c]\nallowed-tools: [Read, \"Bash(x)\"]\n"
                             "hooks: {a: [b]}\nnote: \"open\nmetadata: {\"openclaw\": {}}\n"
                             "summary: says allowed-tools: Bash in words\n";
    struct sg_ynode *m = NULL;
    struct sg_diags d = {0};
    assert_int_equal(sg_fmlines_parse(ok, sizeof ok - 1, 2, sg_skillmd_enforced, "f", &d, &m), 0);
    if (d.n)
        th_dump(&d);
    assert_int_equal(d.n, 0);
    assert_string_equal(fm_get(m, "allowed-tools"), "[Read, \"Bash(x)\"]");
    sg_diags_free(&d);
    sg_ynode_free(m);
    /* 5,000 lines alike refuse with the first 32 told, not 5,000 */
    struct sg_buf b;
    sg_buf_init(&b, 64 * 1024);
    for (int i = 0; i < 5000; i++)
        sg_buf_printf(&b, "  context: fork\n");
    assert_int_equal(sg_fmlines_parse(b.data, b.len, 2, sg_skillmd_enforced, "f", &d, &m), 0);
    assert_int_equal(d.n, 32);
    th_assert_diag(&d, SG_ERROR, 2, 1, NULL, "YAML may read this line");
    sg_diags_free(&d);
    sg_ynode_free(m);
    sg_buf_free(&b);
}

static void diagnostic_line_format(void **st)
{
    (void)st;
    struct sg_skill *sk = th_skill(MD("name: Demo\ndescription: x\n"), NULL);
    assert_int_equal(sk->diags.n, 1);
    char *line = sg_diag_format(&sk->diags.v[0]);
    assert_string_equal(line, "/nonexistent/demo/SKILL.md:2:7: error: name: \"Demo\" may hold "
                              "only lower-case letters, digits and '-' (Agent Skills spec; "
                              "OpenClaw's loader would take it)");
    free(line);
    sg_skill_free(sk);
}

/* The home paths a skill's words name (issue 52, item 8). */
static void home_paths_its_words_name(void **st)
{
    (void)st;
    static const char text[] =
        "Reads `~/.clawdbot/clawdbot.json`, then $HOME/.config/x/y.toml and\n"
        "${HOME}/.todo/a.json. See ~/.clawdbot/clawdbot.json again; not a~/b,\n"
        "not ~/../etc/passwd, not ~/a/../../b, not ~//abs, not ~/ alone; ends ~/notes.";
    char *v[SG_HOMENAMED_MAX];
    size_t n = sg_home_named(text, sizeof text - 1, v, SG_HOMENAMED_MAX);
    assert_int_equal(n, 4);
    assert_string_equal(v[0], ".clawdbot/clawdbot.json");
    assert_string_equal(v[1], ".config/x/y.toml");
    assert_string_equal(v[2], ".todo/a.json");
    assert_string_equal(v[3], "notes");
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    /* at most max; a path past SG_HOMENAMED_LEN is skipped, never cut */
    char big[600];
    memset(big, 'a', sizeof big);
    memcpy(big, "~/", 2);
    memcpy(big + 300, " ~/ok ~/x1 ~/x2", 15);
    n = sg_home_named(big, sizeof big, v, 2);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "ok");
    assert_string_equal(v[1], "x1");
    free(v[0]), free(v[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minimal_is_valid),
        cmocka_unit_test(frontmatter_must_open_and_close),
        cmocka_unit_test(closing_line_without_newline),
        cmocka_unit_test(bom_and_crlf_are_accepted),
        cmocka_unit_test(missing_name_and_description),
        cmocka_unit_test(name_rules),
        cmocka_unit_test(description_limits),
        cmocka_unit_test(lengths_are_counted_in_characters),
        cmocka_unit_test(claude_code_tools_are_known),
        cmocka_unit_test(openclaw_metadata_is_read),
        cmocka_unit_test(allowed_tools_as_list),
        cmocka_unit_test(allowed_tools_as_string_keeps_scopes_whole),
        cmocka_unit_test(allowed_tools_problems),
        cmocka_unit_test(unknown_keys_warn),
        cmocka_unit_test(yaml_refusals),
        cmocka_unit_test(non_utf8_is_an_error_with_position),
        cmocka_unit_test(hidden_line_breaks_refused),
        cmocka_unit_test(wrong_types),
        cmocka_unit_test(claude_code_extras),
        cmocka_unit_test(wasm_block_folds_into_policy),
        cmocka_unit_test(wasm_block_own_folders),
        cmocka_unit_test(clawhub_skill_by_openclaw_rules),
        cmocka_unit_test(openclaw_block_by_openclaws_priority),
        cmocka_unit_test(frontmatter_lines),
        cmocka_unit_test(line_reading_refuses_what_yaml_reads_otherwise),
        cmocka_unit_test(diagnostic_line_format),
        cmocka_unit_test(home_paths_its_words_name),
    };
    return cmocka_run_group_tests_name("skillmd", tests, NULL, NULL);
}
