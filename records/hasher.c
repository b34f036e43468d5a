#include "hasher.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util.h"

#define SLOTS 8 /* 1 MiB: as much as the output pipe holds */
#define THREAD_AFTER (1024 * 1024) /* bytes hashed in place before the thread starts */

struct slot {
    char buf[SG_HASHER_SLOT];
    size_t len;
    int which;
};

/* The ring without a lock on its path: submitted and hashed count slots
 * ever filled and ever hashed; the reader owns slot[submitted % SLOTS]
 * while submitted - hashed < SLOTS, the thread slot[hashed % SLOTS] while
 * hashed < submitted. A side finding nothing to do says so (its sleeps
 * flag) and waits on the condition under mu; the other side takes mu and
 * signals only then (seq_cst: one of the two always sees the other's
 * store, so no wake-up is lost): the reader, once the ring was full, is
 * woken when half of it is free again (the thread checks that bound after
 * every slot it hashed). With the mutex and a signal on every
 * slot, the two threads woke each other 21,000 times per GiB. */
struct sg_hasher {
    struct sg_sha256 *md[2];
    struct slot slot[SLOTS];
    atomic_size_t submitted, hashed;
    atomic_bool hasher_sleeps, reader_sleeps, done;
    size_t fill;  /* bytes in the reader's slot, not handed over yet */
    int fill_which;
    size_t inline_bytes;
    bool threaded, no_thread;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled, emptied;
};

static void wake(struct sg_hasher *h, atomic_bool *sleeps, pthread_cond_t *c)
{
    if (!atomic_load(sleeps))
        return;
    pthread_mutex_lock(&h->mu);
    pthread_cond_signal(c);
    pthread_mutex_unlock(&h->mu);
}

static void *hash_loop(void *arg)
{
    struct sg_hasher *h = arg;
    for (size_t t = 0;;) {
        if (atomic_load(&h->submitted) == t) {
            if (atomic_load(&h->done) && atomic_load(&h->submitted) == t)
                break; /* done and drained: done is stored after the last slot */
            pthread_mutex_lock(&h->mu);
            atomic_store(&h->hasher_sleeps, true);
            while (atomic_load(&h->submitted) == t && !atomic_load(&h->done))
                pthread_cond_wait(&h->filled, &h->mu);
            atomic_store(&h->hasher_sleeps, false);
            pthread_mutex_unlock(&h->mu);
            continue;
        }
        struct slot *s = &h->slot[t % SLOTS];
        sg_sha256_update(h->md[s->which], s->buf, s->len);
        atomic_store(&h->hashed, ++t);
        if (atomic_load(&h->submitted) - t <= SLOTS / 2)
            wake(h, &h->reader_sleeps, &h->emptied);
    }
    return NULL;
}

struct sg_hasher *sg_hasher_new(void)
{
    struct sg_hasher *h = sg_xcalloc(1, sizeof *h);
    h->md[0] = sg_sha256_new();
    h->md[1] = sg_sha256_new();
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->filled, NULL);
    pthread_cond_init(&h->emptied, NULL);
    return h;
}

/* Give the thread the reader's slot (fill bytes of stream fill_which). */
static void hand_over(struct sg_hasher *h)
{
    size_t s = atomic_load(&h->submitted);
    h->slot[s % SLOTS].len = h->fill;
    h->slot[s % SLOTS].which = h->fill_which;
    h->fill = 0;
    atomic_store(&h->submitted, s + 1);
    wake(h, &h->hasher_sleeps, &h->filled);
}

char *sg_hasher_buf(struct sg_hasher *h, int which, size_t *room)
{
    which = which ? 1 : 0;
    if (h->fill && h->fill_which != which)
        hand_over(h); /* a slot holds one stream's bytes */
    size_t s = atomic_load(&h->submitted);
    /* a full ring waits until half of it is free: one wake-up per four
     * slots, not one per slot (each is a context switch on the core the
     * skill writes from) */
    if (h->threaded && s - atomic_load(&h->hashed) == SLOTS) {
        pthread_mutex_lock(&h->mu);
        atomic_store(&h->reader_sleeps, true);
        while (s - atomic_load(&h->hashed) > SLOTS / 2)
            pthread_cond_wait(&h->emptied, &h->mu);
        atomic_store(&h->reader_sleeps, false);
        pthread_mutex_unlock(&h->mu);
    }
    h->fill_which = which;
    *room = SG_HASHER_SLOT - h->fill;
    return h->slot[s % SLOTS].buf + h->fill;
}

void sg_hasher_submit(struct sg_hasher *h, int which, size_t n)
{
    which = which ? 1 : 0;
    if (!h->threaded) {
        size_t s = atomic_load(&h->submitted);
        sg_sha256_update(h->md[which], h->slot[s % SLOTS].buf, n);
        h->inline_bytes += n;
        if (h->inline_bytes >= THREAD_AFTER && !h->no_thread) {
            h->threaded = pthread_create(&h->thread, NULL, hash_loop, h) == 0;
            h->no_thread = !h->threaded; /* then everything is hashed in place */
        }
        return;
    }
    /* a slot goes to the thread full: a read that got a few KiB of a pipe
     * the loop keeps empty is not a hand-over (and a wake-up) of its own */
    h->fill += n;
    if (h->fill == SG_HASHER_SLOT)
        hand_over(h);
}

void sg_hasher_finish(struct sg_hasher *h, char out[2][SG_DIGEST_STRLEN])
{
    if (h->threaded) {
        if (h->fill)
            hand_over(h); /* the reader owns that slot: no wait */
        atomic_store(&h->done, true);
        pthread_mutex_lock(&h->mu);
        pthread_cond_signal(&h->filled);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->thread, NULL);
    }
    sg_sha256_finish(h->md[0], out[0]);
    sg_sha256_finish(h->md[1], out[1]);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->filled);
    pthread_cond_destroy(&h->emptied);
    free(h);
}
