/* Protected targets (manifest/protected.h): which paths a folder grant
 * never covers, decided on the path of the object (issue 50, item 1). A
 * mistake here is silent: a miss lets a skill plant a hook; a false hit
 * asks a person about git's own objects on every commit. */
#include "helpers.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "perm.h"
#include "gitnamed.h"
#include "protected.h"
#include "rules.h"
#include "util.h"

static void what_git_and_editors_run_is_protected(void **st)
{
    (void)st;
    static const char *const yes[] = {
        "/p/.git", "/p/.git/config", "/p/.git/hooks", "/p/.git/hooks/post-checkout",
        "/p/.git/hooks/sub/x", "/p/.git/modules/lib/config", "/p/.git/modules/a/b/hooks/pre-commit",
        "/p/.git/worktrees/w/config.worktree", "/p/.git/commondir", "/srv/r.git/config",
        "/srv/r.git/hooks/update", "/p/.GIT/Config", "/p/.gitmodules", "/home/u/.gitconfig",
        "/home/u/.config/git/config", "/p/.envrc", "/p/.vscode", "/p/.vscode/tasks.json",
        "/p/.idea/workspace.xml", "/p/.claude/settings.json", "/p/.mcp.json", "/p/.npmrc",
        "/p/.pypirc", "/home/u/.bashrc", "/home/u/.zshenv", "/p/.husky/pre-commit",
        "/p/.pre-commit-config.yaml", "/p/.cargo/config.toml", "/p/.github/workflows/ci.yml",
        "/p/.devcontainer/devcontainer.json", "/p/.hg/hgrc", "/home/u/.ssh/authorized_keys",
        "/p/.yarnrc.yml", "/p/.githooks/pre-commit",
        "/home/u/.vimrc", "/p/.devcontainer.json", "/p/.pnpmfile.cjs"};
    for (size_t i = 0; i < SG_ARRAY_LEN(yes); i++)
        if (!sg_protected_path(yes[i], NULL))
            fail_msg("not protected: %s", yes[i]);
    /* git's ordinary work, and names that only look alike */
    static const char *const no[] = {
        "/p/.git/objects/ab/cdef", "/p/.git/index", "/p/.git/index.lock",
        "/p/.git/refs/heads/main", "/p/.git/logs/HEAD", "/p/.git/COMMIT_EDITMSG",
        "/p/.git/HEAD", "/p/.git/modules", "/p/.github/README.md", "/p/report.txt",
        "/p/config", "/p/hooks/x", "/p/my.envrc.txt", "/p/vscode/tasks.json",
        "/p/.cargo/registry/x", "/p/gitconfig", "/p/bin/run.sh", "/p/site-packages/x.py",
        "/p/.venv/lib/python3.11/site-packages/pkg/__init__.py",
        /* a virtual environment is code its user runs, all of it: a grant
         * of the folder covers it; and a hook's sample, which git never runs */
        "/p/.venv/bin/activate", "/p/.venv/lib/python3.11/site-packages/x.pth",
        "/p/.git/hooks/pre-commit.sample"};
    for (size_t i = 0; i < SG_ARRAY_LEN(no); i++)
        if (sg_protected_path(no[i], NULL))
            fail_msg("protected, but ordinary work: %s", no[i]);
}

