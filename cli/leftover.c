#include "leftover.h"

#include <string.h>

#include "refusals.h"
#include "sanitize.h"
#include "util.h"

static const char *dstr(const struct sg_event *ev, const char *k)
{
    return json_string_value(json_object_get(ev->data, k));
}

static void add_view(struct sg_leftover *l, const struct sg_event *ev)
{
    const char *v = json_is_true(json_object_get(ev->data, "home")) ? "home" : dstr(ev, "view");
    if (!v)
        return;
    for (size_t i = 0; i < l->nviews; i++)
        if (!strcmp(l->views[i], v))
            return;
    if (l->nviews < SG_ARRAY_LEN(l->views))
        l->views[l->nviews++] = sg_xstrdup(v);
}

/* A path in the private home as the skill's messages name it: ~/rel. */
static char *tilde(const struct sg_event *ev, const char *path)
{
    const char *view = dstr(ev, "view");
    size_t n = view ? strlen(view) : 0;
    if (json_is_true(json_object_get(ev->data, "home")) && n && !strncmp(path, view, n) &&
        path[n] == '/')
        return sg_xasprintf("~%s", path + n);
    return sg_xstrdup(path);
}

/* A write_discarded of an ordinary file, or the count of those past the
 * ones named, or a walk that stopped early. */
static bool take_discarded(struct sg_leftover *l, const struct sg_event *ev)
{
    const char *cls = dstr(ev, "class");
    if (!cls || strcmp(cls, "file"))
        return false; /* a persistence or credential place: said as it comes */
    json_t *more = json_object_get(ev->data, "more");
    const char *path = dstr(ev, "path");
    if (json_is_integer(more)) {
        l->files += (unsigned long long)json_integer_value(more);
    } else if (json_object_get(ev->data, "walked")) {
        l->walk_cut = true;
    } else if (path) {
        l->files++;
        if (l->nnamed < SG_LEFTOVER_NAMED)
            l->named[l->nnamed++] = tilde(ev, path);
    } else {
        return false;
    }
    l->bytes += (unsigned long long)json_integer_value(json_object_get(ev->data, "bytes"));
    add_view(l, ev);
    return true;
}

/* The first refused write into /var, /run or /dev, then their count. */
static bool take_system(struct sg_leftover *l, const struct sg_event *ev)
{
    if (!json_is_true(json_object_get(ev->data, "private")))
        return false;
    json_t *n = json_object_get(ev->data, "refused");
    if (json_is_integer(n) && (unsigned long long)json_integer_value(n) > l->system)
        l->system = (unsigned long long)json_integer_value(n);
    else if (!l->system)
        l->system = 1;
    const char *path = dstr(ev, "path");
    if (path && !l->system_first)
        l->system_first = sg_xstrdup(path);
    return true;
}

bool sg_leftover_take(struct sg_leftover *l, const struct sg_event *ev)
{
    if (!ev->data)
        return false;
    if (ev->kind == SG_EV_WRITE_DISCARDED)
        return take_discarded(l, ev);
    if (ev->kind == SG_EV_FS_BLOCKED)
        return take_system(l, ev);
    return false;
}

/* "13 files (2048 bytes) the skill wrote in its private home and /tmp (a, b, c
 * and 10 more)" */
static void say_files(struct sg_buf *b, const struct sg_leftover *l)
{
    sg_buf_printf(b, "%llu file%s (%llu bytes) the skill wrote in its private ", l->files,
                  l->files == 1 ? "" : "s", l->bytes);
    for (size_t i = 0; i < l->nviews; i++)
        sg_buf_printf(b, "%s%s", i == 0 ? "" : i + 1 == l->nviews ? " and " : ", ",
                      l->views[i]);
    for (size_t i = 0; i < l->nnamed; i++)
        sg_buf_printf(b, "%s%s", i ? ", " : " (", l->named[i]);
    if (l->nnamed && l->files > l->nnamed)
        sg_buf_printf(b, " and %llu more", l->files - l->nnamed);
    sg_buf_printf(b, "%s%s", l->nnamed ? ")" : "",
                  l->walk_cut ? ", and more than were looked at" : "");
}

void sg_leftover_print(FILE *f, const struct sg_leftover *l)
{
    if (!l->files && !l->walk_cut && !l->system)
        return;
    struct sg_buf b;
    sg_buf_init(&b, 9 * 4096 + 1024); /* eight paths at most, PATH_MAX each */
    sg_buf_printf(&b, "discarded with the sandbox, never on this machine: ");
    if (l->files || l->walk_cut)
        say_files(&b, l);
    if (l->system)
        sg_buf_printf(&b, "%s%llu write%s into its own system folders, refused as nothing there "
                          "is kept (%s%s)", l->files || l->walk_cut ? "; " : "", l->system,
                      l->system == 1 ? "" : "s", l->system_first ? l->system_first : "",
                      l->system > 1 ? " first" : "");
    sg_buf_printf(&b, "; --watch or the trace lists each");
    cleanup_free char *text = sg_buf_steal(&b);
    cleanup_free char *s = sg_sanitize_str(text, 0);
    fprintf(f, "skillgate: %s\n", s);
}

json_t *sg_leftover_refusals(const struct sg_leftover *l, json_t *refusals)
{
    json_t *out = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(refusals, i, r)
    {
        const char *why = json_string_value(json_object_get(r, "why"));
        if (l->system && why && !strcmp(why, SG_REFUSAL_PRIVATE_SYSTEM))
            continue; /* the line said it */
        json_array_append(out, r);
    }
    return out;
}

void sg_leftover_free(struct sg_leftover *l)
{
    for (size_t i = 0; i < l->nnamed; i++)
        free(l->named[i]);
    for (size_t i = 0; i < l->nviews; i++)
        free(l->views[i]);
    free(l->system_first);
    memset(l, 0, sizeof *l);
}
