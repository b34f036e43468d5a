/* Nothing a skill wrote reaches the terminal as a control sequence. */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sanitize.h"
#include "util.h"

static void check(const char *in, size_t n, unsigned flags, const char *want)
{
    char *out = sg_sanitize(in, n, flags);
    assert_string_equal(out, want);
    free(out);
}

static void escapes_controls(void **st)
{
    (void)st;
    check("plain text", 10, 0, "plain text");
    check("\x1b[2J\x1b]0;owned\x07", 14, 0, "\\e[2J\\e]0;owned\\x07");
    check("a\rb\nc\td", 7, 0, "a\\rb\\nc\\td");
    check("a\nb\tc", 5, SG_SAN_KEEP_NEWLINE | SG_SAN_KEEP_TAB, "a\nb\tc");
    check("del\x7f", 4, 0, "del\\x7f");
    check("nul\0x", 5, 0, "nul\\x00x");
    /* C1 controls encoded in UTF-8 (U+009B is a CSI on some terminals) */
    check("\xc2\x9b" "31m", 5, 0, "\\x9b31m");
}

static void escapes_bidi_and_bad_utf8(void **st)
{
    (void)st;
    /* "Trojan Source": a right-to-left override */
    check("abc\xe2\x80\xae" "cba", 9, 0, "abc\\u{202e}cba");
    check("\xe2\x81\xa6x", 4, 0, "\\u{2066}x");
    check("bad \xff\xfe", 6, 0, "bad \\xff\\xfe");
    check("over\xc0\xaflong", 10, 0, "over\\xc0\\xaflong");
    check("cut \xe2\x82", 6, 0, "cut \\xe2\\x82");
    /* good UTF-8 passes untouched */
    check("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92", 14, 0, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92");
}

/* Characters a renderer draws as nothing: what they carry (a tag
 * character's hidden ASCII, a variation selector's hidden byte, for a
 * model reading the report) or hide (two paths that look one) must show. */
static void escapes_invisible(void **st)
{
    (void)st;
    check("a\xe2\x80\x8b" "b", 5, 0, "a\\u{200b}b");          /* zero-width space */
    check("a\xe2\x80\x8d" "b", 5, 0, "a\\u{200d}b");          /* zero-width joiner */
    check("a\xe2\x81\xa0" "b", 5, 0, "a\\u{2060}b");          /* word joiner */
    check("\xf3\xa0\x81\x81" "x", 5, 0, "\\u{e0041}x");        /* TAG LATIN CAPITAL A */
    check("\xf3\xa0\x84\x80" "x", 5, 0, "\\u{e0100}x");        /* VARIATION SELECTOR-17 */
    check("\xef\xb8\x8f" "x", 4, 0, "\\u{fe0f}x");               /* VARIATION SELECTOR-16 */
    check("\xe3\x85\xa4" "x", 4, 0, "\\u{3164}x");               /* HANGUL FILLER */
    check("soft\xc2\xad" "hy", 8, 0, "soft\\u{00ad}hy");          /* soft hyphen */
    /* what looks like them but is drawn passes */
    check("\xe2\x80\x90" "\xe3\x85\xa1", 6, 0, "\xe2\x80\x90" "\xe3\x85\xa1");
}

static bool collect(void *ctx, const char *piece, size_t n, bool escaped)
{
    (void)escaped;
    sg_buf_append(ctx, piece, n);
    return true;
}

/* sg_sanitize copies what passes a run at a time; sg_sanitize_each (the
 * screen's) goes a code point at a time. Both must give the same text for
 * any bytes: random mixes of ASCII, controls, UTF-8 (good, cut, bidi). */
static void string_and_pieces_agree(void **st)
{
    (void)st;
    static const char *const parts[] = {"a", "Z ", "\n", "\t", "\r", "\x1b[", "\x7f", "",
                                        "\xc3\xa9", "\xe2\x80\xae", "\xc2\x9b", "\xff",
                                        "\xe2\x82", "\xf0\x9f\x94\x92", "\xef\xbb\xbf",
                                        "\xe2\x80\x8b", "\xf3\xa0\x81\x81"};
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        char in[256];
        size_t n = 0;
        int k = (int)((seed = seed * 1103515245 + 12345) >> 16) % 40;
        for (int j = 0; j < k; j++) {
            const char *p = parts[((seed = seed * 1103515245 + 12345) >> 16) % SG_ARRAY_LEN(parts)];
            size_t pl = strlen(p);
            if (pl == 0) { /* a NUL byte */
                in[n++] = '\0';
                continue;
            }
            memcpy(in + n, p, pl);
            n += pl;
        }
        unsigned flags[] = {0, SG_SAN_KEEP_TAB, SG_SAN_KEEP_TAB | SG_SAN_KEEP_NEWLINE};
        for (size_t f = 0; f < SG_ARRAY_LEN(flags); f++) {
            struct sg_buf b;
            sg_buf_init(&b, 4096);
            sg_sanitize_each(in, n, flags[f], collect, &b);
            char *pieces = sg_buf_steal(&b);
            char *whole = sg_sanitize(in, n, flags[f]);
            assert_string_equal(whole, pieces);
            free(whole);
            free(pieces);
        }
    }
}

