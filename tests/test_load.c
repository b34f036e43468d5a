/* Loading skills from disk: entrypoints, paths and symlinks, caps, hostile
 * files, progressive disclosure. */
#include "helpers.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "openclaw.h"
#include "skill.h"
#include "util.h"

#define GOOD_MD(name) "---\nname: " name "\ndescription: A test skill.\n---\n# Body\n"

struct fx {
    char *tmp;
};

static int setup(void **st)
{
    struct fx *f = sg_xcalloc(1, sizeof *f);
    f->tmp = th_tmpdir();
    *st = f;
    return 0;
}

static int teardown(void **st)
{
    struct fx *f = *st;
    th_rmrf(f->tmp);
    free(f->tmp);
    free(f);
    return 0;
}

static struct sg_skill *load(const char *dir)
{
    struct sg_skill *sk = NULL;
    int r = sg_skill_load(dir, &sk);
    if (r < 0)
        fail_msg("load %s: %s", dir, strerror(-r));
    return sk;
}

static void entrypoint_detection(void **st)
{
    struct fx *f = *st;
    char *d = sg_xasprintf("%s/alpha", f->tmp);
    th_write(f->tmp, "alpha/SKILL.md", GOOD_MD("alpha"));
    th_write(f->tmp, "alpha/scripts/helper.py", "print(1)\n");
    th_write(f->tmp, "alpha/index.sh", "echo hi\n");
    struct sg_skill *sk = load(d);
    /* index.sh at the root beats a lone script in scripts/ */
    assert_int_equal(sk->policy.mode, SG_MODE_NATIVE);
    assert_string_equal(sk->policy.entry.command, "bash");
    assert_string_equal(sk->policy.entry.args[0], "index.sh");
    assert_true(sk->policy.entry.detected);
    sg_skill_free(sk);

    th_write(f->tmp, "alpha/main.py", "print(2)\n");
    sk = load(d);
    assert_string_equal(sk->policy.entry.command, "python3");
    assert_string_equal(sk->policy.entry.args[0], "main.py");
    sg_skill_free(sk);

    char *mp = sg_xasprintf("%s/main.py", d), *ip = sg_xasprintf("%s/index.sh", d);
    unlink(mp);
    unlink(ip);
    free(mp), free(ip);
    sk = load(d);
    assert_string_equal(sk->policy.entry.args[0], "scripts/helper.py");
    sg_skill_free(sk);

    /* several scripts and no convention: mode scripts (the person picks
     * one), scripts listed, no entrypoint guessed */
    th_write(f->tmp, "alpha/scripts/other.sh", "echo\n");
    sk = load(d);
    assert_int_equal(sk->policy.mode, SG_MODE_SCRIPTS);
    assert_null(sk->policy.entry.command);
    assert_int_equal(sk->policy.nscripts, 2);
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);

    /* an executable naming its interpreter in a #! line is a script too,
     * after those named by their extension (whatever its name: tool.rb);
     * without the bit or without the line (a library) it is not; a usage
     * line that drops the ".py" still counts */
    th_write(f->tmp, "alpha/scripts/tool", "#!/usr/bin/env python3\nprint(3)\n");
    th_write(f->tmp, "alpha/scripts/sub/deep", "#!/bin/sh\necho\n");
    th_write(f->tmp, "alpha/scripts/data", "#!/bin/sh\n");
    th_write(f->tmp, "alpha/scripts/noline", "echo\n");
    th_write(f->tmp, "alpha/scripts/lib.so", "\177ELF\n");
    th_write(f->tmp, "alpha/scripts/tool.rb", "#!/usr/bin/env ruby\n");
    th_write(f->tmp, "alpha/forms.md", "Run `python scripts/helper <in.pdf>` first.\n"
                                       "Later: scripts/helper.pyc is not it.\n");
    static const char *const exec_bit[] = {"scripts/tool", "scripts/sub/deep", "scripts/noline",
                                           "scripts/lib.so", "scripts/tool.rb"};
    for (size_t i = 0; i < SG_ARRAY_LEN(exec_bit); i++) {
        char *x = sg_xasprintf("%s/%s", d, exec_bit[i]);
        assert_int_equal(chmod(x, 0755), 0);
        free(x);
    }
    sk = load(d);
    static const char *const want[] = {"scripts/helper.py", "scripts/other.sh", "scripts/tool",
                                       "scripts/tool.rb", "scripts/sub/deep"};
    assert_int_equal(sk->policy.nscripts, SG_ARRAY_LEN(want));
    for (size_t i = 0; i < SG_ARRAY_LEN(want); i++)
        assert_string_equal(sk->policy.scripts[i], want[i]);
    assert_string_equal(sk->policy.script_usage[0], "python scripts/helper <in.pdf>");
    sg_skill_free(sk);
    free(d);
}

