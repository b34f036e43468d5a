/* HTML text and page head shared by our self-contained pages (htmltext.h). */
#include "htmltext.h"

#include <string.h>

#include "digest.h"
#include "sanitize.h"
#include "util.h"

bool sg_html_piece(void *ctx, const char *p, size_t n, bool escaped)
{
    struct sg_html *h = ctx;
    FILE *f = h->f;
    escaped = escaped && !h->no_marks;
    if (escaped)
        fputs("<span class=\"esc\">", f);
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(p[i], f);
        }
    }
    if (escaped)
        fputs("</span>", f);
    return true;
}

size_t sg_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

void sg_html_text_n(struct sg_html *h, const char *s, size_t len, size_t max)
{
    size_t show = sg_utf8_cut(s, len, max);
    sg_sanitize_each(s, show, 0, sg_html_piece, h);
    if (show < len && h->no_marks) /* <title>, SVG: no markup there either */
        fprintf(h->f, " &#8230; %zu more bytes", len - show);
    else if (show < len)
        fprintf(h->f, " <em class=\"cut\">&#8230; %zu more bytes</em>", len - show);
}

/* A byte that continues a path or a name: a home just before or after one
 * is part of another path (/x/home/me, /home/meg). */
void sg_html_style_hash(const char *style, char out[64])
{
    char hex[SG_DIGEST_STRLEN];
    sg_sha256_text(style, strlen(style), hex);
    unsigned char md[33] = {0};
    for (int i = 0; i < 32; i++) {
        unsigned v = 0;
        sscanf(hex + 7 + 2 * i, "%2x", &v);
        md[i] = (unsigned char)v;
    }
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (int i = 0; i < 33; i += 3) {
        unsigned v = (unsigned)md[i] << 16 | (unsigned)md[i + 1] << 8 | md[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < 32 ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < 32 ? b64[v & 63] : '=';
    }
    out[o] = 0;
}

void sg_html_head(FILE *f, const char *style)
{
    char hash[64];
    sg_html_style_hash(style, hash);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
               "style-src 'sha256-%s'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
               "<meta name=\"referrer\" content=\"no-referrer\">\n<title>",
            hash);
}
