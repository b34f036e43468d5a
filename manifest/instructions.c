/* What a skill's text tells an agent to run, and what it hides: see
 * instructions.h. Each line is read as it is and as an ASCII-lower-cased
 * copy (the patterns are matched on the copy, excerpts and URLs taken from
 * the original); a line ending in '\' is read with the lines it continues
 * onto, as the shell would. */
#include "instructions.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>

#include "skill.h"
#include "urlhost.h"
#include "util.h"

#define KIND_ROW(id, name, level, desc) {name, desc, level},
static const struct {
    const char *name, *desc;
    enum sg_find_level level;
} kinds[] = {SG_FINDING_KINDS(KIND_ROW)};
#undef KIND_ROW

const char *sg_finding_kind_name(int kind)
{
    return kind >= 0 && kind < SG_FIND_NKINDS ? kinds[kind].name : "unknown";
}

const char *sg_finding_kind_desc(int kind)
{
    return kind >= 0 && kind < SG_FIND_NKINDS ? kinds[kind].desc : "";
}

enum sg_find_level sg_finding_kind_level(int kind)
{
    return kind >= 0 && kind < SG_FIND_NKINDS ? kinds[kind].level : SG_FIND_NOTE;
}

void sg_findings_free(struct sg_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].file);
        free(f->v[i].excerpt);
        free(f->v[i].decoded);
    }
    free(f->v);
    *f = (struct sg_findings){0};
}

/* ---- findings ---- */

/* The length of s[0..n) cut to at most max bytes at a code point's start,
 * and before any NUL. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
    const char *z = memchr(s, '\0', n);
    if (z)
        n = (size_t)(z - s);
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

/* s[0..n) capped at max bytes, "…" (3 bytes) ending what was cut. */
static char *capped_copy(const char *s, size_t n, size_t max)
{
    size_t k = utf8_cut(s, n, max);
    if (k == n || memchr(s, '\0', n) == s + k)
        return sg_xstrndup(s, k);
    k = utf8_cut(s, k, max - 3);
    char *out = sg_xmalloc(k + 4);
    memcpy(out, s, k);
    memcpy(out + k, "\xe2\x80\xa6", 4);
    return out;
}

/* What a line looks like in a finding: its text from where it starts (or
 * from a little before at when the line is long), at most
 * SG_FINDING_EXCERPT_MAX bytes. */
static char *excerpt_of(const char *line, size_t n, size_t at)
{
    size_t from = 0;
    while (from < n && (line[from] == ' ' || line[from] == '\t'))
        from++;
    if (at > from + 100 && n - from > SG_FINDING_EXCERPT_MAX) {
        from = at - 60;
        while (from < at && ((unsigned char)line[from] & 0xc0) == 0x80)
            from++;
        char *tail = capped_copy(line + from, n - from, SG_FINDING_EXCERPT_MAX - 3);
        char *out = sg_xasprintf("\xe2\x80\xa6%s", tail);
        free(tail);
        return out;
    }
    return capped_copy(line + from, n - from, SG_FINDING_EXCERPT_MAX);
}

static bool seen_on_line(const struct sg_findings *f, const char *file, int line, int kind)
{
    for (size_t i = f->n; i-- > 0;) {
        const struct sg_finding *g = &f->v[i];
        if (g->line != line || strcmp(g->file, file))
            return false;
        if (g->kind == kind)
            return true;
    }
    return false;
}

static void add_finding(struct sg_findings *f, int kind, const char *file, int line,
                        char *excerpt, const char *decoded, size_t dlen)
{
    if (seen_on_line(f, file, line, kind)) {
        free(excerpt);
        return;
    }
    if (f->n >= SG_FINDINGS_MAX) {
        f->dropped++;
        free(excerpt);
        return;
    }
    sg_grow(&f->v, &f->cap, f->n + 1, sizeof *f->v);
    f->v[f->n++] = (struct sg_finding){
        .kind = kind,
        .level = sg_finding_kind_level(kind),
        .file = sg_xstrdup(file),
        .line = line,
        .excerpt = excerpt,
        .decoded = decoded ? capped_copy(decoded, dlen, SG_FINDING_DECODED_MAX) : NULL,
    };
}

/* ---- one line ---- */

/* A line as read: raw bytes and their ASCII-lower-cased copy (same
 * offsets), its number, and whether the prose kinds apply. */
struct line {
    const char *raw, *lc;
    size_t n;
    int no;
    const char *file;
    bool prose;
    int depth; /* 0, or 1 inside text this reader decoded */
    const char *decoded; /* that text, for findings inside it */
    size_t dlen;
    struct sg_findings *out;
    const struct line *outer; /* the file's line, inside decoded text */
    const char *doc_lc;       /* the whole text, lower-cased, and where the line is */
    size_t doc_len, off;
};

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* The offset of word w in s[from..n) standing alone (not inside a longer
 * name: "sh" is not in "bash" nor "ssh", "curl" not in "libcurl"), or -1. A
 * word ending in a non-name character ("atob(") needs no right edge. */
static ssize_t find_word(const char *s, size_t n, const char *w, size_t from)
{
    size_t wl = strlen(w);
    for (size_t i = from; i + wl <= n; i++) {
        const char *p = memchr(s + i, w[0], n - i);
        if (!p)
            return -1;
        i = (size_t)(p - s);
        if (i + wl > n)
            return -1;
        if (memcmp(p, w, wl) || (i > 0 && (word_char(s[i - 1]) || s[i - 1] == '/')))
            continue;
        if (!word_char(w[wl - 1]) || i + wl == n || !word_char(s[i + wl]) ||
            (s[i + wl] == '.' && (i + wl + 1 == n || !isalnum((unsigned char)s[i + wl + 1]))))
            return (ssize_t)i;
    }
    return -1;
}

static bool has_word(const struct line *l, const char *w)
{
    return find_word(l->lc, l->n, w, 0) >= 0;
}

static bool has_text(const struct line *l, const char *t)
{
    return memmem(l->lc, l->n, t, strlen(t)) != NULL;
}

static const char *const interpreters[] = {
    "sh",   "bash", "zsh",  "dash",      "ksh",  "fish",       "ash",
    "perl", "ruby", "node", "php",       "pwsh", "powershell", "iex",
    "invoke-expression",    "osascript", "source", "python", "python2", "python3",
};

/* Is s[0..n) the name of a shell or interpreter (a path to one too:
 * /bin/bash, /usr/bin/python3.11)? */