/* issue 40: a core module is a WASM skill, found where OpenSkills keeps it
 * first; a component, a wrong version or no header are errors naming the file */
static void wasm_modules_are_found_and_checked(void **st)
{
    struct fx *f = *st;
    char *d = sg_xasprintf("%s/wasmy", f->tmp);
    th_write(f->tmp, "wasmy/SKILL.md", GOOD_MD("wasmy"));
    th_write_n(f->tmp, "wasmy/other.wasm", "\0asm\x01\0\0\0", 8);
    th_write_n(f->tmp, "wasmy/wasm/skill.wasm", "\0asm\x01\0\0\0", 8);
    struct sg_skill *sk = load(d);
    assert_int_equal(sk->policy.mode, SG_MODE_WASM);
    assert_string_equal(sk->policy.wasm_module, "wasm/skill.wasm");
    assert_int_equal(sg_diags_count(&sk->diags, SG_ERROR), 0);
    sg_skill_free(sk);

    th_write_n(f->tmp, "wasmy/wasm/skill.wasm", "\0asm\x0d\0\x01\0", 8);
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "WebAssembly component");
    assert_non_null(th_find(&sk->diags, "wasmy/wasm/skill.wasm", NULL));
    sg_skill_free(sk);

    th_write_n(f->tmp, "wasmy/wasm/skill.wasm", "\0asm\x02\0\0\0", 8);
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "binary version 2");
    sg_skill_free(sk);

    th_write_n(f->tmp, "wasmy/wasm/skill.wasm", "#!/bin/sh\n", 10);
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "not a WebAssembly module");
    sg_skill_free(sk);
    free(d);
}

static void declared_entrypoint_must_exist_inside(void **st)
{
    struct fx *f = *st;
    char *d = sg_xasprintf("%s/ep", f->tmp);
    th_write(f->tmp, "ep/skillsandbox.yaml",
             "skill:\n  name: ep\n  description: d\nentrypoint:\n  command: ./bin/run\n");
    struct sg_skill *sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 5, 12, "entrypoint.command", "does not exist");
    sg_skill_free(sk);
    th_write(f->tmp, "ep/skillsandbox.yaml",
             "skill:\n  name: ep\n  description: d\nentrypoint:\n  command: ../../bin/sh\n");
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 5, 12, "entrypoint.command", "climbs out");
    sg_skill_free(sk);
    free(d);
}

static void symlinks_may_not_leave_the_root(void **st)
{
    struct fx *f = *st;
    char *d = sg_xasprintf("%s/links", f->tmp);
    th_write(f->tmp, "links/skillsandbox.yaml",
             "skill:\n  name: links\n  description: d\npermissions:\n  filesystem:\n"
             "    write: [escape/sub, inside/new]\n");
    th_mkdirs(f->tmp, "links/real");
    char *esc = sg_xasprintf("%s/escape", d), *in = sg_xasprintf("%s/inside", d);
    assert_int_equal(symlink("/etc", esc), 0);
    assert_int_equal(symlink("real", in), 0);
    struct sg_skill *sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 6, 13, "permissions.filesystem.write[0]",
                   "leaves the skill root through a symlink");
    /* a symlink that stays inside resolves to its target */
    assert_int_equal(sk->policy.nwrite, 1);
    char *want = sg_xasprintf("%s/real/new", sk->root);
    assert_string_equal(sk->policy.write[0].path, want);
    sg_skill_free(sk);
    free(want), free(esc), free(in), free(d);
}

