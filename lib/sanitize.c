#include "sanitize.h"

#include <stdio.h>

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
 * passes copied a run at a time (printable ASCII tested inline): output
 * floods go through here for every sink. */
char *sg_sanitize(const char *s, size_t len, unsigned flags)
{
    struct sg_buf b;
    sg_buf_init(&b, len * 10 + 1);
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
                sg_buf_append(&b, s + run, i - run);
            sg_buf_append(&b, esc, pn);
            run = i + n;
        }
        i += n;
    }
    if (len > run)
        sg_buf_append(&b, s + run, len - run);
    return sg_buf_steal(&b);
}

char *sg_sanitize_json(const char *s, size_t len, unsigned flags)
{
    static const char hex[] = "0123456789ABCDEF"; /* jansson's "\\u%04X" */
    cleanup_free char *t = sg_sanitize(s, len, flags);
    size_t n = strlen(t);
    struct sg_buf b;
    sg_buf_init(&b, n * 12 + 3);
    sg_buf_append(&b, "\"", 1);
    const unsigned char *u = (const unsigned char *)t;
    size_t run = 0, i = 0;
    while (i < n) {
        if (u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\') {
            i++;
            continue;
        }
        if (i > run)
            sg_buf_append(&b, t + run, i - run);
        char e[12];
        size_t k = 2, used = 1;
        unsigned cp = u[i];
        if (cp == '"' || cp == '\\') {
            e[0] = '\\', e[1] = (char)cp;
        } else if (cp < 0x20 && strchr("\b\f\n\r\t", (int)cp) && cp) {
            e[0] = '\\', e[1] = "btnvfr"[cp - '\b'];
        } else {
            /* a control, or printable UTF-8 (sg_sanitize lets only valid
             * UTF-8 through): \\uXXXX, a surrogate pair past the BMP */
            if (cp >= 0x80 && (used = sg_utf8_decode(u + i, n - i, &cp)) == 0)
                used = 1, cp = u[i]; /* cannot happen: shown as U+00XX */
            unsigned hi = cp, lo = 0;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                hi = 0xd800 | ((cp >> 10) & 0x3ff), lo = 0xdc00 | (cp & 0x3ff);
            }
            k = 0;
            for (unsigned w = hi, more = lo != 0;; w = lo, more = 0) {
                e[k++] = '\\', e[k++] = 'u';
                for (int sh = 12; sh >= 0; sh -= 4)
                    e[k++] = hex[(w >> sh) & 0xf];
                if (!more)
                    break;
            }
        }
        sg_buf_append(&b, e, k);
        i += used;
        run = i;
    }
    if (n > run)
        sg_buf_append(&b, t + run, n - run);
    sg_buf_append(&b, "\"", 1);
    return sg_buf_steal(&b);
}

char *sg_sanitize_str(const char *s, unsigned flags)
{
    return s ? sg_sanitize(s, strlen(s), flags) : sg_xstrdup("");
}
