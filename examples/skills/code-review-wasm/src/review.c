/* code-review-wasm: the OpenSkills code-review skill as a WASI preview-1
 * module. It reads SKILL_INPUT (JSON), reviews the files it names under the
 * skill root (preopened at /skill) or the inline code it carries, and prints
 * one JSON report on stdout. Exit 0 on a completed review, 2 on bad input,
 * 1 if the report could not be written.
 *
 * Build: clang --target=wasm32-wasi --sysroot=/usr -O2 -o skill.wasm review.c */
/* fileno, strnlen and d_type are POSIX, outside strict C11 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SKILL_NAME "code-review-wasm"
#define ROOT "/skill/"
#define SAMPLE_DIR "sample"
#define INPUT_MAX_BYTES (64 * 1024)
#define MAX_FILES 64
#define MAX_FILE_BYTES (1024 * 1024)
#define MAX_PATH 1024
#define MAX_NAME 255
/* A report stays readable and under the sandbox's 1 MiB output cap: past
 * this many findings in a file, or in the whole report, a file lists no more
 * and says how many it left out (the summary still counts them all). */
#define MAX_SHOWN 500
#define MAX_SHOWN_TOTAL 2000
/* a directory with more entries than this is not listed further */
#define MAX_DIR_SCAN 100000
#define LINE_DEFAULT 100
#define LINE_MIN 20
#define LINE_MAX 1000

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s (1..4) and its code point, or 0
 * when it is malformed, overlong, a surrogate or past U+10FFFF. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    size_t len;
    uint32_t c;
    if (n == 0)
        return 0;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2, c = s[0] & 0x1Fu;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3, c = s[0] & 0x0Fu;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4, c = s[0] & 0x07u;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3Fu);
    }
    if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

/* Writes code point cp (valid, not a surrogate) as UTF-8; returns its length. */
static size_t utf8_encode(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- output ---- */

/* sticky: once a write to stdout fails, the exit status says so */
static bool out_failed;

static void out_bytes(const void *s, size_t n)
{
    if (n > 0 && fwrite(s, 1, n, stdout) != n)
        out_failed = true;
}

static void out_str(const char *s)
{
    out_bytes(s, strlen(s));
}

static void out_num(unsigned long n)
{
    char b[24];
    int k = snprintf(b, sizeof b, "%lu", n);
    if (k < 0 || (size_t)k >= sizeof b) {
        out_failed = true;
        return;
    }
    out_bytes(b, (size_t)k);
}

static void out_escape_cp(uint32_t cp)
{
    char b[8];
    int k = snprintf(b, sizeof b, "\\u%04x", (unsigned)cp);
    if (k != 6) {
        out_failed = true;
        return;
    }
    out_bytes(b, 6);
}

/* s[0..n) as a JSON string. Control characters (C0, DEL, C1) become \u00XX
 * so that no terminal escape survives; invalid UTF-8 (a file name from the
 * directory) becomes U+FFFD so that the report stays valid JSON. */
static void out_json(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    out_bytes("\"", 1);
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (k == 0) {
            out_escape_cp(0xFFFD);
            i++;
            continue;
        }
        if (cp == '"' || cp == '\\') {
            char e[2] = {'\\', (char)cp};
            out_bytes(e, 2);
        } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            out_escape_cp(cp);
        } else {
            out_bytes(s + i, k);
        }
        i += k;
    }
    out_bytes("\"", 1);
}

static void out_jstr(const char *s)
{
    out_json(s, strlen(s));
}

static int bad_input(const char *msg, size_t at)
{
    char b[160];
    if (snprintf(b, sizeof b, "invalid input at byte %lu: %s", (unsigned long)at, msg) < 0)
        b[0] = '\0';
    out_str("{\"skill\":\"" SKILL_NAME "\",\"error\":");
    out_jstr(b);
    out_str("}\n");
    (void)fflush(stdout); /* exit 2 either way: the input was bad */
    return 2;
}

/* ---- input: a strict JSON reader for exactly the accepted shapes ---- */