static bool is_interpreter(const char *s, size_t n)
{
    const char *slash = memrchr(s, '/', n);
    if (slash) {
        n -= (size_t)(slash + 1 - s);
        s = slash + 1;
    }
    while (n > 0 && (s[n - 1] == '"' || s[n - 1] == '\'' || s[n - 1] == ')'))
        n--;
    if (n > 6 && !memcmp(s, "python", 6) && strspn(s + 6, "0123456789.") >= n - 6)
        return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(interpreters); i++)
        if (strlen(interpreters[i]) == n && !memcmp(s, interpreters[i], n))
            return true;
    return false;
}

static size_t skip_blank(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

static size_t token_end(const char *s, size_t n, size_t i)
{
    while (i < n && !strchr(" \t;|&`)", s[i]))
        i++;
    return i;
}

/* An interpreter's arguments from i: does it run what it reads on stdin?
 * "python3 -c CODE", "python3 -m json.tool", "perl -e", "node x.js" run
 * their own code and read the pipe as data; "bash", "sh -s --", "python3 -"
 * run the pipe. */
static bool reads_code(const char *s, size_t n, size_t i)
{
    static const char *const own[] = {"-c", "-m", "-e", "-p", "-r", "--eval", "--command"};
    for (;;) {
        i = skip_blank(s, n, i);
        size_t e = token_end(s, n, i);
        if (e == i || s[i] == '#' || (e - i == 2 && !memcmp(s + i, "--", 2)) ||
            (e - i == 1 && s[i] == '-') || (e - i == 10 && !memcmp(s + i, "/dev/stdin", 10)))
            return true;
        for (size_t k = 0; k < SG_ARRAY_LEN(own); k++)
            if (e - i == strlen(own[k]) && !memcmp(s + i, own[k], e - i))
                return false;
        if (s[i] != '-' && s[i] != '"' && s[i] != '\'')
            return false; /* a script to run, reading the pipe as its input */
        i = e;
    }
}

/* The command a pipe at i feeds: past sudo and its options, env and
 * NAME=value words, exec, nohup. Is it a shell or interpreter? */
static bool command_runs_interpreter(const char *s, size_t n, size_t i, size_t *script)
{
    static const char *const prefixes[] = {"sudo", "env", "exec", "nohup", "command", "time",
                                           "doas"};
    for (int words = 0; words < 12; words++) {
        i = skip_blank(s, n, i);
        size_t e = token_end(s, n, i);
        if (e == i)
            return false;
        bool skip = s[i] == '-' || memchr(s + i, '=', e - i) != NULL;
        for (size_t k = 0; !skip && k < SG_ARRAY_LEN(prefixes); k++)
            skip = e - i == strlen(prefixes[k]) && !memcmp(s + i, prefixes[k], e - i);
        if (!skip)
            return is_interpreter(s + i, e - i) &&
                   (script ? (*script = skip_blank(s, n, e)) < n : reads_code(s, n, e));
        i = e;
    }
    return false;
}

static bool pipe_feeds_interpreter(const char *s, size_t n, size_t i)
{
    return command_runs_interpreter(s, n, i, NULL);
}

/* A '|' (not "||") at or after from that feeds a shell or interpreter. */
static bool piped_to_interpreter(const char *s, size_t n, size_t from)
{
    for (size_t i = from; i < n; i++)
        if (s[i] == '|' && (i + 1 == n || s[i + 1] != '|') && (i == 0 || s[i - 1] != '|') &&
            pipe_feeds_interpreter(s, n, i + 1))
            return true;
    return false;
}

/* The word before offset i (the command a "<(" is an argument of). */
static bool word_before_is_interpreter(const char *s, size_t i)
{
    size_t e = i;
    while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
        e--;
    size_t b = e;
    while (b > 0 && !strchr(" \t;|&(`\"'", s[b - 1]))
        b--;
    return e > b && (is_interpreter(s + b, e - b) || (e - b == 1 && s[b] == '.'));
}

/* Text a shell runs as a command of its own: "bash <(X)", "source <(X)",
 * "eval $(X)", "sh -c \"$(X)\"", "python3 -c \"$(X)\"", `iex (X)`; true
 * when X (from at on) is what is run that way. */
static bool substitution_runs(const struct line *l, size_t at)
{
    const char *s = l->lc;
    for (size_t i = 0; i + 1 < l->n && i < at; i++) {
        bool proc = s[i] == '<' && s[i + 1] == '(';
        bool here = i + 2 < l->n && !memcmp(s + i, "<<<", 3);
        if (here && word_before_is_interpreter(s, i))
            return true; /* "bash <<< $(X)": X's output is the script */
        bool cmd = (s[i] == '$' && s[i + 1] == '(') || s[i] == '`';
        if (proc && word_before_is_interpreter(s, i))
            return true;
        if (cmd && find_word(s, i, "eval", 0) >= 0)
            return true;
        ssize_t c = find_word(s, i, "-c", 0);
        if (cmd && c > 0 && word_before_is_interpreter(s, (size_t)c))
            return true;
    }
    return false;
}

/* ---- encoded text ---- */

static bool b64_char(char c)
{
    return isalnum((unsigned char)c) || c == '+' || c == '/' || c == '-' || c == '_';
}

/* The base64 run at s[i..n): its length, '=' padding included. */
static size_t b64_run(const char *s, size_t n, size_t i)
{
    size_t k = i;
    while (k < n && b64_char(s[k]))
        k++;
    while (k < n && k - i > 0 && s[k] == '=' && k - i < SIZE_MAX)
        k++;
    return k - i;
}

/* Text a person would read: printable UTF-8, tabs and line breaks. */
static bool is_text(const char *s, size_t n)
{
    if (n == 0 || !sg_utf8_valid(s, n, NULL))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
            return false;
    }
    return true;
}

/* The first bytes (up to SG_FINDING_DECODED_MAX + 3) of the base64 (or
 * base64url) text s[0..n), or NULL when it is not base64. */