static void manifest_files_are_guarded(void **st)
{
    struct fx *f = *st;
    /* over the size cap */
    char *d = sg_xasprintf("%s/big", f->tmp);
    size_t n = SG_MANIFEST_MAX + 100;
    char *huge = sg_xmalloc(n);
    memset(huge, '#', n);
    memcpy(huge, GOOD_MD("big"), strlen(GOOD_MD("big")));
    th_write_n(f->tmp, "big/SKILL.md", huge, n);
    struct sg_skill *sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "manifests are capped at 262144");
    sg_skill_free(sk);
    free(huge), free(d);

    /* a symlinked SKILL.md is refused, not followed */
    d = sg_xasprintf("%s/sym", f->tmp);
    th_write(f->tmp, "elsewhere/SKILL.md", GOOD_MD("sym"));
    th_mkdirs(f->tmp, "sym");
    char *link = sg_xasprintf("%s/SKILL.md", d), *target = sg_xasprintf("%s/elsewhere/SKILL.md", f->tmp);
    assert_int_equal(symlink(target, link), 0);
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "is a symlink; refused");
    assert_null(sk->name);
    sg_skill_free(sk);
    free(link), free(target), free(d);

    /* a FIFO named SKILL.md cannot hang the loader */
    d = sg_xasprintf("%s/fifo", f->tmp);
    th_mkdirs(f->tmp, "fifo");
    char *fifo = sg_xasprintf("%s/SKILL.md", d);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    sk = load(d);
    th_assert_diag(&sk->diags, SG_ERROR, 0, 0, NULL, "not a regular file");
    sg_skill_free(sk);
    free(fifo), free(d);

    /* a folder with neither file is not a skill */
    th_mkdirs(f->tmp, "empty");
    d = sg_xasprintf("%s/empty", f->tmp);
    assert_int_equal(sg_skill_load(d, &sk), -ENODATA);
    assert_null(sk);
    free(d);
}

static void body_is_read_on_demand(void **st)
{
    struct fx *f = *st;
    char *d = sg_xasprintf("%s/tiers", f->tmp);
    /* The body holds bytes that are not UTF-8: Tier 1 never reads them. */
    th_write(f->tmp, "tiers/SKILL.md", "---\nname: tiers\ndescription: d\n---\n# Body\nbad \xff\n");
    struct sg_skill *sk = load(d);
    assert_int_equal(sk->diags.n, 0);
    assert_int_equal(sk->body_line, 5);
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(sg_skill_read_body(sk, &body, &len), -EILSEQ);
    sg_skill_free(sk);
    th_write(f->tmp, "tiers/SKILL.md", "---\nname: tiers\ndescription: d\n---\n# Body\nfine\n");
    sk = load(d);
    assert_int_equal(sg_skill_read_body(sk, &body, &len), 0);
    assert_string_equal(body, "# Body\nfine\n");
    assert_int_equal(len, 12);
    free(body);
    sg_skill_free(sk);
    free(d);
}

static void load_by_manifest_path(void **st)
{
    struct fx *f = *st;
    th_write(f->tmp, "byfile/SKILL.md", GOOD_MD("byfile"));
    char *p = sg_xasprintf("%s/byfile/SKILL.md", f->tmp);
    struct sg_skill *sk = load(p);
    assert_string_equal(sk->name, "byfile");
    assert_string_equal(sk->dirname, "byfile");
    sg_skill_free(sk);
    free(p);
}

/* Where OpenClaw keeps skills, below a home (symlinks resolved), and what
 * a skill judged by OpenClaw's rules is told: a frontmatter YAML cannot
 * parse read line by line as OpenClaw reads it, skillgate's own refusals
 * marked as its own. */
