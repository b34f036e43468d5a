/* A WASM run's WASI-layer reports (wasireport.h). */
#include "wasireport.h"

#include <jansson.h>
#include <string.h>

#include "util.h"

static const char *str_of(json_t *o, const char *key, const char *def)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && strlen(s) <= 1024 ? s : def;
}

static bool one_of(const char *s, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, v[i]))
            return true;
    return false;
}

static bool denied(json_t *o, struct sg_event_bus *bus)
{
    static const char *const layers[] = {"wasi", "kernel"};
    static const char *const access[] = {"read", "write"};
    const char *call = str_of(o, "call", NULL), *path = str_of(o, "path", NULL);
    const char *layer = str_of(o, "layer", ""), *acc = str_of(o, "access", "");
    const char *why = str_of(o, "why", "");
    json_t *err = json_object_get(o, "errno");
    if (!call || !path || !one_of(layer, layers, SG_ARRAY_LEN(layers)) ||
        !one_of(acc, access, SG_ARRAY_LEN(access)) || !json_is_integer(err) ||
        strspn(call, "abcdefghijklmnopqrstuvwxyz_") != strlen(call))
        return false;
    bool wasi = !strcmp(layer, "wasi");
    json_t *data = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:b}", "syscall", call, "path",
                             path, "access", acc, "layer", layer, "wasi_errno",
                             (json_int_t)json_integer_value(err), "why", why, "reported_by",
                             "the WASI runner, inside the sandbox", "prevented", 1);
    if (json_is_true(json_object_get(o, "cut"))) /* a long path, cut in its middle */
        json_object_set_new(data, "cut", json_true());
    sg_bus_emit(bus, SG_EV_FS_BLOCKED, data,
                "WASM %s of %s (%s) refused by the %s: %s", call, path, acc,
                wasi ? "WASI layer" : "kernel sandbox", why);
    return true;
}

static bool limit(json_t *o, struct sg_event_bus *bus)
{
    const char *what = str_of(o, "what", NULL), *why = str_of(o, "why", "");
    json_t *pages = json_object_get(o, "pages");
    if (!what || strcmp(what, "memory") || !json_is_integer(pages))
        return false;
    sg_bus_emit(bus, SG_EV_RESOURCE_LIMIT_HIT,
                json_pack("{s:s, s:s, s:I, s:s, s:s}", "limit", "memory", "layer", "wasi",
                          "pages", (json_int_t)json_integer_value(pages), "why", why,
                          "reported_by", "the WASI runner, inside the sandbox"),
                "WASM memory held at %lld pages (memory_mb) by the WASI layer: %s",
                (long long)json_integer_value(pages), why);
    return true;
}

static bool started(json_t *o, struct sg_event_bus *bus)
{
    const char *rt = str_of(o, "runtime", NULL), *v = str_of(o, "version", NULL);
    const char *wasi = str_of(o, "wasi", NULL);
    if (!rt || !v || !wasi || strlen(v) > 32)
        return false;
    sg_bus_emit(bus, SG_EV_POLICY_APPLIED,
                json_pack("{s:s, s:s, s:s, s:s}", "layer", "wasi", "runtime", rt, "version", v,
                          "wasi", wasi),
                "WASI layer: %s of Node.js %s (%s) runs the module", rt, v, wasi);
    return true;
}

/* A refusal shown before (the same layer, call and path): its repeats are
 * counted and take no budget, so repeating a cheap one fills nothing.
 * Remembered as the whole text, not a hash one could collide with. */
static bool repeated(struct sg_wasi_report *w, json_t *o)
{
    if (strcmp(str_of(o, "t", ""), "denied"))
        return false;
    cleanup_free char *key = sg_xasprintf("%s %s %s", str_of(o, "layer", ""),
                                          str_of(o, "call", ""), str_of(o, "path", ""));
    for (size_t i = 0; i < w->nkeys; i++)
        if (!strcmp(w->keys[i], key)) {
            w->repeats++;
            return true;
        }
    if (w->nkeys < SG_WASI_KEYS)
        w->keys[w->nkeys++] = steal_pointer(&key);
    return false;
}

static void line(struct sg_wasi_report *w, const char *s, size_t n, struct sg_event_bus *bus)
{
    json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
    const char *t = json_is_object(o) ? str_of(o, "t", "") : "";
    int layer = !strcmp(t, "denied") && !strcmp(str_of(o, "layer", ""), "kernel")
                    ? SG_WASI_LAYER_KERNEL
                    : SG_WASI_LAYER_WASI;
    bool ok = true;
    if (json_is_object(o) && repeated(w, o)) {
        /* counted in w->repeats */
    } else if (w->shown[layer] >= SG_WASI_EVENTS_MAX) {
        w->past[layer]++;
    } else if ((!strcmp(t, "denied") && denied(o, bus)) ||
               (!strcmp(t, "limit") && limit(o, bus)) || (!strcmp(t, "start") && started(o, bus))) {
        w->shown[layer]++;
    } else {
        ok = false;
    }
    json_decref(o);
    if (!ok)
        w->bad++;
}

void sg_wasi_report_feed(struct sg_wasi_report *w, const char *buf, size_t n,
                         struct sg_event_bus *bus)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            if (w->overlong)
                w->bad++;
            else if (w->len)
                line(w, w->line, w->len, bus);
            w->len = 0;
            w->overlong = false;
        } else if (w->overlong) {
            continue;
        } else if (w->len == sizeof w->line) {
            w->overlong = true;
        } else {
            w->line[w->len++] = buf[i];
        }
    }
}

void sg_wasi_report_end(struct sg_wasi_report *w, struct sg_event_bus *bus)
{
    if (w->len && !w->overlong)
        line(w, w->line, w->len, bus);
    else if (w->overlong)
        w->bad++;
    w->len = 0;
    w->overlong = false;
    size_t past = w->past[0] + w->past[1];
    if (past || w->bad || w->repeats)
        sg_bus_emit(bus, SG_EV_OUTPUT_DROPPED,
                    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "stream", "wasi reports",
                              "dropped", (json_int_t)(past + w->bad), "past_cap_wasi",
                              (json_int_t)w->past[0], "past_cap_kernel",
                              (json_int_t)w->past[1], "malformed", (json_int_t)w->bad,
                              "repeats", (json_int_t)w->repeats),
                    "WASM refusals not shown one by one: %zu repeats of ones shown; %zu "
                    "different ones of the WASI layer and %zu of the kernel past the first %d "
                    "of each; %zu reports malformed or over %d bytes",
                    w->repeats, w->past[0], w->past[1], SG_WASI_EVENTS_MAX, w->bad,
                    SG_WASI_LINE_MAX);
    memset(w->past, 0, sizeof w->past);
    w->bad = w->repeats = 0;
    for (size_t i = 0; i < w->nkeys; i++)
        free(w->keys[i]);
    w->nkeys = 0;
}
