#include "sanitize.h"

#include <stdio.h>

#include "util.h"

static bool is_bidi_or_invisible(unsigned cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200e || cp == 0x200f || cp == 0x061c || cp == 0xfeff;
}

void sg_sanitize_each(const char *s, size_t len, unsigned flags, sg_sanitize_fn fn, void *ctx)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned cp;
        char esc[16];
        const char *piece = esc;
        size_t n = sg_utf8_decode(u + i, len - i, &cp), pn;
        bool escaped = true;
        if (n == 0) {
            pn = (size_t)snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            n = 1;
        } else if ((cp == '\n' && (flags & SG_SAN_KEEP_NEWLINE)) ||
                   (cp == '\t' && (flags & SG_SAN_KEEP_TAB))) {
            piece = s + i, pn = 1, escaped = false;
        } else if (cp == '\n' || cp == '\t' || cp == '\r' || cp == 0x1b) {
            pn = (size_t)snprintf(esc, sizeof esc, "\\%c",
                                  cp == '\n' ? 'n' : cp == '\t' ? 't' : cp == '\r' ? 'r' : 'e');
        } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
            pn = (size_t)snprintf(esc, sizeof esc, "\\x%02x", cp);
        } else if (is_bidi_or_invisible(cp)) {
            pn = (size_t)snprintf(esc, sizeof esc, "\\u{%04x}", cp);
        } else {
            piece = s + i, pn = n, escaped = false;
        }
        if (!fn(ctx, piece, pn, escaped))
            return;
        i += n;
    }
}

static bool to_buf(void *ctx, const char *piece, size_t n, bool escaped)
{
    (void)escaped;
    sg_buf_append(ctx, piece, n);
    return true;
}

char *sg_sanitize(const char *s, size_t len, unsigned flags)
{
    struct sg_buf b;
    sg_buf_init(&b, len * 10 + 1);
    sg_sanitize_each(s, len, flags, to_buf, &b);
    return sg_buf_steal(&b);
}

char *sg_sanitize_str(const char *s, unsigned flags)
{
    return s ? sg_sanitize(s, strlen(s), flags) : sg_xstrdup("");
}