static void openclaw_places_and_refusals(void **st)
{
    struct fx *f = *st;
    char *home = sg_xasprintf("%s/home", f->tmp);
    th_write(f->tmp, "home/.openclaw/skills/w/SKILL.md", GOOD_MD("w"));
    th_write(f->tmp, "elsewhere/w/SKILL.md", GOOD_MD("w"));
    th_mkdirs(f->tmp, "real-ws/skills/x");
    th_mkdirs(f->tmp, "home/.openclaw");
    char *link = sg_xasprintf("%s/home/.openclaw/workspace", f->tmp);
    char *target = sg_xasprintf("%s/real-ws", f->tmp);
    assert_int_equal(symlink(target, link), 0);
    static const struct {
        const char *rel, *want;
    } cases[] = {
        {"home/.openclaw/skills/w", "found in ~/.openclaw/skills"},
        {"real-ws/skills/x", "found in ~/.openclaw/workspace/skills"},
        {"home/.openclaw/workspace-work/skills/y", "found in ~/.openclaw/workspace-*/skills"},
        {"home/.openclaw/workspace-work/.agents/skills/y", "workspace-*/.agents/skills"},
        {"home/.openclaw/workspace-work/notes/y", NULL},
        {"home/.openclaw/workspace-work/skills", NULL},
        {"home/.openclaw/skills", NULL}, /* the place itself is no skill in it */
        {"elsewhere/w", NULL},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++) {
        char *p = sg_xasprintf("%s/%s", f->tmp, cases[i].rel);
        char *got = sg_openclaw_place(home, p);
        if (cases[i].want)
            assert_non_null(got && strstr(got, cases[i].want));
        else
            assert_null(got);
        free(got), free(p);
    }
    th_write(f->tmp, "ws/skills/bad/SKILL.md",
             "---\nname: bad\ndescription: Use it: now\n---\n");
    th_write(f->tmp, "ws/skills/tools/SKILL.md",
             "---\nname: Tools\ndescription: d\nallowed-tools: Read Bash(git\n---\n");
    char *bad = sg_xasprintf("%s/ws/skills/bad", f->tmp);
    char *tools = sg_xasprintf("%s/ws/skills/tools", f->tmp);
    struct sg_skill *sk = NULL;
    assert_int_equal(sg_skill_load_found(bad, "found in ./skills", &sk), 0);
    th_assert_diag(&sk->diags, SG_WARNING, 3, 20, NULL, "skillgate reads it the same way");
    assert_string_equal(sk->description, "Use it: now");
    assert_false(sg_skill_has_errors(sk));
    sg_skill_free(sk);
    assert_int_equal(sg_skill_load_found(tools, "found in ./skills", &sk), 0);
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "allowed-tools[1]",
                   "unbalanced '(' (skillgate's own rule; OpenClaw's loader would take it)");
    th_assert_diag(&sk->diags, SG_WARNING, 2, 7, "name", "OpenClaw takes any name");
    sg_skill_free(sk);
    /* a skill OpenClaw skips anyway is not said to be taken */
    th_write(f->tmp, "ws/skills/nodesc/SKILL.md", "---\nname: nodesc\nallowed-tools: Bash(x\n---\n");
    char *nodesc = sg_xasprintf("%s/ws/skills/nodesc", f->tmp);
    assert_int_equal(sg_skill_load_found(nodesc, "found in ./skills", &sk), 0);
    th_assert_diag(&sk->diags, SG_ERROR, 2, 1, "description", "OpenClaw would refuse it too");
    assert_null(th_find(&sk->diags, "would take it", NULL));
    sg_skill_free(sk);
    free(nodesc);
    /* the same files anywhere else: the spec's rules */
    sk = load(bad);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 0, NULL, "Claude Code would load it");
    sg_skill_free(sk);
    free(home), free(link), free(target), free(bad), free(tools);
}

/* A SKILL.md YAML cannot parse, kept where OpenClaw keeps skills, shaped
 * as ClawHub's are (an unquoted ": " in the description; allowed-tools as
 * a flow or a block list; metadata as JSON on one line, or as YAML text
 * OpenClaw's JSON reading ignores): read line by line as OpenClaw reads
 * it, the fields skillgate enforces read from their own text as YAML, and
 * what that text cannot give refused. */
static struct sg_skill *load_oc(struct fx *f, const char *rel, const char *md)
{
    cleanup_free char *file = sg_xasprintf("%s/SKILL.md", rel);
    th_write(f->tmp, file, md);
    cleanup_free char *dir = sg_xasprintf("%s/%s", f->tmp, rel);
    struct sg_skill *sk = NULL;
    assert_int_equal(sg_skill_load_found(dir, "found in ~/.openclaw/skills", &sk), 0);
    return sk;
}

