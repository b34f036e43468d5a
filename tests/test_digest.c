/* The content digest: stable for the same code, different for any change
 * that could change what runs. */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "hasher.h"
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

    /* .git is in the sandbox's view of the folder: code can be read from
     * there too (issue 35, item 9) */
    th_write(a, ".git/HEAD", "ref: refs/heads/main\n");
    char *d8 = digest_of(a);
    assert_string_not_equal(base, d8);
    char *git = sg_xasprintf("%s/.git", a);
    th_rmrf(git);
    free(git);

    free(base), free(d1), free(back), free(d2), free(d3), free(d4), free(d5), free(d6), free(d7),
        free(d8);
    free(p), free(q), free(l), free(pyc);
    th_rmrf(a);
    free(a);
}

/* A link is pinned by what it resolves to, not only its text (issue 35,
 * item 9): the same link to a file or folder outside the skill whose
 * content changed is a changed skill; a link that appears, dangles or
 * loops is seen; cycles of folders end. */
static void links_are_pinned_by_their_targets(void **st)
{
    (void)st;
    char *a = th_tmpdir(), *out = th_tmpdir();
    th_write(a, "SKILL.md", "---\nname: x\n---\n");
    th_write(out, "lib.py", "print('safe')\n");
    th_write(out, "pkg/mod.py", "x = 1\n");
    char *lf = sg_xasprintf("%s/lib.py", out), *ld = sg_xasprintf("%s/pkg", out);
    char *l1 = sg_xasprintf("%s/main.py", a), *l2 = sg_xasprintf("%s/pkg", a);
    assert_int_equal(symlink(lf, l1), 0);
    assert_int_equal(symlink(ld, l2), 0);
    char *base = digest_of(a);

    th_write(out, "lib.py", "print('evil')\n"); /* the file behind the link */
    char *d1 = digest_of(a);
    assert_string_not_equal(base, d1);
    th_write(out, "lib.py", "print('safe')\n");
    char *back = digest_of(a);
    assert_string_equal(base, back);

    chmod(lf, 0755); /* its executable bit */
    char *d2 = digest_of(a);
    assert_string_not_equal(base, d2);
    chmod(lf, 0644);

    th_write(out, "pkg/mod.py", "x = 2\n"); /* a file in the folder behind a link */
    char *d3 = digest_of(a);
    assert_string_not_equal(base, d3);
    th_write(out, "pkg/mod.py", "x = 1\n");
    th_write(out, "pkg/new.py", ""); /* a new one there */
    char *d4 = digest_of(a);
    assert_string_not_equal(base, d4);
    char *nw = sg_xasprintf("%s/pkg/new.py", out);
    unlink(nw);

    unlink(lf); /* the target gone: dangling */
    char *d5 = digest_of(a);
    assert_string_not_equal(base, d5);
    th_write(out, "lib.py", "print('safe')\n");

    /* cycles end: a link to the root, to its parent, a loop of links */
    char *top = th_tmpdir();
    th_write(top, "skill/SKILL.md", "---\nname: x\n---\n");
    th_write(top, "beside.txt", "b");
    char *up = sg_xasprintf("%s/skill/up", top), *self = sg_xasprintf("%s/skill/self", top);
    char *p1 = sg_xasprintf("%s/skill/p1", top), *p2 = sg_xasprintf("%s/skill/p2", top);
    char *sk = sg_xasprintf("%s/skill", top);
    char *c0 = digest_of(sk);
    assert_int_equal(symlink("..", up), 0);
    assert_int_equal(symlink(".", self), 0);
    assert_int_equal(symlink("p2", p1), 0);
    assert_int_equal(symlink("p1", p2), 0);
    /* the parent is walked once (beside.txt counts); the root met again
     * inside it is a cycle, not walked again */
    char *d6 = digest_of(sk), *d7 = digest_of(sk);
    assert_string_equal(d6, d7);
    assert_string_not_equal(c0, d6);
    th_write(top, "beside.txt", "changed");
    char *d8 = digest_of(sk);
    assert_string_not_equal(d6, d8);
    th_rmrf(top);
    free(top), free(sk), free(c0), free(d8);

    free(base), free(d1), free(back), free(d2), free(d3), free(d4), free(d5), free(d6), free(d7);
    free(lf), free(ld), free(l1), free(l2), free(nw), free(up), free(self), free(p1), free(p2);
    th_rmrf(a), th_rmrf(out);
    free(a), free(out);
}

