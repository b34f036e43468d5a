/* Two traces compared (tracediff.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "tracediff.h"
#include "util.h"

/* The categories, in the order they are shown. */
#define SG_FACT_CATS(X)                                                                  \
    X(hosts, "host", "hosts") X(programs, "program", "programs") X(paths, "path", "paths") \
    X(syscalls, "syscall", "syscalls") X(limits, "limit", "limits") X(classes, "class", "classes")

static const char *const cat_key[] = {
#define X(k, one, many) #k,
    SG_FACT_CATS(X)
#undef X
};
static const char *const cat_one[] = {
#define X(k, one, many) one,
    SG_FACT_CATS(X)
#undef X
};
static const char *const cat_many[] = {
#define X(k, one, many) many,
    SG_FACT_CATS(X)
#undef X
};
#define NCATS (sizeof cat_key / sizeof cat_key[0])

/* Which state wins when one key is seen several ways: what happened over
 * what was only tried. */
static int rank(const char *state)
{
    static const char *const order[] = {"looked up", "read", "refused", "discarded", "written",
                                        "ran", "reached"};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++)
        if (!strcmp(state, order[i]))
            return i;
    return -1;
}

/* The fact for key (made with state, or raised to it); NULL when key
 * cannot be one (jansson refuses it, and the callers' calls on NULL do
 * nothing). */
static json_t *fact(json_t *facts, const char *cat, const char *key, const char *state)
{
    json_t *c = json_object_get(facts, cat);
    json_t *f = json_object_get(c, key);
    if (!f) {
        f = json_pack("{s:s}", "state", state);
        if (json_object_set_new(c, key, f) < 0)
            return NULL; /* f was freed with the refusal */
    } else if (rank(state) > rank(json_string_value(json_object_get(f, "state")))) {
        json_object_set_new(f, "state", json_string(state));
    }
    return f;
}

static void add_port(json_t *f, json_t *port)
{
    if (!f || !json_is_integer(port) || json_integer_value(port) <= 0 ||
        json_integer_value(port) > 65535)
        return;
    json_t *ports = json_object_get(f, "ports");
    if (!ports) {
        ports = json_array();
        json_object_set_new(f, "ports", ports);
    }
    size_t i;
    json_t *v;
    json_array_foreach (ports, i, v)
        if (json_integer_value(v) == json_integer_value(port))
            return;
    if (json_array_size(ports) < 16)
        json_array_append_new(ports, json_integer(json_integer_value(port)));
}

static void host_fact(json_t *facts, const char *name, const char *state, json_t *port)
{
    if (!name || !*name)
        return;
    /* ASCII letters only: a multibyte character stays whole */
    cleanup_free char *low = sg_xstrdup(name);
    for (char *q = low; *q; q++)
        if (*q >= 'A' && *q <= 'Z')
            *q = (char)(*q - 'A' + 'a');
    add_port(fact(facts, "hosts", low, state), port);
}

/* "Tool(subject args)" of an older trace's decision, without "subject". */
static char *subject_of(json_t *data, bool first_word)
{
    const char *s = json_string_value(json_object_get(data, "subject"));
    if (s)
        return sg_xstrdup(s);
    const char *req = json_string_value(json_object_get(data, "request"));
    const char *open = req ? strchr(req, '(') : NULL;
    if (!open)
        return NULL;
    char *out = sg_xstrdup(open + 1);
    size_t n = strlen(out);
    if (n && out[n - 1] == ')')
        out[n - 1] = 0;
    if (first_word)
        out[strcspn(out, " ")] = 0;
    return out;
}

static void decision_fact(json_t *facts, json_t *data)
{
    const char *tool = json_string_value(json_object_get(data, "tool"));
    bool denied = json_is_true(json_object_get(data, "prevented"));
    if (!tool)
        return;
    if (!strcmp(tool, "Bash")) {
        cleanup_free char *prog = subject_of(data, true);
        if (prog && *prog)
            fact(facts, "programs", prog, denied ? "refused" : "ran");
    } else if (!strcmp(tool, "Write")) {
        cleanup_free char *path = subject_of(data, false);
        if (path && *path)
            json_object_set_new(fact(facts, "paths", path, denied ? "refused" : "written"),
                                "access", json_string("write"));
    } else if (!strcmp(tool, "Fetch") && denied) {
        /* an older trace's request ("Fetch(2001:db8::7:443)") cannot say where
         * the host ends; its refusal has its own event (dns_blocked, egress) */
        host_fact(facts, json_string_value(json_object_get(data, "subject")), "refused",
                  json_object_get(data, "port"));
    }
}

