#include "sanitize.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* Bidi controls, and the characters a renderer draws as nothing (Unicode's
 * default-ignorable ones): zero-width spaces and joiners, fillers, and the
 * variation selectors and tag characters that can carry text no person sees
 * (a hidden instruction for a model reading a report, two paths that look
 * one). The terminal drew these as nothing too; now no sink does. */
static bool is_bidi_or_invisible(unsigned cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200e || cp == 0x200f || cp == 0x061c || cp == 0xfeff || cp == 0x00ad ||
           cp == 0x034f || (cp >= 0x115f && cp <= 0x1160) || (cp >= 0x17b4 && cp <= 0x17b5) ||
           (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200d) ||
           (cp >= 0x2060 && cp <= 0x2065) || (cp >= 0x206a && cp <= 0x206f) || cp == 0x3164 ||
           (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xffa0 || (cp >= 0xfff0 && cp <= 0xfffb) ||
           (cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
           (cp >= 0xe0000 && cp <= 0xe0fff);
}

/* One code point at u (len > 0): *n is how many bytes it takes. Returns 0
 * when it passes as it is, else the length of its visible escape in esc. */
static size_t classify(const unsigned char *u, size_t len, unsigned flags, size_t *n,
                       char esc[16])
{
    static const char hex[] = "0123456789abcdef";
    unsigned cp;
    *n = sg_utf8_decode(u, len, &cp);
    if (*n == 0) { /* not UTF-8: the byte itself */
        *n = 1;
        cp = u[0];
    } else if ((cp == '\n' && (flags & SG_SAN_KEEP_NEWLINE)) ||
               (cp == '\t' && (flags & SG_SAN_KEEP_TAB))) {
        return 0;
    } else if (cp == '\n' || cp == '\t' || cp == '\r' || cp == 0x1b) {
        esc[0] = '\\';
        esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : cp == '\r' ? 'r' : 'e';
        return 2;
    } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
        /* below: as "\xNN" */
    } else if (is_bidi_or_invisible(cp)) {
        return (size_t)snprintf(esc, 16, "\\u{%04x}", cp);
    } else {
        return 0;
    }
    esc[0] = '\\', esc[1] = 'x', esc[2] = hex[(cp >> 4) & 0xf], esc[3] = hex[cp & 0xf];
    return 4;
}

void sg_sanitize_each(const char *s, size_t len, unsigned flags, sg_sanitize_fn fn, void *ctx)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        char esc[16];
        size_t n, pn = classify(u + i, len - i, flags, &n, esc);
        if (!(pn ? fn(ctx, esc, pn, true) : fn(ctx, s + i, n, false)))
            return;
        i += n;
    }
}

/* The same result as sg_sanitize_each's pieces put together, with what
 * passes copied a run at a time (printable ASCII tested inline) into one
 * allocation of the worst case (an escape is at most 4 bytes for each byte
 * it stands for: "\\xNN", "\\u{202e}" for 3, "\\u{e0001}" for 4): output
 * floods go through here for every sink. */
char *sg_sanitize(const char *s, size_t len, unsigned flags)
{
    char *out = sg_xmalloc(len * 4 + 1), *o = out;
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = 0;
    while (i < len) {
        if (u[i] >= 0x20 && u[i] < 0x7f) {
            i++;
            continue;
        }
        char esc[16];
        size_t n, pn = classify(u + i, len - i, flags, &n, esc);
        if (pn) {
            if (i > run)
                memcpy(o, s + run, i - run);
            o += i - run;
            memcpy(o, esc, pn);
            o += pn;
            run = i + n;
        }
        i += n;
    }
    if (len > run) /* s may be NULL when len is 0 */
        memcpy(o, s + run, len - run);
    o += len - run;
    *o = '\0';
    return out;
}

/* A sanitized text's next character as JSON escapes it (json_dumps with
 * JSON_ENSURE_ASCII: \\uXXXX upper case, a surrogate pair past the BMP).
 * Returns how many bytes of t it took; out gets at most 12. */
