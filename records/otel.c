/* OpenTelemetry export (otel.h says what and why).
 *
 *   owner (broker loop, MCP, hook)       exporter thread
 *   sg_span_begin .. attrs, events
 *   sg_span_end ──► queue (bounded) ───► every schedule delay, or a full
 *                                        batch, or a flush: take a batch,
 *                                        encode (protobuf-c), POST (libcurl,
 *                                        timeout), count sent or dropped
 *   sg_otel_flush(wait) ◄── done ────────┘
 */
#include "otel.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <netdb.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "otlp_trace_service.pb-c.h"
#include "sandbox.h"
#include "sanitize.h"
#include "util.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue PbKV;
typedef Opentelemetry__Proto__Common__V1__AnyValue PbAny;
typedef Opentelemetry__Proto__Trace__V1__Span PbSpan;
typedef Opentelemetry__Proto__Trace__V1__Span__Event PbEvent;
typedef Opentelemetry__Proto__Trace__V1__Status PbStatus;

enum atype { AT_STR, AT_INT, AT_BOOL, AT_DBL };

struct attr {
    char *key;
    enum atype t;
    union {
        char *s;
        int64_t i;
        bool b;
        double d;
    } v;
};

struct attrs {
    struct attr *a;
    size_t n, cap;
    uint32_t dropped;
};

struct sevent {
    char *name;
    uint64_t time_ns;
    struct attrs at;
};

struct sg_span {
    struct sg_span_ctx ctx;
    uint8_t parent[8];
    bool has_parent;
    char *name;
    enum sg_span_kind kind;
    uint64_t start_ns, end_ns;
    struct attrs at;
    struct sevent *ev;
    size_t nev, evcap;
    uint32_t dropped_events;
    enum sg_span_status status;
    char *status_msg;
    bool keep;            /* past a full queue (sg_span_keep) */
    struct sg_span *next; /* in the queue */
};

/* ---- spans ---- */

uint64_t sg_otel_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void random_bytes(uint8_t *p, size_t n)
{
    bool zero = true;
    while (zero) {
        size_t got = 0;
        while (got < n) {
            ssize_t r = getrandom(p + got, n - got, 0);
            if (r > 0)
                got += (size_t)r;
            else if (errno != EINTR)
                abort(); /* no randomness: no id can be made (never on Linux >= 3.17) */
        }
        for (size_t i = 0; i < n; i++)
            zero &= p[i] == 0;
    }
}

static bool hexval(const char *s, size_t n, uint8_t *out)
{
    bool nonzero = false;
    for (size_t i = 0; i < n; i++) {
        int v[2];
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            if (c >= '0' && c <= '9')
                v[k] = c - '0';
            else if (c >= 'a' && c <= 'f')
                v[k] = c - 'a' + 10;
            else
                return false;
        }
        out[i] = (uint8_t)(v[0] << 4 | v[1]);
        nonzero |= out[i] != 0;
    }
    return nonzero || n == 1;
}

bool sg_traceparent_parse(const char *s, size_t len, struct sg_span_ctx *out)
{
    memset(out, 0, sizeof *out);
    if (!s || len < 55 || len > SG_OTEL_TRACEPARENT_MAX)
        return false;
    uint8_t ver;
    if (!hexval(s, 1, &ver) || ver == 0xff || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return false;
    if (ver == 0 && len != 55)
        return false;
    if (len > 55 && s[55] != '-') /* a later version: more fields after a dash */
        return false;
    if (!hexval(s + 3, 16, out->trace_id) || !hexval(s + 36, 8, out->span_id) ||
        !hexval(s + 53, 1, &out->flags))
        return false;
    out->valid = true;
    return true;
}

void sg_traceparent_format(const struct sg_span_ctx *c, char out[56])
{
    char *p = out + snprintf(out, 56, "00-");
    for (int i = 0; i < 16; i++)
        p += snprintf(p, 3, "%02x", c->trace_id[i]);
    *p++ = '-';
    for (int i = 0; i < 8; i++)
        p += snprintf(p, 3, "%02x", c->span_id[i]);
    snprintf(p, 4, "-%02x", c->flags);
}

static struct {
    bool on;
    char *url;
    struct curl_slist *headers;
    char *service;
    struct attrs resource;
    long timeout_ms;
    int delay_ms;
    size_t max_queue, batch;
    /* libcurl, loaded when export is on */
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add)(CURLM *, CURL *);
    CURLMcode (*multi_remove)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURL *curl;
    CURLM *multi;
    struct curl_slist *pin; /* the endpoint's address, resolved once at start */
    /* the queue, under mu */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    struct sg_span *head, *tail;
    size_t nqueue;
    uint64_t ended, finished; /* spans handed over; of those, sent or dropped */
    bool flushing, stopping, busy;
    bool paused;  /* no batch starts: a raw clone is on its way (sg_otel_pause) */
    bool gave_up; /* a flush's wait ran out (a collector that hangs) */
    bool shut;    /* sg_otel_shutdown ran */
    char *shown;  /* the endpoint as records and messages show it: no userinfo, no query */
    char off_why[256]; /* export was asked for and is off: why */
    struct sg_otel_stats st;
    pthread_t thread;
    bool threaded;
} X = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER};