static char *b64_decode(const char *s, size_t n, size_t *outlen)
{
    unsigned char in[4 * ((SG_FINDING_DECODED_MAX + 5) / 3) + 4];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < sizeof in && s[i] != '='; i++)
        in[k++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : (unsigned char)s[i];
    if (k % 4 == 1)
        k--;
    size_t pads = (4 - k % 4) % 4;
    for (size_t p = 0; p < pads; p++)
        in[k++] = '=';
    if (k == 0)
        return NULL;
    unsigned char *out = sg_xmalloc(k / 4 * 3 + 1);
    int r = EVP_DecodeBlock(out, in, (int)k);
    if (r < 0 || (size_t)r < pads) {
        free(out);
        return NULL;
    }
    *outlen = (size_t)r - pads;
    out[*outlen] = '\0';
    return (char *)out;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *hex_decode(const char *lc, size_t n, size_t *outlen)
{
    size_t max = n / 2 < SG_FINDING_DECODED_MAX + 3 ? n / 2 : SG_FINDING_DECODED_MAX + 3;
    char *out = sg_xmalloc(max + 1);
    for (size_t i = 0; i < max; i++)
        out[i] = (char)(hexval(lc[2 * i]) << 4 | hexval(lc[2 * i + 1]));
    out[max] = '\0';
    *outlen = max;
    return out;
}

/* The longest run in the line (base64, or hex for xxd -r and the like)
 * that decodes to text: what a decode_run line runs. NULL when none. */
static char *payload_of(const struct line *l, bool hex, size_t *outlen)
{
    char *best = NULL;
    size_t best_run = 0;
    int tries = 0;
    for (size_t i = 0; i < l->n && tries < 16;) {
        size_t r = 0;
        if (hex)
            while (i + r < l->n && hexval(l->lc[i + r]) >= 0)
                r++;
        else
            r = b64_run(l->raw, l->n, i);
        if (r < 8 || r <= best_run) {
            i += r ? r : 1;
            continue;
        }
        tries++;
        size_t dl = 0;
        char *d = hex ? hex_decode(l->lc + i, r, &dl) : b64_decode(l->raw + i, r, &dl);
        if (d && is_text(d, dl)) {
            free(best);
            best = d, best_run = r, *outlen = dl;
        } else {
            free(d);
        }
        i += r;
    }
    return best;
}

static void scan_line(const struct line *l);

/* A finding on this line; text this reader decoded (dec) is read again
 * for what it runs and where it reaches, once. */
static void found(const struct line *l, int kind, size_t at, const char *dec, size_t dlen)
{
    const struct line *top = l->depth ? l->outer : l;
    if (l->depth)
        dec = l->decoded, dlen = l->dlen;
    char *ex = excerpt_of(top->raw, top->n, l->depth ? 0 : at);
    add_finding(top->out, kind, top->file, top->no, ex, dec, dlen);
}

/* Decoded text's own lines, read as if they stood on l's line. */
static void scan_decoded(const struct line *l, const char *dec, size_t dlen)
{
    if (l->depth || !dec)
        return;
    char *lc = sg_xstrndup(dec, dlen);
    for (size_t i = 0; i < dlen; i++)
        lc[i] = (char)tolower((unsigned char)lc[i]);
    for (size_t s = 0; s < dlen;) {
        const char *nl = memchr(dec + s, '\n', dlen - s);
        size_t e = nl ? (size_t)(nl - dec) : dlen;
        struct line in = {.raw = dec + s, .lc = lc + s, .n = e - s, .no = l->no,
                          .file = l->file, .depth = 1, .decoded = dec, .dlen = dlen,
                          .out = l->out, .outer = l};
        scan_line(&in);
        s = e + 1;
    }
    free(lc);
}

/* ---- commands: download_run, decode_run ---- */

static const char *const downloaders[] = {
    "curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring",
    "net.webclient", "aria2c", "urlopen(", "requests.get(", "httpx.get(", "fetch(",
};

/* The first and last offsets of any word of list in the line. */
static bool find_any(const struct line *l, const char *const *list, size_t nlist, size_t *first,
                     size_t *last)
{
    bool any = false;
    for (size_t k = 0; k < nlist; k++) {
        ssize_t a = find_word(l->lc, l->n, list[k], 0);
        if (a < 0)
            continue;
        ssize_t b = a, c;
        while ((c = find_word(l->lc, l->n, list[k], (size_t)b + 1)) >= 0)
            b = c;
        if (!any || (size_t)a < *first)
            *first = (size_t)a;
        if (!any || (size_t)b > *last)
            *last = (size_t)b;
        any = true;
    }
    return any;
}

/* Code that runs a string: eval(, exec(, os.system(, subprocess. */
static bool code_runs(const struct line *l)
{
    return has_text(l, "exec(") || has_text(l, "eval(") || has_text(l, "system(") ||
           has_text(l, "popen(") || has_text(l, "subprocess.") || has_text(l, "new function(");
}

/* The earliest offset of "sh -c $(...)"-style runs: a pipe, a process or
 * command substitution, iex, eval. */
static bool runs_text(const struct line *l, size_t first, size_t last)
{
    return piped_to_interpreter(l->lc, l->n, first) || substitution_runs(l, last + 1) ||
           has_word(l, "iex") || has_word(l, "invoke-expression");
}

/* A long line (minified code) read only around at: what runs a download
 * or a decoding says so next to it, not 50 KiB away. */
#define NEAR 256
static struct line near(const struct line *l, size_t at)
{
    struct line w = *l;
    if (l->n <= 4 * NEAR)
        return w;
    size_t b = at > NEAR ? at - NEAR : 0, e = at + NEAR < l->n ? at + NEAR : l->n;
    w.raw += b, w.lc += b, w.n = e - b;
    return w;
}

/* "> f && bash f", "-o f; sh f" after at: the file the line wrote (a
 * decoding or a download) run next by a shell or interpreter. */
static bool then_runs(const struct line *l, size_t at)
{
    for (size_t i = at; i + 1 < l->n; i++) {
        if (!((l->lc[i] == '&' && l->lc[i + 1] == '&') || l->lc[i] == ';'))
            continue;
        size_t sc = 0;
        if (!command_runs_interpreter(l->lc, l->n, i + (l->lc[i] == ';' ? 1 : 2), &sc))
            continue;
        size_t e = token_end(l->lc, l->n, sc);
        if (e > sc && l->lc[sc] != '-' && memmem(l->lc + at, i - at, l->lc + sc, e - sc))
            return true;
    }
    return false;
}

static void check_download_run(const struct line *whole)
{
    size_t first = 0, last = 0;
    if (!find_any(whole, downloaders, SG_ARRAY_LEN(downloaders), &first, &last))
        return;
    struct line nl = near(whole, first);
    const struct line *l = &nl;
    if (l->n != whole->n) {
        first -= (size_t)(l->raw - whole->raw);
        last = first;
    }
    bool code = (has_text(l, "urlopen(") || has_text(l, "requests.get(") ||
                 has_text(l, "httpx.get(") || has_text(l, "fetch(")) &&
                (has_text(l, "exec(") || has_text(l, "eval("));
    if (code || runs_text(l, first, last) || then_runs(l, first))
        found(l, SG_FIND_DOWNLOAD_RUN, first, NULL, 0);
}

/* A decoding command word at w (base64, xxd, openssl) with the option that
 * makes it decode among its arguments, up to the end of its command. */
static bool decodes_at(const char *s, size_t n, size_t w, char opt)
{
    size_t i = w;
    while (i < n && !strchr("|;&)", s[i])) {
        size_t next = skip_blank(s, n, token_end(s, n, i));
        i = next > i ? next : i + 1;
        if (i + 1 < n && s[i] == '-' && s[i + 1] != '-') {
            size_t e = token_end(s, n, i + 1);
            if (e - i <= 4 && memchr(s + i + 1, opt, e - (i + 1)) != NULL)
                return true;
        } else if (opt == 'd' && i + 8 <= n && !memcmp(s + i, "--decode", 8)) {
            return true;
        } else if (opt == 'r' && i + 8 <= n && !memcmp(s + i, "--revert", 8)) {
            return true;
        }
    }
    return false;
}

static const char *const decode_calls[] = {
    "b64decode",  "frombase64string", "atob(",     "certutil -decode", "decodebytes(",
    "'base64')",  "\"base64\")",      "base64.decode", "codecs.decode(",
};
static const char *const hex_calls[] = {"unhexlify(", "fromhex(", "'hex')", "\"hex\")"};

/* Where the line decodes something (-1 when it does not); *hex when the
 * encoding is hex. */
static ssize_t decoder_at(const struct line *l, bool *hex)
{
    static const struct {
        const char *word;
        char opt;
        bool hex;
    } cmds[] = {{"base64", 'd', false}, {"base32", 'd', false}, {"openssl", 'd', false},
                {"xxd", 'r', true}};
    *hex = false;
    for (size_t k = 0; k < SG_ARRAY_LEN(cmds); k++)
        for (ssize_t w = find_word(l->lc, l->n, cmds[k].word, 0); w >= 0;
             w = find_word(l->lc, l->n, cmds[k].word, (size_t)w + 1))
            if (decodes_at(l->lc, l->n, (size_t)w, cmds[k].opt))
                return *hex = cmds[k].hex, w;
    for (size_t k = 0; k < SG_ARRAY_LEN(decode_calls); k++) {
        const char *p = memmem(l->lc, l->n, decode_calls[k], strlen(decode_calls[k]));
        if (p)
            return p - l->lc;
    }
    for (size_t k = 0; k < SG_ARRAY_LEN(hex_calls); k++) {
        const char *p = memmem(l->lc, l->n, hex_calls[k], strlen(hex_calls[k]));
        if (p)
            return *hex = true, p - l->lc;
    }
    return -1;
}

static void check_decode_run(const struct line *whole)
{
    bool hex;
    ssize_t d = decoder_at(whole, &hex);
    if (d < 0)
        return;
    struct line nl = near(whole, (size_t)d);
    const struct line *l = &nl;
    d -= l->raw - whole->raw;
    if (!(runs_text(l, (size_t)d, l->n ? l->n - 1 : 0) || code_runs(l) ||
                   then_runs(l, (size_t)d)))
        return;
    size_t dl = 0;
    cleanup_free char *dec = payload_of(l, hex, &dl);
    found(l, SG_FIND_DECODE_RUN, (size_t)d, dec, dl);
    scan_decoded(l, dec, dl);
}

/* ---- URLs: raw_ip_url, paste_site ---- */

static bool v4_public(const unsigned char *a)
{
    return !(a[0] == 0 || a[0] == 10 || a[0] == 127 || a[0] >= 224 ||
             (a[0] == 169 && a[1] == 254) || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
             (a[0] == 192 && a[1] == 168) || (a[0] == 100 && (a[1] & 0xc0) == 64) ||
             (a[0] == 192 && a[1] == 0 && a[2] == 2) ||
             (a[0] == 198 && a[1] == 51 && a[2] == 100) ||
             (a[0] == 203 && a[1] == 0 && a[2] == 113) || (a[0] == 198 && (a[1] & 0xfe) == 18));
}

/* host:port as sg_url_host gives it: a numeric address on the internet
 * (not loopback, private, link-local, shared or documentation space)? */
static bool host_is_public_ip(const char *hp)
{
    unsigned char a[16];
    char host[64];
    const char *colon = strrchr(hp, ':');
    size_t n = colon ? (size_t)(colon - hp) : strlen(hp);
    if (n >= sizeof host)
        return false;
    memcpy(host, hp, n);
    host[n] = '\0';
    if (inet_pton(AF_INET, host, a) == 1)
        return v4_public(a);
    if (n < 2 || host[0] != '[' || host[n - 1] != ']')
        return false;
    host[n - 1] = '\0';
    if (inet_pton(AF_INET6, host + 1, a) != 1)
        return false;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(a, mapped, 12))
        return v4_public(a + 12);
    bool zero = true;
    for (int i = 0; i < 15; i++)
        zero = zero && a[i] == 0;
    return !(zero || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || (a[0] & 0xfe) == 0xfc ||
             a[0] == 0xff || (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8));
}

