/* Themes (tui/theme.c): the shipped files, problems reported with file, line
 * and field, colour parsing and folding, the search path and listing; and the
 * theme: and keys: entries of config.yaml. */
#include "helpers.h"

#include <dirent.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "tui/theme.h"
#include "util.h"

static char *xdg; /* $XDG_CONFIG_HOME for every test */

static int group_setup(void **st)
{
    (void)st;
    xdg = th_tmpdir();
    setenv("XDG_CONFIG_HOME", xdg, 1);
    return 0;
}

static int group_teardown(void **st)
{
    (void)st;
    th_rmrf(xdg);
    free(xdg);
    return 0;
}

/* Load, and fail the test (showing the problems) unless the result is want. */
static void load_expect(const char *name, struct tui_theme *t, struct sg_diags *d, int want)
{
    int r = tui_theme_load(name, t, d);
    if (r != want) {
        th_dump(d);
        fail_msg("%s: got %d, want %d", name, r, want);
    }
}

static int words(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        n += *p != ' ' && (p == s || p[-1] == ' ');
    return n;
}

/* Every word of TUI_ROLES' attribute columns is one the parser knows. */
static void role_table(void **st)
{
    (void)st;
    static const struct {
        const char *attrs, *mono;
    } cols[] = {
#define X(id, name, fg, bg, attrs, mono, what) [TUI_R_##id] = {attrs, mono},
        TUI_ROLES(X)
#undef X
    };
    struct tui_theme b, m;
    tui_theme_builtin(&b);
    tui_theme_mono(&m);
    assert_string_equal(b.name, "default");
    assert_string_equal(m.name, "mono");
    assert_true(m.mono);
    for (int r = 0; r < TUI_ROLE_COUNT; r++) {
        assert_non_null(tui_role_name(r));
        if (__builtin_popcount(b.role[r].attrs) != words(cols[r].attrs) ||
            __builtin_popcount(m.role[r].attrs) != words(cols[r].mono))
            fail_msg("%s: an attribute word of TUI_ROLES is not known", tui_role_name(r));
        assert_int_equal(m.role[r].fg, -1);
    }
    assert_null(tui_role_name(TUI_ROLE_COUNT));
    assert_int_equal(b.role[TUI_R_TITLE].attrs, A_BOLD);
    assert_int_equal(m.role[TUI_R_MATCH].attrs, A_REVERSE | A_UNDERLINE);
}

/* Each file in themes/ loads cleanly by path and by name, and names every role. */
static void shipped_themes(void **st)
{
    (void)st;
    cleanup_free char *dir = sg_xasprintf("%s/themes", SG_SOURCE_ROOT);
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!sg_str_has_suffix(e->d_name, ".yaml"))
            continue;
        files++;
        cleanup_free char *path = sg_xasprintf("%s/%s", dir, e->d_name);
        cleanup_free char *name = sg_xstrndup(e->d_name, strlen(e->d_name) - 5);
        struct sg_diags d = {0};
        struct tui_theme t;
        load_expect(path, &t, &d, 0);
        load_expect(name, &t, &d, 0);
        if (d.n) {
            th_dump(&d);
            fail_msg("%s: problems", path);
        }
        assert_string_equal(t.name, name);
        /* every role is written out, none left to the built-in values */
        FILE *f = fopen(path, "re");
        char text[8192];
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        for (int r = 0; r < TUI_ROLE_COUNT; r++) {
            cleanup_free char *key = sg_xasprintf("\n  %s:", tui_role_name(r));
            if (!strstr(text, key))
                fail_msg("%s does not list the role %s", path, tui_role_name(r));
        }
        sg_diags_free(&d);
    }
    closedir(dp);
    assert_int_equal(files, 5);
}

static void assert_same_theme(const struct tui_theme *a, const struct tui_theme *b)
{
    assert_int_equal(a->mono, b->mono);
    for (int r = 0; r < TUI_ROLE_COUNT; r++) {
        if (a->role[r].fg != b->role[r].fg || a->role[r].bg != b->role[r].bg ||
            a->role[r].attrs != b->role[r].attrs)
            fail_msg("role %s: %d/%d/%#x differs from %d/%d/%#x", tui_role_name(r),
                     a->role[r].fg, a->role[r].bg, (unsigned)a->role[r].attrs, b->role[r].fg,
                     b->role[r].bg, (unsigned)b->role[r].attrs);
    }
}