bool sg_otel_on(void)
{
    return X.on;
}

const char *sg_otel_endpoint(void)
{
    return X.on && X.shown ? X.shown : "";
}

static void attrs_free(struct attrs *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->a[i].key);
        if (a->a[i].t == AT_STR)
            free(a->a[i].v.s);
    }
    free(a->a);
    memset(a, 0, sizeof *a);
}

/* The slot for key: the same key again replaces its value. NULL past the
 * cap (counted). */
static struct attr *attr_slot(struct attrs *a, const char *key)
{
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->a[i].key, key)) {
            if (a->a[i].t == AT_STR)
                free(a->a[i].v.s);
            return &a->a[i];
        }
    if (a->n >= SG_OTEL_MAX_ATTRS) {
        a->dropped++;
        return NULL;
    }
    sg_grow(&a->a, &a->cap, a->n + 1, sizeof *a->a);
    struct attr *x = &a->a[a->n++];
    x->key = sg_xstrdup(key);
    return x;
}

/* Printable UTF-8 (what a collector's UI shows, and what a proto3 string
 * must be), cut at SG_OTEL_VALUE_MAX on a character boundary. */
static char *clean_value(const char *v, size_t len)
{
    char *s = sg_sanitize(v ? v : "", v ? len : 0, SG_SAN_KEEP_TAB | SG_SAN_KEEP_NEWLINE);
    size_t n = strlen(s);
    if (n > SG_OTEL_VALUE_MAX) {
        n = SG_OTEL_VALUE_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
        s[n] = '\0';
    }
    /* the sanitizer's buffer is sized for the worst escape of every byte:
     * a queued span keeps only what it sends */
    char *fit = realloc(s, n + 1);
    return fit ? fit : s;
}

static void attrs_str(struct attrs *a, const char *key, const char *v, size_t len)
{
    struct attr *x = attr_slot(a, key);
    if (x) {
        x->t = AT_STR;
        x->v.s = clean_value(v, len);
    }
}

static void attrs_json(struct attrs *a, const char *prefix, const json_t *obj)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        cleanup_free char *key = prefix ? sg_xasprintf("%s.%s", prefix, k) : sg_xstrdup(k);
        struct attr *x;
        if (json_is_string(v)) {
            attrs_str(a, key, json_string_value(v), json_string_length(v));
        } else if (json_is_integer(v) && (x = attr_slot(a, key))) {
            x->t = AT_INT;
            x->v.i = json_integer_value(v);
        } else if (json_is_real(v) && (x = attr_slot(a, key))) {
            x->t = AT_DBL;
            x->v.d = json_real_value(v);
        } else if (json_is_boolean(v) && (x = attr_slot(a, key))) {
            x->t = AT_BOOL;
            x->v.b = json_is_true(v);
        } else if (json_is_array(v) || json_is_object(v)) {
            cleanup_free char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            attrs_str(a, key, j, j ? strlen(j) : 0);
        }
    }
}

struct sg_span *sg_span_begin(const char *name, const struct sg_span_ctx *parent,
                              enum sg_span_kind kind, uint64_t start_ns)
{
    if (!X.on)
        return NULL;
    struct sg_span *s = sg_xcalloc(1, sizeof *s);
    s->name = sg_xstrdup(name);
    s->kind = kind;
    s->start_ns = start_ns ? start_ns : sg_otel_now_ns();
    if (parent && parent->valid) {
        memcpy(s->ctx.trace_id, parent->trace_id, 16);
        memcpy(s->parent, parent->span_id, 8);
        s->has_parent = true;
        s->ctx.flags = parent->flags;
    } else {
        random_bytes(s->ctx.trace_id, 16);
        s->ctx.flags = 1; /* sampled */
    }
    random_bytes(s->ctx.span_id, 8);
    s->ctx.valid = true;
    return s;
}

struct sg_span_ctx sg_span_context(const struct sg_span *s)
{
    struct sg_span_ctx c = {0};
    return s ? s->ctx : c;
}

void sg_span_str(struct sg_span *s, const char *key, const char *v, size_t len)
{
    if (s)
        attrs_str(&s->at, key, v, len);
}

void sg_span_cstr(struct sg_span *s, const char *key, const char *v)
{
    if (s && v)
        attrs_str(&s->at, key, v, strlen(v));
}

void sg_span_int(struct sg_span *s, const char *key, int64_t v)
{
    struct attr *x = s ? attr_slot(&s->at, key) : NULL;
    if (x) {
        x->t = AT_INT;
        x->v.i = v;
    }
}

void sg_span_bool(struct sg_span *s, const char *key, bool v)
{
    struct attr *x = s ? attr_slot(&s->at, key) : NULL;
    if (x) {
        x->t = AT_BOOL;
        x->v.b = v;
    }
}

void sg_span_double(struct sg_span *s, const char *key, double v)
{
    struct attr *x = s ? attr_slot(&s->at, key) : NULL;
    if (x) {
        x->t = AT_DBL;
        x->v.d = v;
    }
}

