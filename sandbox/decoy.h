/* Decoys: empty stand-ins for credential files in the private HOME, all
 * watched by one fanotify group (unprivileged fanotify, FAN_REPORT_FID,
 * inode marks). The real files are never in the sandbox; a skill that
 * opens a decoy is seen reaching for credentials, which is what gets
 * classified.
 *
 * One group per run, not one per decoy: fanotify groups count against the
 * host user's fs.fanotify.max_user_groups (128), and ten a run left the
 * thirteenth concurrent run of a user with none. An event names the file
 * by its handle (FAN_REPORT_FID), which is the handle name_to_handle_at
 * gives: pid 1 takes each decoy's right after it made it, before any skill
 * code runs, and the broker tells events apart by it. */
#ifndef SG_DECOY_H
#define SG_DECOY_H

#include <stddef.h>

#include "sandbox.h"

#define SG_DECOYS(X)                                                          \
    X(".ssh/id_rsa") X(".ssh/id_ed25519") X(".aws/credentials") X(".netrc")  \
    X(".git-credentials") X(".docker/config.json") X(".kube/config")         \
    X(".npmrc") X(".pypirc") X(".config/gcloud/application_default_credentials.json")

/* Inside the sandbox, after pivot_root, as its root: create the decoys in
 * the private HOME and watch them with one group. Fills fh[i] for each
 * decoy watched (bytes 0 for the others) and returns the group's fd, or
 * -1 when none is watched. Never fails the run: decoys are for seeing;
 * but when a decoy that was made could not be watched, *err is the errno
 * and what the call that failed (the broker says so in the run), else
 * *err is 0. */
int sg_decoys_setup(const struct sg_plan *p, struct sg_decoy_fh fh[SG_MAX_DECOYS], int *err,
                    char *what, size_t whatlen);
/* Each event in buf (n bytes read from the group): cb(ctx, i) with the
 * decoy i it is about, or i = -1 when the kernel lost events (its queue
 * overflowed) or one names no decoy. */
void sg_decoy_events(const void *buf, size_t n, const struct sg_decoy_fh fh[SG_MAX_DECOYS],
                     void (*cb)(void *ctx, int i), void *ctx);
/* Relative path of decoy i (under HOME). */
const char *sg_decoy_path(size_t i);

#endif