/* Links that fan out (each folder two links to the next) stay bounded by
 * the cap on entries and folders visited. */
static void fanning_links_are_bounded(void **st)
{
    (void)st;
    char *a = th_tmpdir();
    th_write(a, "SKILL.md", "---\nname: x\n---\n");
    for (int i = 0; i < 40; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "d%d/f", i);
        th_write(a, rel, "");
        for (int k = 0; k < 2; k++) {
            char *l = sg_xasprintf("%s/d%d/l%d", a, i, k);
            char *t = sg_xasprintf("../d%d", i + 1);
            assert_int_equal(symlink(t, l), 0);
            free(l), free(t);
        }
    }
    char d[SG_DIGEST_STRLEN];
    assert_int_equal(sg_skill_digest(a, d, NULL), -EFBIG);
    th_rmrf(a);
    free(a);
}

static void missing_root(void **st)
{
    (void)st;
    char d[SG_DIGEST_STRLEN];
    assert_int_equal(sg_skill_digest("/nonexistent/skill", d, NULL), -ENOENT);
}

/* FIPS 180-2's examples, one-shot and streamed in uneven pieces. */
static void sha256_matches_the_standard_vectors(void **st)
{
    (void)st;
    char d[SG_DIGEST_STRLEN];
    sg_sha256_text("", 0, d);
    assert_string_equal(d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sg_sha256_text("abc", 3, d);
    assert_string_equal(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    struct sg_sha256 *h = sg_sha256_new();
    for (size_t i = 0, step = 1; i < sizeof two - 1; i += step, step += 2)
        sg_sha256_update(h, two + i, step < sizeof two - 1 - i ? step : sizeof two - 1 - i);
    sg_sha256_finish(h, d);
    assert_string_equal(d, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* The output hasher: two streams interleaved, small (hashed in place) and
 * past the 1 MiB at which its thread starts (slots filled by several reads
 * and handed over full or when the other stream comes), against one-shot
 * digests. */
static void hasher_keeps_the_streams_apart(void **st)
{
    (void)st;
    static const size_t sizes[] = {5000, 3 * 1024 * 1024 + 17, 24 * 1024 * 1024 + 5};
    for (size_t k = 0; k < SG_ARRAY_LEN(sizes); k++) {
        size_t n = sizes[k], m = n / 7;
        unsigned char *out = sg_xmalloc(n), *err = sg_xmalloc(m);
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)(i * 31 + (i >> 9));
        for (size_t i = 0; i < m; i++)
            err[i] = (unsigned char)(i * 7 + 3);
        struct sg_hasher *h = sg_hasher_new();
        size_t oi = 0, ei = 0, turn = 0;
        while (oi < n || ei < m) {
            bool to_err = ei < m && (oi >= n || turn++ % 3 == 2);
            size_t left = to_err ? m - ei : n - oi;
            size_t c = 1 + (turn * 7919) % SG_HASHER_SLOT, room;
            c = c < left ? c : left;
            char *buf = sg_hasher_buf(h, to_err, &room); /* a slot's free end */
            assert_true(room > 0 && room <= SG_HASHER_SLOT);
            c = c < room ? c : room;
            memcpy(buf, to_err ? err + ei : out + oi, c);
            sg_hasher_submit(h, to_err, c);
            *(to_err ? &ei : &oi) += c;
        }
        char got[2][SG_DIGEST_STRLEN], want[SG_DIGEST_STRLEN];
        sg_hasher_finish(h, got);
        sg_sha256_text(out, n, want);
        assert_string_equal(got[0], want);
        sg_sha256_text(err, m, want);
        assert_string_equal(got[1], want);
        free(out), free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stable_and_order_independent),
        cmocka_unit_test(every_change_that_matters_changes_it),
        cmocka_unit_test(links_are_pinned_by_their_targets),
        cmocka_unit_test(fanning_links_are_bounded),
        cmocka_unit_test(missing_root),
        cmocka_unit_test(sha256_matches_the_standard_vectors),
        cmocka_unit_test(hasher_keeps_the_streams_apart),
    };
    return cmocka_run_group_tests_name("digest", tests, NULL, NULL);
}
