#include "events.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util.h"

static const struct {
    const char *name, *label;
    int sev;
    const char *ss;
} kinds[] = {
#define X(id, name, label, sev, ss) [SG_EV_##id] = {name, label, sev, ss},
    SG_EVENT_KINDS(X)
#undef X
};

const char *sg_event_name(enum sg_event_kind k)
{
    return kinds[k].name;
}

const char *sg_event_ss_kind_of(const char *name)
{
    for (size_t i = 0; name && i < SG_EV_COUNT; i++)
        if (!strcmp(kinds[i].name, name))
            return kinds[i].ss;
    return NULL;
}

const char *sg_event_label(enum sg_event_kind k)
{
    return kinds[k].label;
}

const char *sg_event_ss_kind(enum sg_event_kind k)
{
    return kinds[k].ss;
}

int sg_event_severity(enum sg_event_kind k)
{
    return kinds[k].sev;
}

void sg_bus_subscribe(struct sg_event_bus *b, sg_event_sink_fn fn, void *ctx)
{
    if (b->nsinks < SG_MAX_SINKS) {
        b->sinks[b->nsinks].fn = fn;
        b->sinks[b->nsinks++].ctx = ctx;
    }
}

void sg_bus_unsubscribe(struct sg_event_bus *b, void *ctx)
{
    size_t o = 0;
    for (size_t i = 0; i < b->nsinks; i++)
        if (b->sinks[i].ctx != ctx)
            b->sinks[o++] = b->sinks[i];
    b->nsinks = o;
}

/* which layer held a refusal of a WASM run (events.h) */
static json_t *with_layer(const struct sg_event_bus *b, enum sg_event_kind k, json_t *data)
{
    if (!b->layer || sg_event_severity(k) != 2 || (data && !json_is_object(data)))
        return data;
    if (!data)
        data = json_object();
    /* the broker's own bounds (output, the timer, its memory watch): "broker" */
    const char *mech = json_string_value(json_object_get(data, "mechanism"));
    bool broker = k == SG_EV_OUTPUT_DROPPED || k == SG_EV_OUTPUT_ESCAPES ||
                  (mech && (!strcmp(mech, "broker") || !strcmp(mech, "resident watch")));
    if (!json_object_get(data, "layer"))
        json_object_set_new(data, "layer", json_string(broker ? "broker" : b->layer));
    return data;
}

void sg_bus_emit_raw(struct sg_event_bus *b, enum sg_event_kind k, const char *msg, size_t len,
                     json_t *data)
{
    data = with_layer(b, k, data);
    struct timespec m, w;
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &w);
    struct sg_event ev = {
        .kind = k,
        .mono_ns = (uint64_t)m.tv_sec * 1000000000ULL + (uint64_t)m.tv_nsec,
        .wall_ms = (int64_t)w.tv_sec * 1000 + w.tv_nsec / 1000000,
        .message = msg,
        .message_len = len,
        .data = data,
    };
    b->counts[k]++;
    for (size_t i = 0; i < b->nsinks; i++)
        b->sinks[i].fn(b->sinks[i].ctx, &ev);
    json_decref(data);
}

void sg_bus_emit(struct sg_event_bus *b, enum sg_event_kind k, json_t *data, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *msg = sg_xvasprintf(fmt, ap);
    va_end(ap);
    sg_bus_emit_raw(b, k, msg, strlen(msg), data);
}

void sg_format_clock(int64_t wall_ms, char out[16])
{
    time_t t = (time_t)(wall_ms / 1000);
    struct tm tm;
    localtime_r(&t, &tm);
    snprintf(out, 16, "%02d:%02d:%02d.%03d", tm.tm_hour % 24, tm.tm_min % 60, tm.tm_sec % 62,
             (int)((unsigned long long)wall_ms % 1000));
}

void sg_format_iso(int64_t wall_ms, char out[32])
{
    /* a flood of output is hundreds of thousands of events a second: the
     * date and time are formatted once per second, the milliseconds here
     * (gmtime_r and snprintf for each took a quarter of the broker's time
     * streaming 1 GiB under --json) */
    static __thread int64_t sec = INT64_MIN;
    static __thread char head[32]; /* "YYYY-MM-DDTHH:MM:SS." */
    time_t t = (time_t)(wall_ms / 1000);
    if (t != sec) {
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(head, sizeof head, "%04d-%02d-%02dT%02d:%02d:%02d.", (tm.tm_year + 1900) % 10000,
                 (tm.tm_mon + 1) % 13, tm.tm_mday % 32, tm.tm_hour % 24, tm.tm_min % 60,
                 tm.tm_sec % 62);
        sec = t;
    }
    unsigned ms = (unsigned)((unsigned long long)wall_ms % 1000);
    memcpy(out, head, 20);
    out[20] = (char)('0' + ms / 100);
    out[21] = (char)('0' + ms / 10 % 10);
    out[22] = (char)('0' + ms % 10);
    out[23] = 'Z';
    out[24] = '\0';
}