static void a_folder_moved_in_below_a_protected_place_is_asked(void **st)
{
    (void)st;
    /* a folder that would bring a config or hooks into .git */
    assert_non_null(sg_protected_move("/p/mine", "/p/.git/modules/m", true));
    assert_non_null(sg_protected_move("/p/mine", "/p/.git/hooks", true));
    assert_non_null(sg_protected_move("/p/x", "/p/.github", true));
    /* a file there is ordinary; git moving its own folders inside .git too */
    assert_null(sg_protected_move("/p/mine", "/p/.git/modules/m", false));
    assert_null(sg_protected_move("/p/.git/rebase-x", "/p/.git/rebase-y", true));
    assert_null(sg_protected_move("/p/a", "/p/b", true));
    /* a folder that may hold targets moved away; within its place, not */
    assert_non_null(sg_protected_move("/p/.git/modules/m", "/p/away", true));
    assert_null(sg_protected_move("/p/.git/modules/m", "/p/.git/modules/m2", true));
    /* a symlink where a target would lie below it */
    assert_non_null(sg_protected_place("/p/.cargo"));
    assert_non_null(sg_protected_place("/p/.git/modules/n"));
    assert_non_null(sg_protected_place("/p/.github"));
    assert_null(sg_protected_place("/p/src"));
    /* either end protected: renamed away or onto */
    assert_non_null(sg_protected_move("/p/.git/hooks", "/p/old", true));
    assert_non_null(sg_protected_move("/p/x", "/p/.envrc", false));
}

static void only_a_rule_naming_the_file_allows_it(void **st)
{
    (void)st;
    struct sg_prule exact, glob, folder, bare, esc;
    const char *why;
    assert_int_equal(sg_prule_parse("Write(/p/.git/config)", SG_EFF_ALLOW, "t", &exact, &why), 0);
    assert_int_equal(sg_prule_parse("Write(/p/**)", SG_EFF_ALLOW, "t", &folder, &why), 0);
    assert_int_equal(sg_prule_parse("Write(/p/.git/conf*)", SG_EFF_ALLOW, "t", &glob, &why), 0);
    assert_int_equal(sg_prule_parse("Write", SG_EFF_ALLOW, "t", &bare, &why), 0);
    assert_int_equal(sg_prule_parse("Write(/p/a\\*b)", SG_EFF_ALLOW, "t", &esc, &why), 0);
    assert_true(sg_prule_exact(&exact));
    assert_true(sg_prule_exact(&esc)); /* an escaped star names that one file */
    assert_false(sg_prule_exact(&folder));
    assert_false(sg_prule_exact(&glob));
    assert_false(sg_prule_exact(&bare));
    struct sg_preq *q = sg_xcalloc(1, sizeof *q);
    q->tool = SG_PT_WRITE;
    SG_PREQ_SET(q, subject, "/p/.git/config");
    assert_non_null(sg_preq_protected(q));
    char w[256];
    assert_int_equal(sg_preq_risk(q, "/home/u", w, sizeof w), SG_RL_HIGH);
    assert_null(sg_preq_folder_rule(q, "/home/u")); /* no "this folder" offered for it */
    SG_PREQ_SET(q, subject, "/p/report.txt");
    assert_null(sg_preq_protected(q));
    q->protect = "moved in"; /* what the write broker found on the objects */
    assert_non_null(sg_preq_protected(q));
    free(q);
    sg_prule_free(&exact), sg_prule_free(&glob), sg_prule_free(&folder);
    sg_prule_free(&bare), sg_prule_free(&esc);
}

static void the_scan_finds_them(void **st)
{
    (void)st;
    cleanup_free char *dir = th_tmpdir();
    th_mkdirs(dir, "a/.git/hooks");
    th_write(dir, "a/src/main.c", "int main(void) { return 0; }\n");
    cleanup_free char *git = sg_xasprintf("%s/a/.git", dir);
    cleanup_free char *note = sg_protected_note(dir);
    assert_non_null(note);
    assert_non_null(strstr(note, git));
    cleanup_free char *src = sg_xasprintf("%s/a/src", dir);
    cleanup_free char *none = sg_protected_note(src);
    assert_null(none);
    th_rmrf(dir);
}

/* A 4 KiB path of .git components, every one a place a match may begin:
 * matched whole (the matcher is linear in the path; a backtracking "**"
 * once took 20 ms on it), and right: a hook below is one, a file not. */
static void a_long_path_is_matched_whole(void **st)
{
    (void)st;
    char path[4096];
    size_t n = 0;
    while (n + 6 < sizeof path - 32)
        n += (size_t)snprintf(path + n, sizeof path - n, "/.git");
    snprintf(path + n, sizeof path - n, "/x");
    assert_null(sg_protected_path(path, NULL));
    snprintf(path + n, sizeof path - n, "/hooks/x");
    assert_non_null(sg_protected_path(path, NULL));
    snprintf(path + n, sizeof path - n, "/config");
    assert_non_null(sg_protected_path(path, NULL));
}