void sg_span_json(struct sg_span *s, const char *prefix, const json_t *obj)
{
    if (s && json_is_object(obj))
        attrs_json(&s->at, prefix, obj);
}

void sg_span_event(struct sg_span *s, const char *name, uint64_t time_ns, const char *message,
                   size_t message_len, const char *prefix, const json_t *attrs)
{
    if (!s)
        return;
    if (s->nev >= SG_OTEL_MAX_EVENTS) {
        s->dropped_events++;
        return;
    }
    sg_grow(&s->ev, &s->evcap, s->nev + 1, sizeof *s->ev);
    struct sevent *e = &s->ev[s->nev++];
    memset(e, 0, sizeof *e);
    e->name = sg_xstrdup(name);
    e->time_ns = time_ns ? time_ns : sg_otel_now_ns();
    if (message)
        attrs_str(&e->at, "sandbox.event.message", message, message_len);
    if (json_is_object(attrs))
        attrs_json(&e->at, prefix, attrs);
}

void sg_span_set_status(struct sg_span *s, enum sg_span_status st, const char *message)
{
    if (!s)
        return;
    s->status = st;
    free(s->status_msg);
    s->status_msg = message ? clean_value(message, strlen(message)) : NULL;
}

void sg_span_keep(struct sg_span *s)
{
    if (s)
        s->keep = true;
}

static void span_free(struct sg_span *s)
{
    if (!s)
        return;
    free(s->name);
    attrs_free(&s->at);
    for (size_t i = 0; i < s->nev; i++) {
        free(s->ev[i].name);
        attrs_free(&s->ev[i].at);
    }
    free(s->ev);
    free(s->status_msg);
    free(s);
}

void sg_span_discard(struct sg_span *s)
{
    span_free(s);
}

void sg_span_end(struct sg_span *s, uint64_t end_ns)
{
    if (!s)
        return;
    s->end_ns = end_ns ? end_ns : sg_otel_now_ns();
    if (s->end_ns < s->start_ns)
        s->end_ns = s->start_ns;
    pthread_mutex_lock(&X.mu);
    X.ended++;
    /* a root (a server span: the run, a call, a hook decision) is let past
     * a full queue, up to twice its size: a skill that floods child spans
     * must not take its run's own span, its exit and verdict, out */
    size_t cap = s->kind == SG_SPAN_SERVER ? 2 * X.max_queue
                 : s->keep                   ? X.max_queue + X.max_queue / 2
                                             : X.max_queue;
    if (X.nqueue >= cap || X.stopping) {
        X.st.dropped++;
        X.finished++;
        pthread_mutex_unlock(&X.mu);
        span_free(s);
        return;
    }
    X.st.queued++;
    if (X.tail)
        X.tail->next = s;
    else
        X.head = s;
    X.tail = s;
    if (++X.nqueue >= X.batch)
        pthread_cond_signal(&X.wake);
    pthread_mutex_unlock(&X.mu);
}

/* ---- encoding ---- */

struct enc {
    void **owned;
    size_t n, cap;
};

static void *enc_alloc(struct enc *e, size_t sz)
{
    void *p = sg_xcalloc(1, sz);
    sg_grow(&e->owned, &e->cap, e->n + 1, sizeof *e->owned);
    e->owned[e->n++] = p;
    return p;
}

static PbKV **enc_attrs(struct enc *e, const struct attrs *a)
{
    PbKV **kv = enc_alloc(e, (a->n + 1) * sizeof *kv);
    for (size_t i = 0; i < a->n; i++) {
        PbKV *k = kv[i] = enc_alloc(e, sizeof *k);
        PbAny *v = enc_alloc(e, sizeof *v);
        opentelemetry__proto__common__v1__key_value__init(k);
        opentelemetry__proto__common__v1__any_value__init(v);
        k->key = a->a[i].key;
        k->value = v;
        switch (a->a[i].t) {
        case AT_STR:
            v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
            v->string_value = a->a[i].v.s;
            break;
        case AT_INT:
            v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
            v->int_value = a->a[i].v.i;
            break;
        case AT_BOOL:
            v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
            v->bool_value = a->a[i].v.b;
            break;
        case AT_DBL:
            v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
            v->double_value = a->a[i].v.d;
            break;
        }
    }
    return kv;
}

