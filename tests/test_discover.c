/* Discovery: the places, their precedence, shadowing, and hostile trees. */
#include "helpers.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <grp.h>
#include <unistd.h>

#include "discover.h"
#include "resolve.h"
#include "skill.h"
#include "util.h"

static void put_skill(const char *base, const char *rel, const char *name)
{
    char *path = sg_xasprintf("%s/SKILL.md", rel);
    char *md = sg_xasprintf("---\nname: %s\ndescription: skill %s at %s\n---\n", name, name, rel);
    th_write(base, path, md);
    free(path);
    free(md);
}

static size_t count_named(const struct sg_discovery *d, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += d->v[i].skill->name && !strcmp(d->v[i].skill->name, name);
    return n;
}

static void precedence_and_shadowing(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "home/.claude/skills/alpha", "alpha");
    put_skill(t, "proj/.claude/skills/alpha", "alpha");
    put_skill(t, "proj/sub/.claude/skills/alpha", "alpha");
    put_skill(t, "extra/alpha", "alpha");
    put_skill(t, "cli/alpha", "alpha");
    put_skill(t, "proj/.claude/skills/beta", "beta");
    char *cfg = sg_xasprintf("%s/config.yaml", t);
    th_write(t, "config.yaml", "skill_dirs:\n  - extra\n");
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cli = sg_xasprintf("%s/cli", t);
    const char *dirs[] = {cli};
    struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1, .defaults = true, .home = home,
                                 .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    assert_int_equal(sg_discover(&o, &d), 0);
    if (d.diags.n)
        th_dump(&d.diags);
    assert_int_equal(d.diags.n, 0);
    assert_int_equal(d.n, 6);
    static const enum sg_source order[] = {SG_SRC_CLI, SG_SRC_USER, SG_SRC_CONFIG,
                                           SG_SRC_PROJECT};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(d.v[i].source, order[i]);
    assert_string_equal(d.v[0].skill->name, "alpha");
    assert_true(sg_str_has_suffix(d.v[0].skill->root, "/cli/alpha"));
    assert_int_equal(d.v[0].shadowed_by, SIZE_MAX);
    size_t shadowed = 0;
    for (size_t i = 1; i < d.n; i++) {
        if (!strcmp(d.v[i].skill->name, "alpha")) {
            assert_int_equal(d.v[i].shadowed_by, 0);
            th_assert_diag(&d.v[i].skill->diags, SG_WARNING, 0, 0, "name", "is shadowed by");
            shadowed++;
        } else {
            assert_int_equal(d.v[i].shadowed_by, SIZE_MAX);
        }
    }
    assert_int_equal(shadowed, 4);
    /* the nested one is listed too, last */
    assert_int_equal(d.v[d.n - 1].source, SG_SRC_NESTED);
    th_assert_diag(&d.v[0].skill->diags, SG_WARNING, 0, 0, "name", "shadows");
    sg_discovery_free(&d);

    /* only the command line when defaults are off */
    o.defaults = false;
    sg_discover(&o, &d);
    assert_int_equal(d.n, 1);
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(cfg), free(home), free(cwd), free(cli);
}

/* Where OpenClaw keeps skills: ./skills and ./.agents/skills (the
 * workspace), ~/.agents/skills and ~/.openclaw/skills (shared), after
 * Claude Code's own places, with the same shadowing report. */
