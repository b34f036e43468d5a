/* The content digest of a skill: SHA-256 over its files, so that an approval
 * can be pinned to the exact code that was approved. */
#ifndef SG_DIGEST_H
#define SG_DIGEST_H

#include <stddef.h>

#define SG_DIGEST_STRLEN 72 /* "sha256:" + 64 hex + NUL */
#define SG_DIGEST_MAX_FILES 100000
#define SG_DIGEST_MAX_BYTES (1024LL * 1024 * 1024)

/* Walk root without following symlinks, skipping only ".git" directories.
 * Entries are sorted by path (bytewise); each contributes its path, its type
 * and executable bit (not the other mode bits, which differ between
 * checkouts), its size and contents, or a symlink's target. Returns 0, or
 * -EFBIG past the caps, or another -errno. nfiles may be NULL. */
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
