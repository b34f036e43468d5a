#include "decoy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif

static const char *const decoys[] = {
#define X(p) p,
    SG_DECOYS(X)
#undef X
};
_Static_assert(SG_ARRAY_LEN(decoys) <= SG_MAX_DECOYS, "a slot per decoy");

const char *sg_decoy_path(size_t i)
{
    return i < SG_ARRAY_LEN(decoys) ? decoys[i] : "?";
}

/* Is HOME private (a tmpfs of ours) rather than a declared host folder? */
static bool home_private(const struct sg_plan *p)
{
    return sg_path_private(p, p->home);
}

/* Length of decoy i's folder under HOME ("" for HOME itself). */
static size_t dir_len(size_t i)
{
    const char *slash = strrchr(decoys[i], '/');
    return slash ? (size_t)(slash - decoys[i]) : 0;
}

/* Was decoy i's folder made already, as the folder (or a parent of the
 * folder) of a decoy before it? made[j]: decoy j's folder was. */
static bool already_made(size_t i, const bool *made)
{
    size_t li = dir_len(i);
    for (size_t j = 0; j < i; j++)
        if (made[j] && (li == 0 || (li <= dir_len(j) && !strncmp(decoys[j], decoys[i], li) &&
                                    decoys[j][li] == '/')))
            return true;
    return false;
}

/* Decoy i at path; made[i] says whether its folder is there now. */
static int make_decoy(const struct sg_plan *p, const char *path, size_t i, bool *made)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    /* folders the skill can walk into, like the real ones; each made once
     * (pid 1 made them a moment ago, before any skill code) */
    if (!already_made(i, made)) {
        int r = sg_mkdir_p(dir, 0700, p->skill_uid, p->skill_gid);
        if (r < 0)
            return r;
    }
    made[i] = true;
    int r;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    r = fchown(fd, p->skill_uid, p->skill_gid) < 0 ? -errno : 0;
    close(fd);
    return r;
}

/* The handle FAN_REPORT_FID reports for path: the one name_to_handle_at
 * gives (AT_HANDLE_FID where the kernel knows it, which is how fanotify
 * encodes it; the same bytes on a filesystem that can export). */
static int decoy_handle(const char *path, struct sg_decoy_fh *out)
{
    union {
        struct file_handle h;
        char buf[sizeof(struct file_handle) + SG_DECOY_FH_MAX];
    } u;
    int mnt;
    u.h.handle_bytes = SG_DECOY_FH_MAX;
    int r = name_to_handle_at(AT_FDCWD, path, &u.h, &mnt, AT_HANDLE_FID);
    if (r < 0 && errno == EINVAL) {
        u.h.handle_bytes = SG_DECOY_FH_MAX;
        r = name_to_handle_at(AT_FDCWD, path, &u.h, &mnt, 0);
    }
    if (r < 0)
        return -errno;
    out->bytes = u.h.handle_bytes;
    out->type = u.h.handle_type;
    memcpy(out->f, u.h.f_handle, u.h.handle_bytes);
    return 0;
}

static void failed(int *err, char *what, size_t whatlen, int e, const char *call)
{
    if (*err == 0) {
        *err = e;
        snprintf(what, whatlen, "%s", call);
    }
}

int sg_decoys_setup(const struct sg_plan *p, struct sg_decoy_fh fh[SG_MAX_DECOYS], int *err,
                    char *what, size_t whatlen)
{
    memset(fh, 0, SG_MAX_DECOYS * sizeof *fh);
    *err = 0;
    if (whatlen)
        *what = '\0';
    if (!home_private(p))
        return -1;
    int group = -1;
    size_t n = 0;
    bool made[SG_ARRAY_LEN(decoys)] = {false};
    for (size_t i = 0; i < SG_ARRAY_LEN(decoys); i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", p->home, decoys[i]);
        if (make_decoy(p, path, i, made) < 0)
            continue; /* something of the skill's own is there (a declared path) */
        if (group < 0) {
            group = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK,
                                  O_RDONLY | O_CLOEXEC);
            if (group < 0) { /* the decoys still hide nothing real */
                failed(err, what, whatlen, errno, "fanotify_init");
                return -1;
            }
        }
        int r = decoy_handle(path, &fh[i]);
        if (r < 0) {
            failed(err, what, whatlen, -r, "name_to_handle_at");
            continue;
        }
        if (fanotify_mark(group, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, path) < 0) {
            failed(err, what, whatlen, errno, "fanotify_mark");
            fh[i].bytes = 0;
            continue;
        }
        n++;
    }
    if (n == 0 && group >= 0) {
        close(group);
        group = -1;
    }
    return group;
}

/* The decoy whose handle an FID record carries, or -1. */
static int match(const struct sg_decoy_fh fh[SG_MAX_DECOYS], const unsigned char *rec,
                 size_t len)
{
    struct fanotify_event_info_fid fid;
    struct file_handle h;
    if (len < sizeof fid + sizeof h)
        return -1;
    memcpy(&h, rec + sizeof fid, sizeof h);
    if (h.handle_bytes > len - sizeof fid - sizeof h)
        return -1;
    const unsigned char *f = rec + sizeof fid + sizeof h;
    for (int i = 0; i < SG_MAX_DECOYS; i++)
        if (fh[i].bytes && fh[i].bytes == h.handle_bytes && fh[i].type == h.handle_type &&
            !memcmp(fh[i].f, f, h.handle_bytes))
            return i;
    return -1;
}

void sg_decoy_events(const void *buf, size_t n, const struct sg_decoy_fh fh[SG_MAX_DECOYS],
                     void (*cb)(void *ctx, int i), void *ctx)
{
    const unsigned char *b = buf;
    struct fanotify_event_metadata md;
    for (size_t off = 0; off + sizeof md <= n; off += md.event_len) {
        memcpy(&md, b + off, sizeof md);
        if (md.event_len < sizeof md || md.event_len > n - off || md.metadata_len < sizeof md ||
            md.metadata_len > md.event_len)
            return;
        int which = -1;
        struct fanotify_event_info_header hdr;
        for (size_t k = md.metadata_len; which < 0 && k + sizeof hdr <= md.event_len;) {
            memcpy(&hdr, b + off + k, sizeof hdr);
            if (hdr.len < sizeof hdr || hdr.len > md.event_len - k)
                break;
            if (hdr.info_type == FAN_EVENT_INFO_TYPE_FID)
                which = match(fh, b + off + k, hdr.len);
            k += hdr.len;
        }
        cb(ctx, which);
    }
}