/* sg_sanitize_json is what jansson would print for sg_sanitize's text,
 * byte for byte (the --json printer and the journal used json_dumps): any
 * bytes, with quotes, backslashes, kept tabs and newlines, UTF-8 in and
 * past the BMP. */
static void json_agrees_with_jansson(void **st)
{
    (void)st;
    static const char *const parts[] = {"a", "\"", "\\", "/", "\n", "\t", "\r", "\b", "\f",
                                        "\v", "\x1b[1m", "\x7f", "", "\xc3\xa9", "\xe2\x80\xae",
                                        "\xc2\x9b", "\xff", "\xe2\x82", "\xf0\x9f\x94\x92",
                                        "\xef\xbf\xbd", "\xe4\xb8\xad", "\xf3\xa0\x81\x81"};
    unsigned seed = 777;
    for (int round = 0; round < 3000; round++) {
        char in[512];
        size_t n = 0;
        int k = (int)((seed = seed * 1103515245 + 12345) >> 16) % 60;
        for (int j = 0; j < k; j++) {
            const char *p = parts[((seed = seed * 1103515245 + 12345) >> 16) % SG_ARRAY_LEN(parts)];
            size_t pl = strlen(p);
            if (pl == 0) {
                in[n++] = '\0';
                continue;
            }
            memcpy(in + n, p, pl);
            n += pl;
        }
        unsigned flags[] = {0, SG_SAN_KEEP_TAB, SG_SAN_KEEP_TAB | SG_SAN_KEEP_NEWLINE};
        for (size_t f = 0; f < SG_ARRAY_LEN(flags); f++) {
            char *t = sg_sanitize(in, n, flags[f]);
            json_t *js = json_string(t);
            assert_non_null(js);
            char *want = json_dumps(js, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
            char *got = sg_sanitize_json(in, n, flags[f]);
            assert_string_equal(got, want);
            free(got);
            free(want);
            json_decref(js);
            free(t);
        }
    }
}

static void colour(const char *in, const char *want)
{
    char *out = sg_sanitize_colour(in, strlen(in), SG_SAN_KEEP_TAB);
    assert_string_equal(out, want);
    free(out);
}

/* Colours pass on a colour terminal, and nothing else does (issue 52). */
static void colours_pass_and_nothing_else(void **st)
{
    (void)st;
    colour("plain", "plain");
    colour("\x1b[1;32mok\x1b[0m", "\x1b[1;32mok\x1b[0m\x1b[0m");
    colour("\x1b[mx", "\x1b[mx\x1b[0m");
    colour("\x1b[91mo\x1b[3;36mr", "\x1b[91mo\x1b[3;36mr\x1b[0m");
    /* colours that can hide text on a dark or a light terminal: escaped
     * (black, white, grey, dim, reverse video, 256 and 24-bit colours) */
    colour("\x1b[30mx", "\\e[30mx");
    colour("\x1b[97mx", "\\e[97mx");
    colour("\x1b[2;90mx", "\\e[2;90mx");
    colour("\x1b[7;31mx", "\\e[7;31mx");
    colour("\x1b[38;5;16mx", "\\e[38;5;16mx");
    colour("\x1b[38;2;0;0;0mx", "\\e[38;2;0;0;0mx");
    /* an unclosed colour ends with the line */
    colour("\x1b[31mred", "\x1b[31mred\x1b[0m");
    /* conceal, blink, backgrounds, cursor moves, titles, 8-bit CSI: escaped */
    colour("\x1b[8mhidden", "\\e[8mhidden");
    colour("\x1b[5;31mx", "\\e[5;31mx");
    colour("\x1b[41mbg\x1b[30;47m", "\\e[41mbg\\e[30;47m");
    colour("\x1b[2J\x1b[H\x1b]0;t\x07", "\\e[2J\\e[H\\e]0;t\\x07");
    colour("\xc2\x9b" "31m", "\\x9b31m");
    /* a 256-colour index past 255, a cut 24-bit form, private marks */
    colour("\x1b[38;5;256m", "\\e[38;5;256m");
    colour("\x1b[38;2;1;2m", "\\e[38;2;1;2m");
    colour("\x1b[?1m\x1b[>4;1m", "\\e[?1m\\e[>4;1m");
    /* too long to be a colour: escaped, not cut */
    colour("\x1b[0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0m",
           "\\e[0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0m");
    /* a colour beside a bidi override: the override is still escaped */
    colour("\x1b[32m\xe2\x80\xae" "abc", "\x1b[32m\\u{202e}abc\x1b[0m");
    colour("\x1b", "\\e");
    colour("\x1b[", "\\e[");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escapes_controls),
        cmocka_unit_test(escapes_bidi_and_bad_utf8),
        cmocka_unit_test(escapes_invisible),
        cmocka_unit_test(string_and_pieces_agree),
        cmocka_unit_test(json_agrees_with_jansson),
        cmocka_unit_test(colours_pass_and_nothing_else),
    };
    return cmocka_run_group_tests_name("sanitize", tests, NULL, NULL);
}
