/* The traces folder's index: one JSON line per trace with what the Traces
 * screen lists (skill, start, status, exit, duration, severity, counts), so
 * that listing 1,000 traces of megabytes each reads one small file instead
 * of every trace. It is a cache: a line counts only while its file has the
 * size and mtime the line names; a trace without one is read in full (and
 * its line added). traces/.index.jsonl, written under flock: appended when
 * a trace is written, rewritten when stale lines outnumber the live ones. */
#ifndef SG_TRACEINDEX_H
#define SG_TRACEINDEX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SG_TRACE_INDEX ".index.jsonl"
#define SG_TRACE_INDEX_MAX (16u << 20)  /* a bigger index is ignored and rebuilt */
#define SG_TRACE_INDEX_LINE_MAX 4096    /* a longer line is not ours */
#define SG_TRACE_FILE_MAX (64u << 20)   /* a bigger trace is not ours */

/* A trace file in the folder dfd, parsed (NULL: unreadable, not a regular
 * file, over the cap, not JSON). */
json_t *sg_trace_load_at(int dfd, const char *name);
/* The index line of a trace: its summary, with the file's name, size and
 * mtime (from dfd/name); NULL when the file cannot be stat'ed. With doc
 * NULL, only the name, size and mtime. */
json_t *sg_trace_index_entry(int dfd, const char *name, json_t *doc);
/* Append entries (an array of index lines) to the index of dfd; with
 * rewrite, replace the index by them instead. 0 or -errno. */
int sg_trace_index_put(int dfd, json_t *entries, bool rewrite);
/* The index of dfd: an object from file name to its line (the last line
 * for a name wins); *lines gets how many lines it had. Never NULL. */
json_t *sg_trace_index_load(int dfd, size_t *lines);
/* Does this line still describe dfd/name (same size and mtime)? */
bool sg_trace_index_fresh(int dfd, const char *name, json_t *entry);
/* The traces of the folder, oldest first: their index lines (read from the
 * index where it is fresh, from the trace otherwise, and added to it);
 * unreadable ones left out. */
json_t *sg_trace_index_rows(int dfd);

#endif
