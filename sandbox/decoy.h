/* Decoys: empty stand-ins for credential files in the private HOME, each
 * watched by a fanotify group of its own (unprivileged fanotify, inode
 * marks). The real files are never in the sandbox; a skill that opens a
 * decoy is seen reaching for credentials, which is what gets classified. */
#ifndef SG_DECOY_H
#define SG_DECOY_H

#include <stddef.h>

#include "sandbox.h"

#define SG_DECOYS(X)                                                          \
    X(".ssh/id_rsa") X(".ssh/id_ed25519") X(".aws/credentials") X(".netrc")  \
    X(".git-credentials") X(".docker/config.json") X(".kube/config")         \
    X(".npmrc") X(".pypirc") X(".config/gcloud/application_default_credentials.json")

/* Inside the sandbox, after pivot_root, as its root: create the decoys in
 * the private HOME and watch each. Fills fds[i] (or -1) for decoy i; returns
 * how many are watched. Never fails the run: decoys are for seeing. */
size_t sg_decoys_setup(const struct sg_plan *p, int fds[SG_MAX_DECOYS]);
/* Relative path of decoy i (under HOME). */
const char *sg_decoy_path(size_t i);

#endif