static void openclaw_places(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "proj/.claude/skills/gamma", "gamma");
    put_skill(t, "proj/skills/gamma", "gamma");
    put_skill(t, "proj/skills/weather", "weather");
    put_skill(t, "proj/.agents/skills/todo", "todo");
    put_skill(t, "home/.agents/skills/notes", "notes");
    put_skill(t, "home/.openclaw/skills/todo", "todo");
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    assert_int_equal(sg_discover(&o, &d), 0);
    assert_int_equal(d.n, 6);
    size_t ws = 0, shared = 0, shadowed = 0;
    for (size_t i = 0; i < d.n; i++) {
        ws += d.v[i].source == SG_SRC_WORKSPACE;
        shared += d.v[i].source == SG_SRC_SHARED;
        if (d.v[i].shadowed_by != SIZE_MAX) {
            shadowed++;
            /* the workspace's gamma under .claude's; the shared todo under the workspace's */
            assert_true(d.v[i].source == SG_SRC_WORKSPACE || d.v[i].source == SG_SRC_SHARED);
            assert_int_equal(d.v[d.v[i].shadowed_by].source,
                             d.v[i].source == SG_SRC_WORKSPACE ? SG_SRC_PROJECT
                                                                : SG_SRC_WORKSPACE);
        }
    }
    assert_int_equal(ws, 3);
    assert_int_equal(shared, 2);
    assert_int_equal(shadowed, 2);
    assert_int_equal(count_named(&d, "notes"), 1);
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(home), free(cwd), free(cfg);
}

/* A skill is named by the folder it was installed as, as `clawhub
 * install` keeps ClawHub's slug whatever the skill's name says: found by
 * that folder's name when no skill has it as its name (a name wins), in
 * the places' precedence, through a symlink by the link's own name; a
 * typo of the folder's name is near it. */
static void installed_folder_names(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "home/.openclaw/skills/4claw-imageboard", "4claw");
    put_skill(t, "home/.openclaw/skills/action-gen", "Action Generator");
    put_skill(t, "home/.openclaw/skills/taken", "other");
    put_skill(t, "home/.openclaw/skills/other", "something");
    put_skill(t, "proj/skills/action-gen", "workspace copy");
    put_skill(t, "store/weather-1.2", "forecast");
    char *link = sg_xasprintf("%s/home/.openclaw/skills/weather", t);
    char *target = sg_xasprintf("%s/store/weather-1.2", t);
    assert_int_equal(symlink(target, link), 0);
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    assert_int_equal(sg_discover(&o, &d), 0);
    size_t i = sg_discovery_find(&d, "4claw-imageboard");
    assert_int_not_equal(i, SIZE_MAX);
    assert_string_equal(d.v[i].skill->name, "4claw");
    i = sg_discovery_find(&d, "action-gen"); /* the workspace's, first in precedence */
    assert_int_not_equal(i, SIZE_MAX);
    assert_string_equal(d.v[i].skill->name, "workspace copy");
    /* one taken out of the discovery (run's skill) is skipped: the other
     * folder of that name, for the note that names it */
    struct sg_skill *taken = d.v[i].skill;
    d.v[i].skill = NULL;
    size_t j = sg_discovery_find_folder(&d, "action-gen");
    assert_true(j != SIZE_MAX && j != i);
    assert_string_equal(d.v[j].skill->name, "Action Generator");
    d.v[i].skill = taken;
    i = sg_discovery_find(&d, "other"); /* a name wins over a folder */
    assert_string_equal(d.v[i].skill->name, "other");
    i = sg_discovery_find(&d, "weather");
    assert_int_not_equal(i, SIZE_MAX);
    assert_string_equal(d.v[i].skill->name, "forecast");
    assert_int_equal(sg_discovery_find(&d, "weather-1.2"), SIZE_MAX);
    i = sg_discovery_nearest(&d, "4claw-imagebaord");
    assert_int_not_equal(i, SIZE_MAX);
    assert_string_equal(d.v[i].skill->name, "4claw");
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(home), free(cwd), free(cfg), free(link), free(target);
}

/* OpenClaw's default workspace (~/.openclaw/workspace/skills, then its
 * .agents/skills) before ~/.agents/skills and the managed ~/.openclaw/skills
 * and ~/.clawdbot/skills, as OpenClaw orders them; a skill found there is
 * keyed by its name (ClawHub's folder is the slug) and judged by OpenClaw's
 * rules; a person-only discovery leaves the agent's workspace out. */
/* A name a skill of the working folder's (.claude/skills there or below)
 * and one of the person's own (~/.claude/skills, ~/.openclaw/skills) both
 * answer is refused, naming both paths; two of the person's own, or
 * OpenClaw's workspace over its managed folder, keep their precedence. */