struct request {
    bool has_files, has_code, has_file;
    size_t nfiles;
    const char *files[MAX_FILES];
    const char *code;
    size_t code_len;
    const char *file;
};

struct reader {
    const unsigned char *s;
    size_t n, i;
    const char *err;
    size_t err_at;
};

/* Decoded strings live here, each NUL-terminated. A decoded string plus its
 * NUL is never longer than its quoted text in the input, so a whole input
 * always fits; the bound is still checked. */
static char arena[INPUT_MAX_BYTES + 1];
static size_t arena_used;

static bool fail(struct reader *r, const char *msg)
{
    if (!r->err) {
        r->err = msg;
        r->err_at = r->i;
    }
    return false;
}

static bool arena_put(struct reader *r, const void *p, size_t n)
{
    if (n > sizeof arena - arena_used)
        return fail(r, "input too large");
    memcpy(arena + arena_used, p, n);
    arena_used += n;
    return true;
}

static void skip_ws(struct reader *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
        r->i++;
}

static const char *expected(char c)
{
    switch (c) {
    case '{': return "expected '{'";
    case ':': return "expected ':'";
    case '"': return "expected a string";
    case '[': return "expected '['";
    default: return "expected ','";
    }
}

static bool expect(struct reader *r, char c)
{
    skip_ws(r);
    if (r->i >= r->n || r->s[r->i] != (unsigned char)c)
        return fail(r, expected(c));
    r->i++;
    return true;
}

static bool next_is(struct reader *r, char c)
{
    skip_ws(r);
    return r->i < r->n && r->s[r->i] == (unsigned char)c;
}

/* the four hex digits after \u */
static bool hex4(struct reader *r, uint32_t *out)
{
    uint32_t v = 0;
    if (r->n - r->i < 4)
        return fail(r, "truncated \\u escape");
    for (size_t k = 0; k < 4; k++) {
        unsigned char c = r->s[r->i + k];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return fail(r, "bad hex digit in \\u escape");
        v = (v << 4) | d;
    }
    r->i += 4;
    *out = v;
    return true;
}

/* \uXXXX, r->i just past the 'u'; a high surrogate must be followed by
 * \u and a low one, the pair making one code point */