static PbSpan *enc_span(struct enc *e, struct sg_span *s)
{
    PbSpan *p = enc_alloc(e, sizeof *p);
    opentelemetry__proto__trace__v1__span__init(p);
    p->trace_id = (ProtobufCBinaryData){16, s->ctx.trace_id};
    p->span_id = (ProtobufCBinaryData){8, s->ctx.span_id};
    if (s->has_parent)
        p->parent_span_id = (ProtobufCBinaryData){8, s->parent};
    p->name = s->name;
    p->kind = (Opentelemetry__Proto__Trace__V1__Span__SpanKind)s->kind;
    p->start_time_unix_nano = s->start_ns;
    p->end_time_unix_nano = s->end_ns;
    p->n_attributes = s->at.n;
    p->attributes = enc_attrs(e, &s->at);
    p->dropped_attributes_count = s->at.dropped;
    p->n_events = s->nev;
    p->events = enc_alloc(e, (s->nev + 1) * sizeof *p->events);
    for (size_t i = 0; i < s->nev; i++) {
        PbEvent *ev = p->events[i] = enc_alloc(e, sizeof *ev);
        opentelemetry__proto__trace__v1__span__event__init(ev);
        ev->time_unix_nano = s->ev[i].time_ns;
        ev->name = s->ev[i].name;
        ev->n_attributes = s->ev[i].at.n;
        ev->attributes = enc_attrs(e, &s->ev[i].at);
        ev->dropped_attributes_count = s->ev[i].at.dropped;
    }
    p->dropped_events_count = s->dropped_events;
    if (s->status != SG_STATUS_UNSET) {
        PbStatus *st = p->status = enc_alloc(e, sizeof *st);
        opentelemetry__proto__trace__v1__status__init(st);
        st->code = (Opentelemetry__Proto__Trace__V1__Status__StatusCode)s->status;
        if (s->status_msg)
            st->message = s->status_msg;
    }
    return p;
}

uint8_t *sg_otel_encode(struct sg_span *const *spans, size_t n, size_t *len)
{
    struct enc e = {0};
    Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest req;
    Opentelemetry__Proto__Trace__V1__ResourceSpans rs, *rsp = &rs;
    Opentelemetry__Proto__Resource__V1__Resource res;
    Opentelemetry__Proto__Trace__V1__ScopeSpans ss, *ssp = &ss;
    Opentelemetry__Proto__Common__V1__InstrumentationScope scope;
    opentelemetry__proto__collector__trace__v1__export_trace_service_request__init(&req);
    opentelemetry__proto__trace__v1__resource_spans__init(&rs);
    opentelemetry__proto__resource__v1__resource__init(&res);
    opentelemetry__proto__trace__v1__scope_spans__init(&ss);
    opentelemetry__proto__common__v1__instrumentation_scope__init(&scope);
    struct attrs none = {0};
    const struct attrs *ra = X.on ? &X.resource : &none;
    res.n_attributes = ra->n;
    res.attributes = enc_attrs(&e, ra);
    rs.resource = &res;
    scope.name = "skillgate";
    scope.version = SG_VERSION;
    ss.scope = &scope;
    ss.n_spans = n;
    ss.spans = enc_alloc(&e, (n + 1) * sizeof *ss.spans);
    for (size_t i = 0; i < n; i++)
        ss.spans[i] = enc_span(&e, spans[i]);
    rs.n_scope_spans = 1;
    rs.scope_spans = &ssp;
    req.n_resource_spans = 1;
    req.resource_spans = &rsp;
    *len = opentelemetry__proto__collector__trace__v1__export_trace_service_request__get_packed_size(
        &req);
    uint8_t *buf = sg_xmalloc(*len ? *len : 1);
    opentelemetry__proto__collector__trace__v1__export_trace_service_request__pack(&req, buf);
    for (size_t i = 0; i < e.n; i++)
        free(e.owned[i]);
    free(e.owned);
    return buf;
}

/* ---- sending ---- */

static size_t discard_body(char *p, size_t sz, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return sz * n;
}

/* One transfer through the multi interface, looked at every 100 ms: a
 * pause (a raw clone on its way) or the process's end stops it within
 * that, whatever the transfer waits for (curl's progress callback is
 * called about once a second while nothing moves). */