static void project_and_personal_same_name(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "home/.claude/skills/notes", "notes");
    put_skill(t, "proj/.claude/skills/notes", "notes");
    put_skill(t, "home/.openclaw/skills/forecast", "forecast");
    put_skill(t, "proj/sub/.claude/skills/forecast", "forecast");
    put_skill(t, "home/.claude/skills/mine", "mine");
    put_skill(t, "home/.openclaw/skills/mine", "mine");
    put_skill(t, "home/.openclaw/skills/ws", "ws");
    put_skill(t, "proj/skills/ws", "ws");
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    assert_int_equal(sg_discover(&o, &d), 0);
    static const struct {
        const char *name, *a, *b;
    } amb[] = {
        {"notes", "home/.claude/skills/notes", "proj/.claude/skills/notes"},
        {"forecast", "proj/sub/.claude/skills/forecast", "home/.openclaw/skills/forecast"},
    };
    for (size_t k = 0; k < SG_ARRAY_LEN(amb); k++) {
        size_t i = sg_discovery_find(&d, amb[k].name);
        assert_int_not_equal(i, SIZE_MAX);
        assert_int_not_equal(sg_discovery_ambiguous(&d, i), SIZE_MAX);
        char *m = sg_resolve_ambiguous(&d, amb[k].name);
        char *a = sg_xasprintf("%s/%s (", t, amb[k].a), *b = sg_xasprintf("%s/%s (", t, amb[k].b);
        assert_non_null(strstr(m, a));
        assert_non_null(strstr(m, b));
        assert_non_null(strstr(m, "name the one you mean by its path"));
        free(m), free(a), free(b);
    }
    assert_int_equal(sg_discovery_ambiguous(&d, sg_discovery_find(&d, "mine")), SIZE_MAX);
    assert_int_equal(sg_discovery_ambiguous(&d, sg_discovery_find(&d, "ws")), SIZE_MAX);
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(home), free(cwd), free(cfg);
}

static void openclaw_default_workspace(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    static const char clawhub[] =
        "---\nname: Weather Pro\ndescription: forecasts\nhomepage: https://w.test\n"
        "version: 1.0.0\nmetadata: {\"clawdbot\": {\"primaryEnv\": null}}\n---\n";
    th_write(t, "home/.openclaw/workspace/skills/weather/SKILL.md", clawhub);
    th_write(t, "home/.openclaw/skills/weather-pro/SKILL.md", clawhub);
    put_skill(t, "home/.openclaw/workspace/.agents/skills/todo", "todo");
    put_skill(t, "home/.agents/skills/todo", "todo");
    put_skill(t, "home/.clawdbot/skills/old", "old");
    put_skill(t, "proj/skills/ws-slug", "ws-name");
    put_skill(t, "home/.openclaw/workspace-ops/skills/ops", "ops");
    put_skill(t, "home/.openclaw/workspace-*/skills/star", "star"); /* a '*' in a name */
    put_skill(t, "home/.openclaw/workspace-ops/notes/no", "no");
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    assert_int_equal(sg_discover(&o, &d), 0);
    assert_int_equal(d.n, 8);
    static const struct {
        const char *name, *root;
        enum sg_source src;
        bool shadowed;
        const char *rules;
    } want[] = {
        {"ws-name", "/proj/skills/ws-slug", SG_SRC_WORKSPACE, false, "found in ./skills"},
        {"Weather Pro", "/.openclaw/workspace/skills/weather", SG_SRC_OPENCLAW, false,
         "found in ~/.openclaw/workspace/skills"},
        {"todo", "/.openclaw/workspace/.agents/skills/todo", SG_SRC_OPENCLAW, false,
         "~/.openclaw/workspace/.agents/skills"},
        {"star", "/.openclaw/workspace-*/skills/star", SG_SRC_OPENCLAW, false,
         "found in ~/.openclaw/workspace-*/skills"},
        {"ops", "/.openclaw/workspace-ops/skills/ops", SG_SRC_OPENCLAW, false,
         "found in ~/.openclaw/workspace-ops/skills"},
        {"todo", "/home/.agents/skills/todo", SG_SRC_SHARED, true, NULL},
        {"Weather Pro", "/.openclaw/skills/weather-pro", SG_SRC_SHARED, true,
         "found in ~/.openclaw/skills"},
        {"old", "/.clawdbot/skills/old", SG_SRC_SHARED, false, "~/.clawdbot/skills"},
    };
    for (size_t i = 0; i < d.n; i++) {
        const struct sg_found *f = &d.v[i];
        assert_string_equal(f->name, want[i].name);
        assert_true(sg_str_has_suffix(f->skill->root, want[i].root));
        assert_int_equal(f->source, want[i].src);
        assert_int_equal(f->shadowed_by != SIZE_MAX, want[i].shadowed);
        if (want[i].rules)
            assert_non_null(strstr(f->skill->openclaw_rules, want[i].rules));
        else
            assert_null(f->skill->openclaw_rules);
        /* a name other than the folder's, a null primaryEnv, homepage and
         * version: none of them a problem under OpenClaw's rules */
        assert_int_equal(sg_diags_count(&f->skill->diags, SG_ERROR), 0);
        assert_null(th_find(&f->skill->diags, "homepage", NULL));
        assert_null(th_find(&f->skill->diags, "metadata.clawdbot", NULL));
    }
    sg_discovery_free(&d);
    o.persons_only = true;
    assert_int_equal(sg_discover(&o, &d), 0);
    assert_int_equal(d.n, 3);
    for (size_t i = 0; i < d.n; i++)
        assert_int_equal(d.v[i].source, SG_SRC_SHARED);
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(home), free(cwd), free(cfg);
}