static const char *const paste_hosts[] = {
    "glot.io",       "pastebin.com",  "rentry.co",     "rentry.org",   "hastebin.com",
    "paste.ee",      "dpaste.org",    "dpaste.com",    "paste.rs",     "termbin.com",
    "ix.io",         "sprunge.us",    "controlc.com",  "justpaste.it", "privatebin.net",
    "ghostbin.com",  "ghostbin.co",   "pastes.io",     "paste.gg",     "bpa.st",
    "pastie.org",    "paste2.org",    "0bin.net",      "textbin.net",  "snippet.host",
    "pastebin.pl",   "hst.sh",        "paste.c-net.org", "transfer.sh", "0x0.st",
};

static bool host_is_paste(const char *hp)
{
    const char *colon = strrchr(hp, ':');
    size_t n = colon ? (size_t)(colon - hp) : strlen(hp);
    for (size_t k = 0; k < SG_ARRAY_LEN(paste_hosts); k++) {
        size_t pl = strlen(paste_hosts[k]);
        if (n >= pl && !memcmp(hp + n - pl, paste_hosts[k], pl) &&
            (n == pl || hp[n - pl - 1] == '.'))
            return true;
    }
    return false;
}

static void check_url(const struct line *l, size_t at, size_t end)
{
    cleanup_free char *hp = NULL;
    const char *why;
    if (sg_url_host(l->raw + at, end - at, &hp, &why) < 0)
        return;
    if (host_is_public_ip(hp))
        found(l, SG_FIND_RAW_IP_URL, at, NULL, 0);
    if (host_is_paste(hp))
        found(l, SG_FIND_PASTE_SITE, at, NULL, 0);
}

static size_t url_end(const char *s, size_t n, size_t i)
{
    while (i < n && !strchr(" \t\r\"'`<>)]|{}\\", s[i]) && (unsigned char)s[i] > 0x20)
        i++;
    return i;
}

/* Every http(s) URL; and after curl or wget, an address with no scheme
 * ("curl 91.92.242.30/x"), read as http. */