static CURLcode perform(CURL *c)
{
    if (X.multi_add(X.multi, c) != CURLM_OK)
        return CURLE_FAILED_INIT;
    CURLcode rc = CURLE_ABORTED_BY_CALLBACK;
    for (;;) {
        int running = 0, n;
        if (X.multi_perform(X.multi, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        CURLMsg *m;
        bool done = false;
        while ((m = X.multi_info_read(X.multi, &n)))
            if (m->msg == CURLMSG_DONE) {
                rc = m->data.result;
                done = true;
            }
        if (done || !running)
            break;
        if (__atomic_load_n(&X.stopping, __ATOMIC_RELAXED) ||
            __atomic_load_n(&X.paused, __ATOMIC_RELAXED))
            break;
        X.multi_poll(X.multi, NULL, 0, 100, &n);
    }
    X.multi_remove(X.multi, c);
    return rc;
}

/* POST one batch: true when the collector took it (2xx). */
static bool post(const uint8_t *body, size_t len, char *why, size_t whylen)
{
    CURL *c = X.curl;
    X.easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
    X.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode rc = perform(c);
    if (rc != CURLE_OK) {
        snprintf(why, whylen, "%s", X.easy_strerror(rc));
        return false;
    }
    long code = 0;
    X.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200 || code > 299) {
        snprintf(why, whylen, "the collector answered HTTP %ld", code);
        return false;
    }
    return true;
}

static void *export_loop(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&X.mu);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += X.delay_ms / 1000;
        until.tv_nsec += (long)(X.delay_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while ((X.paused && !X.stopping) ||
               (!X.stopping && !X.flushing && X.nqueue < X.batch &&
                pthread_cond_timedwait(&X.wake, &X.mu, &until) != ETIMEDOUT))
            if (X.paused && !X.stopping)
                pthread_cond_wait(&X.wake, &X.mu);
        if (X.paused && !X.stopping)
            continue; /* paused while the wait ended */
        if (!X.nqueue) {
            X.flushing = false;
            pthread_cond_broadcast(&X.done);
            if (X.stopping)
                break;
            continue;
        }
        size_t n = 0;
        struct sg_span **take = sg_xcalloc(X.batch, sizeof *take);
        while (X.head && n < X.batch) {
            take[n++] = X.head;
            X.head = X.head->next;
            X.nqueue--;
        }
        if (!X.head)
            X.tail = NULL;
        X.busy = true;
        pthread_mutex_unlock(&X.mu);
        size_t len = 0;
        uint8_t *body = sg_otel_encode(take, n, &len);
        char why[160] = "";
        bool ok = post(body, len, why, sizeof why);
        free(body);
        for (size_t i = 0; i < n; i++)
            span_free(take[i]);
        free(take);
        pthread_mutex_lock(&X.mu);
        X.busy = false;
        X.finished += n;
        if (ok) {
            X.st.sent += n;
        } else {
            X.st.dropped += n;
            X.st.failed_requests++;
            snprintf(X.st.last_error, sizeof X.st.last_error, "%s", why);
        }
        pthread_cond_broadcast(&X.done);
    }
    pthread_mutex_unlock(&X.mu);
    return NULL;
}

void sg_otel_stats(struct sg_otel_stats *out)
{
    pthread_mutex_lock(&X.mu);
    *out = X.st;
    out->pending = X.ended - X.finished;
    pthread_mutex_unlock(&X.mu);
}

bool sg_otel_flush(int wait_ms)
{
    if (!X.on)
        return true;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&X.mu);
    uint64_t want = X.ended;
    X.flushing = true;
    pthread_cond_signal(&X.wake);
    while (X.finished < want && X.threaded &&
           pthread_cond_timedwait(&X.done, &X.mu, &until) != ETIMEDOUT) {
        if (X.finished < want && !X.flushing) { /* a flush ended, spans came after */
            X.flushing = true;
            pthread_cond_signal(&X.wake);
        }
    }
    bool all = X.finished >= want;
    X.gave_up |= !all && wait_ms > 0; /* 0: a kick, no wait */
    pthread_mutex_unlock(&X.mu);
    return all;
}

void sg_otel_pause(void)
{
    if (!X.on)
        return;
    pthread_mutex_lock(&X.mu);
    X.paused = true;
    /* a batch in flight is stopped within 100 ms (perform: a collector
     * that hangs must not hold a run's start) and counted */
    while (X.busy)
        pthread_cond_wait(&X.done, &X.mu);
    pthread_mutex_unlock(&X.mu);
}

void sg_otel_resume(void)
{
    if (!X.on)
        return;
    pthread_mutex_lock(&X.mu);
    X.paused = false;
    pthread_cond_signal(&X.wake);
    pthread_mutex_unlock(&X.mu);
}

const char *sg_otel_off_why(void)
{
    return X.off_why[0] ? X.off_why : NULL;
}

void sg_otel_shutdown(int wait_ms)
{
    if (!X.on || X.shut)
        return;
    X.shut = true;
    sg_otel_flush(X.gave_up ? 0 : wait_ms);
    pthread_mutex_lock(&X.mu);
    X.stopping = true;
    /* what is still queued is not sent: counted */
    while (X.head) {
        struct sg_span *s = X.head;
        X.head = s->next;
        span_free(s);
        X.st.dropped++;
        X.finished++;
        X.nqueue--;
    }
    X.tail = NULL;
    pthread_cond_signal(&X.wake);
    /* a request in flight is stopped (perform looks every 100 ms) and given
     * 200 ms to unwind: the process's exit must not run OpenSSL's cleanup
     * under a transfer */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (X.busy && pthread_cond_timedwait(&X.done, &X.mu, &until) != ETIMEDOUT)
        ;
    bool busy = X.busy;
    pthread_mutex_unlock(&X.mu);
    if (X.threaded && !busy) {
        pthread_join(X.thread, NULL);
        X.threaded = false;
    }
}

/* libcurl's sockets are not close-on-exec (before 8.17): a program the TUI
 * runs must not inherit the collector's connection. */
static int cloexec_socket(void *ctx, curl_socket_t fd, curlsocktype purpose)
{
    (void)ctx, (void)purpose;
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    return CURL_SOCKOPT_OK;
}

/* The endpoint's host, resolved now, once, and given to libcurl
 * (CURLOPT_RESOLVE): no resolver thread of libcurl's is ever inside
 * getaddrinfo (and malloc) while a transfer is stopped for a raw clone, or
 * at the process's end. A name that does not resolve now is left to
 * libcurl (each request then says why it failed). */