static void event_fact(json_t *facts, const char *kind, json_t *data)
{
    const char *name = json_string_value(json_object_get(data, "name"));
    json_t *port = json_object_get(data, "port");
    if (!strcmp(kind, "network_egress_allowed")) {
        host_fact(facts, name, "reached", port);
    } else if (!strcmp(kind, "network_egress_blocked")) {
        host_fact(facts, name && *name ? name : json_string_value(json_object_get(data, "dst")),
                  "refused", port);
    } else if (!strcmp(kind, "dns_blocked")) {
        host_fact(facts, name && *name ? name : "(bytes to port 53 that are no DNS query)",
                  "refused", NULL);
    } else if (!strcmp(kind, "dns_resolution")) {
        host_fact(facts, name, "looked up", NULL);
    } else if (!strcmp(kind, "permission_decided")) {
        decision_fact(facts, data);
    } else if (!strcmp(kind, "syscall_blocked")) {
        const char *sc = json_string_value(json_object_get(data, "syscall"));
        const char *prog = json_string_value(json_object_get(data, "program"));
        if (!prog)
            prog = json_string_value(json_object_get(data, "approved"));
        if (sc && (!strcmp(sc, "execve") || !strcmp(sc, "execveat")) && prog)
            fact(facts, "programs", prog, "refused");
        else if (sc)
            fact(facts, "syscalls", sc, "refused");
    } else if (!strcmp(kind, "fs_blocked")) {
        const char *path = json_string_value(json_object_get(data, "path"));
        if (!path || !strcmp(path, "?"))
            return;
        json_t *f = fact(facts, "paths", path, "refused");
        const char *access = json_string_value(json_object_get(data, "access"));
        const char *cls = json_string_value(json_object_get(data, "class"));
        json_object_set_new(f, "access", json_string(access ? access : "write"));
        if (cls)
            json_object_set_new(f, "class", json_string(cls));
    } else if (!strcmp(kind, "write_discarded")) {
        /* written in a private view, gone with the sandbox */
        const char *path = json_string_value(json_object_get(data, "path"));
        const char *cls = json_string_value(json_object_get(data, "class"));
        if (!path)
            return;
        json_t *f = fact(facts, "paths", path, "discarded");
        json_object_set_new(f, "access", json_string("write"));
        if (cls)
            json_object_set_new(f, "class", json_string(cls));
    } else if (!strcmp(kind, "files_read")) {
        /* a recording's reads beyond what every run is given: reads.h */
        size_t i;
        json_t *it;
        json_array_foreach (json_object_get(data, "paths"), i, it) {
            const char *path = json_string_value(json_object_get(it, "path"));
            const char *cls = json_string_value(json_object_get(it, "class"));
            json_t *f = path ? fact(facts, "paths", path, "read") : NULL;
            if (!f || strcmp(json_string_value(json_object_get(f, "state")), "read"))
                continue;
            json_object_set_new(f, "access", json_string("read"));
            if (cls)
                json_object_set_new(f, "class", json_string(cls));
            else if (!json_is_true(json_object_get(it, "found")))
                json_object_set_new(f, "class", json_string(json_is_true(json_object_get(
                                                                it, "on_host"))
                                                                ? "not shown"
                                                                : "nowhere"));
        }
    } else if (!strcmp(kind, "resource_limit_hit")) {
        const char *limit = json_string_value(json_object_get(data, "limit"));
        if (limit)
            fact(facts, "limits", limit, "reached");
    }
}

