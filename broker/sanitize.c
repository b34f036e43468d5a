#include "sanitize.h"

#include "util.h"

static bool is_bidi_or_invisible(unsigned cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200e || cp == 0x200f || cp == 0x061c || cp == 0xfeff;
}

char *sg_sanitize(const char *s, size_t len, unsigned flags)
{
    struct sg_buf b;
    sg_buf_init(&b, len * 10 + 1);
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned cp;
        size_t n = sg_utf8_decode(u + i, len - i, &cp);
        if (n == 0) {
            sg_buf_printf(&b, "\\x%02x", u[i]);
            i++;
            continue;
        }
        if (cp == '\n' && (flags & SG_SAN_KEEP_NEWLINE))
            sg_buf_append(&b, "\n", 1);
        else if (cp == '\t' && (flags & SG_SAN_KEEP_TAB))
            sg_buf_append(&b, "\t", 1);
        else if (cp == '\n')
            sg_buf_append(&b, "\\n", 2);
        else if (cp == '\t')
            sg_buf_append(&b, "\\t", 2);
        else if (cp == '\r')
            sg_buf_append(&b, "\\r", 2);
        else if (cp == 0x1b)
            sg_buf_append(&b, "\\e", 2);
        else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            sg_buf_printf(&b, "\\x%02x", cp);
        else if (is_bidi_or_invisible(cp))
            sg_buf_printf(&b, "\\u{%04x}", cp);
        else
            sg_buf_append(&b, u + i, n);
        i += n;
    }
    return sg_buf_steal(&b);
}

char *sg_sanitize_str(const char *s, unsigned flags)
{
    return s ? sg_sanitize(s, strlen(s), flags) : sg_xstrdup("");
}