/* What a repository's configuration names (gitnamed.h), read as git
 * reads it and never blocking on what a config names. */
static void what_git_config_names_is_protected(void **st)
{
    (void)st;
    cleanup_free char *dir = th_tmpdir();
    th_mkdirs(dir, "r/.git/hooks");
    th_mkdirs(dir, "r/tools");
    th_mkdirs(dir, "shared-hooks");
    cleanup_free char *fifo = sg_xasprintf("%s/r/fifo.gitconfig", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    th_write_n(dir, "r/nul.gitconfig", "\0\0\0\0\0\0\0\0", 8);
    th_write(dir, "r/.git/config",
             "[core] hooksPath = ../shared-hooks\n"        /* a key on the section's line */
             "\tfsmonitor = \"tools/fsmon.sh --fast\"\n"    /* a command: its program */
             "[include]\n\tpath = ../one.gitconfig\n"
             "\tpath = ../fifo.gitconfig\n\tpath = /dev/zero\n\tpath = ../nul.gitconfig\n");
    th_write(dir, "r/one.gitconfig", "[include]\n\tpath = two.gitconfig\n");
    th_write(dir, "r/two.gitconfig", "[core]\n\tbare = false\n");
    /* a repository is known once met: here by the walk a run makes of its
     * write folders (then what it names is protected wherever it lies) */
    sg_git_learn(dir, 1000, 4);
    static const char *const yes[] = {"shared-hooks/pre-commit", "r/tools/fsmon.sh",
                                      "r/one.gitconfig", "r/two.gitconfig"};
    for (size_t i = 0; i < SG_ARRAY_LEN(yes); i++) {
        cleanup_free char *p = sg_xasprintf("%s/%s", dir, yes[i]);
        if (!sg_protected_path(p, NULL))
            fail_msg("not protected: %s", yes[i]);
    }
    cleanup_free char *plain = sg_xasprintf("%s/r/tools/other.sh", dir);
    assert_null(sg_protected_path(plain, NULL));
    /* a git folder reached through a .git file, whatever its name */
    th_mkdirs(dir, "wt/.bare/hooks");
    th_write(dir, "wt/.bare/config", "[core]\n\tbare = true\n");
    th_write(dir, "wt/.git", "gitdir: ./.bare\n");
    cleanup_free char *bare = sg_xasprintf("%s/wt/.bare/config", dir);
    cleanup_free char *hook = sg_xasprintf("%s/wt/.bare/hooks/post-checkout", dir);
    assert_non_null(sg_protected_path(bare, NULL));
    assert_non_null(sg_protected_path(hook, NULL));
    /* more names than are kept: the repository is protected whole */
    struct sg_buf b;
    sg_buf_init(&b, 1 << 20);
    sg_buf_printf(&b, "[include]\n");
    for (int i = 0; i < 300; i++)
        sg_buf_printf(&b, "\tpath = inc%d\n", i);
    sg_buf_append(&b, "", 1);
    th_mkdirs(dir, "many/.git");
    th_write(dir, "many/.git/config", b.data);
    sg_buf_free(&b);
    cleanup_free char *any = sg_xasprintf("%s/many/src/x.c", dir);
    assert_non_null(sg_protected_path(any, NULL));
    /* a command git runs: each word that is a path */
    th_mkdirs(dir, "cmd/.git");
    th_write(dir, "cmd/.git/config",
             "[filter \"x\"]\n\tclean = sh tools/clean.sh --fast\n"
             "[alias]\n\tst = !tools/st.sh\n\tlg = log --oneline\n");
    cleanup_free char *clean = sg_xasprintf("%s/cmd/tools/clean.sh", dir);
    cleanup_free char *st_ = sg_xasprintf("%s/cmd/tools/st.sh", dir);
    cleanup_free char *other = sg_xasprintf("%s/cmd/tools/other.sh", dir);
    assert_non_null(sg_protected_path(clean, NULL));
    assert_non_null(sg_protected_path(st_, NULL));
    assert_null(sg_protected_path(other, NULL));
    /* a hook's sample is ordinary, unless a config runs it by that name */
    th_mkdirs(dir, "smp/.git/hooks");
    th_write(dir, "smp/.git/config", "[core]\n\tfsmonitor = .git/hooks/fsmonitor-watchman.sample\n");
    cleanup_free char *named = sg_xasprintf("%s/smp/.git/hooks/fsmonitor-watchman.sample", dir);
    cleanup_free char *sample = sg_xasprintf("%s/smp/.git/hooks/pre-commit.sample", dir);
    assert_non_null(sg_protected_path(named, NULL));
    assert_null(sg_protected_path(sample, NULL));
    /* a folder that holds what a config names: moved or linked, asked */
    cleanup_free char *tools = sg_xasprintf("%s/cmd/tools", dir);
    cleanup_free char *away = sg_xasprintf("%s/cmd/away", dir);
    assert_non_null(sg_protected_move(tools, away, true));
    assert_non_null(sg_protected_place(tools));
    /* a folder git would take for a git folder: the last of it is asked */
    th_mkdirs(dir, "plain/src");
    th_write(dir, "plain/src/HEAD", "ref: refs/heads/main\n");
    cleanup_free char *cfg = sg_xasprintf("%s/plain/src/config", dir);
    cleanup_free char *hk = sg_xasprintf("%s/plain/src/hooks/post-checkout", dir);
    cleanup_free char *code = sg_xasprintf("%s/plain/src/main.c", dir);
    assert_non_null(sg_protected_path(cfg, NULL));
    assert_non_null(sg_protected_path(hk, NULL));
    assert_null(sg_protected_path(code, NULL));
    th_rmrf(dir);
}

/* What a config names is read as git and the shell read it: the name and
 * what its link leads to, quoted words whole, a big config's first MiB,
 * a sample that is a hook by another name. */
static void a_config_is_read_as_git_reads_it(void **st)
{
    (void)st;
    cleanup_free char *dir = th_tmpdir();
    th_mkdirs(dir, "q/.git/hooks");
    th_mkdirs(dir, "q/node_modules/tool/bin");
    th_mkdirs(dir, "q/node_modules/.bin");
    th_write(dir, "q/node_modules/tool/bin/tool.js", "x\n");
    cleanup_free char *bin = sg_xasprintf("%s/q/node_modules/.bin/tool", dir);
    assert_int_equal(symlink("../tool/bin/tool.js", bin), 0);
    th_mkdirs(dir, "q/build/bin");
    cleanup_free char *tl = sg_xasprintf("%s/q/tl", dir);
    assert_int_equal(symlink("build/bin", tl), 0);
    th_write(dir, "q/.git/config",
             "[alias]\n\tlint = !node_modules/.bin/tool --fix\n"
             "\tspaced = !'tools/my tool.sh' \"a b\" && tools/after.sh\n"
             "\tsh = !sh -c 'scripts/lint.sh \"$@\"' -\n"
             "\treq = !node --require=./tools/h.js x\n"
             "\tlater = !tl/run.sh\n");
    cleanup_free char *js = sg_xasprintf("%s/q/node_modules/tool/bin/tool.js", dir);
    cleanup_free char *spaced = sg_xasprintf("%s/q/tools/my tool.sh", dir);
    cleanup_free char *after = sg_xasprintf("%s/q/tools/after.sh", dir);
    cleanup_free char *lint = sg_xasprintf("%s/q/scripts/lint.sh", dir);
    cleanup_free char *req = sg_xasprintf("%s/q/tools/h.js", dir);
    cleanup_free char *made = sg_xasprintf("%s/q/build/bin/run.sh", dir);
    cleanup_free char *other = sg_xasprintf("%s/q/tools/other.sh", dir);
    assert_non_null(sg_protected_path(bin, NULL)); /* the name git runs */
    assert_non_null(sg_protected_path(js, NULL));  /* what it leads to */
    assert_non_null(sg_protected_path(spaced, NULL));
    assert_non_null(sg_protected_path(after, NULL));
    assert_non_null(sg_protected_path(lint, NULL)); /* inside sh -c '...' */
    assert_non_null(sg_protected_path(req, NULL));  /* after an = */
    assert_non_null(sg_protected_path(made, NULL)); /* not there yet, behind a link */
    assert_null(sg_protected_path(other, NULL));
    /* ordinary aliases with $1 and a quoted $ leave the repository as it
     * is; a folder before a variable is protected whole */
    th_mkdirs(dir, "ali/.git");
    th_write(dir, "ali/.git/config",
             "[alias]\n\tco = !f() { git checkout -b \"$1\" origin/$1; }; f\n"
             "\tgone = !git branch --merged | grep -v 'main$' | xargs git branch -d\n"
             "\tpr = !git fetch origin pull/$1/head:pr-$1\n"
             "\tt = !tools/$1.sh\n");
    cleanup_free char *aok = sg_xasprintf("%s/ali/src/main.c", dir);
    cleanup_free char *avar = sg_xasprintf("%s/ali/tools/any.sh", dir);
    assert_null(sg_protected_path(aok, NULL));
    assert_non_null(sg_protected_path(avar, NULL));
    /* a path made by a variable is not modeled: the repository whole */
    th_mkdirs(dir, "var/.git");
    th_write(dir, "var/.git/config", "[alias]\n\tx = !$TOOLS/run.sh\n");
    cleanup_free char *vany = sg_xasprintf("%s/var/src/main.c", dir);
    assert_non_null(sg_protected_path(vany, NULL));
    /* a command substitution is not modeled: the repository whole */
    th_mkdirs(dir, "sub/.git");
    th_write(dir, "sub/.git/config", "[alias]\n\tx = !sh -c \"$(cat list)\"\n");
    cleanup_free char *any = sg_xasprintf("%s/sub/src/main.c", dir);
    assert_non_null(sg_protected_path(any, NULL));
    /* past the cap: the repository whole, and what the first MiB names */
    th_mkdirs(dir, "big/.git");
    th_mkdirs(dir, "outside-hooks");
    cleanup_free char *head = sg_xasprintf("[core]\n\thooksPath = %s/outside-hooks\n", dir);
    size_t big = SG_GIT_CONFIG_MAX + 4096;
    cleanup_free char *text = sg_xmalloc(big);
    memset(text, '#', big);
    memcpy(text, head, strlen(head));
    text[big - 1] = '\n';
    th_write_n(dir, "big/.git/config", text, big);
    cleanup_free char *bigcode = sg_xasprintf("%s/big/src/main.c", dir);
    cleanup_free char *outhook = sg_xasprintf("%s/outside-hooks/pre-commit", dir);
    assert_non_null(sg_protected_path(bigcode, NULL));
    assert_non_null(sg_protected_path(outhook, NULL));
    /* a sample that is a hook by another name (a symlink, a hard link) */
    th_write(dir, "q/.git/hooks/pre-push.sample", "#!/bin/sh\n");
    th_write(dir, "q/.git/hooks/update.sample", "#!/bin/sh\n");
    th_write(dir, "q/.git/hooks/plain.sample", "#!/bin/sh\n");
    cleanup_free char *pp = sg_xasprintf("%s/q/.git/hooks/pre-push.sample", dir);
    cleanup_free char *pph = sg_xasprintf("%s/q/.git/hooks/pre-push", dir);
    cleanup_free char *up = sg_xasprintf("%s/q/.git/hooks/update.sample", dir);
    cleanup_free char *uph = sg_xasprintf("%s/q/.git/hooks/update", dir);
    cleanup_free char *lk = sg_xasprintf("%s/q/.git/hooks/link.sample", dir);
    cleanup_free char *plain = sg_xasprintf("%s/q/.git/hooks/plain.sample", dir);
    assert_null(sg_protected_path(up, NULL));
    assert_int_equal(link(pp, pph), 0);
    assert_int_equal(symlink("update.sample", uph), 0);
    assert_int_equal(symlink("plain.sample", lk), 0);
    assert_non_null(sg_protected_path(pp, NULL)); /* a hook's other name */
    assert_non_null(sg_protected_path(up, NULL)); /* where a hook's link leads */
    assert_non_null(sg_protected_path(lk, NULL)); /* a sample that is a link */
    /* what a hook's link outside the git folder leads to, each link of a
     * chain, and a target not there yet */
    th_write(dir, "q/scripts/real.sh", "#!/bin/sh\n");
    cleanup_free char *chk = sg_xasprintf("%s/q/scripts/check.sh", dir);
    cleanup_free char *real = sg_xasprintf("%s/q/scripts/real.sh", dir);
    cleanup_free char *pc = sg_xasprintf("%s/q/.git/hooks/pre-commit", dir);
    cleanup_free char *pm = sg_xasprintf("%s/q/.git/hooks/prepare-commit-msg", dir);
    cleanup_free char *gone = sg_xasprintf("%s/q/scripts/not-yet.sh", dir);
    assert_int_equal(symlink("real.sh", chk), 0);
    assert_null(sg_protected_path(real, NULL));
    assert_int_equal(symlink("../../scripts/check.sh", pc), 0);
    assert_int_equal(symlink("../../scripts/not-yet.sh", pm), 0);
    assert_non_null(sg_protected_path(chk, NULL));
    assert_non_null(sg_protected_path(real, NULL));
    assert_non_null(sg_protected_path(gone, NULL));
    /* a folder link on a hook's way (tl -> build/bin), and a hook that is a
     * link to a folder */
    cleanup_free char *pw = sg_xasprintf("%s/q/.git/hooks/post-merge", dir);
    cleanup_free char *viatl = sg_xasprintf("%s/q/tl/check2.sh", dir);
    assert_int_equal(symlink("../../tl/check2.sh", pw), 0);
    assert_non_null(sg_protected_path(viatl, NULL));
    assert_non_null(sg_protected_place(tl));
    th_mkdirs(dir, "q/scripts/hooks.d");
    cleanup_free char *hd = sg_xasprintf("%s/q/.git/hooks/pre-commit.d", dir);
    cleanup_free char *inhd = sg_xasprintf("%s/q/scripts/hooks.d/evil", dir);
    assert_int_equal(symlink("../../scripts/hooks.d", hd), 0);
    assert_non_null(sg_protected_path(inhd, NULL));
    th_rmrf(dir);
}

/* The manual's list is this list: every pattern has its row. */
static void the_manual_lists_every_target(void **st)
{
    (void)st;
    cleanup_free char *path = sg_xasprintf("%s/docs/manual/enforcement.md", SG_SOURCE_ROOT);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    size_t nt;
    const struct sg_protected_target *t = sg_protected_targets(&nt);
    for (size_t i = 0; i < nt; i++) {
        cleanup_free char *row = sg_xasprintf("| `%s` |", t[i].pattern);
        if (!strstr(doc, row))
            fail_msg("docs/manual/enforcement.md has no row for %s", t[i].pattern);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(what_git_and_editors_run_is_protected),
        cmocka_unit_test(a_folder_moved_in_below_a_protected_place_is_asked),
        cmocka_unit_test(only_a_rule_naming_the_file_allows_it),
        cmocka_unit_test(the_scan_finds_them),
        cmocka_unit_test(the_manual_lists_every_target),
        cmocka_unit_test(a_long_path_is_matched_whole),
        cmocka_unit_test(what_git_config_names_is_protected),
        cmocka_unit_test(a_config_is_read_as_git_reads_it),
    };
    return cmocka_run_group_tests_name("protected", tests, NULL, NULL);
}