static void pin_endpoint(CURL *c)
{
    const char *p = strstr(X.url, "://");
    if (!p)
        return;
    bool tls = !strncasecmp(X.url, "https", 5);
    p += 3;
    const char *at = NULL;
    for (const char *q = p; *q && *q != '/' && *q != '?' && *q != '#'; q++)
        if (*q == '@')
            at = q;
    if (at)
        p = at + 1;
    if (*p == '[') /* an IPv6 literal: nothing to resolve */
        return;
    size_t hn = strcspn(p, ":/?#");
    cleanup_free char *host = sg_xstrndup(p, hn);
    long port = tls ? 443 : 80;
    if (p[hn] == ':')
        port = strtol(p + hn + 1, NULL, 10);
    struct in6_addr a6;
    struct in_addr a4;
    if (!*host || inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1)
        return;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return;
    char addr[INET6_ADDRSTRLEN + 2] = "";
    if (res->ai_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, addr, sizeof addr);
    else if (res->ai_family == AF_INET6) {
        char a[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr, a, sizeof a);
        snprintf(addr, sizeof addr, "[%s]", a);
    }
    freeaddrinfo(res);
    if (!addr[0])
        return;
    cleanup_free char *entry = sg_xasprintf("%s:%ld:%s", host, port, addr);
    X.pin = X.slist_append(NULL, entry);
    if (X.pin)
        X.easy_setopt(c, CURLOPT_RESOLVE, X.pin);
}

/* The endpoint without userinfo or query (a token there stays out of the
 * trace and the messages). */
static char *shown_url(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *at = NULL;
    for (const char *q = p; *q && *q != '/' && *q != '?' && *q != '#'; q++)
        if (*q == '@')
            at = q;
    cleanup_free char *scheme = sg_xstrndup(url, (size_t)(p - url));
    const char *host = at ? at + 1 : p;
    size_t n = strcspn(host, "?#");
    return sg_xasprintf("%s%.*s", scheme, (int)n, host);
}

/* ---- configuration ---- */

static const char *setting(const struct sg_config *cfg, const char *name)
{
    const char *v = secure_getenv(name);
    if (v && *v)
        return v;
    for (size_t i = 0; cfg && i < cfg->notel; i++)
        if (!strcmp(cfg->otel_keys[i], name))
            return cfg->otel_vals[i];
    return NULL;
}

/* The port an endpoint URL names: its :PORT, else its scheme's (443 for
 * https, else 80); 0 when its port cannot be read. */
static uint16_t url_port(const char *url)
{
    const char *p = strstr(url, "://");
    if (!p)
        return 0;
    bool tls = !strncasecmp(url, "https", 5);
    p += 3;
    const char *end = p + strcspn(p, "/?#"), *host = p;
    for (const char *q = p; q < end; q++) /* past userinfo */
        if (*q == '@')
            host = q + 1;
    const char *colon = host;
    if (*host == '[') { /* an IPv6 literal */
        while (colon < end && *colon != ']')
            colon++;
        colon += colon < end;
    } else {
        while (colon < end && *colon != ':')
            colon++;
    }
    if (colon >= end || *colon != ':')
        return tls ? 443 : 80;
    long v = 0;
    const char *d = colon + 1;
    for (; d < end && *d >= '0' && *d <= '9' && v <= 65535; d++)
        v = v * 10 + (*d - '0');
    return d == end && d > colon + 1 && v >= 1 && v <= 65535 ? (uint16_t)v : 0;
}

void sg_otel_own_ports(const struct sg_config *cfg, struct sg_own_ports *o)
{
    static const char *const names[] = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                        "OTEL_EXPORTER_OTLP_ENDPOINT"};
    for (size_t i = 0; i < SG_ARRAY_LEN(names); i++) {
        const char *v = secure_getenv(names[i]);
        uint16_t port;
        if (v && (port = url_port(v)))
            sg_own_ports_add(o, SG_OWN_OTEL, port);
        for (size_t k = 0; cfg && k < cfg->notel; k++)
            if (!strcmp(cfg->otel_keys[k], names[i]) && cfg->otel_vals[k] &&
                (port = url_port(cfg->otel_vals[k])))
                sg_own_ports_add(o, SG_OWN_OTEL, port);
    }
}

/* "%41" -> 'A' in place; false on a bad escape. */
static bool percent_decode(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        uint8_t b;
        char h[2] = {(char)tolower((unsigned char)p[1]), p[1] ? (char)tolower((unsigned char)p[2]) : 0};
        if (!p[1] || !p[2] || !hexval(h, 1, &b))
            return false;
        *o++ = (char)b;
        p += 2;
    }
    *o = '\0';
    return true;
}

/* "k=v,k2=v2" (W3C baggage-like, as the OTel spec has it): fn(key, value)
 * for each, trimmed, the value percent-decoded. false with why on a bad
 * one. */