static bool unicode_escape(struct reader *r)
{
    uint32_t cp, lo;
    unsigned char u[4];
    if (!hex4(r, &cp))
        return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(r, "lone low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (r->n - r->i < 2 || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u')
            return fail(r, "high surrogate without its low half");
        r->i += 2;
        if (!hex4(r, &lo))
            return false;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(r, "high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp == 0)
        return fail(r, "NUL in string");
    return arena_put(r, u, utf8_encode(cp, u));
}

/* one escape, r->i at the backslash */
static bool escape(struct reader *r)
{
    static const char from[] = "\"\\/bfnrt";
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *p;
    r->i++;
    if (r->i >= r->n)
        return fail(r, "unterminated string");
    if (r->s[r->i] == 'u') {
        r->i++;
        return unicode_escape(r);
    }
    p = r->s[r->i] ? strchr(from, r->s[r->i]) : NULL;
    if (!p)
        return fail(r, "unknown escape");
    r->i++;
    return arena_put(r, &to[p - from], 1);
}

static bool string(struct reader *r, const char **out, size_t *len)
{
    size_t start = arena_used;
    if (!expect(r, '"'))
        return false;
    while (r->i < r->n) {
        unsigned char c = r->s[r->i];
        uint32_t cp;
        size_t k;
        if (c == '"') {
            r->i++;
            if (!arena_put(r, "", 1))
                return false;
            *out = arena + start;
            *len = arena_used - start - 1;
            return true;
        }
        if (c < 0x20)
            return fail(r, "control character in string");
        if (c == '\\') {
            if (!escape(r))
                return false;
            continue;
        }
        k = utf8_decode(r->s + r->i, r->n - r->i, &cp);
        if (k == 0)
            return fail(r, "invalid UTF-8");
        if (!arena_put(r, r->s + r->i, k))
            return false;
        r->i += k;
    }
    return fail(r, "unterminated string");
}

static bool files_array(struct reader *r, struct request *q)
{
    const char *s;
    size_t len;
    if (!next_is(r, '['))
        return fail(r, "files must be an array of strings");
    r->i++;
    if (next_is(r, ']')) {
        r->i++;
        return true;
    }
    for (size_t k = 0; k < MAX_FILES; k++) {
        if (!next_is(r, '"'))
            return fail(r, "files must be an array of strings");
        if (!string(r, &s, &len))
            return false;
        q->files[q->nfiles++] = s;
        if (next_is(r, ']')) {
            r->i++;
            return true;
        }
        if (!next_is(r, ','))
            return fail(r, "expected ',' or ']' in files");
        r->i++;
    }
    return fail(r, "more than 64 files");
}

/* key ':' value, for the three known keys, each at most once */
static bool member(struct reader *r, struct request *q)
{
    const char *key;
    size_t len;
    size_t at;
    if (!next_is(r, '"'))
        return fail(r, "expected a key");
    at = r->i;
    if (!string(r, &key, &len) || !expect(r, ':'))
        return false;
    skip_ws(r);
    if (strcmp(key, "files") == 0 && !q->has_files) {
        q->has_files = true;
        return files_array(r, q);
    }
    if (strcmp(key, "code") == 0 && !q->has_code) {
        q->has_code = true;
        if (!next_is(r, '"'))
            return fail(r, "code must be a string");
        return string(r, &q->code, &q->code_len);
    }
    if (strcmp(key, "file") == 0 && !q->has_file) {
        q->has_file = true;
        if (!next_is(r, '"'))
            return fail(r, "file must be a string");
        return string(r, &q->file, &len);
    }
    r->i = at;
    if (strcmp(key, "files") == 0 || strcmp(key, "code") == 0 || strcmp(key, "file") == 0)
        return fail(r, "duplicate key");
    return fail(r, "unknown key (expected files, or code and file)");
}

static bool object(struct reader *r, struct request *q)
{
    if (!next_is(r, '{'))
        return fail(r, "input must be a JSON object");
    r->i++;
    if (next_is(r, '}')) {
        r->i++;
        return true;
    }
    /* three keys at most; a fourth member is a duplicate or unknown */
    for (int k = 0; k < 4; k++) {
        if (!member(r, q))
            return false;
        if (next_is(r, '}')) {
            r->i++;
            return true;
        }
        if (!next_is(r, ','))
            return fail(r, "expected ',' or '}'");
        r->i++;
    }
    return fail(r, "too many keys");
}

static bool parse_request(struct reader *r, struct request *q)
{
    if (!object(r, q))
        return false;
    skip_ws(r);
    if (r->i != r->n)
        return fail(r, "text after the JSON object");
    if (q->has_files && q->has_code)
        return fail(r, "give files or code, not both");
    if (q->has_file && !q->has_code)
        return fail(r, "file names inline code; give code too (or use files)");
    return true;
}

/* ---- findings ---- */

enum severity { SEV_HIGH, SEV_MEDIUM, SEV_LOW };

static const char *const sev_name[] = {"high", "medium", "low"};

struct totals {
    unsigned long files, findings, shown, by_sev[3];
};

static struct totals total;

/* the file whose findings are being written */
struct report {
    unsigned long shown, omitted;
};

static void finding(struct report *rp, unsigned long line, enum severity sev, const char *rule,
                    const char *msg)
{
    total.findings++;
    total.by_sev[sev]++;
    if (rp->shown >= MAX_SHOWN || total.shown >= MAX_SHOWN_TOTAL) {
        rp->omitted++;
        return;
    }
    if (rp->shown > 0)
        out_str(",");
    rp->shown++;
    total.shown++;
    out_str("{\"line\":");
    out_num(line);
    out_str(",\"severity\":\"");
    out_str(sev_name[sev]);
    out_str("\",\"rule\":\"");
    out_str(rule);
    out_str("\",\"message\":");
    out_jstr(msg);
    out_str("}");
}

/* ---- rules ---- */

static int max_line = LINE_DEFAULT;

static bool is_ident(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

static bool is_upper_digit(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

struct line {
    const unsigned char *s;
    size_t n;
    unsigned long no;
};

struct call_rule {
    const char *name;
    enum severity sev;
    const char *rule;
    const char *msg;
};

static const struct call_rule calls[] = {
    {"gets", SEV_HIGH, "unbounded-copy", "gets has no bound; use fgets"},
    {"strcpy", SEV_HIGH, "unbounded-copy", "strcpy has no bound; use snprintf or strlcpy"},
    {"strcat", SEV_HIGH, "unbounded-copy", "strcat has no bound; use snprintf or strlcat"},
    {"sprintf", SEV_HIGH, "unbounded-copy", "sprintf has no bound; use snprintf"},
    {"vsprintf", SEV_HIGH, "unbounded-copy", "vsprintf has no bound; use vsnprintf"},
    {"system", SEV_HIGH, "shell", "system runs a shell; use posix_spawn with an argument list"},
    {"popen", SEV_HIGH, "shell", "popen runs a shell; use posix_spawn with pipes"},
    {"atoi", SEV_LOW, "unchecked-number", "atoi cannot report errors; use strtol and check it"},
    {"atol", SEV_LOW, "unchecked-number", "atol cannot report errors; use strtol and check it"},
};

/* The identifier l->s[b..e) is a call of a listed function if '(' follows
 * (after blanks) and it is not a member (x.f( or x->f(). Each function is
 * reported once per line. */
static void check_call(struct report *rp, const struct line *l, size_t b, size_t e, bool *seen)
{
    size_t j = e;
    if (b > 0 && (l->s[b - 1] == '.' || (b > 1 && l->s[b - 1] == '>' && l->s[b - 2] == '-')))
        return;
    while (j < l->n && (l->s[j] == ' ' || l->s[j] == '\t'))
        j++;
    if (j >= l->n || l->s[j] != '(')
        return;
    for (size_t k = 0; k < ARRAY_LEN(calls); k++) {
        if (!seen[k] && strlen(calls[k].name) == e - b &&
            memcmp(calls[k].name, l->s + b, e - b) == 0) {
            seen[k] = true;
            finding(rp, l->no, calls[k].sev, calls[k].rule, calls[k].msg);
        }
    }
}

/* index just past the quoted literal opening at i (or the end of the line:
 * an unterminated literal ends there) */
static size_t skip_quoted(const struct line *l, size_t i)
{
    unsigned char q = l->s[i];
    for (i++; i < l->n; i++) {
        if (l->s[i] == '\\')
            i++;
        else if (l->s[i] == q)
            return i + 1;
    }
    return l->n;
}

/* The call rules look at code only: not in comments or literals. A C-like
 * lexer is enough (it also fits Rust, Go, Java, JavaScript); the block
 * comment state carries over to the next line. */
static void rule_calls(struct report *rp, const struct line *l, bool *in_block)
{
    bool seen[ARRAY_LEN(calls)] = {false};
    size_t i = 0;
    while (i < l->n) {
        unsigned char c = l->s[i];
        if (*in_block) {
            while (i + 1 < l->n && !(l->s[i] == '*' && l->s[i + 1] == '/'))
                i++;
            if (i + 1 >= l->n)
                return; /* the comment goes on past this line */
            *in_block = false;
            i += 2;
        } else if (c == '/' && i + 1 < l->n && l->s[i + 1] == '/') {
            return;
        } else if (c == '/' && i + 1 < l->n && l->s[i + 1] == '*') {
            *in_block = true;
            i += 2;
        } else if (c == '"' || c == '\'') {
            i = skip_quoted(l, i);
        } else if (is_ident(c)) {
            size_t b = i;
            while (i < l->n && is_ident(l->s[i]))
                i++;
            if (!(c >= '0' && c <= '9'))
                check_call(rp, l, b, i, seen);
        } else {
            i++;
        }
    }
}

/* whole word w at l->s[i]: no identifier character on either side */
static bool word_at(const struct line *l, size_t i, const char *w)
{
    size_t n = strlen(w);
    if (n > l->n - i || memcmp(l->s + i, w, n) != 0)
        return false;
    if (i > 0 && is_ident(l->s[i - 1]))
        return false;
    return i + n == l->n || !is_ident(l->s[i + n]);
}

static void rule_todo(struct report *rp, const struct line *l)
{
    static const char *const marks[] = {"TODO", "FIXME", "XXX"};
    char msg[48];
    for (size_t i = 0; i < l->n; i++) {
        for (size_t k = 0; k < ARRAY_LEN(marks); k++) {
            if (!word_at(l, i, marks[k]))
                continue;
            if (snprintf(msg, sizeof msg, "%s: unfinished work left in the code", marks[k]) < 0)
                return;
            finding(rp, l->no, SEV_LOW, "todo", msg);
            return;
        }
    }
}

/* AKIA and exactly 16 of [A-Z0-9]: the shape of an AWS access key id */
static bool aws_key_at(const struct line *l, size_t i)
{
    if (l->n - i < 20 || memcmp(l->s + i, "AKIA", 4) != 0)
        return false;
    if (i > 0 && is_ident(l->s[i - 1]))
        return false;
    for (size_t k = 4; k < 20; k++)
        if (!is_upper_digit(l->s[i + k]))
            return false;
    return i + 20 == l->n || !is_ident(l->s[i + 20]);
}

static bool contains(const unsigned char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (memcmp(s + i, w, m) == 0)
            return true;
    return false;
}

/* Secrets are looked for on the whole line: one in a comment leaks too. */
static void rule_secret(struct report *rp, const struct line *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (aws_key_at(l, i)) {
            finding(rp, l->no, SEV_HIGH, "secret",
                    "looks like an AWS access key id; move it out of the code and rotate it");
            break;
        }
    }
    /* only the first -----BEGIN matters: what follows a later one also
     * follows the first (and one pass keeps the rule linear) */
    for (size_t i = 0; i + 10 <= l->n; i++) {
        if (memcmp(l->s + i, "-----BEGIN", 10) != 0)
            continue;
        if (contains(l->s + i + 10, l->n - i - 10, "PRIVATE KEY"))
            finding(rp, l->no, SEV_HIGH, "secret",
                    "looks like a private key; move it out of the code and replace it");
        return;
    }
}

static void rule_layout(struct report *rp, const struct line *l)
{
    unsigned long chars = 0;
    char msg[80];
    for (size_t i = 0; i < l->n; i++)
        chars += (l->s[i] & 0xC0) != 0x80; /* code points, not bytes */
    if (chars > (unsigned long)max_line) {
        if (snprintf(msg, sizeof msg, "line is %lu characters; the limit is %d", chars,
                     max_line) >= 0)
            finding(rp, l->no, SEV_LOW, "long-line", msg);
    }
    if (l->n > 0 && (l->s[l->n - 1] == ' ' || l->s[l->n - 1] == '\t'))
        finding(rp, l->no, SEV_LOW, "trailing-space", "trailing whitespace");
}

/* ---- reviewing ---- */

static unsigned long count_lines(const unsigned char *s, size_t n)
{
    unsigned long lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines + (n > 0 && s[n - 1] != '\n');
}

static void begin_entry(const char *name)
{
    if (total.files++ > 0)
        out_str(",");
    out_str("{\"file\":");
    out_jstr(name);
}

static void error_entry(const char *name, const char *error)
{
    begin_entry(name);
    out_str(",\"error\":");
    out_jstr(error);
    out_str("}");
}

static void end_findings(const struct report *rp)
{
    out_str("]");
    if (rp->omitted > 0) {
        out_str(",\"omitted\":");
        out_num(rp->omitted);
    }
    out_str("}");
}

/* one file entry with the findings of text s[0..n) */
static void review_text(const char *name, const unsigned char *s, size_t n)
{
    struct report rp = {0, 0};
    bool in_block = false;
    size_t start = 0;
    unsigned long no = 0;
    begin_entry(name);
    out_str(",\"lines\":");
    out_num(count_lines(s, n));
    out_str(",\"findings\":[");
    while (start < n) {
        const unsigned char *nl = memchr(s + start, '\n', n - start);
        size_t end = nl ? (size_t)(nl - s) : n;
        struct line l = {s + start, end - start, ++no};
        if (l.n > 0 && l.s[l.n - 1] == '\r')
            l.n--; /* CRLF is a line ending, not trailing space */
        rule_calls(&rp, &l, &in_block);
        rule_todo(&rp, &l);
        rule_secret(&rp, &l);
        rule_layout(&rp, &l);
        start = end + 1;
    }
    end_findings(&rp);
}

static void too_large_entry(const char *name)
{
    struct report rp = {0, 0};
    begin_entry(name);
    out_str(",\"lines\":0,\"findings\":[");
    finding(&rp, 0, SEV_MEDIUM, "too-large", "file too large, not reviewed");
    end_findings(&rp);
}

static unsigned char filebuf[MAX_FILE_BYTES + 1];

/* Reads up to MAX_FILE_BYTES + 1 bytes of f: one byte more than the cap
 * tells a file that is too large. Returns false on a read error. */
static bool read_capped(FILE *f, size_t *got)
{
    size_t n = 0;
    while (n < sizeof filebuf) {
        size_t k = fread(filebuf + n, 1, sizeof filebuf - n, f);
        if (k == 0)
            break;
        n += k;
    }
    *got = n;
    return !ferror(f);
}

static void error_errno(const char *name, const char *what, int err)
{
    char msg[160];
    if (snprintf(msg, sizeof msg, "%s: %s", what, strerror(err)) < 0)
        msg[0] = '\0';
    error_entry(name, msg);
}

/* name is relative to the skill root; it has been checked */
static void review_file(const char *name)
{
    char full[sizeof ROOT + MAX_PATH];
    struct stat st;
    size_t n = 0;
    FILE *f;
    if (snprintf(full, sizeof full, ROOT "%s", name) >= (int)sizeof full) {
        error_entry(name, "path too long");
        return;
    }
    f = fopen(full, "rb");
    if (!f) {
        error_errno(name, "cannot open", errno);
        return;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        error_entry(name, "not a regular file");
    } else if (st.st_size > MAX_FILE_BYTES) {
        too_large_entry(name);
    } else if (!read_capped(f, &n)) {
        error_errno(name, "cannot read", errno);
    } else if (n > MAX_FILE_BYTES) {
        too_large_entry(name); /* it grew since fstat */
    } else {
        review_text(name, filebuf, n);
    }
    (void)fclose(f); /* opened read-only: a failed close loses nothing */
}

/* NULL if the path may be opened under the skill root, else why not */
static const char *path_problem(const char *p)
{
    size_t n = strlen(p);
    if (n == 0)
        return "empty path";
    if (n > MAX_PATH)
        return "path too long";
    if (p[0] == '/')
        return "path must be relative to the skill folder";
    /* i walks the component starts: 0 and each index after a '/' */
    for (size_t i = 0; i < n; i++) {
        if ((i == 0 || p[i - 1] == '/') && p[i] == '.' && p[i + 1] == '.' &&
            (p[i + 2] == '/' || p[i + 2] == '\0'))
            return "path must not contain ..";
    }
    return NULL;
}

static void review_path(const char *p)
{
    const char *why = path_problem(p);
    if (why)
        error_entry(p, why);
    else
        review_file(p);
}

/* ---- the sample folder, when no files are given ---- */

/* the first MAX_FILES names in byte order, kept sorted */
static char names[MAX_FILES][MAX_NAME + 1];
static size_t nnames;

static void keep_name(const char *name)
{
    size_t at = nnames;
    if (strlen(name) > MAX_NAME)
        return;
    while (at > 0 && strcmp(names[at - 1], name) > 0)
        at--;
    if (at >= MAX_FILES)
        return;
    if (nnames == MAX_FILES)
        nnames--; /* the last one drops out */
    memmove(names[at + 1], names[at], (nnames - at) * sizeof names[0]);
    memcpy(names[at], name, strlen(name) + 1);
    nnames++;
}

static bool is_regular(const char *dir, const struct dirent *e)
{
    char full[sizeof ROOT + sizeof SAMPLE_DIR + MAX_NAME + 2];
    struct stat st;
    if (e->d_type == DT_REG)
        return true;
    if (e->d_type == DT_DIR)
        return false;
    /* a link or an unknown type: look at what it is */
    if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full)
        return false;
    return stat(full, &st) == 0 && S_ISREG(st.st_mode);
}

static void review_sample(void)
{
    const char *dir = ROOT SAMPLE_DIR;
    char rel[sizeof SAMPLE_DIR + MAX_NAME + 1];
    struct dirent *e;
    int err = 0;
    DIR *d = opendir(dir);
    if (!d) {
        error_errno(SAMPLE_DIR, "cannot list", errno);
        return;
    }
    for (long k = 0; k < MAX_DIR_SCAN; k++) {
        errno = 0; /* readdir's NULL is the end, or an error if errno is set */
        e = readdir(d);
        if (!e) {
            err = errno;
            break;
        }
        if (e->d_name[0] != '.' && is_regular(dir, e))
            keep_name(e->d_name);
    }
    (void)closedir(d); /* a failed close of a listing loses nothing */
    if (err != 0)
        error_errno(SAMPLE_DIR, "listing stopped early", err);
    for (size_t i = 0; i < nnames; i++) {
        if (snprintf(rel, sizeof rel, SAMPLE_DIR "/%s", names[i]) >= (int)sizeof rel)
            continue;
        review_file(rel);
    }
}

/* ---- main ---- */

/* REVIEW_MAX_LINE: digits only, LINE_MIN..LINE_MAX, else the default */
static void read_max_line(void)
{
    const char *v = getenv("REVIEW_MAX_LINE");
    long x = 0;
    if (!v || !*v || strlen(v) > 4)
        return;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            return;
        x = x * 10 + (*c - '0');
    }
    if (x >= LINE_MIN && x <= LINE_MAX)
        max_line = (int)x;
}

static void summary(void)
{
    out_str("],\"summary\":{\"files\":");
    out_num(total.files);
    out_str(",\"findings\":");
    out_num(total.findings);
    out_str(",\"high\":");
    out_num(total.by_sev[SEV_HIGH]);
    out_str(",\"medium\":");
    out_num(total.by_sev[SEV_MEDIUM]);
    out_str(",\"low\":");
    out_num(total.by_sev[SEV_LOW]);
    out_str("}}\n");
}

int main(void)
{
    static struct request q;
    const char *in = getenv("SKILL_INPUT");
    struct reader r = {0};
    size_t n;
    read_max_line();
    if (!in || !*in)
        in = "{}";
    n = strnlen(in, INPUT_MAX_BYTES + 1);
    if (n > INPUT_MAX_BYTES)
        return bad_input("input larger than 64 KiB", 0);
    r.s = (const unsigned char *)in;
    r.n = n;
    if (!parse_request(&r, &q))
        return bad_input(r.err, r.err_at);
    out_str("{\"skill\":\"" SKILL_NAME "\",\"files\":[");
    if (q.has_code)
        review_text(q.has_file ? q.file : "input", (const unsigned char *)q.code, q.code_len);
    else if (q.has_files)
        for (size_t i = 0; i < q.nfiles; i++)
            review_path(q.files[i]);
    else
        review_sample();
    summary();
    if (fflush(stdout) != 0 || out_failed)
        return 1;
    return 0;
}