static void openclaw_reads_lines(void **st)
{
    struct fx *f = *st;
    struct sg_skill *sk = load_oc(f, "oc/flow",
        "---\nname: flow\ndescription: Tasks via a token (PAT): briefs, updates.\n"
        "allowed-tools: [\"Read\", \"Bash(git status)\"]\n"
        "metadata: {\"clawdbot\":{\"primaryEnv\":\"FLOW_PAT\",\"requires\":{\"env\":[\"FLOW_PAT\"]}}}\n"
        "---\n# Body\n");
    th_assert_diag(&sk->diags, SG_WARNING, 3, 37, NULL, "reads it the same way");
    assert_false(sg_skill_has_errors(sk));
    assert_string_equal(sk->description, "Tasks via a token (PAT): briefs, updates.");
    assert_int_equal(sk->policy.ntools, 2);
    assert_string_equal(sk->policy.tools[1].written, "Bash(git status)");
    assert_int_equal(sk->policy.nenv, 1);
    assert_string_equal(sk->policy.env[0].name, "FLOW_PAT");
    assert_int_equal(sk->policy.env[0].origin.line, 5);
    assert_int_equal(sk->policy.env[0].origin.col, 37); /* its place in the file */
    sg_skill_free(sk);

    sk = load_oc(f, "oc/block",
        "---\nname: block\ndescription: Runs plans. Trigger keywords: run plan\n"
        "compatibility:\n  - needs a planner\nallowed-tools:\n  - Read\n  - Grep\n"
        "metadata:\n  openclaw:\n    requires:\n      env: [SECRET_TOKEN]\n---\n");
    assert_false(sg_skill_has_errors(sk));
    assert_int_equal(sk->policy.ntools, 2);
    assert_string_equal(sk->policy.tools[1].name, "Grep");
    assert_int_equal(sk->policy.tools[1].origin.line, 8);
    /* OpenClaw reads metadata as JSON: this text it ignores, and no
     * variable it names is passed */
    th_assert_diag(&sk->diags, SG_WARNING, 10, 3, "metadata", "is text that is no JSON object");
    assert_int_equal(sk->policy.nenv, 0);
    sg_skill_free(sk);

    /* what the text of a field skillgate enforces cannot give: refused */
    sk = load_oc(f, "oc/broken", "---\nname: broken\ndescription: Do: this\n"
                                 "allowed-tools: [Read, Bash(git\n---\n");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "allowed-tools", "text is no YAML either");
    sg_skill_free(sk);
    sk = load_oc(f, "oc/wasm", "---\nname: w\ndescription: Do: this\nwasm: fast\n---\n");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 7, "wasm", "must be a mapping");
    sg_skill_free(sk);
    /* a field skillgate enforces said twice: YAML readers differ on which
     * counts, so it is refused; what YAML is refused for on purpose (a key
     * said twice where the syntax holds) is not read line by line */
    sk = load_oc(f, "oc/twice", "---\nname: t\ndescription: Do: this\nallowed-tools: Read\n"
                                "allowed-tools: Bash\n---\n");
    th_assert_diag(&sk->diags, SG_ERROR, 5, 1, "allowed-tools", "said again (first at line 4)");
    sg_skill_free(sk);
    sk = load_oc(f, "oc/dup", "---\nname: d\ndescription: x\ndescription: y\n---\n");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 1, "description", "duplicate key");
    assert_null(th_find(&sk->diags, "reads it the same way", NULL));
    sg_skill_free(sk);
    /* a character libyaml's reader refuses, or a line break only YAML
     * sees, stays an error: never read line by line */
    static const struct {
        const char *md, *want;
        int col;
    } chars[] = {
        {"---\nname: c\ndescription: Do: this\xc2\x80.\nallowed-tools: [Read]\n---\n", "(U+0080)",
         22},
        {"---\nname: c\ndescription: Do: this\xef\xbf\xbe.\nallowed-tools: [Read]\n---\n",
         "(U+FFFE)", 22},
        {"---\nname: c\ndescription: Do: this\xe2\x80\xa8" "allowed-tools: [Bash]\n---\n",
         "U+2028", 22},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(chars); i++) {
        sk = load_oc(f, "oc/chars", chars[i].md);
        th_assert_diag(&sk->diags, SG_ERROR, 3, chars[i].col, NULL, chars[i].want);
        assert_null(th_find(&sk->diags, "reads it the same way", NULL));
        assert_null(th_find(&sk->diags, "would read it line by line", NULL));
        assert_int_equal(sk->policy.ntools, 0);
        sg_skill_free(sk);
    }
    /* the same file outside OpenClaw's places: the spec's rules refuse it */
    cleanup_free char *flow = sg_xasprintf("%s/oc/flow", f->tmp);
    sk = load(flow);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 0, NULL, "Claude Code would load it");
    sg_skill_free(sk);
}

/* Another ecosystem's deliberate fields near a known one ("models",
 * "authors", OpenClaw's "requirements") are warnings that name the field;
 * near a field that restricts or runs, still an error. Fields shown only
 * (a list compatibility, a long description) are warnings under OpenClaw's
 * rules and, under the spec's, errors that do not stop a run. */