json_t *sg_trace_facts(json_t *trace)
{
    json_t *facts = json_object();
    for (size_t c = 0; c < NCATS; c++)
        json_object_set_new(facts, cat_key[c], json_object());
    size_t i;
    json_t *ev;
    json_array_foreach (json_object_get(trace, "events"), i, ev) {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        json_t *data = json_object_get(ev, "data");
        if (kind && json_is_object(data))
            event_fact(facts, kind, data);
    }
    json_t *cl;
    json_array_foreach (json_object_get(json_object_get(trace, "violation_summary"),
                                        "classifications"),
                        i, cl) {
        const char *cls = json_string_value(json_object_get(cl, "class"));
        const char *sev = json_string_value(json_object_get(cl, "severity"));
        if (cls)
            json_object_set_new(json_object_get(facts, "classes"), cls,
                                json_pack("{s:s, s:O}", "state", sev ? sev : "?", "count",
                                          json_object_get(cl, "count") ? json_object_get(cl, "count")
                                                                       : json_null()));
    }
    return facts;
}

/* ---- the diff ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of an object, sorted (the caller frees the array, not the keys). */
static const char **sorted_keys(json_t *o, size_t *n)
{
    *n = json_object_size(o);
    const char **k = sg_xcalloc(*n + 1, sizeof *k);
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach (o, key, v)
        k[i++] = key;
    qsort(k, *n, sizeof *k, cmp_str);
    return k;
}

static json_t *item(const char *key, json_t *f)
{
    json_t *it = json_pack("{s:s}", "name", key);
    json_object_update(it, f);
    return it;
}

static json_t *diff_cat(json_t *fa, json_t *fb)
{
    json_t *out = json_pack("{s:[], s:[], s:[]}", "new", "gone", "changed");
    size_t n;
    cleanup_free const char **kb = sorted_keys(fb, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_object_get(fa, kb[i]), *b = json_object_get(fb, kb[i]);
        const char *sa = json_string_value(json_object_get(a, "state"));
        const char *sb = json_string_value(json_object_get(b, "state"));
        if (!a)
            json_array_append_new(json_object_get(out, "new"), item(kb[i], b));
        else if (sa && sb && strcmp(sa, sb))
            json_array_append_new(json_object_get(out, "changed"),
                                  json_pack("{s:s, s:s, s:s}", "name", kb[i], "from", sa, "to",
                                            sb));
    }
    cleanup_free const char **ka = sorted_keys(fa, &n);
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(fb, ka[i]))
            json_array_append_new(json_object_get(out, "gone"),
                                  item(ka[i], json_object_get(fa, ka[i])));
    return out;
}

