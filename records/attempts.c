/* What a run attempted (attempts.h). */
#include <string.h>

#include "attempts.h"
#include "util.h"

static const char *const what_names[] = {
#define X(id, name) name,
    SG_ATT_WHAT(X)
#undef X
};
static const char *const how_names[] = {
#define X(id, name) name,
    SG_ATT_HOW(X)
#undef X
};

/* A permission request's tool: Bash runs a program, Write writes a file,
 * Fetch reaches a host. */
static enum sg_att_what by_tool(json_t *data)
{
    const char *tool = json_string_value(json_object_get(data, "tool"));
    if (!tool)
        return SG_ATT_OTHER;
    if (!strcmp(tool, "Bash"))
        return SG_ATT_PROGRAMS;
    if (!strcmp(tool, "Write") || !strcmp(tool, "Edit"))
        return SG_ATT_FILES;
    if (!strcmp(tool, "Fetch") || !strcmp(tool, "WebFetch"))
        return SG_ATT_NETWORK;
    return SG_ATT_OTHER;
}

int sg_attempts_how(enum sg_event_kind k, json_t *data, enum sg_att_what *what)
{
    switch (k) {
    case SG_EV_FS_BLOCKED: *what = SG_ATT_FILES; return SG_ATT_BLOCKED;
    case SG_EV_SYSCALL_BLOCKED: {
        const char *sc = json_string_value(json_object_get(data, "syscall"));
        bool exec = sc && (!strcmp(sc, "execve") || !strcmp(sc, "execveat"));
        *what = exec ? SG_ATT_PROGRAMS : SG_ATT_OTHER;
        return SG_ATT_BLOCKED;
    }
    case SG_EV_DNS_BLOCKED:
    case SG_EV_NETWORK_EGRESS_BLOCKED: *what = SG_ATT_NETWORK; return SG_ATT_BLOCKED;
    case SG_EV_RESOURCE_LIMIT_HIT: *what = SG_ATT_LIMITS; return SG_ATT_BLOCKED;
    case SG_EV_NETWORK_EGRESS_ALLOWED: *what = SG_ATT_NETWORK; return SG_ATT_ALLOWED;
    case SG_EV_PERMISSION_ASKED: *what = by_tool(data); return SG_ATT_ASKED;
    case SG_EV_PERMISSION_DECIDED:
        *what = by_tool(data);
        return json_is_true(json_object_get(data, "prevented")) ? SG_ATT_BLOCKED : SG_ATT_ALLOWED;
    default: return -1;
    }
}

void sg_attempts_add(struct sg_attempts *a, enum sg_event_kind k, json_t *data)
{
    enum sg_att_what what = SG_ATT_OTHER;
    int how = sg_attempts_how(k, data, &what);
    if (how >= 0)
        a->n[how][what]++;
}

void sg_attempts_add_json(struct sg_attempts *a, json_t *event)
{
    const char *kind = json_string_value(json_object_get(event, "kind"));
    for (int k = 0; kind && k < SG_EV_COUNT; k++)
        if (!strcmp(kind, sg_event_name((enum sg_event_kind)k))) {
            json_t *rep = json_object_get(event, "repeated");
            unsigned long times = 1 + (json_is_integer(rep) && json_integer_value(rep) > 0
                                           ? (unsigned long)json_integer_value(rep)
                                           : 0);
            for (unsigned long i = 0; i < times && i < 100000; i++)
                sg_attempts_add(a, (enum sg_event_kind)k, json_object_get(event, "data"));
            return;
        }
}

json_t *sg_attempts_fields(json_t *data)
{
    static const char *const keys[] = {"tool", "prevented", "syscall"};
    json_t *out = NULL;
    for (size_t i = 0; i < SG_ARRAY_LEN(keys); i++) {
        json_t *v = json_object_get(data, keys[i]);
        if (!json_is_string(v) && !json_is_boolean(v))
            continue;
        if (!out)
            out = json_object();
        json_object_set_new(out, keys[i], json_is_string(v) ? json_string(json_string_value(v))
                                                           : json_boolean(json_is_true(v)));
    }
    return out;
}

unsigned long sg_attempts_total(const struct sg_attempts *a, enum sg_att_how how)
{
    unsigned long t = 0;
    for (int w = 0; w < SG_ATT_WHAT_COUNT; w++)
        t += a->n[how][w];
    return t;
}

char *sg_attempts_text(const struct sg_attempts *a)
{
    struct sg_buf b;
    sg_buf_init(&b, 1024);
    for (int h = 0; h < SG_ATT_HOW_COUNT; h++) {
        unsigned long t = sg_attempts_total(a, (enum sg_att_how)h);
        sg_buf_printf(&b, "%s%s %lu", h ? " · " : "", how_names[h], t);
        for (int w = 0, first = 1; t && w < SG_ATT_WHAT_COUNT; w++)
            if (a->n[h][w]) {
                sg_buf_printf(&b, "%s%s %lu", first ? " (" : ", ", what_names[w], a->n[h][w]);
                first = 0;
            }
        if (t)
            sg_buf_printf(&b, ")");
    }
    return sg_buf_steal(&b);
}

json_t *sg_attempts_json(const struct sg_attempts *a)
{
    json_t *j = json_object();
    for (int h = 0; h < SG_ATT_HOW_COUNT; h++) {
        json_t *o = json_object();
        for (int w = 0; w < SG_ATT_WHAT_COUNT; w++)
            if (a->n[h][w])
                json_object_set_new(o, what_names[w], json_integer((json_int_t)a->n[h][w]));
        json_object_set_new(j, how_names[h], o);
    }
    return j;
}

void sg_attempts_from_json(struct sg_attempts *a, json_t *j)
{
    memset(a, 0, sizeof *a);
    for (int h = 0; h < SG_ATT_HOW_COUNT; h++)
        for (int w = 0; w < SG_ATT_WHAT_COUNT; w++) {
            json_int_t v = json_integer_value(json_object_get(json_object_get(j, how_names[h]),
                                                              what_names[w]));
            a->n[h][w] = v > 0 ? (unsigned long)v : 0;
        }
}