static void check_urls(const struct line *l)
{
    for (const char *p = l->lc; (p = memmem(p, l->n - (size_t)(p - l->lc), "://", 3));) {
        size_t i = (size_t)(p - l->lc);
        size_t b = i;
        while (b > 0 && isalpha((unsigned char)l->lc[b - 1]))
            b--;
        p += 3;
        size_t h = i + 3; /* an IPv6 literal's brackets are the URL's */
        const char *close = h < l->n && l->raw[h] == '[' ? memchr(l->raw + h, ']', l->n - h) : NULL;
        if (i - b == 4 || i - b == 5)
            check_url(l, b, url_end(l->raw, l->n, close ? (size_t)(close - l->raw) + 1 : h));
    }
    size_t first = 0, last = 0;
    if (!find_any(l, downloaders, 2, &first, &last))
        return;
    for (size_t i = first; i < l->n; i++) {
        if (!isdigit((unsigned char)l->lc[i]) || (i > 0 && !strchr(" \t'\"", l->lc[i - 1])))
            continue;
        size_t e = url_end(l->raw, l->n, i), h = i, dots = 0;
        for (; h < e && l->raw[h] != '/' && l->raw[h] != ':'; h++)
            dots += l->raw[h] == '.';
        if (dots == 3 && e - i < SG_URL_MAX) {
            cleanup_free char *u = sg_xasprintf("http://%.*s", (int)(e - i), l->raw + i);
            cleanup_free char *hp = NULL;
            const char *why;
            if (sg_url_host(u, strlen(u), &hp, &why) == 0 && host_is_public_ip(hp))
                found(l, SG_FIND_RAW_IP_URL, i, NULL, 0);
        }
        i = e;
    }
}

/* ---- prose: encoded_blob, binary_download, password_archive ---- */

/* The bytes of the lines around l (before lines above, after below). */
static void window(const struct line *l, int before, int after, const char **w, size_t *wn)
{
    size_t b = l->off, e = l->off;
    for (int k = 0; k <= before && b > 0; k++) {
        const char *p = memrchr(l->doc_lc, '\n', b - 1);
        b = p ? (size_t)(p - l->doc_lc) + 1 : 0;
        if (!p)
            break;
    }
    for (int k = 0; k <= after && e < l->doc_len; k++) {
        const char *p = memchr(l->doc_lc + e, '\n', l->doc_len - e);
        e = p ? (size_t)(p - l->doc_lc) + 1 : l->doc_len;
    }
    *w = l->doc_lc + b;
    *wn = e - b;
}

static bool window_has(const struct line *l, int before, int after, const char *const *words,
                       size_t nwords)
{
    const char *w;
    size_t wn;
    window(l, before, after, &w, &wn);
    for (size_t k = 0; k < nwords; k++)
        if (find_word(w, wn, words[k], 0) >= 0 || (strchr(words[k], ' ') &&
                                                    memmem(w, wn, words[k], strlen(words[k]))))
            return true;
    return false;
}

/* An image or font: what a long base64 run honestly is. */
static bool media_magic(const char *d, size_t n)
{
    static const char *const magic[] = {"\x89PNG", "\xff\xd8\xff", "GIF8", "wOFF", "wOF2",
                                        "<svg", "<?xml", "RIFF", "\x00\x00\x01\x00", "OTTO"};
    for (size_t k = 0; k < SG_ARRAY_LEN(magic); k++) {
        size_t ml = k == 8 ? 4 : strlen(magic[k]);
        if (n >= ml && !memcmp(d, magic[k], ml))
            return true;
    }
    return false;
}

static bool blob_worth_saying(const struct line *l, size_t i, size_t r)
{
    bool up = false, low = false, dig = false, nonhex = false;
    for (size_t k = i; k < i + r; k++) {
        char c = l->raw[k];
        up |= isupper((unsigned char)c), low |= islower((unsigned char)c);
        dig |= isdigit((unsigned char)c), nonhex |= hexval(l->lc[k]) < 0 && c != '=';
    }
    if (!(up && low && dig && nonhex))
        return false; /* a hash, a word run together, a path */
    size_t from = i > 64 ? i - 64 : 0;
    const char *lc = l->lc + from;
    size_t wn = i - from;
    return !((memmem(lc, wn, "data:image/", 11) || memmem(lc, wn, "data:font/", 10)) &&
             wn >= 7 && !memcmp(l->lc + i - 7, "base64,", 7));
}

static void check_blobs(const struct line *l)
{
    for (size_t i = 0; i < l->n;) {
        size_t r = b64_run(l->raw, l->n, i);
        /* a run with '-' or '_' is a token or a key (base64url), not text
         * encoded to be decoded */
        bool url = memchr(l->raw + i, '-', r) || memchr(l->raw + i, '_', r);
        if (r < 100 || url || !blob_worth_saying(l, i, r)) {
            i += r ? r : 1;
            continue;
        }
        size_t dl = 0;
        cleanup_free char *dec = b64_decode(l->raw + i, r, &dl);
        if (!dec || !media_magic(dec, dl)) {
            bool text = dec && is_text(dec, dl);
            found(l, SG_FIND_ENCODED_BLOB, i, text ? dec : NULL, dl);
            if (text)
                scan_decoded(l, dec, dl);
        }
        i += r;
    }
}

/* Archives and installers; from SCRIPT_EXTS_FROM on, scripts, which a
 * skill names for honest reasons unless it downloads them from a URL. */
static const char *const binary_exts[] = {
    ".zip", ".exe", ".dmg", ".pkg", ".msi", ".appimage", ".tar.gz", ".tgz", ".tar.xz", ".7z",
    ".rar", ".deb", ".rpm", ".jar", ".apk", ".scr", ".iso",
    ".sh", ".bin", ".bat", ".ps1", ".run", ".command", ".vbs",
};
#define SCRIPT_EXTS_FROM 17

/* A host kept for documentation (RFC 2606, 6761): example.com, *.test. */
static bool example_host(const char *h, size_t n)
{
    static const char *const ends[] = {"example.com", "example.org", "example.net", ".example",
                                       ".test", ".invalid", "localhost"};
    const char *at = memrchr(h, '@', n);
    if (at)
        n -= (size_t)(at + 1 - h), h = at + 1;
    const char *colon = memchr(h, ':', n);
    n = colon ? (size_t)(colon - h) : n;
    for (size_t k = 0; k < SG_ARRAY_LEN(ends); k++) {
        size_t el = strlen(ends[k]);
        if (n >= el && !memcmp(h + n - el, ends[k], el) &&
            (n == el || ends[k][0] == '.' || h[n - el - 1] == '.'))
            return true;
    }
    return false;
}