static void deliberate_fields_are_warnings(void **st)
{
    struct fx *f = *st;
    struct sg_skill *sk = load_oc(f, "oc/models",
        "---\nname: models\ndescription: d\nmodels: [a, b]\nauthors: [me]\n"
        "compatibility: [linux]\nallowed_tools: Bash\n"
        "metadata: {openclaw: {requirements: {env: [X]}}}\n---\n");
    th_assert_diag(&sk->diags, SG_WARNING, 4, 1, "models", "did you mean \"model\"? (a warning");
    th_assert_diag(&sk->diags, SG_WARNING, 5, 1, "authors", "did you mean \"author\"?");
    th_assert_diag(&sk->diags, SG_WARNING, 6, 16, "compatibility", "OpenClaw takes it");
    th_assert_diag(&sk->diags, SG_WARNING, 8, 23, "metadata.openclaw.requirements",
                   "did you mean \"requires\"?");
    th_assert_diag(&sk->diags, SG_ERROR, 7, 1, "allowed_tools", "did you mean \"allowed-tools\"?");
    assert_int_equal(sg_diags_blocking(&sk->diags), 1);
    sg_skill_free(sk);
    char longd[1100];
    memset(longd, 'x', sizeof longd - 1);
    longd[sizeof longd - 1] = '\0';
    cleanup_free char *md = sg_xasprintf("---\nname: long\ndescription: %s\n"
                                         "compatibility: [linux]\n---\n", longd);
    th_write(f->tmp, "long/SKILL.md", md);
    cleanup_free char *dir = sg_xasprintf("%s/long", f->tmp);
    sk = load(dir);
    th_assert_diag(&sk->diags, SG_ERROR, 3, 14, "description",
                   "is 1099 characters; the limit is 1024 (Agent Skills spec; Claude Code's");
    th_assert_diag(&sk->diags, SG_ERROR, 4, 16, "compatibility", "must be a string, not a list");
    assert_int_equal(sg_diags_count(&sk->diags, SG_ERROR), 2);
    assert_int_equal(sg_diags_blocking(&sk->diags), 0); /* it runs */
    assert_int_equal(strlen(sk->description), 1099);
    sg_skill_free(sk);
}

/* An agent's folder's skill areas may name each agent's workspace by a
 * pattern: a skill there is where OpenClaw keeps skills, the rest of the
 * folder is not. */
static void agent_skill_areas_by_pattern(void **st)
{
    (void)st;
    struct sg_agent_path a = {.path = "/h/.openclaw", .real = "/h/.openclaw",
                              .areas = "skills workspace/skills workspace-*/skills"};
    static const struct {
        const char *path;
        bool in;
    } cases[] = {
        {"/h/.openclaw/skills/x", true},
        {"/h/.openclaw/workspace/skills/x", true},
        {"/h/.openclaw/workspace-ops/skills/x", true},
        {"/h/.openclaw/workspace-ops/skills", true},
        {"/h/.openclaw/workspace-ops/credentials", false},
        {"/h/.openclaw/workspace-/skills/x", true},
        {"/h/.openclaw/workspace-a/b/skills/x", false},
        {"/h/.openclaw/.workspace-a/skills/x", false},
        {"/h/.openclaw/credentials/skills", false},
        {"/h/.openclawx/skills/x", false},
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++)
        assert_int_equal(sg_agent_path_in_skills(&a, cases[i].path), cases[i].in);
    /* the folder's own name is taken literally, never as a pattern */
    assert_false(sg_path_within_pattern("/h[1]x/skills", "/h[1]", "*"));
    assert_true(sg_path_within_pattern("/h[1]/skills/a", "/h[1]", "skills"));
    assert_true(sg_path_within_pattern("/skills/a", "/", "skills"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(entrypoint_detection, setup, teardown),
        cmocka_unit_test_setup_teardown(wasm_modules_are_found_and_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(declared_entrypoint_must_exist_inside, setup, teardown),
        cmocka_unit_test_setup_teardown(symlinks_may_not_leave_the_root, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_files_are_guarded, setup, teardown),
        cmocka_unit_test_setup_teardown(body_is_read_on_demand, setup, teardown),
        cmocka_unit_test_setup_teardown(load_by_manifest_path, setup, teardown),
        cmocka_unit_test_setup_teardown(openclaw_places_and_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(openclaw_reads_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(deliberate_fields_are_warnings, setup, teardown),
        cmocka_unit_test(agent_skill_areas_by_pattern),
    };
    return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
