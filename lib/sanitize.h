/* The one sanitizer every byte from a skill passes before it reaches a
 * terminal: C0/C1 controls, ESC, DEL, bidi overrides, characters drawn as
 * nothing (zero-width, tag characters, variation selectors) and invalid
 * UTF-8 are shown visibly escaped, never interpreted. */
#ifndef SG_SANITIZE_H
#define SG_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

enum {
    SG_SAN_KEEP_NEWLINE = 1 << 0, /* let '\n' through (multi-line text) */
    SG_SAN_KEEP_TAB = 1 << 1,
};

/* The sanitizer's core: s cut into pieces, each either text to show as it
 * is (escaped false: printable UTF-8, one code point) or the visible escape
 * of something that must not reach a terminal (escaped true: "\\e",
 * "\\x9b", "\\u{202e}"). Stops early when fn returns false. */
typedef bool (*sg_sanitize_fn)(void *ctx, const char *piece, size_t n, bool escaped);
void sg_sanitize_each(const char *s, size_t len, unsigned flags, sg_sanitize_fn fn, void *ctx);

/* Returns a newly allocated, NUL-terminated, printable string. */
char *sg_sanitize(const char *s, size_t len, unsigned flags);
/* sg_sanitize's result as a JSON string, quotes included, ASCII only:
 * byte for byte what jansson's json_dumps gives for it with JSON_ENCODE_ANY
 * and JSON_ENSURE_ASCII. Output lines are printed and journaled this way
 * (json_pack and json_dumps of each line took most of the broker's time
 * for the first MiB of a flood). */
char *sg_sanitize_json(const char *s, size_t len, unsigned flags);
/* Same for a C string; NULL gives "". */
char *sg_sanitize_str(const char *s, unsigned flags);

/* sg_sanitize for a colour terminal: a colour sequence (SGR: ESC [ params m,
 * at most SG_SAN_SGR_MAX bytes) passes as it is when each of its params is
 * a foreground colour (30-37, 90-97, 39, 38;5;N, 38;2;R;G;B) or bold, dim,
 * italic, underline, reverse and their ends (0-4, 7, 22-24, 27); anything
 * else, concealed text, blinking and backgrounds (fg on a bg of its colour
 * hides text) included, is escaped as sg_sanitize does. When one passed,
 * the line ends with ESC [ 0 m: no colour runs on into the next line.
 * Scripts print colours (pytest, rich, a status line) and the person read
 * "\e[32m" instead. */
#define SG_SAN_SGR_MAX 48
char *sg_sanitize_colour(const char *s, size_t len, unsigned flags);

#endif
