/* The pieces every self-contained HTML page of ours is made of (the run's
 * report, report.h; the vetting of a marketplace, vetreport.h): hostile
 * text through the sanitizer and then HTML's escaping, cut for display at
 * whole characters, and the page's head, whose Content-Security-Policy
 * allows the one inline <style> (by its SHA-256) and nothing else: no
 * script, no network, no external asset. */
#ifndef SG_HTMLTEXT_H
#define SG_HTMLTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sg_html {
    FILE *f;
    bool no_marks; /* inside SVG or <title>: escapes unmarked, no markup */
};

/* An sg_sanitize_fn (ctx: struct sg_html): the piece with & < > " ' as
 * entities; an escape the sanitizer made is marked <span class="esc">. */
bool sg_html_piece(void *ctx, const char *p, size_t n, bool escaped);

/* How many bytes of s (len) to show under max: whole UTF-8 characters. */
size_t sg_utf8_cut(const char *s, size_t len, size_t max);

/* A hostile string of len bytes, sanitized and escaped, at most max bytes
 * of it shown, then how many were not. */
void sg_html_text_n(struct sg_html *h, const char *s, size_t len, size_t max);


/* 'sha256-BASE64' of style, as a CSP names it (out: at least 48 bytes). */
void sg_html_style_hash(const char *style, char out[64]);

/* "<!DOCTYPE html>" up to the open <title>: the CSP allowing style. */
void sg_html_head(FILE *f, const char *style);

#endif
