/* A trace in SkillSandbox's trace format (ssexport.h). */
#include "ssexport.h"

#include <string.h>

#include "classify.h"
#include "events.h"
#include "util.h"

/* SkillSandbox's classes, and ours that it has under another name. */
static const char *ss_class(const char *ours)
{
    static const char *const same[] = {"credential_harvesting", "credential_exfiltration",
                                       "data_exfiltration", "unauthorized_file_access",
                                       "privilege_escalation", "resource_abuse",
                                       "supply_chain_attack"};
    for (size_t i = 0; i < SG_ARRAY_LEN(same); i++)
        if (!strcmp(ours, same[i]))
            return same[i];
    if (!strcmp(ours, "dns_exfiltration"))
        return "data_exfiltration";
    if (!strcmp(ours, "sandbox_escape_attempt"))
        return "privilege_escalation";
    if (!strcmp(ours, "persistence")) /* a write outside the declared paths, refused */
        return "unauthorized_file_access";
    return NULL;
}

static int rank(const char *sev)
{
    static const char *const order[] = {"low", "medium", "high", "critical"};
    for (int i = 0; i < 4; i++)
        if (sev && !strcmp(sev, order[i]))
            return i + 1;
    return 0;
}

static json_t *event(const json_t *e)
{
    const char *kind = json_string_value(json_object_get(e, "kind"));
    const char *ss = sg_event_ss_kind_of(kind);
    json_t *data = json_object_get(e, "data");
    /* its skill_completed is an exit 0; any other end is skill_failed */
    if (kind && !strcmp(kind, "skill_completed") &&
        json_integer_value(json_object_get(data, "exit_code")) != 0)
        ss = "skill_failed";
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *ts = json_string_value(json_object_get(e, "timestamp"));
    json_t *o = json_pack("{s:s, s:s, s:s}", "timestamp", ts ? ts : "1970-01-01T00:00:00.000Z",
                          "kind", ss ? ss : "policy_violation", "message", msg ? msg : "");
    if (json_is_object(data))
        json_object_set(o, "data", data);
    json_object_set_new(o, "skillgate_kind", json_string(kind ? kind : ""));
    json_t *rep = json_object_get(e, "repeated");
    if (rep)
        json_object_set(o, "repeated", rep);
    return o;
}

static json_t *events(const json_t *list)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
        json_array_append_new(out, event(e));
    return out;
}

static const char *str_or_empty(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* Ours, in its classes (NULL: none of ours has a place there). */
static json_t *summary(const json_t *vs)
{
    json_t *list = json_array(), *classes = json_array();
    json_int_t total = 0;
    const char *max = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(vs, "classifications"), i, c)
    {
        const char *ours = json_string_value(json_object_get(c, "class"));
        const char *cls = ours ? ss_class(ours) : NULL;
        if (!cls)
            continue;
        json_int_t n = json_integer_value(json_object_get(c, "count"));
        if (n < 0 || n > (json_int_t)1 << 40) /* a count no run makes: a crafted file */
            n = 0;
        total += n;
        json_t *have = NULL, *x;
        size_t k;
        json_array_foreach(list, k, x)
            if (!strcmp(json_string_value(json_object_get(x, "class")), cls))
                have = x;
        const char *sev = json_string_value(json_object_get(c, "severity"));
        if (!have) {
            /* a trace written before they were kept has no description
             * nor prevented_by: the class's own (its reader wants strings) */
            const char *desc = json_string_value(json_object_get(c, "description"));
            const char *by = json_string_value(json_object_get(c, "prevented_by"));
            desc = desc ? desc : sg_class_description(ours);
            by = by ? by : sg_class_prevented_by(ours);
            have = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:[], s:[]}", "class", cls,
                             "severity", sev ? sev : "medium", "description",
                             desc ? desc : "", "prevented_by", by ? by : "", "mitre_tactic",
                             str_or_empty(c, "mitre_tactic"), "count", 0, "evidence",
                             "skillgate_classes");
            json_array_append_new(list, have);
            char name[64];
            size_t m = 0;
            for (const char *p = cls; *p && m + 1 < sizeof name; p++)
                if (*p != '_')
                    name[m++] = *p;
            name[m] = '\0';
            json_array_append_new(classes, json_string(name));
        } else if (rank(sev) > rank(json_string_value(json_object_get(have, "severity")))) {
            json_object_set_new(have, "severity", json_string(sev));
        }
        json_object_set_new(have, "count",
                            json_integer(json_integer_value(json_object_get(have, "count")) + n));
        json_array_extend(json_object_get(have, "evidence"), json_object_get(c, "evidence"));
        json_array_append_new(json_object_get(have, "skillgate_classes"), json_string(ours));
        if (rank(sev) > rank(max))
            max = sev;
    }
    if (!max) /* no severity it knows in the file: its reader still wants one */
        max = "medium";
    if (!json_array_size(list)) {
        json_decref(list);
        json_decref(classes);
        return NULL;
    }
    return json_pack("{s:I, s:o, s:b, s:o, s:s}", "total_enforcements", total,
                     "classifications", list, "all_prevented",
                     !json_is_false(json_object_get(vs, "all_prevented")), "classes", classes,
                     "max_severity", max);
}

json_t *sg_trace_skillsandbox(const json_t *doc)
{
    /* its started_at is required: a trace without one (none is written
     * so) gets its end, else the epoch */
    const char *start = json_string_value(json_object_get(doc, "started_at"));
    if (!start)
        start = json_string_value(json_object_get(doc, "completed_at"));
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "trace_id", str_or_empty(doc, "trace_id"),
                          "skill_name", str_or_empty(doc, "skill_name"), "skill_version",
                          str_or_empty(doc, "skill_version"), "started_at",
                          start ? start : "1970-01-01T00:00:00.000Z");
    if (json_is_string(json_object_get(doc, "completed_at")))
        json_object_set(o, "completed_at", json_object_get(doc, "completed_at"));
    json_object_set_new(o, "events", events(json_object_get(doc, "events")));
    if (json_is_integer(json_object_get(doc, "exit_code")))
        json_object_set(o, "exit_code", json_object_get(doc, "exit_code"));
    json_object_set_new(o, "policy_violations",
                        events(json_object_get(doc, "policy_violations")));
    const json_t *vs = json_object_get(doc, "violation_summary");
    json_t *s = summary(vs);
    if (s)
        json_object_set_new(o, "violation_summary", s);
    json_t *cl = json_object_get(vs, "classifications");
    json_object_set_new(o, "skillgate_classifications", cl ? json_incref(cl) : json_array());
    json_object_set_new(o, "skillgate_total_enforcements",
                        json_integer(json_integer_value(json_object_get(vs, "total_enforcements"))));
    json_object_set_new(o, "skillgate_schema", json_string(str_or_empty(doc, "schema")));
    json_object_set_new(o, "skillgate_status", json_string(str_or_empty(doc, "status")));
    return o;
}