static void nested_skips_vcs_deps_and_dot_dirs(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "p/.git/x/.claude/skills/in-git", "in-git");
    put_skill(t, "p/node_modules/pkg/.claude/skills/in-deps", "in-deps");
    put_skill(t, "p/.cache/.claude/skills/in-dot", "in-dot");
    put_skill(t, "p/a/b/.claude/skills/deep", "deep");
    put_skill(t, "p/a/.claude/skills/cat/grouped", "grouped");
    char *cwd = sg_xasprintf("%s/p", t), *home = sg_xasprintf("%s/nohome", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    sg_discover(&o, &d);
    assert_int_equal(d.n, 2);
    assert_int_equal(count_named(&d, "deep"), 1);
    assert_int_equal(count_named(&d, "grouped"), 1);
    assert_int_equal(count_named(&d, "in-git"), 0);
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(cwd), free(home), free(cfg);
}

static void symlink_loops_end(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "skills/one", "one");
    th_mkdirs(t, "skills/loop");
    char *l1 = sg_xasprintf("%s/skills/loop/back", t), *l2 = sg_xasprintf("%s/skills/self", t);
    char *target = sg_xasprintf("%s/skills", t);
    assert_int_equal(symlink(target, l1), 0);
    assert_int_equal(symlink(".", l2), 0);
    const char *dirs[] = {target};
    struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1};
    struct sg_discovery d;
    sg_discover(&o, &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].skill->name, "one");
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(l1), free(l2), free(target);
}

static void unreadable_folders_are_reported(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    put_skill(t, "skills/ok", "ok");
    put_skill(t, "skills/locked/hidden", "hidden");
    char *locked = sg_xasprintf("%s/skills/locked", t), *dir = sg_xasprintf("%s/skills", t);
    chmod(locked, 0);
    /* root reads through permissions: test as an unprivileged user then */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
            _exit(3);
        const char *dirs[] = {dir};
        struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1};
        struct sg_discovery d;
        sg_discover(&o, &d);
        int ok = d.n == 1 && !strcmp(d.v[0].skill->name, "ok") &&
                 th_find(&d.diags, "locked", "cannot read", "Permission denied", NULL);
        if (!ok)
            th_dump(&d.diags);
        sg_discovery_free(&d);
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    chmod(locked, 0755);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    th_rmrf(t);
    free(t), free(locked), free(dir);
}