/* default.yaml and mono.yaml are the compiled-in themes written out. */
static void files_mirror_builtin(void **st)
{
    (void)st;
    struct sg_diags d = {0};
    struct tui_theme file, builtin;
    cleanup_free char *p = sg_xasprintf("%s/themes/default.yaml", SG_SOURCE_ROOT);
    load_expect(p, &file, &d, 0);
    tui_theme_builtin(&builtin);
    assert_same_theme(&file, &builtin);
    free(p);
    p = sg_xasprintf("%s/themes/mono.yaml", SG_SOURCE_ROOT);
    load_expect(p, &file, &d, 0);
    tui_theme_mono(&builtin);
    assert_same_theme(&file, &builtin);
    assert_int_equal(d.n, 0);
    sg_diags_free(&d);
}

static const char bad_theme[] = "name: bad\n"
                                "roles:\n"
                                "  titel: {fg: red}\n"
                                "  title: {fg: purple, bg: blue}\n"
                                "  status: {attrs: [bold, blod]}\n"
                                "  stderr: {attrs: \"dim sparkly\"}\n"
                                "  dim: {fg: 256}\n"
                                "  key: {fg: red, colour: blue}\n";

/* Unknown roles, bad colours and bad attributes are errors at FILE:LINE:COL
 * with the field; unknown keys are warnings; the theme is left alone. */
static void bad_theme_reports(void **st)
{
    (void)st;
    th_write(xdg, "skillgate/themes/bad.yaml", bad_theme);
    struct sg_diags d = {0};
    struct tui_theme t;
    tui_theme_builtin(&t);
    load_expect("bad", &t, &d, -EINVAL);
    assert_non_null(th_find(&d, "bad.yaml:3:3: error: roles.titel: unknown role", NULL));
    assert_non_null(th_find(&d, "bad.yaml:4:", "roles.title.fg", "\"purple\" is not a colour", NULL));
    assert_non_null(th_find(&d, "bad.yaml:5:", "roles.status.attrs[1]", "\"blod\"", NULL));
    assert_non_null(th_find(&d, "bad.yaml:6:", "roles.stderr.attrs", "\"sparkly\"", NULL));
    assert_non_null(th_find(&d, "bad.yaml:7:", "roles.dim.fg", "\"256\"", NULL));
    th_assert_diag(&d, SG_WARNING, 8, 18, "roles.key.colour", "unknown key");
    assert_int_equal(sg_diags_count(&d, SG_ERROR), 5);
    assert_string_equal(t.name, "default"); /* untouched */
    sg_diags_free(&d);

    /* by path, a clean file with an unknown key and a wrong name: warnings only */
    th_write(xdg, "odd.yaml", "name: other\nflavour: mint\nroles:\n  stderr: {fg: 214}\n");
    cleanup_free char *p = sg_xasprintf("%s/odd.yaml", xdg);
    load_expect(p, &t, &d, 0);
    th_assert_diag(&d, SG_WARNING, 1, 7, "name", "differs from the file's name \"odd\"");
    th_assert_diag(&d, SG_WARNING, 2, 1, "flavour", "unknown key");
    assert_int_equal(sg_diags_count(&d, SG_ERROR), 0);
    assert_string_equal(t.name, "odd");
    assert_int_equal(t.role[TUI_R_STDERR].fg, 214);
    assert_int_equal(t.role[TUI_R_STDERR].bg, -1);
    assert_int_equal(t.role[TUI_R_TITLE].bg, 4); /* not named: built-in */
    sg_diags_free(&d);

    /* YAML syntax and an unquoted "#..." (a comment, so empty) */
    th_write(xdg, "hash.yaml", "roles:\n  title: {fg: #ff0000}\n");
    free(p);
    p = sg_xasprintf("%s/hash.yaml", xdg);
    load_expect(p, &t, &d, -EINVAL);
    assert_non_null(th_find(&d, "hash.yaml:", NULL));
    sg_diags_free(&d);
}