static json_t *side(json_t *t, const char *name)
{
    cleanup_free char *shown = name ? sg_sanitize_str(name, 0) : NULL; /* a name may be any bytes */
    json_t *o = json_pack("{s:s?}", "file", shown);
    static const char *const keys[] = {"trace_id", "skill_name", "skill_version", "skill_digest",
                                       "policy_digest", "started_at", "status", "exit_code",
                                       "duration_ms"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        json_object_set(o, keys[i], json_object_get(t, keys[i]) ? json_object_get(t, keys[i])
                                                                 : json_null());
    return o;
}

/* A count or a size from a trace: -1 when absent, never past 2^50 (a
 * hostile trace's values are summed and multiplied) */
static json_int_t int_of(json_t *v)
{
    json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;
    return x < -1 ? -1 : x > (1LL << 50) ? (1LL << 50) : x;
}

static json_t *scalars(json_t *a, json_t *b)
{
    json_t *out = json_object();
    json_t *oa = json_object_get(a, "output"), *ob = json_object_get(b, "output");
    json_t *va = json_object_get(a, "violation_summary");
    json_t *vb = json_object_get(b, "violation_summary");
    struct {
        const char *name;
        json_t *x, *y;
    } pairs[] = {
        {"status", json_object_get(a, "status"), json_object_get(b, "status")},
        {"exit_code", json_object_get(a, "exit_code"), json_object_get(b, "exit_code")},
        {"max_severity", json_object_get(va, "max_severity"), json_object_get(vb, "max_severity")},
        {"enforcements", json_object_get(va, "total_enforcements"),
         json_object_get(vb, "total_enforcements")},
        {"duration_ms", json_object_get(a, "duration_ms"), json_object_get(b, "duration_ms")},
        {"skill_version", json_object_get(a, "skill_version"), json_object_get(b, "skill_version")},
        {"skill_digest", json_object_get(a, "skill_digest"), json_object_get(b, "skill_digest")},
        {"policy_digest", json_object_get(a, "policy_digest"), json_object_get(b, "policy_digest")},
        {"script", json_object_get(json_object_get(a, "invocation"), "script"),
         json_object_get(json_object_get(b, "invocation"), "script")},
        {"args", json_object_get(json_object_get(a, "invocation"), "args"),
         json_object_get(json_object_get(b, "invocation"), "args")},
        {"allow_all", json_object_get(a, "allow_all"), json_object_get(b, "allow_all")},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (!json_equal(pairs[i].x ? pairs[i].x : json_null(),
                        pairs[i].y ? pairs[i].y : json_null()))
            json_object_set_new(out, pairs[i].name,
                                json_pack("[O?, O?]", pairs[i].x, pairs[i].y));
    json_int_t seqs[2] = {0, 0};
    json_t *docs[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        size_t i;
        json_t *ev;
        json_array_foreach (json_object_get(docs[k], "events"), i, ev) {
            const char *kind = json_string_value(json_object_get(ev, "kind"));
            json_int_t n = int_of(json_object_get(json_object_get(ev, "data"), "sequences"));
            if (kind && !strcmp(kind, "output_escapes") && n > 0 && seqs[k] < (1LL << 52))
                seqs[k] += n;
        }
    }
    if (seqs[0] != seqs[1])
        json_object_set_new(out, "terminal_sequences", json_pack("[I, I]", seqs[0], seqs[1]));
    json_int_t bytes[2] = {0, 0};
    json_t *outs[2] = {oa, ob};
    for (int k = 0; k < 2; k++)
        bytes[k] = int_of(json_object_get(outs[k], "stdout_bytes")) +
                   int_of(json_object_get(outs[k], "stderr_bytes"));
    if (bytes[0] != bytes[1] && bytes[0] >= 0 && bytes[1] >= 0)
        json_object_set_new(out, "output_bytes", json_pack("[I, I]", bytes[0], bytes[1]));
    return out;
}

static void fmt_ms(struct sg_buf *b, json_t *v)
{
    json_int_t ms = int_of(v);
    if (ms < 0)
        sg_buf_printf(b, "?");
    else if (ms < 1000)
        sg_buf_printf(b, "%lld ms", (long long)ms);
    else
        sg_buf_printf(b, "%.1f s", (double)ms / 1000);
}

void sg_format_size(char *out, size_t n, long long bytes)
{
    if (bytes < 0)
        snprintf(out, n, "?");
    else if (bytes < 1024)
        snprintf(out, n, "%lld B", bytes);
    else if (bytes < 1024 * 1024)
        snprintf(out, n, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(out, n, "%.1f MiB", (double)bytes / (1024 * 1024));
}

void sg_json_array_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    json_t **v = sg_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

static void fmt_bytes(struct sg_buf *b, json_t *v)
{
    char s[32];
    sg_format_size(s, sizeof s, int_of(v));
    sg_buf_printf(b, "%s", s);
}

/* Did a value change enough to name in one line: half again, or half? */
static bool moved(json_t *pair)
{
    json_int_t x = int_of(json_array_get(pair, 0)), y = int_of(json_array_get(pair, 1));
    return x >= 0 && y >= 0 && (y * 2 >= x * 3 || y * 2 <= x);
}

/* "a, b, c +2 more" of a list of items' names, sanitized. */
static void names(struct sg_buf *b, json_t *list)
{
    size_t i;
    json_t *it;
    json_array_foreach (list, i, it) {
        if (i == 3) {
            sg_buf_printf(b, " +%zu more", json_array_size(list) - 3);
            break;
        }
        cleanup_free char *s =
            sg_sanitize_str(json_string_value(json_object_get(it, "name")), 0);
        sg_buf_printf(b, "%s%s", i ? ", " : "", s);
    }
}

static bool refused(json_t *it, const char *key)
{
    const char *s = json_string_value(json_object_get(it, key));
    return s && !strcmp(s, "refused");
}

static char *summary(json_t *d)
{
    struct sg_buf b;
    sg_buf_init(&b, 8192);
    json_t *a = json_object_get(d, "a"), *bb = json_object_get(d, "b");
    json_t *ch = json_object_get(d, "changes");
    cleanup_free char *na = sg_sanitize_str(json_string_value(json_object_get(a, "skill_name")), 0);
    cleanup_free char *nb = sg_sanitize_str(json_string_value(json_object_get(bb, "skill_name")), 0);
    sg_buf_printf(&b, "%s", *na ? na : "?");
    if (strcmp(na, nb))
        sg_buf_printf(&b, " vs %s", nb);
    json_t *ver = json_object_get(ch, "skill_version");
    if (ver) {
        cleanup_free char *x = sg_sanitize_str(json_string_value(json_array_get(ver, 0)), 0);
        cleanup_free char *y = sg_sanitize_str(json_string_value(json_array_get(ver, 1)), 0);
        sg_buf_printf(&b, " %s -> %s", *x ? x : "?", *y ? y : "?");
    }
    sg_buf_printf(&b, json_object_get(ch, "skill_digest") ? " (code changed)" : " (same code)");
    sg_buf_printf(&b, ":");
    size_t said = 0, denials = 0;
    for (size_t c = 0; c < NCATS; c++) {
        json_t *dc = json_object_get(d, cat_key[c]);
        json_t *nw = json_object_get(dc, "new");
        size_t i;
        json_t *it;
        json_array_foreach (nw, i, it)
            denials += refused(it, "state") && c < 4;
        json_array_foreach (json_object_get(dc, "changed"), i, it)
            denials += refused(it, "to") && c < 4;
        if (!json_array_size(nw) || !strcmp(cat_key[c], "syscalls"))
            continue;
        if (!strcmp(cat_key[c], "limits"))
            sg_buf_printf(&b, "%s new limit%s reached (", said++ ? "," : "",
                          json_array_size(nw) == 1 ? "" : "s");
        else if (!strcmp(cat_key[c], "classes"))
            sg_buf_printf(&b, "%s new class%s (", said++ ? "," : "",
                          json_array_size(nw) == 1 ? "" : "es");
        else
            sg_buf_printf(&b, "%s %zu new %s (", said++ ? "," : "", json_array_size(nw),
                          json_array_size(nw) == 1 ? cat_one[c] : cat_many[c]);
        names(&b, nw);
        sg_buf_printf(&b, ")");
    }
    if (denials)
        sg_buf_printf(&b, "%s %zu new denial%s", said++ ? "," : "", denials,
                      denials == 1 ? "" : "s");
    if (!said)
        sg_buf_printf(&b, " no new hosts, programs, paths or denials");
    for (size_t c = 0, gone = 0; c < NCATS; c++) {
        size_t n = json_array_size(json_object_get(json_object_get(d, cat_key[c]), "gone"));
        if (n)
            sg_buf_printf(&b, "%s %zu %s", gone++ ? "," : "; gone:", n,
                          n == 1 ? cat_one[c] : cat_many[c]);
    }
    json_t *p;
    if ((p = json_object_get(ch, "max_severity"))) {
        cleanup_free char *x = sg_sanitize_str(json_string_value(json_array_get(p, 0)), 0);
        cleanup_free char *y = sg_sanitize_str(json_string_value(json_array_get(p, 1)), 0);
        sg_buf_printf(&b, "; max severity %s -> %s", x ? x : "?", y ? y : "?");
    }
    if ((p = json_object_get(ch, "status"))) {
        cleanup_free char *x = sg_sanitize_str(json_string_value(json_array_get(p, 0)), 0);
        cleanup_free char *y = sg_sanitize_str(json_string_value(json_array_get(p, 1)), 0);
        sg_buf_printf(&b, "; %s -> %s", x ? x : "?", y ? y : "?");
    } else if ((p = json_object_get(ch, "exit_code"))) {
        sg_buf_printf(&b, "; exit %lld -> %lld", (long long)int_of(json_array_get(p, 0)),
                      (long long)int_of(json_array_get(p, 1)));
    }
    if ((p = json_object_get(ch, "duration_ms")) && moved(p)) {
        sg_buf_printf(&b, "; duration ");
        fmt_ms(&b, json_array_get(p, 0));
        sg_buf_printf(&b, " -> ");
        fmt_ms(&b, json_array_get(p, 1));
    }
    if ((p = json_object_get(ch, "output_bytes")) && moved(p)) {
        sg_buf_printf(&b, "; output ");
        fmt_bytes(&b, json_array_get(p, 0));
        sg_buf_printf(&b, " -> ");
        fmt_bytes(&b, json_array_get(p, 1));
    }
    return sg_buf_steal(&b);
}

/* Did the run observe its reads (a recording: a files_read event)? */
static bool reads_seen(json_t *trace)
{
    size_t i;
    json_t *ev;
    json_array_foreach (json_object_get(trace, "events"), i, ev)
        if (!strcmp(json_string_value(json_object_get(ev, "kind")) ?: "", "files_read"))
            return true;
    return false;
}

/* Reads seen on one side only are no change: the other never looked. */
static void drop_reads(json_t *facts)
{
    json_t *paths = json_object_get(facts, "paths");
    const char *key;
    json_t *f, *tmp;
    json_object_foreach_safe (paths, tmp, key, f)
        if (!strcmp(json_string_value(json_object_get(f, "state")), "read"))
            json_object_del(paths, key);
}

json_t *sg_trace_diff(json_t *a, json_t *b, const char *name_a, const char *name_b)
{
    json_t *fa = sg_trace_facts(a), *fb = sg_trace_facts(b);
    if (reads_seen(a) != reads_seen(b))
        drop_reads(reads_seen(a) ? fa : fb);
    json_t *d = json_pack("{s:s, s:o, s:o}", "schema", "skillgate.tracediff/1", "a",
                          side(a, name_a), "b", side(b, name_b));
    for (size_t c = 0; c < NCATS; c++)
        json_object_set_new(d, cat_key[c], diff_cat(json_object_get(fa, cat_key[c]),
                                                     json_object_get(fb, cat_key[c])));
    json_object_set_new(d, "changes", scalars(a, b));
    json_object_set_new(d, "summary", json_string(""));
    cleanup_free char *s = summary(d);
    json_object_set_new(d, "summary", json_string(s));
    json_decref(fa);
    json_decref(fb);
    return d;
}

/* ---- as text ---- */

static void detail(struct sg_buf *b, json_t *it)
{
    cleanup_free char *state = sg_sanitize_str(json_string_value(json_object_get(it, "state")), 0);
    sg_buf_printf(b, " (%s", state ? state : "?");
    const char *access = json_string_value(json_object_get(it, "access"));
    const char *cls = json_string_value(json_object_get(it, "class"));
    if (access && !strcmp(state ? state : "", "refused"))
        sg_buf_printf(b, " %s", !strcmp(access, "read") ? "read" : "write");
    if (cls && strcmp(cls, "file"))
        sg_buf_printf(b, ", %s", cls);
    json_t *ports = json_object_get(it, "ports");
    size_t i;
    json_t *v;
    json_array_foreach (ports, i, v)
        sg_buf_printf(b, "%s%lld", i ? ", " : (json_array_size(ports) > 1 ? "; ports " : "; port "),
                      (long long)json_integer_value(v));
    json_t *count = json_object_get(it, "count");
    if (json_is_integer(count) && json_integer_value(count) == 1)
        sg_buf_printf(b, ", once");
    else if (json_is_integer(count))
        sg_buf_printf(b, ", %lld times", (long long)json_integer_value(count));
    sg_buf_printf(b, ")");
}

static void head(struct sg_buf *b, const char *label, json_t *s)
{
    cleanup_free char *file = sg_sanitize_str(json_string_value(json_object_get(s, "file")), 0);
    cleanup_free char *name = sg_sanitize_str(json_string_value(json_object_get(s, "skill_name")),
                                              0);
    cleanup_free char *ver =
        sg_sanitize_str(json_string_value(json_object_get(s, "skill_version")), 0);
    cleanup_free char *when = sg_sanitize_str(json_string_value(json_object_get(s, "started_at")),
                                              0);
    const char *dig = json_string_value(json_object_get(s, "skill_digest"));
    cleanup_free char *d12 = dig ? sg_sanitize_str(dig, 0) : NULL;
    if (d12 && strlen(d12) > 19)
        d12[19] = 0; /* "sha256:" and 12 hex digits */
    sg_buf_printf(b, "%s %s\n   %s%s%s, started %s, digest %s\n", label, *file ? file : "?",
                  *name ? name : "?", *ver ? " " : "", ver, *when ? when : "?",
                  d12 ? d12 : "?");
}

char *sg_trace_diff_text(json_t *d)
{
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    sg_buf_printf(&b, "%s\n\n", json_string_value(json_object_get(d, "summary")));
    head(&b, "A:", json_object_get(d, "a"));
    head(&b, "B:", json_object_get(d, "b"));
    bool any = false;
    for (size_t c = 0; c < NCATS; c++) {
        json_t *dc = json_object_get(d, cat_key[c]);
        static const char *const lists[] = {"new", "changed", "gone"};
        for (int l = 0; l < 3; l++) {
            size_t i;
            json_t *it;
            json_array_foreach (json_object_get(dc, lists[l]), i, it) {
                if (!any)
                    sg_buf_printf(&b, "\n");
                any = true;
                cleanup_free char *name =
                    sg_sanitize_str(json_string_value(json_object_get(it, "name")), 0);
                sg_buf_printf(&b, "%c %-8s %s", "+~-"[l], cat_one[c], name ? name : "?");
                if (l == 1) {
                    cleanup_free char *x =
                        sg_sanitize_str(json_string_value(json_object_get(it, "from")), 0);
                    cleanup_free char *y =
                        sg_sanitize_str(json_string_value(json_object_get(it, "to")), 0);
                    sg_buf_printf(&b, " (%s -> %s)", x ? x : "?", y ? y : "?");
                } else {
                    detail(&b, it);
                }
                sg_buf_printf(&b, "\n");
            }
        }
    }
    json_t *ch = json_object_get(d, "changes");
    if (json_object_size(ch))
        sg_buf_printf(&b, "\n");
    const char *key;
    json_t *p;
    json_object_foreach (ch, key, p) {
        sg_buf_printf(&b, "  %-14s ", key);
        for (int k = 0; k < 2; k++) {
            json_t *v = json_array_get(p, (size_t)k);
            if (k)
                sg_buf_printf(&b, " -> ");
            if (!strcmp(key, "duration_ms"))
                fmt_ms(&b, v);
            else if (!strcmp(key, "output_bytes"))
                fmt_bytes(&b, v);
            else if (json_is_integer(v))
                sg_buf_printf(&b, "%lld", (long long)json_integer_value(v));
            else if (json_is_array(v)) {
                size_t i;
                json_t *x;
                json_array_foreach (v, i, x) {
                    cleanup_free char *s = sg_sanitize_str(json_string_value(x), 0);
                    sg_buf_printf(&b, "%s%s", i ? " " : "", s);
                }
                if (!json_array_size(v))
                    sg_buf_printf(&b, "(none)");
            } else if (json_is_true(v))
                sg_buf_printf(&b, "yes");
            else if (json_is_string(v)) {
                cleanup_free char *s = sg_sanitize_str(json_string_value(v), 0);
                if (sg_str_has_suffix(key, "_digest") && strlen(s) > 19)
                    s[19] = 0; /* "sha256:" and 12 hex digits: --json has them whole */
                sg_buf_printf(&b, "%s", s);
            } else
                sg_buf_printf(&b, "none");
        }
        sg_buf_printf(&b, "\n");
    }
    return sg_buf_steal(&b);
}