/* A name (a URL's path, or a file name) ending as an executable or an
 * archive does, from i on; where it starts, or -1. */
static ssize_t artifact_at(const struct line *l)
{
    bool says_download = has_word(l, "download") || has_word(l, "downloads") ||
                         find_any(l, downloaders, SG_ARRAY_LEN(downloaders), &(size_t){0},
                                  &(size_t){0});
    for (size_t i = 0; i < l->n;) {
        size_t e = url_end(l->lc, l->n, i);
        if (e == i) {
            i++;
            continue;
        }
        const char *q = memchr(l->lc + i, '?', e - i);
        const char *h = memchr(l->lc + i, '#', e - i);
        size_t pe = q ? (size_t)(q - l->lc) : e;
        pe = h && (size_t)(h - l->lc) < pe ? (size_t)(h - l->lc) : pe;
        while (pe > i && strchr(".,:;*_", l->lc[pe - 1]))
            pe--;
        const char *sep = memmem(l->lc + i, e - i, "://", 3);
        const char *path = sep && l->lc + pe > sep + 3
                               ? memchr(sep + 3, '/', (size_t)(l->lc + pe - (sep + 3)))
                               : NULL;
        if (path && example_host(sep + 3, (size_t)(path - sep - 3)))
            path = NULL; /* documentation: not a download */
        size_t from = path ? (size_t)(path - l->lc) : i;
        for (size_t k = 0; (path || (!sep && says_download)) && k < SG_ARRAY_LEN(binary_exts);
             k++) {
            size_t xl = strlen(binary_exts[k]);
            if (pe - from > xl && !memcmp(l->lc + pe - xl, binary_exts[k], xl) &&
                l->lc[pe - xl - 1] != '/' && (path || k < SCRIPT_EXTS_FROM))
                return (ssize_t)i;
        }
        i = e;
    }
    return -1;
}

static void check_binary_download(const struct line *l)
{
    static const char *const run_words[] = {
        "chmod", "xattr", "./", "open", "run", "execute", "launch", "double-click",
        "install", "prerequisite", "prerequisites", "required", "requirement", "unzip",
        "extract", "start-process", "bash", "sh", "sudo", "setup",
    };
    if (seen_on_line(l->out, l->file, l->no, SG_FIND_DOWNLOAD_RUN) || has_text(l, "-x post"))
        return; /* the same download, said once; or a request to an API */
    ssize_t a = artifact_at(l);
    if (a >= 0 && window_has(l, 3, 6, run_words, SG_ARRAY_LEN(run_words)))
        found(l, SG_FIND_BINARY_DOWNLOAD, (size_t)a, NULL, 0);
}

/* "password: openclaw", "pass = 1234", "password is `x`": a password the
 * text gives (a word after the keyword and a ':' '=' or "is"). */
static ssize_t password_given(const struct line *l)
{
    static const char *const keys[] = {"password", "passwd", "passcode", "pass", "pwd"};
    for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++)
        for (ssize_t w = find_word(l->lc, l->n, keys[k], 0); w >= 0;
             w = find_word(l->lc, l->n, keys[k], (size_t)w + 1)) {
            size_t i = (size_t)w + strlen(keys[k]);
            while (i < l->n && strchr(" *_)", l->lc[i]))
                i++;
            if (i + 3 < l->n && !memcmp(l->lc + i, "is ", 3) && k != 3)
                i += 3;
            else if (i < l->n && (l->lc[i] == ':' || l->lc[i] == '='))
                i++;
            else
                continue;
            while (i < l->n && strchr(" *_", l->lc[i]))
                i++;
            bool quoted = i < l->n && l->lc[i] && strchr("`'\"", l->lc[i]);
            while (i < l->n && strchr("`'\"", l->lc[i]))
                i++;
            size_t e = i;
            while (e < l->n && !strchr(" \t*`'\",;)", l->lc[e]))
                e++;
            /* a word that is the password, not the start of a sentence
             * ("password: at least 12 characters") */
            bool alone = e == l->n || strchr("*`'\",;)", l->lc[e]) ||
                         (l->lc[e] == '.' && (e + 1 == l->n || l->lc[e + 1] == ' '));
            if (e - i >= 2 && (quoted || alone))
                return w;
        }
    return -1;
}

static void check_password_archive(const struct line *l)
{
    static const char *const archives[] = {"zip", "7z", "rar", "archive", "unzip"};
    const char *p7 = memmem(l->lc, l->n, "7z", 2);
    const char *uz = memmem(l->raw, l->n, "unzip -P", 8);
    if (uz || (p7 && memmem(p7, l->n - (size_t)(p7 - l->lc), " -p", 3))) {
        found(l, SG_FIND_PASSWORD_ARCHIVE, uz ? (size_t)(uz - l->raw) : (size_t)(p7 - l->lc),
              NULL, 0);
        return;
    }
    ssize_t w = password_given(l);
    const char *wd;
    size_t wn;
    window(l, 2, 2, &wd, &wn);
    bool archive = memmem(wd, wn, ".zip", 4) || memmem(wd, wn, ".7z", 3) ||
                   memmem(wd, wn, ".rar", 4) ||
                   window_has(l, 2, 2, archives, SG_ARRAY_LEN(archives));
    if (w >= 0 && archive)
        found(l, SG_FIND_PASSWORD_ARCHIVE, (size_t)w, NULL, 0);
}

/* ---- hidden Unicode: hidden_text, bidi_control, zero_width ---- */

static unsigned cp_at(const struct line *l, size_t i, size_t *len)
{
    unsigned cp = 0;
    *len = sg_utf8_decode((const unsigned char *)l->raw + i, l->n - i, &cp);
    if (*len == 0)
        *len = 1, cp = 0xfffd;
    return cp;
}

/* A ZWJ or ZWNJ between two symbols (an emoji sequence: 👨‍💻) or between
 * letters of a script that writes with them (Persian, Indic): honest. */
static bool joiner_in_sequence(unsigned prev, unsigned next)
{
    return (prev >= 0x0600 || prev == 0xfe0f) && next >= 0x0600;
}

/* Tag characters after a black flag that spell a region and end with
 * CANCEL TAG (🏴 g b e n g): a flag, not hidden text. */
static bool flag_tags(const struct line *l, size_t i, unsigned prev, size_t *end)
{
    if (prev != 0x1f3f4)
        return false;
    for (int k = 0; k < 8 && i < l->n; k++) {
        size_t n;
        unsigned cp = cp_at(l, i, &n);
        i += n;
        if (cp == 0xe007f)
            return *end = i, k >= 2;
        if (!(cp >= 0xe0030 && cp <= 0xe0039) && !(cp >= 0xe0061 && cp <= 0xe007a))
            return false;
    }
    return false;
}

