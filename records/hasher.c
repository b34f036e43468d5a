#include "hasher.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util.h"

#define SLOTS 4
#define THREAD_AFTER (1024 * 1024) /* bytes hashed in place before the thread starts */

struct slot {
    char buf[SG_HASHER_SLOT];
    size_t len;
    int which;
};

struct sg_hasher {
    struct sg_sha256 *md[2];
    struct slot slot[SLOTS];
    size_t head, tail, count; /* the ring: the reader fills head, the thread empties tail */
    size_t inline_bytes;
    bool threaded, no_thread, done;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled, emptied;
};

static void *hash_loop(void *arg)
{
    struct sg_hasher *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->count && !h->done)
            pthread_cond_wait(&h->filled, &h->mu);
        if (!h->count)
            break; /* done and drained */
        struct slot *s = &h->slot[h->tail];
        pthread_mutex_unlock(&h->mu);
        sg_sha256_update(h->md[s->which], s->buf, s->len);
        pthread_mutex_lock(&h->mu);
        h->tail = (h->tail + 1) % SLOTS;
        h->count--;
        pthread_cond_signal(&h->emptied);
    }
    pthread_mutex_unlock(&h->mu);
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

char *sg_hasher_buf(struct sg_hasher *h)
{
    if (!h->threaded)
        return h->slot[h->head].buf;
    pthread_mutex_lock(&h->mu);
    while (h->count == SLOTS)
        pthread_cond_wait(&h->emptied, &h->mu);
    pthread_mutex_unlock(&h->mu);
    return h->slot[h->head].buf;
}

void sg_hasher_submit(struct sg_hasher *h, int which, size_t n)
{
    which = which ? 1 : 0;
    if (!h->threaded) {
        sg_sha256_update(h->md[which], h->slot[h->head].buf, n);
        h->inline_bytes += n;
        if (h->inline_bytes >= THREAD_AFTER && !h->no_thread) {
            h->threaded = pthread_create(&h->thread, NULL, hash_loop, h) == 0;
            h->no_thread = !h->threaded; /* then everything is hashed in place */
        }
        return;
    }
    pthread_mutex_lock(&h->mu);
    struct slot *s = &h->slot[h->head];
    s->len = n;
    s->which = which;
    h->head = (h->head + 1) % SLOTS;
    h->count++;
    pthread_cond_signal(&h->filled);
    pthread_mutex_unlock(&h->mu);
}

void sg_hasher_finish(struct sg_hasher *h, char out[2][SG_DIGEST_STRLEN])
{
    if (h->threaded) {
        pthread_mutex_lock(&h->mu);
        h->done = true;
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
