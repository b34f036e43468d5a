/* The content digest of a skill: SHA-256 over its files, so that an approval
 * can be pinned to the exact code that was approved. */
#ifndef SG_DIGEST_H
#define SG_DIGEST_H

#include <stddef.h>

#define SG_DIGEST_STRLEN 72 /* "sha256:" + 64 hex + NUL */
#define SG_DIGEST_MAX_FILES 100000 /* entries and folders visited */
#define SG_DIGEST_MAX_BYTES (1024LL * 1024 * 1024)
#define SG_DIGEST_MAX_DEPTH 64

/* Walk root and hash what the sandbox shows of it: every entry, .git/
 * included (the sandbox binds the whole folder, and code can be read from
 * there as from anywhere else), sorted by path (bytewise); each contributes
 * its path, its type and executable bit (not the other mode bits, which
 * differ between checkouts), its size and contents. A symlink contributes
 * its text and what it resolves to now (issue 35, item 9: a grant pinned to
 * a link's text once ran whatever the link's target became): a file's
 * content and executable bit, a folder walked as if it were there (its
 * entries under the link's path), a folder already being walked (a cycle)
 * or nothing (dangling, a loop of links, unreadable: the errno) marked as
 * such. A file or folder we may not read is marked unreadable. Bounded:
 * SG_DIGEST_MAX_FILES entries, SG_DIGEST_MAX_BYTES of content and
 * SG_DIGEST_MAX_DEPTH folders deep, links followed included. Returns 0,
 * or -EFBIG past the caps, -ELOOP too deep, or another -errno (-EAGAIN:
 * changed while it was read). nfiles may be NULL. */
int sg_skill_digest(const char *root, char out[SG_DIGEST_STRLEN], size_t *nfiles);

/* "sha256:" and the hex of 32 bytes of digest. */
void sg_sha256_format(const unsigned char md[32], char out[SG_DIGEST_STRLEN]);
/* SHA-256 of n bytes, formatted. */
void sg_sha256_text(const void *p, size_t n, char out[SG_DIGEST_STRLEN]);

/* Streaming SHA-256 (opaque; sg_sha256_new aborts when out of memory). */
struct sg_sha256;
struct sg_sha256 *sg_sha256_new(void);
void sg_sha256_update(struct sg_sha256 *h, const void *p, size_t n);
/* Formats the digest into out and frees h. */
void sg_sha256_finish(struct sg_sha256 *h, char out[SG_DIGEST_STRLEN]);

#endif