static size_t json_escape(const unsigned char *t, size_t n, char *out, size_t *k)
{
    static const char hex[] = "0123456789ABCDEF";
    unsigned cp = t[0];
    size_t used = 1;
    if (cp == '"' || cp == '\\') {
        out[0] = '\\', out[1] = (char)cp, *k = 2;
        return 1;
    }
    if (cp && cp < 0x20 && strchr("\b\f\n\r\t", (int)cp)) {
        out[0] = '\\', out[1] = "btnvfr"[cp - '\b'], *k = 2;
        return 1;
    }
    /* a control, or printable UTF-8 (sg_sanitize lets only valid UTF-8
     * through; a stray byte would be shown as U+00XX) */
    if (cp >= 0x80 && (used = sg_utf8_decode(t, n, &cp)) == 0)
        used = 1, cp = t[0];
    unsigned w[2] = {cp, 0};
    if (cp >= 0x10000) {
        cp -= 0x10000;
        w[0] = 0xd800 | ((cp >> 10) & 0x3ff), w[1] = 0xdc00 | (cp & 0x3ff);
    }
    *k = 0;
    for (int j = 0; j < (w[1] ? 2 : 1); j++) {
        out[(*k)++] = '\\', out[(*k)++] = 'u';
        for (int sh = 12; sh >= 0; sh -= 4)
            out[(*k)++] = hex[(w[j] >> sh) & 0xf];
    }
    return used;
}

char *sg_sanitize_json(const char *s, size_t len, unsigned flags)
{
    cleanup_free char *t = sg_sanitize(s, len, flags);
    size_t n = strlen(t);
    /* at most 6 bytes out for each byte in (a control as \\u00XX; UTF-8
     * takes 6 for 2 or 3 bytes, 12 for 4), the quotes and the NUL */
    char *out = sg_xmalloc(n * 6 + 3), *o = out;
    *o++ = '"';
    const unsigned char *u = (const unsigned char *)t;
    size_t run = 0, i = 0;
    while (i < n) {
        if (u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\') {
            i++;
            continue;
        }
        memcpy(o, t + run, i - run);
        o += i - run;
        size_t k;
        i += json_escape(u + i, n - i, o, &k);
        o += k;
        run = i;
    }
    memcpy(o, t + run, n - run);
    o += n - run;
    *o++ = '"';
    *o = '\0';
    return out;
}

char *sg_sanitize_str(const char *s, unsigned flags)
{
    return s ? sg_sanitize(s, strlen(s), flags) : sg_xstrdup("");
}

/* One SGR param list, "1;38;5;208": each one allowed (sanitize.h). */
static bool sgr_params_ok(const char *p, size_t n)
{
    unsigned v[SG_SAN_SGR_MAX];
    size_t nv = 0;
    for (size_t i = 0; i <= n; i++) { /* an empty param is 0 */
        unsigned x = 0;
        for (; i < n && p[i] != ';'; i++)
            if ((x = x * 10 + (unsigned)(p[i] - '0')) > 255)
                return false;
        v[nv++] = x;
    }
    /* the colours that cannot hide text on a dark or a light terminal:
     * red to cyan, plain and bright, with bold, italic and underline; never
     * black, white, grey, dim or reverse video (which makes the foreground
     * the background), nor 256 or 24-bit colours (any of them may be the
     * background's, and a terminal without them reads their numbers as
     * blink and conceal) */
    for (size_t i = 0; i < nv; i++) {
        unsigned x = v[i];
        if (!(x == 0 || x == 1 || x == 3 || x == 4 || (x >= 22 && x <= 24) ||
              (x >= 31 && x <= 36) || x == 39 || (x >= 91 && x <= 96)))
            return false;
    }
    return true;
}

/* The length of an allowed colour sequence at u (an ESC), else 0. */
static size_t sgr_len(const unsigned char *u, size_t len)
{
    if (len < 3 || u[1] != '[')
        return 0;
    size_t i = 2;
    while (i < len && i < SG_SAN_SGR_MAX && ((u[i] >= '0' && u[i] <= '9') || u[i] == ';'))
        i++;
    if (i >= len || u[i] != 'm' || !sgr_params_ok((const char *)u + 2, i - 2))
        return 0;
    return i + 1;
}

char *sg_sanitize_colour(const char *s, size_t len, unsigned flags)
{
    static const char reset[] = "\033[0m";
    if (!s)
        s = "", len = 0;
    struct sg_buf b;
    sg_buf_init(&b, len * 4 + sizeof reset);
    const unsigned char *u = (const unsigned char *)s;
    size_t from = 0;
    bool coloured = false;
    for (size_t i = 0; i < len; i++) {
        size_t k = u[i] == 0x1b ? sgr_len(u + i, len - i) : 0;
        if (!k)
            continue;
        cleanup_free char *text = sg_sanitize(s + from, i - from, flags);
        sg_buf_append(&b, text, strlen(text));
        sg_buf_append(&b, s + i, k);
        coloured = true;
        from = i + k;
        i += k - 1;
    }
    cleanup_free char *rest = sg_sanitize(s + from, len - from, flags);
    sg_buf_append(&b, rest, strlen(rest));
    if (coloured)
        sg_buf_append(&b, reset, sizeof reset - 1);
    return sg_buf_steal(&b);
}
