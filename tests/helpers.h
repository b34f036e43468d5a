/* Test helpers: temporary skill trees on disk, and assertions on the
 * problems a skill reports. */
#ifndef SG_TEST_HELPERS_H
#define SG_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka needs the includes above first
#include <cmocka.h>

#include "diag.h"
#include "policy.h"

/* A fresh directory under $TMPDIR (or /tmp); removed by th_rmrf. */
char *th_tmpdir(void);
void th_rmrf(const char *path);
/* Write a file (creating parent folders) below dir. */
void th_write(const char *dir, const char *rel, const char *content);
void th_write_n(const char *dir, const char *rel, const char *content, size_t n);
void th_mkdirs(const char *dir, const char *rel);

/* The first problem whose formatted line contains every needle (NULL-ended),
 * or NULL. */
const struct sg_diag *th_find(const struct sg_diags *d, ...) __attribute__((sentinel));
/* Print all problems (on failure, to see what there was). */
void th_dump(const struct sg_diags *d);

/* Assert a problem with this severity, line, column, field and message part
 * exists (line/col 0: not checked). */
#define th_assert_diag(d, sev, line, col, field, part) \
    th_assert_diag_at(d, sev, line, col, field, part, __FILE__, __LINE__)
void th_assert_diag_at(const struct sg_diags *d, enum sg_severity sev, int line, int col,
                       const char *field, const char *part, const char *file, int fline);

/* Read tests/fuzz-seeds/NAME into buf; returns its length (fails the test
 * when it cannot). */
size_t th_read_seed(const char *name, unsigned char *buf, size_t max);

/* A skill from memory with a SKILL.md (md) and/or skillsandbox.yaml (y). */
struct sg_skill *th_skill(const char *md, const char *y);

#endif
