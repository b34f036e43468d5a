/* SHA-256 of a run's stdout and stderr, on a second thread once the output
 * is large: this CPU hashes about 1 GB/s, slower than a pipe delivers, so
 * hashing in the loop's own thread halved the rate at which a skill could
 * write. The loop reads straight into the hasher's slots (a slot goes to
 * the thread once full, so a wake-up is per 128 KiB, not per read); a small
 * output (under 1 MiB) is hashed in place and never starts the thread. */
#ifndef SG_HASHER_H
#define SG_HASHER_H

#include <stddef.h>

#include "digest.h"

#define SG_HASHER_SLOT (128 * 1024)

struct sg_hasher;

struct sg_hasher *sg_hasher_new(void);
/* Where to read stream which's (0 stdout, 1 stderr) next bytes: *room
 * bytes (at most SG_HASHER_SLOT), the free end of a slot the thread gets
 * once it is full; waits while every slot is still being hashed (the reader
 * cannot run ahead by more than the ring). */
char *sg_hasher_buf(struct sg_hasher *h, int which, size_t *room);
/* The first n bytes of the buffer sg_hasher_buf gave are stream which's
 * next bytes. The buffer is the hasher's again. */
void sg_hasher_submit(struct sg_hasher *h, int which, size_t n);
/* Wait for the last slot, format both digests, free h. */
void sg_hasher_finish(struct sg_hasher *h, char out[2][SG_DIGEST_STRLEN]);

#endif