/* A variation selector's byte, as "emoji smuggling" writes one byte in
 * each (U+FE00..FE0F: 0..15, U+E0100..E01EF: 16..255); -1 for another. */
static int vs_byte(unsigned cp)
{
    if (cp >= 0xfe00 && cp <= 0xfe0f)
        return (int)(cp - 0xfe00);
    if (cp >= 0xe0100 && cp <= 0xe01ef)
        return (int)(cp - 0xe0100 + 16);
    return -1;
}

/* Variation selectors two or more in a row: one picks how the character
 * before it is drawn (an emoji's, an ideograph's), a run of them draws
 * nothing and carries bytes a model reads (the tag characters' trick,
 * written in another block). The bytes of such runs go to out. */
struct vs_run {
    struct sg_buf run, out;
    size_t at, n, first;
    bool any;
};

static void vs_end(struct vs_run *v)
{
    if (v->n >= 2) {
        v->first = v->any ? v->first : v->at;
        v->any = true;
        sg_buf_append(&v->out, v->run.data ? v->run.data : "", v->run.len);
    }
    v->run.len = 0, v->n = 0;
}

static void check_hidden(const struct line *l, bool file_start)
{
    struct sg_buf hidden;
    sg_buf_init(&hidden, SG_FINDING_DECODED_MAX + 3);
    size_t hidden_at = 0;
    bool tags = false;
    unsigned prev = 0;
    struct vs_run vs = {0};
    sg_buf_init(&vs.run, SG_FINDING_DECODED_MAX + 3);
    sg_buf_init(&vs.out, SG_FINDING_DECODED_MAX + 3);
    for (size_t i = 0, n; i < l->n; i += n) {
        if ((unsigned char)l->raw[i] < 0x80) {
            n = 1, prev = (unsigned char)l->raw[i];
            vs_end(&vs);
            continue;
        }
        unsigned cp = cp_at(l, i, &n), next = 0;
        int b = vs_byte(cp);
        if (b >= 0) {
            char c = (char)b;
            vs.at = vs.n ? vs.at : i;
            vs.n++;
            if (b) /* never a NUL in a finding's text */
                sg_buf_append(&vs.run, &c, 1);
            prev = cp;
            continue;
        }
        vs_end(&vs);
        size_t nn, flag_end;
        if (i + n < l->n)
            next = cp_at(l, i + n, &nn);
        if (cp >= 0xe0000 && cp <= 0xe007f && flag_tags(l, i, prev, &flag_end)) {
            n = flag_end - i;
        } else if (cp >= 0xe0000 && cp <= 0xe007f) {
            char c = (char)(cp - 0xe0000);
            hidden_at = tags ? hidden_at : i;
            tags = true;
            if (cp >= 0xe0020 && cp < 0xe007f)
                sg_buf_append(&hidden, &c, 1);
        } else if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
            found(l, SG_FIND_BIDI_CONTROL, i, NULL, 0);
        } else if ((cp == 0x200b || cp == 0x2060 || (cp == 0xfeff && !(file_start && i == 0)) ||
                    ((cp == 0x200c || cp == 0x200d) && !joiner_in_sequence(prev, next)))) {
            found(l, SG_FIND_ZERO_WIDTH, i, NULL, 0);
        }
        prev = cp;
    }
    vs_end(&vs);
    if (tags)
        found(l, SG_FIND_HIDDEN_TEXT, hidden_at, hidden.data ? hidden.data : "", hidden.len);
    else if (vs.any)
        found(l, SG_FIND_HIDDEN_TEXT, vs.first, vs.out.data ? vs.out.data : "", vs.out.len);
    sg_buf_free(&hidden);
    sg_buf_free(&vs.run);
    sg_buf_free(&vs.out);
}

/* ---- lines, texts, files ---- */

/* Characters drawn as nothing that a reader (a model too) reads through:
 * "cu\u00adrl x | s\u200bh" is read as curl x | sh. */
static bool invisible(unsigned cp)
{
    return cp == 0x00ad || cp == 0x034f || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
           (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff || vs_byte(cp) >= 0 ||
           (cp >= 0xe0000 && cp <= 0xe007f);
}

/* l without its invisible characters, when it has any (NULL otherwise). */
static char *visible_copy(const struct line *l, size_t *n)
{
    char *out = NULL;
    size_t k = 0;
    for (size_t i = 0, len; i < l->n; i += len) {
        unsigned cp = (unsigned char)l->raw[i];
        len = 1;
        if (cp >= 0x80)
            cp = cp_at(l, i, &len);
        if (cp >= 0x80 && invisible(cp)) {
            if (!out) {
                out = sg_xmalloc(l->n + 1);
                memcpy(out, l->raw, i);
                k = i;
            }
            continue;
        }
        if (out)
            memcpy(out + k, l->raw + i, len), k += len;
    }
    if (out)
        out[k] = '\0', *n = k;
    return out;
}

static void scan_line(const struct line *l)
{
    check_download_run(l);
    check_decode_run(l);
    check_urls(l);
    if (l->prose) {
        check_blobs(l);
        check_binary_download(l);
        check_password_archive(l);
    }
    size_t vn = 0;
    cleanup_free char *vis = l->depth ? NULL : visible_copy(l, &vn);
    if (vis) /* read again as it reads, what it is then shown as the decoded text */
        scan_decoded(l, vis, vn);
}

/* A line that ends in '\' with the lines it continues onto (at most
 * JOIN_LINES of them, JOIN_MAX bytes), as the shell reads them. */
#define JOIN_LINES 10
#define JOIN_MAX 4096

static size_t line_end(const char *t, size_t len, size_t s)
{
    const char *nl = memchr(t + s, '\n', len - s);
    return nl ? (size_t)(nl - t) : len;
}

static size_t trim_cr(const char *t, size_t s, size_t e)
{
    return e > s && t[e - 1] == '\r' ? e - 1 : e;
}

/* Returns where the last line it read ends. */
static size_t scan_joined(struct line *l, const char *text, const char *lc, size_t len, size_t e)
{
    struct sg_buf raw, low;
    sg_buf_init(&raw, JOIN_MAX);
    sg_buf_init(&low, JOIN_MAX);
    size_t s = l->off, read_end = s;
    for (int k = 0; k < JOIN_LINES; k++) {
        size_t te = trim_cr(text, s, e);
        bool more = te > s && text[te - 1] == '\\' && e < len;
        size_t take = more ? te - s - 1 : te - s;
        if (sg_buf_append(&raw, text + s, take) < 0 || sg_buf_append(&low, lc + s, take) < 0)
            break;
        read_end = e;
        if (!more)
            break;
        sg_buf_append(&raw, " ", 1);
        sg_buf_append(&low, " ", 1);
        s = e + 1;
        e = line_end(text, len, s);
    }
    l->raw = raw.data ? raw.data : "";
    l->lc = low.data ? low.data : "";
    l->n = raw.len < low.len ? raw.len : low.len;
    scan_line(l);
    sg_buf_free(&raw);
    sg_buf_free(&low);
    return read_end;
}

static void scan_text(const char *file, const char *text, size_t len, int line_base, bool prose,
                      struct sg_findings *out)
{
    cleanup_free char *lc = sg_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++)
        lc[i] = (char)tolower((unsigned char)text[i]);
    lc[len] = '\0';
    int no = line_base;
    size_t joined = 0; /* lines before this were read with the line they continue */
    for (size_t s = 0; s < len; no++) {
        size_t e = line_end(text, len, s), te = trim_cr(text, s, e);
        struct line l = {.raw = text + s, .lc = lc + s, .n = te - s, .no = no, .file = file,
                         .prose = prose, .out = out, .doc_lc = lc, .doc_len = len, .off = s};
        check_hidden(&l, s == 0);
        if (s < joined)
            ; /* read already, as part of the line above */
        else if (te > s && text[te - 1] == '\\' && e < len)
            joined = scan_joined(&l, text, lc, len, e);
        else
            scan_line(&l);
        s = e + 1;
    }
}

