/* The traces folder's index (traceindex.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attempts.h"
#include "traceindex.h"
#include "tracediff.h"
#include "util.h"

json_t *sg_trace_load_at(int dfd, const char *name)
{
    cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    cleanup_free char *text = NULL;
    size_t len;
    if (fd < 0 || sg_read_fd_capped(fd, SG_TRACE_FILE_MAX, &text, &len) < 0)
        return NULL;
    json_t *doc = json_loadb(text, len, 0, NULL);
    if (doc && !json_is_object(doc)) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static long long mtime_ns(const struct stat *st)
{
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

json_t *sg_trace_index_entry(int dfd, const char *name, json_t *doc)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    json_t *vs = json_object_get(doc, "violation_summary");
    json_t *e = json_pack("{s:s, s:I, s:I}", "file", name, "size", (json_int_t)st.st_size,
                          "mtime_ns", (json_int_t)mtime_ns(&st));
    if (!doc)
        return e;
    static const char *const strs[] = {"skill_name", "started_at", "status", "end_reason",
                                       "skill_root", "skill_digest"};
    for (size_t i = 0; i < SG_ARRAY_LEN(strs); i++) {
        json_t *v = json_object_get(doc, strs[i]);
        json_object_set_new(e, strs[i], json_string(json_is_string(v) ? json_string_value(v) : ""));
    }
    json_t *ec = json_object_get(doc, "exit_code");
    json_object_set_new(e, "exit_code", json_is_integer(ec) ? json_copy(ec) : json_null());
    json_object_set_new(e, "duration_ms",
                        json_integer(json_integer_value(json_object_get(doc, "duration_ms"))));
    const char *sev = json_string_value(json_object_get(vs, "max_severity"));
    json_object_set_new(e, "max_severity", json_string(sev ? sev : ""));
    json_object_set_new(e, "enforcements",
                        json_integer(json_integer_value(json_object_get(vs, "total_enforcements"))));
    json_object_set_new(e, "decisions",
                        json_integer((json_int_t)json_array_size(json_object_get(doc, "decisions"))));
    json_object_set(e, "degraded", json_is_true(json_object_get(doc, "degraded")) ? json_true()
                                                                                   : json_false());
    struct sg_attempts att = {0};
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "events"), i, ev)
        sg_attempts_add_json(&att, ev);
    json_object_set_new(e, "attempts", sg_attempts_json(&att));
    return e;
}

bool sg_trace_index_fresh(int dfd, const char *name, json_t *entry)
{
    struct stat st;
    return entry && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           json_integer_value(json_object_get(entry, "size")) == (json_int_t)st.st_size &&
           json_integer_value(json_object_get(entry, "mtime_ns")) == (json_int_t)mtime_ns(&st);
}

static void dump_lines(struct sg_buf *b, json_t *entries)
{
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e)
    {
        cleanup_free char *line = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (line && strlen(line) < SG_TRACE_INDEX_LINE_MAX)
            sg_buf_printf(b, "%s\n", line);
    }
}

int sg_trace_index_put(int dfd, json_t *entries, bool rewrite)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_TRACE_INDEX_MAX);
    dump_lines(&b, entries);
    /* appenders that waited while a rewrite replaced it reopen the new file */
    cleanup_fd int fd = sg_open_locked_current(dfd, SG_TRACE_INDEX, O_WRONLY | O_APPEND | O_NONBLOCK);
    int r = fd < 0 ? fd : 0;
    if (!r && !rewrite) {
        r = sg_write_all(fd, b.data ? b.data : "", b.len);
    } else if (!r) {
        /* a whole new file under the old one's lock: appenders wait for it,
         * then see the inode changed and reopen */
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", SG_TRACE_INDEX, (int)getpid());
        cleanup_fd int nfd =
            openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        r = nfd < 0 ? -errno : sg_write_all(nfd, b.data ? b.data : "", b.len);
        if (!r && renameat(dfd, tmp, dfd, SG_TRACE_INDEX) < 0)
            r = -errno;
        if (r && nfd >= 0)
            unlinkat(dfd, tmp, 0);
    }
    sg_buf_free(&b);
    return r;
}

json_t *sg_trace_index_load(int dfd, size_t *lines)
{
    json_t *map = json_object();
    *lines = 0;
    cleanup_fd int fd = openat(dfd, SG_TRACE_INDEX, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    cleanup_free char *text = NULL;
    size_t len;
    if (fd < 0 || sg_read_fd_capped(fd, SG_TRACE_INDEX_MAX, &text, &len) < 0)
        return map;
    for (char *s = text, *nl; s < text + len; s = nl + 1) {
        nl = memchr(s, '\n', (size_t)(text + len - s));
        if (!nl)
            break; /* a line being appended */
        ++*lines;
        if (nl - s >= SG_TRACE_INDEX_LINE_MAX)
            continue;
        json_t *e = json_loadb(s, (size_t)(nl - s), 0, NULL);
        const char *f = json_string_value(json_object_get(e, "file"));
        if (f && !strchr(f, '/') && f[0] != '.')
            json_object_set(map, f, e);
        json_decref(e);
    }
    return map;
}

static int cmp_rows(const void *x, const void *y)
{
    json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    const char *sa = json_string_value(json_object_get(a, "started_at"));
    const char *sb = json_string_value(json_object_get(b, "started_at"));
    int c = strcmp(sa ? sa : "", sb ? sb : "");
    return c ? c : strcmp(json_string_value(json_object_get(a, "file")),
                          json_string_value(json_object_get(b, "file")));
}

json_t *sg_trace_index_rows(int dfd)
{
    char **names = NULL;
    size_t n = 0, lines = 0;
    int fd = dup(dfd);
    json_t *rows = json_array();
    if (fd < 0 || sg_list_dir_fd(fd, SG_LIST_ALL, 100000, &names, &n) < 0)
        return rows;
    json_t *index = sg_trace_index_load(dfd, &lines);
    json_t *added = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (name[0] == '.' || !sg_str_has_suffix(name, ".json"))
            continue;
        json_t *e = json_object_get(index, name);
        if (e && sg_trace_index_fresh(dfd, name, e)) {
            json_incref(e);
        } else {
            json_t *doc = sg_trace_load_at(dfd, name);
            e = sg_trace_index_entry(dfd, name, doc);
            if (e && !doc)
                json_object_set_new(e, "unreadable", json_true());
            if (e)
                json_array_append(added, e);
            json_decref(doc);
        }
        if (e && !json_is_true(json_object_get(e, "unreadable")))
            json_array_append(rows, e);
        json_decref(e);
    }
    if (json_array_size(added))
        sg_trace_index_put(dfd, added, false); /* a cache: a failure costs a read */
    json_decref(added);
    json_decref(index);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    sg_json_array_sort(rows, cmp_rows);
    return rows;
}