/* Names, numbers and "#rrggbb" (nearest xterm colour); attrs as a string. */
static void colours(void **st)
{
    (void)st;
    th_write(xdg, "skillgate/themes/hex.yaml",
             "roles:\n"
             "  title: {fg: \"#ff0000\", bg: \"#1C1C1C\", attrs: bold underline}\n"
             "  tab: {fg: \"#fe0a05\", bg: \"#808080\"}\n"
             "  dim: {fg: Gray, bg: bright-blue}\n"
             "  key: {fg: grey, bg: 0, attrs: [italic, standout]}\n"
             "  match: {fg: \"#00ff00\", bg: \"#ffffff\"}\n");
    struct sg_diags d = {0};
    struct tui_theme t;
    load_expect("hex", &t, &d, 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(t.role[TUI_R_TITLE].fg, 196); /* xterm's pure red */
    assert_int_equal(t.role[TUI_R_TITLE].bg, 234);
    assert_int_equal(t.role[TUI_R_TITLE].attrs, A_BOLD | A_UNDERLINE);
    assert_int_equal(t.role[TUI_R_TAB].fg, 196);
    assert_int_equal(t.role[TUI_R_TAB].bg, 244);
    assert_int_equal(t.role[TUI_R_DIM].fg, 8);
    assert_int_equal(t.role[TUI_R_DIM].bg, 12);
    assert_int_equal(t.role[TUI_R_KEY].fg, 8);
    assert_int_equal(t.role[TUI_R_KEY].bg, 0);
    assert_int_equal(t.role[TUI_R_KEY].attrs, A_ITALIC | A_STANDOUT);
    assert_int_equal(t.role[TUI_R_MATCH].fg, 46);
    assert_int_equal(t.role[TUI_R_MATCH].bg, 231);

    th_write(xdg, "skillgate/themes/hex2.yaml", "roles:\n  title: {fg: \"#ff00\"}\n");
    load_expect("hex2", &t, &d, -EINVAL);
    th_assert_diag(&d, SG_ERROR, 2, 15, "roles.title.fg", "is not a colour");
    sg_diags_free(&d);
}

/* The user's folder comes first; mono: true; unknown names; bad names. */
static void search_path(void **st)
{
    (void)st;
    struct sg_diags d = {0};
    struct tui_theme t;
    th_write(xdg, "skillgate/themes/dark.yaml", "mono: true\nroles:\n  title: {attrs: dim}\n");
    load_expect("dark", &t, &d, 0);
    assert_int_equal(d.n, 0);
    assert_true(t.mono);
    assert_int_equal(t.role[TUI_R_TITLE].attrs, A_DIM);
    assert_int_equal(t.role[TUI_R_SELECTED].attrs, A_REVERSE); /* mono column */
    cleanup_free char *p = sg_xasprintf("%s/skillgate/themes/dark.yaml", xdg);
    unlink(p);

    load_expect("no-such-theme", &t, &d, -ENOENT);
    cleanup_free char *where = sg_xasprintf("%s/skillgate/themes", xdg);
    assert_non_null(th_find(&d, "no-such-theme", "no such theme", where, NULL));
    sg_diags_free(&d);
    load_expect("/nonexistent/x.yaml", &t, &d, -ENOENT);
    assert_non_null(th_find(&d, "/nonexistent/x.yaml", NULL));
    sg_diags_free(&d);

    load_expect("../dark", &t, &d, -EINVAL);
    load_expect("Dark", &t, &d, -EINVAL);
    load_expect("", &t, &d, -EINVAL);
    assert_int_equal(sg_diags_count(&d, SG_ERROR), 3);
    sg_diags_free(&d);

    /* a warning in a mono theme for colours that would be ignored */
    th_write(xdg, "skillgate/themes/m2.yaml", "mono: yes\nroles:\n  title: {fg: red}\n");
    load_expect("m2", &t, &d, 0);
    th_assert_diag(&d, SG_WARNING, 3, 15, "roles.title.fg", "ignored");
    sg_diags_free(&d);
    th_write(xdg, "skillgate/themes/m3.yaml", "mono: maybe\n");
    load_expect("m3", &t, &d, -EINVAL);
    th_assert_diag(&d, SG_ERROR, 1, 7, "mono", "true or false");
    sg_diags_free(&d);
}

static void listing(void **st)
{
    (void)st;
    th_write(xdg, "skillgate/themes/zzz.yaml", "roles: {}\n");
    th_write(xdg, "skillgate/themes/light.yaml", "roles: {}\n");
    th_write(xdg, "skillgate/themes/Bad Name.yaml", "roles: {}\n");
    th_write(xdg, "skillgate/themes/notes.txt", "x\n");
    size_t n;
    char **v = tui_theme_list(&n);
    const char *want[] = {"dark", "default", "high-contrast", "light", "mono", "zzz"};
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(v[i - 1], v[i]) >= 0)
            fail_msg("not sorted or repeated: %s, %s", v[i - 1], v[i]);
        if (w < SG_ARRAY_LEN(want) && !strcmp(v[i], want[w]))
            w++;
        assert_true(strcmp(v[i], "Bad Name") && strcmp(v[i], "notes"));
    }
    assert_int_equal(w, SG_ARRAY_LEN(want));
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- on a terminal (newterm on /dev/null, in a child: curses keeps global
 * state and never frees all of it) ---- */