static bool each_pair(const char *list, const char *name, char *why, size_t whylen,
                      bool (*fn)(const char *k, const char *v, void *ctx), void *ctx)
{
    cleanup_free char *copy = sg_xstrdup(list);
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        while (isspace((unsigned char)*item))
            item++;
        if (!*item)
            continue;
        if (!eq) {
            snprintf(why, whylen, "%s: \"%.60s\" is not key=value", name, item);
            return false;
        }
        *eq = '\0';
        char *k = item, *v = eq + 1;
        for (size_t n = strlen(k); n > 0 && isspace((unsigned char)k[n - 1]); n--)
            k[n - 1] = '\0';
        while (isspace((unsigned char)*v))
            v++;
        for (size_t n = strlen(v); n > 0 && isspace((unsigned char)v[n - 1]); n--)
            v[n - 1] = '\0';
        if (!*k || !percent_decode(v)) {
            snprintf(why, whylen, "%s: a bad key or %%-escape in \"%.60s\"", name, k);
            return false;
        }
        if (!fn(k, v, ctx)) {
            snprintf(why, whylen, "%s: \"%.60s\" cannot be used", name, k);
            return false;
        }
    }
    return true;
}

static bool add_header(const char *k, const char *v, void *ctx)
{
    (void)ctx;
    for (const char *p = k; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
            return false;
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return false;
    cleanup_free char *h = sg_xasprintf("%s: %s", k, v);
    X.headers = X.slist_append(X.headers, h);
    return X.headers != NULL;
}

static bool add_resource(const char *k, const char *v, void *ctx)
{
    (void)ctx;
    if (!strcmp(k, "service.name") && !X.service)
        X.service = sg_xstrdup(v);
    else
        attrs_str(&X.resource, k, v, strlen(v));
    return true;
}

static bool number(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int load_curl(char *why, size_t whylen)
{
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "OpenTelemetry export needs libcurl (Debian: libcurl4): %s",
                 dlerror());
        return -ENOSYS;
    }
    CURLcode (*global_init)(long) = (CURLcode(*)(long))dlsym(h, "curl_global_init");
    *(void **)&X.easy_init = dlsym(h, "curl_easy_init");
    *(void **)&X.easy_setopt = dlsym(h, "curl_easy_setopt");
    *(void **)&X.easy_perform = dlsym(h, "curl_easy_perform");
    *(void **)&X.easy_getinfo = dlsym(h, "curl_easy_getinfo");
    *(void **)&X.easy_strerror = dlsym(h, "curl_easy_strerror");
    *(void **)&X.slist_append = dlsym(h, "curl_slist_append");
    *(void **)&X.multi_init = dlsym(h, "curl_multi_init");
    *(void **)&X.multi_add = dlsym(h, "curl_multi_add_handle");
    *(void **)&X.multi_remove = dlsym(h, "curl_multi_remove_handle");
    *(void **)&X.multi_perform = dlsym(h, "curl_multi_perform");
    *(void **)&X.multi_poll = dlsym(h, "curl_multi_poll");
    *(void **)&X.multi_info_read = dlsym(h, "curl_multi_info_read");
    if (!global_init || !X.easy_init || !X.easy_setopt || !X.easy_perform || !X.easy_getinfo ||
        !X.easy_strerror || !X.slist_append || !X.multi_init || !X.multi_add ||
        !X.multi_remove || !X.multi_perform || !X.multi_poll || !X.multi_info_read ||
        global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(X.curl = X.easy_init()) ||
        !(X.multi = X.multi_init())) {
        snprintf(why, whylen, "OpenTelemetry export: libcurl.so.4 could not be set up");
        return -ENOSYS;
    }
    return 0;
}

