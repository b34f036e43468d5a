/* libFuzzer target for the protected targets (manifest/protected.c,
 * gitnamed.c): any bytes as a path to match (sg_protected_path, _place,
 * _move: never a crash, never past the path read), and any bytes as a
 * repository's config, which the broker reads when a skill writes beside
 * it (include paths, quoting, sections on one line, NUL bytes): the reader
 * never blocks, never reads past SG_GIT_CONFIG_MAX, and keeps its caps. */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitnamed.h"
#include "protected.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char repo[64];

static void gone(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/.git/config", repo);
    unlink(p);
    snprintf(p, sizeof p, "%s/.git", repo);
    rmdir(p);
    rmdir(repo);
}

static void once(void)
{
    if (repo[0])
        return;
    atexit(gone);
    snprintf(repo, sizeof repo, "/tmp/sgfuzz-git-%d", (int)getpid());
    char p[128];
    mkdir(repo, 0700);
    snprintf(p, sizeof p, "%s/.git", repo);
    mkdir(p, 0700);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    once();
    if (size && data[0] & 1) { /* a path */
        char path[PATH_MAX];
        size_t n = size - 1 < sizeof path - 1 ? size - 1 : sizeof path - 1;
        memcpy(path, data + 1, n);
        path[n] = '\0';
        sg_protected_path(path, NULL);
        sg_protected_place(path);
        sg_protected_move(path, "/p/.git/modules/m", true);
        return 0;
    }
    char cfg[128], probe[128];
    snprintf(cfg, sizeof cfg, "%s/.git/config", repo);
    snprintf(probe, sizeof probe, "%s/src/x.c", repo);
    int fd = open(cfg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    if (size > 1 && write(fd, data + 1, size - 1) < 0)
        abort();
    close(fd);
    sg_protected_path(probe, NULL);
    return 0;
}
