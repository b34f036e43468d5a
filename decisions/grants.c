/* grants.yaml: the "always" decisions, each pinned to a skill's name and
 * content digest, read only when nobody else may write the file. */
#include "perm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "perm_int.h"
#include "policy.h"
#include "skill.h"
#include "util.h"
#include "ynode.h"

char *sg_grants_path(void)
{
    cleanup_free char *dir = sg_config_dir(); /* the folder the sandbox masks */
    return sg_xasprintf("%s/grants.yaml", dir);
}

/* grants.yaml: grants: [{skill, digest, rule, effect, created}]. An
 * "always allow" there runs an undeclared program without asking, so the
 * file is read only when it and its folder are the user's own (or root's)
 * and nobody else may write them (sg_read_private_file); otherwise it is
 * ignored, *err is -EPERM and *why (caller frees) says why (issue 14). */
json_t *sg_grants_read(const char *path, struct sg_diags *d, int *err, char **why)
{
    json_t *list = json_array();
    cleanup_free char *buf = NULL;
    size_t len = 0;
    *why = NULL;
    *err = sg_read_private_file(path, SG_MANIFEST_MAX, &buf, &len, why);
    if (*err == -EPERM) {
        sg_diag_add(d, SG_WARNING, path, 0, 0, NULL, "ignored, no grant in it applies: %s",
                    *why);
        return list;
    }
    if (*err < 0) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s",
                    *err == -EFBIG || *err == -EINVAL ? "not a regular file under 256 KiB"
                                                      : strerror(-*err));
        return list;
    }
    struct sg_ynode *root = NULL;
    if (buf && sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        *err = -EINVAL;
    const struct sg_ynode *g = root ? sg_y_get(root, "grants") : NULL;
    for (size_t i = 0; g && g->type == SG_Y_SEQ && i < g->n; i++) {
        const struct sg_ynode *it = g->kids[i];
        json_t *o = json_object();
        static const char *const keys[] = {"skill", "digest", "rule", "effect", "created"};
        for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++) {
            const struct sg_ynode *v = sg_y_get(it, keys[k]);
            if (v && v->type == SG_Y_SCALAR)
                json_object_set_new(o, keys[k], json_string(v->str));
        }
        json_array_append_new(list, o);
    }
    sg_ynode_free(root);
    return list;
}

static void yaml_str(FILE *f, const char *s)
{
    /* a double-quoted YAML scalar: JSON's escaping is valid YAML */
    json_t *j = json_string(s ? s : "");
    char *t = json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
    fputs(t ? t : "\"\"", f);
    free(t);
    json_decref(j);
}

static int write_grants(const char *path, json_t *list)
{
    /* the folder walked safely (under sudo it is in the user's home) */
    cleanup_free char *dir = sg_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return -EINVAL;
    *slash = '\0';
    const char *base = slash + 1;
    cleanup_fd int dfd = sg_open_records_dir(dir);
    if (dfd < 0)
        return dfd;
    /* never into a folder, or over a file, that is not ours alone */
    cleanup_free char *old = NULL, *why = NULL;
    size_t oldlen;
    int mr = sg_read_private_file(path, SG_MANIFEST_MAX, &old, &oldlen, &why);
    if (mr == -EPERM)
        return mr;
    cleanup_free char *tmp = sg_xasprintf("%s.tmp.%d", base, (int)getpid());
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    FILE *f = fdopen(fd, "w");
    fputs("# skillgate grants: \"always\" decisions, each pinned to a skill's content digest.\n"
          "# A changed skill has a new digest and is asked again. Revoke with\n"
          "# `skillgate grants revoke N`.\ngrants:\n", f);
    size_t i;
    json_t *g;
    json_array_foreach(list, i, g)
    {
        static const char *const keys[] = {"skill", "digest", "rule", "effect", "created"};
        for (size_t k = 0; k < SG_ARRAY_LEN(keys); k++) {
            fprintf(f, "%s%s: ", k ? "    " : "  - ", keys[k]);
            yaml_str(f, json_string_value(json_object_get(g, keys[k])));
            fputc('\n', f);
        }
    }
    int r = fflush(f) == 0 && fsync(fd) == 0 ? 0 : -errno;
    fclose(f);
    if (!r && renameat(dfd, tmp, dfd, base) < 0)
        r = -errno;
    if (r)
        unlinkat(dfd, tmp, 0);
    return r;
}

int sg_grants_list(const char *path, json_t **out, struct sg_diags *d)
{
    int err;
    cleanup_free char *why = NULL;
    *out = sg_grants_read(path, d, &err, &why);
    return err;
}

int sg_grants_save(const char *path, json_t *list)
{
    return write_grants(path, list);
}