static int configure(const struct sg_config *cfg, char *why, size_t whylen)
{
    const char *v;
    if ((v = setting(cfg, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")) ||
        (v = setting(cfg, "OTEL_EXPORTER_OTLP_PROTOCOL")))
        if (strcmp(v, "http/protobuf")) {
            snprintf(why, whylen, "OTEL_EXPORTER_OTLP_PROTOCOL=%.40s: only http/protobuf is "
                     "sent (OTLP over HTTP)", v);
            return -EINVAL;
        }
    if ((v = setting(cfg, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))) {
        X.url = sg_xstrdup(v);
    } else if ((v = setting(cfg, "OTEL_EXPORTER_OTLP_ENDPOINT"))) {
        size_t n = strlen(v);
        X.url = sg_xasprintf("%.*s/v1/traces", (int)(n && v[n - 1] == '/' ? n - 1 : n), v);
    }
    if (strncmp(X.url, "http://", 7) && strncmp(X.url, "https://", 8)) {
        snprintf(why, whylen, "OTEL_EXPORTER_OTLP_ENDPOINT=%.80s: not an http:// or https:// URL",
                 X.url);
        return -EINVAL;
    }
    long t = 10000;
    if (((v = setting(cfg, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")) ||
         (v = setting(cfg, "OTEL_EXPORTER_OTLP_TIMEOUT"))) &&
        !number(v, 1, 600000, &t)) {
        snprintf(why, whylen, "OTEL_EXPORTER_OTLP_TIMEOUT=%.40s: milliseconds, 1 to 600000", v);
        return -EINVAL;
    }
    X.timeout_ms = t;
    long d = 1000, q = 2048, b = 512;
    if ((v = setting(cfg, "OTEL_BSP_SCHEDULE_DELAY")) && !number(v, 1, 60000, &d)) {
        snprintf(why, whylen, "OTEL_BSP_SCHEDULE_DELAY=%.40s: milliseconds, 1 to 60000", v);
        return -EINVAL;
    }
    if ((v = setting(cfg, "OTEL_BSP_MAX_QUEUE_SIZE")) && !number(v, 1, 1000000, &q)) {
        snprintf(why, whylen, "OTEL_BSP_MAX_QUEUE_SIZE=%.40s: 1 to 1000000", v);
        return -EINVAL;
    }
    if ((v = setting(cfg, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE")) && !number(v, 1, q, &b)) {
        snprintf(why, whylen, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=%.40s: 1 to the queue's size", v);
        return -EINVAL;
    }
    X.delay_ms = (int)d;
    X.max_queue = (size_t)q;
    X.batch = (size_t)b;
    if ((v = setting(cfg, "OTEL_SERVICE_NAME")))
        X.service = sg_xstrdup(v);
    if ((v = setting(cfg, "OTEL_RESOURCE_ATTRIBUTES")) &&
        !each_pair(v, "OTEL_RESOURCE_ATTRIBUTES", why, whylen, add_resource, NULL))
        return -EINVAL;
    if ((v = setting(cfg, "OTEL_EXPORTER_OTLP_HEADERS")) &&
        !each_pair(v, "OTEL_EXPORTER_OTLP_HEADERS", why, whylen, add_header, NULL))
        return -EINVAL;
    if ((v = setting(cfg, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")) &&
        !each_pair(v, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", why, whylen, add_header, NULL))
        return -EINVAL;
    X.headers = X.slist_append(X.headers, "Content-Type: application/x-protobuf");
    attrs_str(&X.resource, "service.name", X.service ? X.service : "skillgate",
              strlen(X.service ? X.service : "skillgate"));
    attrs_str(&X.resource, "service.version", SG_VERSION, strlen(SG_VERSION));
    attrs_str(&X.resource, "telemetry.sdk.name", "skillgate", 9);
    attrs_str(&X.resource, "telemetry.sdk.language", "c", 1);
    CURL *c = X.curl;
    X.easy_setopt(c, CURLOPT_URL, X.url);
    X.easy_setopt(c, CURLOPT_HTTPHEADER, X.headers);
    X.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    X.easy_setopt(c, CURLOPT_TIMEOUT_MS, X.timeout_ms);
    X.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, X.timeout_ms < 5000 ? X.timeout_ms : 5000L);
    X.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
    X.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    X.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    X.easy_setopt(c, CURLOPT_USERAGENT, "skillgate/" SG_VERSION);
    X.easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, cloexec_socket);
    pin_endpoint(c);
    X.shown = shown_url(X.url);
    return 0;
}

static pid_t started_pid;

/* The process's end (exit from main): what is queued gets the end wait to
 * leave. Not in a child that calls exit (the thread is not there). */
static void at_exit(void)
{
    /* once a wait ran out, the collector is not waited for again */
    if (getpid() == started_pid)
        sg_otel_shutdown(X.gave_up ? 0 : SG_OTEL_END_WAIT_MS);
}

int sg_otel_start(const struct sg_config *cfg, char *why, size_t whylen)
{
    why[0] = '\0';
    if (X.on)
        return 1;
    if (X.off_why[0]) { /* off once, off for the process: nothing set up twice */
        snprintf(why, whylen, "%s", X.off_why);
        return -EINVAL;
    }
    const char *v = setting(cfg, "OTEL_SDK_DISABLED");
    if (v && !strcasecmp(v, "true"))
        return 0;
    if (!setting(cfg, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") &&
        !setting(cfg, "OTEL_EXPORTER_OTLP_ENDPOINT"))
        return 0;
    v = setting(cfg, "OTEL_TRACES_EXPORTER");
    if (v && !strcmp(v, "none"))
        return 0;
    int e = load_curl(why, whylen);
    if (e == 0)
        e = configure(cfg, why, whylen);
    if (e < 0) { /* off, said: telemetry settings never stop a run (OTel's rule) */
        snprintf(X.off_why, sizeof X.off_why, "%s", why);
        return e;
    }
    X.on = true;
    /* a small stack: glibc takes the threads' static TLS out of it, so
     * when that does not fit (EINVAL), the default size */
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 * 1024);
    int te = pthread_create(&X.thread, &a, export_loop, NULL);
    pthread_attr_destroy(&a);
    if (te == EINVAL)
        te = pthread_create(&X.thread, NULL, export_loop, NULL);
    X.threaded = te == 0;
    if (!X.threaded) {
        X.on = false;
        snprintf(why, whylen, "OpenTelemetry export: no thread for it: %s", strerror(te));
        snprintf(X.off_why, sizeof X.off_why, "%s", why);
        return -EAGAIN;
    }
    started_pid = getpid();
    atexit(at_exit);
    return 1;
}
