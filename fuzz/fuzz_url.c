/* libFuzzer target for the URL host reader (lib/urlhost.c) that decides
 * which host a WebFetch reaches. On any bytes: an answer or a refusal with
 * a reason, never both; an answer is "host:port" in canonical form (lower
 * case [a-z0-9._-] name, or "[hex:...]", a port of at most 65535), and
 * reading "https://" + the answer gives the answer back: what we say is
 * the host is itself read as that host. The input is tried both as a
 * whole URL and after "https://", to reach the host reader more often. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urlhost.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool canonical(const char *hp)
{
    const char *colon = strrchr(hp, ':');
    if (!colon || colon == hp || !colon[1] || strlen(colon + 1) > 5)
        return false;
    long port = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        port = port * 10 + (*p - '0');
    }
    if (port > 65535)
        return false;
    size_t hl = (size_t)(colon - hp);
    if (hp[0] == '[') {
        if (hp[hl - 1] != ']')
            return false;
        for (size_t i = 1; i + 1 < hl; i++)
            if (!strchr("0123456789abcdef:", hp[i]))
                return false;
        return true;
    }
    for (size_t i = 0; i < hl; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", hp[i]))
            return false;
    return true;
}

static void check(const char *url, size_t len)
{
    char *hp = NULL;
    const char *why = NULL;
    int r = sg_url_host(url, len, &hp, &why);
    if (r < 0) {
        if (hp || !why)
            abort();
        return;
    }
    if (r != 0 || !hp || why || !canonical(hp))
        abort();
    size_t n = strlen(hp) + 8;
    char *again = malloc(n + 1);
    memcpy(again, "https://", 8);
    memcpy(again + 8, hp, n - 8 + 1);
    char *hp2 = NULL;
    if (sg_url_host(again, n, &hp2, &why) != 0 || strcmp(hp, hp2))
        abort();
    free(hp2);
    free(again);
    free(hp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check((const char *)data, size);
    if (size <= SG_URL_MAX - 8) {
        char *u = malloc(size + 8);
        memcpy(u, "https://", 8);
        memcpy(u + 8, data, size);
        check(u, size + 8);
        free(u);
    }
    return 0;
}