#define CHILD_CHECK(cond)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "# %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
            return 1;                                                        \
        }                                                                    \
    } while (0)

/* 0 passed, 77 no such terminal here, else failed. */
static int on_term(const char *term, struct tui_theme *t, int (*check)(struct tui_theme *))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *out = fopen("/dev/null", "we"), *in = fopen("/dev/null", "re");
        SCREEN *s = out && in ? newterm(term, out, in) : NULL;
        if (!s)
            _exit(77);
        start_color();
        tui_theme_apply(t);
        int r = check(t);
        endwin();
        _exit(r);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int pair_of(struct tui_theme *t, enum tui_role r, short *fg, short *bg)
{
    return pair_content((short)PAIR_NUMBER(t->attr[r] & A_COLOR), fg, bg);
}

static int check_256(struct tui_theme *t)
{
    short fg, bg;
    CHILD_CHECK(COLORS >= 256);
    CHILD_CHECK(pair_of(t, TUI_R_STDERR, &fg, &bg) == OK && fg == 214 && bg == -1);
    CHILD_CHECK(pair_of(t, TUI_R_TITLE, &fg, &bg) == OK && fg == 255 && bg == 238);
    CHILD_CHECK(t->attr[TUI_R_TITLE] & A_BOLD);
    return 0;
}

/* 8 colours, the default theme: bright text becomes normal + bold. */
static int check_8_default(struct tui_theme *t)
{
    short fg, bg;
    CHILD_CHECK(COLORS == 8);
    CHILD_CHECK(pair_of(t, TUI_R_PROMPT, &fg, &bg) == OK && fg == 7 && bg == 1);
    CHILD_CHECK(t->attr[TUI_R_PROMPT] & A_BOLD);
    CHILD_CHECK(pair_of(t, TUI_R_STATUS, &fg, &bg) == OK && fg == 0 && bg == 7);
    CHILD_CHECK(!(t->attr[TUI_R_STATUS] & A_BOLD));
    return 0;
}

/* 8 colours, the dark theme: 214 (orange) to 3 (yellow), 255 on 238 to 7 on 0. */
static int check_8_dark(struct tui_theme *t)
{
    short fg, bg;
    CHILD_CHECK(pair_of(t, TUI_R_STDERR, &fg, &bg) == OK && fg == 3 && bg == -1);
    CHILD_CHECK(pair_of(t, TUI_R_TITLE, &fg, &bg) == OK && fg == 7 && bg == 0);
    CHILD_CHECK(pair_of(t, TUI_R_PROMPT, &fg, &bg) == OK && fg == 7 && bg == 1);
    return 0;
}

static int check_no_colour(struct tui_theme *t)
{
    CHILD_CHECK(!(t->attr[TUI_R_TITLE] & A_COLOR));
    CHILD_CHECK(t->attr[TUI_R_TITLE] == (A_REVERSE | A_BOLD)); /* the mono column */
    CHILD_CHECK(t->attr[TUI_R_SELECTED] == A_REVERSE);
    return 0;
}

