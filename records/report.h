/* One run as a report a person can hand on: `skillgate traces report`
 * (issue 38, item 13). A pure function of the trace (and, where there is
 * one, the run of the skill's previous version) to one self-contained file:
 * HTML (inline <style> under a Content-Security-Policy that allows nothing
 * else: no script, no network, no external asset; the timeline is inline
 * SVG) or Markdown for a pull request or an issue.
 *
 * Every string of a trace is hostile (a skill chose its output, its paths,
 * its host names; a trace named by path may be forged whole): each passes
 * the sanitizer (controls and bidi characters become visible escapes such
 * as \u{202e}) and then the format's escaping (HTML: & < > " ' as
 * entities, never inside an attribute; Markdown: inside code spans and
 * fences longer than any backtick run they hold). Long strings and the
 * output are cut for display, saying how many bytes were left out; every
 * decision and every refused attempt the trace holds is listed. */
#ifndef SG_REPORT_H
#define SG_REPORT_H

#include <stdio.h>

#include <jansson.h>

enum sg_report_fmt { SG_REPORT_HTML = 0, SG_REPORT_MD = 1 };

#define SG_REPORT_FIELD_MAX 2000          /* bytes of one string shown */
#define SG_REPORT_OUTPUT_MAX (256 * 1024) /* bytes of the run's output shown */
#define SG_REPORT_MARKS_MAX 2000          /* timeline marks per lane; the lists hold all */

/* Write the report of trace (a trace.json document) to out in fmt. prev:
 * the run of the skill's previous version to diff against, or NULL. The
 * TUI calls this too. 0, or -EINVAL (not a trace object, unknown fmt), or
 * -EIO when out failed. */
int sg_report_write(json_t *trace, json_t *prev, int fmt, FILE *out);

/* Of the runs rows (index lines, oldest first: traces list's rows) of
 * trace's skill, the one to diff against: the latest run before trace
 * whose skill_digest differs (the previous version), else NULL. A
 * borrowed reference into rows. */
json_t *sg_report_prev_row(json_t *rows, json_t *trace);

#endif