void sg_instructions_scan(const char *file, const char *text, size_t len, int line_base,
                          struct sg_findings *out)
{
    scan_text(file, text, len, line_base, true, out);
}

void sg_hidden_unicode_scan(const char *file, const char *buf, size_t len,
                            struct sg_findings *out)
{
    scan_text(file, buf, len, 1, false, out);
}

/* ---- the skill's folder ---- */

struct walk {
    struct sg_findings *out;
    size_t files;
    bool files_noted, depth_noted;
};

static bool has_ext(const char *name, const char *const *exts, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (sg_str_has_suffix(name, exts[k]) && strlen(name) > strlen(exts[k]))
            return true;
    return false;
}

static const char *const prose_exts[] = {".md", ".MD", ".markdown", ".mdx", ".txt", ".rst"};
static const char *const code_exts[] = {
    ".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rb", ".pl",
    ".php", ".ps1", ".psm1", ".bat", ".cmd", ".lua", ".json", ".yaml", ".yml", ".toml",
    ".ini", ".cfg", ".conf", ".html", ".htm", ".xml", ".svg", ".applescript", ".fish",
};

static void note(struct walk *w, const char *file, char *what)
{
    add_finding(w->out, SG_FIND_NOT_SCANNED, file, 0, what, NULL, 0);
}

/* Up to SG_STATIC_FILE_MAX bytes of the regular file fd; *more when there
 * was more. */
static int read_head(int fd, char **buf, size_t *len, bool *more)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    size_t cap = (size_t)st.st_size < SG_STATIC_FILE_MAX ? (size_t)st.st_size : SG_STATIC_FILE_MAX;
    char *b = sg_xmalloc(cap + 2);
    size_t n = 0;
    while (n < cap + 1) { /* one byte past the cap tells there is more */
        ssize_t r = read(fd, b + n, cap + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    *more = n > cap || (size_t)st.st_size > cap;
    *len = n > cap ? cap : n;
    b[*len] = '\0';
    *buf = b;
    return 0;
}

static void scan_file(struct walk *w, int dfd, const char *name, const char *rel)
{
    bool prose = has_ext(name, prose_exts, SG_ARRAY_LEN(prose_exts));
    bool code = has_ext(name, code_exts, SG_ARRAY_LEN(code_exts));
    if (!prose && !code && strchr(name, '.'))
        return; /* data a skill ships (.png, .pdf, .docx): not text it reads out */
    cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                                              O_NOCTTY);
    cleanup_free char *buf = NULL;
    size_t len = 0;
    bool more = false;
    if (fd < 0 || read_head(fd, &buf, &len, &more) < 0)
        return;
    if (!prose && !code && (len < 2 || memcmp(buf, "#!", 2)))
        return; /* no name that says text and no #! line */
    if (memchr(buf, '\0', len < 8192 ? len : 8192))
        return; /* binary */
    if (more)
        note(w, rel, sg_xasprintf("only the first %d bytes were read", SG_STATIC_FILE_MAX));
    if (prose)
        sg_instructions_scan(rel, buf, len, 1, w->out);
    else
        sg_hidden_unicode_scan(rel, buf, len, w->out);
}

static void walk_dir(struct walk *w, int dfd, const char *prefix, int depth);

static void walk_entry(struct walk *w, int dfd, const char *name, const char *prefix, int depth)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    cleanup_free char *rel = *prefix ? sg_xasprintf("%s/%s", prefix, name) : sg_xstrdup(name);
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return; /* links, FIFOs, devices: never followed, never opened */
    if (++w->files > SG_STATIC_FILES_MAX) {
        if (!w->files_noted)
            note(w, rel, sg_xasprintf("files and folders past the first %d were not read",
                                      SG_STATIC_FILES_MAX));
        w->files_noted = true;
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (!strcmp(name, ".git"))
            return;
        if (depth + 1 > SG_STATIC_DEPTH_MAX) {
            if (!w->depth_noted)
                note(w, rel, sg_xasprintf("folders deeper than %d were not read",
                                          SG_STATIC_DEPTH_MAX));
            w->depth_noted = true;
            return;
        }
        int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (sub >= 0)
            walk_dir(w, sub, rel, depth + 1);
        return;
    }
    scan_file(w, dfd, name, rel);
}

/* dfd is taken over and closed. */
static void walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
    cleanup_fd int keep = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    char **names = NULL;
    size_t n = 0;
    if (keep < 0 || sg_list_dir_fd(dfd, SG_LIST_ALL | SG_LIST_HIDDEN, 4 * SG_STATIC_FILES_MAX,
                                   &names, &n) < 0) {
        if (keep < 0)
            close(dfd);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        bool first = !*prefix && !strcmp(names[i], "SKILL.md"); /* read before the walk */
        if (w->files <= SG_STATIC_FILES_MAX && !first)
            walk_entry(w, keep, names[i], prefix, depth);
        free(names[i]);
    }
    free(names);
}

int sg_skill_static_scan(const struct sg_skill *sk, struct sg_findings *out)
{
    int fd = open(sk->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct walk w = {.out = out};
    walk_entry(&w, fd, "SKILL.md", "", 0); /* first: whatever the rest holds */
    walk_dir(&w, fd, "", 0);
    return 0;
}
