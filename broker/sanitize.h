/* The one sanitizer every byte from a skill passes before it reaches a
 * terminal: C0/C1 controls, ESC, DEL, bidi overrides and invalid UTF-8 are
 * shown visibly escaped, never interpreted. */
#ifndef SG_SANITIZE_H
#define SG_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

enum {
    SG_SAN_KEEP_NEWLINE = 1 << 0, /* let '\n' through (multi-line text) */
    SG_SAN_KEEP_TAB = 1 << 1,
};

/* Returns a newly allocated, NUL-terminated, printable string. */
char *sg_sanitize(const char *s, size_t len, unsigned flags);
/* Same for a C string; NULL gives "". */
char *sg_sanitize_str(const char *s, unsigned flags);

#endif
