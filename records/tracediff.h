/* Two traces compared: what the second run reached for that the first did
 * not (hosts, programs, paths, syscalls, limits, classes), what went away,
 * and how its end, duration and output changed. Only from what the traces
 * observed: a run that never tried something says nothing about it. */
#ifndef SG_TRACEDIFF_H
#define SG_TRACEDIFF_H

#include <jansson.h>

/* The facts of one trace a diff compares: {"hosts"|"programs"|"paths"|
 * "syscalls"|"limits"|"classes": {key: {"state": ..., ...}}} (states:
 * "reached"/"refused", "ran"/"refused", "written"/"read"/"refused",
 * "refused", "reached", a class's severity). Never NULL. */
json_t *sg_trace_facts(json_t *trace);

/* The diff of trace b against trace a (docs/json.md, skillgate.tracediff/1):
 * per category "new", "gone" and "changed" lists, the scalar changes, and a
 * one-line "summary". name_a/name_b: how the traces were named (their files). */
json_t *sg_trace_diff(json_t *a, json_t *b, const char *name_a, const char *name_b);

/* A size as a person reads it: "812 B", "3.4 KiB", "1.2 MiB" ("?" when
 * negative). */
void sg_format_size(char *out, size_t n, long long bytes);
/* Sort a JSON array in place with a qsort comparator of json_t * const *. */
void sg_json_array_sort(json_t *arr, int (*cmp)(const void *, const void *));

/* The diff as text for a terminal: the summary line, then one line per
 * difference ("+ host x.test (refused, port 443)"); every string sanitized. */
char *sg_trace_diff_text(json_t *diff);

#endif