static void apply_folds(void **st)
{
    (void)st;
    struct sg_diags d = {0};
    struct tui_theme dark, builtin, mono;
    cleanup_free char *p = sg_xasprintf("%s/themes/dark.yaml", SG_SOURCE_ROOT);
    load_expect(p, &dark, &d, 0);
    tui_theme_builtin(&builtin);
    tui_theme_mono(&mono);
    int r[] = {
        on_term("xterm-256color", &dark, check_256),
        on_term("xterm", &builtin, check_8_default),
        on_term("xterm", &dark, check_8_dark),
        on_term("dumb", &dark, check_no_colour),
        on_term("xterm-256color", &mono, check_no_colour),
    };
    for (size_t i = 0; i < SG_ARRAY_LEN(r); i++)
        if (r[i] == 77)
            skip(); /* no terminfo for xterm, xterm-256color or dumb here */
    for (size_t i = 0; i < SG_ARRAY_LEN(r); i++)
        if (r[i] != 0)
            fail_msg("terminal check %zu failed (%d)", i, r[i]);
    sg_diags_free(&d);
}

/* ---- config.yaml: theme and keys ---- */

static void config_theme_keys(void **st)
{
    (void)st;
    th_write(xdg, "c1/config.yaml",
             "skill_dirs: [extra]\n"
             "theme: dark\n"
             "keys:\n"
             "  quit: \"q F10\"\n"
             "  move-down: j Down\n");
    cleanup_free char *p = sg_xasprintf("%s/c1/config.yaml", xdg);
    struct sg_diags d = {0};
    struct sg_config cfg;
    assert_int_equal(sg_config_load(p, &cfg, &d), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(cfg.nskill_dirs, 1);
    assert_string_equal(cfg.theme, "dark");
    assert_int_equal(cfg.theme_line, 2);
    assert_int_equal(cfg.nkeys, 2);
    assert_string_equal(cfg.keys[0].action, "quit");
    assert_string_equal(cfg.keys[0].keys, "q F10");
    assert_int_equal(cfg.keys[0].line, 4);
    assert_int_equal(cfg.keys[0].col, 9);
    assert_string_equal(cfg.keys[1].action, "move-down");
    assert_string_equal(cfg.keys[1].keys, "j Down");
    assert_int_equal(cfg.keys[1].line, 5);
    assert_int_equal(cfg.keys[1].col, 14);
    sg_config_free(&cfg);

    th_write(xdg, "c2/config.yaml",
             "theme: [dark]\n"
             "keys:\n"
             "  quit: [q, x]\n"
             "  help: {a: b}\n"
             "  redraw: \"^L\"\n");
    free(p);
    p = sg_xasprintf("%s/c2/config.yaml", xdg);
    assert_int_equal(sg_config_load(p, &cfg, &d), -EINVAL);
    th_assert_diag(&d, SG_ERROR, 1, 8, "theme", "must be a string");
    th_assert_diag(&d, SG_ERROR, 3, 9, "keys.quit", "must be a string");
    th_assert_diag(&d, SG_ERROR, 4, 9, "keys.help", "must be a string");
    assert_non_null(th_find(&d, "config.yaml:3:9: error: keys.quit", NULL));
    assert_int_equal(cfg.nkeys, 1);
    assert_null(cfg.theme);
    sg_config_free(&cfg);
    sg_diags_free(&d);

    th_write(xdg, "c3/config.yaml", "keys: q\n");
    free(p);
    p = sg_xasprintf("%s/c3/config.yaml", xdg);
    assert_int_equal(sg_config_load(p, &cfg, &d), -EINVAL);
    th_assert_diag(&d, SG_ERROR, 1, 7, "keys", "must be a mapping");
    sg_config_free(&cfg);
    sg_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(role_table),        cmocka_unit_test(shipped_themes),
        cmocka_unit_test(files_mirror_builtin), cmocka_unit_test(bad_theme_reports),
        cmocka_unit_test(colours),           cmocka_unit_test(search_path),
        cmocka_unit_test(listing),           cmocka_unit_test(apply_folds),
        cmocka_unit_test(config_theme_keys),
    };
    return cmocka_run_group_tests_name("theme", tests, group_setup, group_teardown);
}