static void config_file_errors_name_the_line(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    th_write(t, "config.yaml", "skill_dirs: [a\ncolour: blue\n");
    char *cfg = sg_xasprintf("%s/config.yaml", t), *home = sg_xasprintf("%s/h", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = home, .config_file = cfg};
    struct sg_discovery d;
    sg_discover(&o, &d);
    assert_non_null(th_find(&d.diags, "config.yaml:", "YAML syntax", NULL));
    sg_discovery_free(&d);
    th_write(t, "config.yaml", "skill_dirs: [a]\ncolour: blue\n");
    sg_discover(&o, &d);
    th_assert_diag(&d.diags, SG_WARNING, 2, 1, "colour", "unknown key");
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(cfg), free(home);
}

static void ten_thousand_skills(void **st)
{
    (void)st;
    char *t = th_tmpdir();
    for (int i = 0; i < 10000; i++) {
        char rel[64], name[32];
        snprintf(name, sizeof name, "s%05d", i);
        snprintf(rel, sizeof rel, "skills/g%02d/%s", i / 200, name);
        put_skill(t, rel, name);
    }
    char *dir = sg_xasprintf("%s/skills", t);
    const char *dirs[] = {dir};
    struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1};
    struct sg_discovery d;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    sg_discover(&o, &d);
    clock_gettime(CLOCK_MONOTONIC, &b);
    /* measured, not asserted: bench/discover.sh compares runs */
    print_message("# discovered %zu skills in %.0f ms\n", d.n,
                  (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
    assert_int_equal(d.n, 10000);
    size_t errors = 0;
    for (size_t i = 0; i < d.n; i++)
        errors += sg_skill_has_errors(d.v[i].skill);
    assert_int_equal(errors, 0);
    assert_string_equal(d.v[9999].skill->name, "s09999");
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(dir);
}

/* A Claude Code home: installed_plugins.json (format 2) with four plugins,
 * one declaring its skills in plugin.json (one path hostile, one leading
 * out through a symlink), one whose marketplace entry declares them, one
 * with only a skills/ folder, one a single SKILL.md at its root; a project
 * plugin of another project; enabledPlugins from two settings files. */
static void claude_code_plugins(void **st)
{
    (void)st;
    umask(022); /* Claude Code's files count only when no one else may write them */
    char *t = th_tmpdir();
    char *installed = sg_xasprintf(
        "{\"version\": 2, \"plugins\": {"
        "\"decl@mkt\": [{\"scope\": \"user\", \"installPath\": \"%s/cache/decl\"}],"
        "\"docs@anthropic\": [{\"scope\": \"user\", \"installPath\": \"%s/cache/repo\"}],"
        "\"plain@mkt\": [{\"scope\": \"project\", \"projectPath\": \"%s/proj\","
        "  \"installPath\": \"%s/cache/plain\"}],"
        "\"single@mkt\": [{\"installPath\": \"%s/cache/single\"}],"
        "\"elsewhere@mkt\": [{\"scope\": \"local\", \"projectPath\": \"%s/other\","
        "  \"installPath\": \"%s/cache/plain\"}]}}",
        t, t, t, t, t, t, t);
    th_write(t, "home/.claude/plugins/installed_plugins.json", installed);
    th_write(t, "cache/decl/.claude-plugin/plugin.json",
             "{\"name\": \"declared\", \"skills\": [\"./tools/one\", \"../../home\", "
             "\"/etc\", \"./out\", 7]}");
    put_skill(t, "cache/decl/tools/one", "one");
    put_skill(t, "cache/decl/skills/not-declared", "not-declared");
    put_skill(t, "outside/stolen", "stolen");
    char *out = sg_xasprintf("%s/cache/decl/out", t), *outside = sg_xasprintf("%s/outside", t);
    assert_int_equal(symlink(outside, out), 0);
    th_write(t, "home/.claude/plugins/marketplaces/anthropic/.claude-plugin/marketplace.json",
             "{\"name\": \"anthropic\", \"plugins\": [{\"name\": \"other\", \"skills\": "
             "[\"./skills/b\"]}, {\"name\": \"docs\", \"source\": \"./\", \"skills\": "
             "[\"./skills/a\"]}]}");
    put_skill(t, "cache/repo/skills/a", "a");
    put_skill(t, "cache/repo/skills/b", "b");
    put_skill(t, "cache/plain/skills/p1", "p1");
    th_write(t, "cache/single/SKILL.md", "---\nname: single\ndescription: one skill\n---\n");
    th_write(t, "home/.claude/settings.json",
             "{\"enabledPlugins\": {\"decl@mkt\": true, \"docs@anthropic\": true}}");
    th_write(t, "proj/.claude/settings.local.json",
             "{\"enabledPlugins\": {\"docs@anthropic\": false}}");
    char *home = sg_xasprintf("%s/home", t), *cwd = sg_xasprintf("%s/proj", t);
    char *cfg = sg_xasprintf("%s/none.yaml", t);
    struct sg_discover_opts o = {.defaults = true, .home = home, .cwd = cwd, .config_file = cfg};
    struct sg_discovery d;
    sg_discover(&o, &d);
    static const char *const want[] = {"declared:one", "docs:a", "plain:p1", "single:single"};
    assert_int_equal(d.n, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(d.v[i].name, want[i]);
        assert_int_equal(d.v[i].source, SG_SRC_PLUGIN);
        assert_non_null(d.v[i].plugin);
        assert_int_equal(sg_discovery_find(&d, want[i]), i);
    }
    assert_int_equal(sg_discovery_find(&d, "one"), SIZE_MAX);
    assert_int_equal(d.v[0].plugin->enabled, 1);
    assert_int_equal(d.v[1].plugin->enabled, 0); /* the project's local settings win */
    assert_int_equal(d.v[2].plugin->enabled, -1);
    assert_string_equal(d.v[2].plugin->scope, "project");
    assert_non_null(th_find(&d.diags, "plugin.json", "../../home", "stay inside", NULL));
    assert_non_null(th_find(&d.diags, "plugin.json", "\"/etc\"", "stay inside", NULL));
    assert_non_null(th_find(&d.diags, "plugin.json", "\"out\"", "leads out", NULL));
    assert_non_null(th_find(&d.diags, "plugin.json", "entry 5", NULL));
    sg_discovery_free(&d);

    /* format 1, and a file someone else may write is not believed */
    th_write(t, "home/.claude/plugins/installed_plugins.json", "{\"version\": 1, \"plugins\": "
             "{\"solo@mkt\": {\"installPath\": \"/nonexistent\"}}}");
    sg_discover(&o, &d);
    assert_int_equal(d.n, 0);
    assert_non_null(th_find(&d.diags, "solo@mkt", "not a folder", NULL));
    sg_discovery_free(&d);
    char *ip = sg_xasprintf("%s/home/.claude/plugins/installed_plugins.json", t);
    free(installed);
    installed = sg_xasprintf("{\"version\": 1, \"plugins\": {\"single@mkt\": "
                             "{\"installPath\": \"%s/cache/single\"}}}", t);
    th_write(t, "home/.claude/plugins/installed_plugins.json", installed);
    sg_discover(&o, &d);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].name, "single:single");
    sg_discovery_free(&d);
    chmod(ip, 0666);
    sg_discover(&o, &d);
    assert_int_equal(d.n, 0);
    assert_non_null(th_find(&d.diags, "installed_plugins.json", "writable by others", NULL));
    sg_discovery_free(&d);
    th_rmrf(t);
    free(t), free(installed), free(out), free(outside), free(home), free(cwd), free(cfg);
    free(ip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(precedence_and_shadowing),
        cmocka_unit_test(openclaw_places),
        cmocka_unit_test(openclaw_default_workspace),
        cmocka_unit_test(project_and_personal_same_name),
        cmocka_unit_test(installed_folder_names),
        cmocka_unit_test(nested_skips_vcs_deps_and_dot_dirs),
        cmocka_unit_test(symlink_loops_end),
        cmocka_unit_test(unreadable_folders_are_reported),
        cmocka_unit_test(config_file_errors_name_the_line),
        cmocka_unit_test(ten_thousand_skills),
        cmocka_unit_test(claude_code_plugins),
    };
    return cmocka_run_group_tests_name("discover", tests, NULL, NULL);
}
