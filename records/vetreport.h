/* The vetting of a whole skill marketplace as a report a person or a code
 * scanner reads (issue 53): `skillgate vet merge DIR... --html F --sarif F`
 * writes the merged document (a "skillgate.vetreport/1": its totals, its
 * skills[] of "skillgate.vet/1" records, ranked, and what was removed) as
 *
 * - HTML: one self-contained file under the rules of `traces report`
 *   (report.h, htmltext.h): one inline <style> allowed by its hash, no
 *   script, nothing loaded. The verdict totals first; then the malicious
 *   skills and those that need review, each open with the reasons that
 *   decided it and their evidence, its runs, its static findings, what was
 *   not run and what changed; then the clean skills one line each in a
 *   closed <details> (a registry of 2,400 skills stays readable); then the
 *   removed ones. A verdict is a word and a colour, never a colour alone.
 * - SARIF 2.1.0, as GitHub code scanning and GitLab read it: a rule per
 *   threat class (classify.h), per static finding kind met and
 *   "skillgate/verdict"; a result per reason of each skill and one per
 *   skill that is not clean, each located in the skill's folder under
 *   %SRCROOT%, with a partial fingerprint that survives a re-run.
 *
 * Every string of a record is hostile (a skill chose its name, its paths,
 * what its scripts printed): it passes the sanitizer (controls and bidi
 * characters become visible escapes such as \u{202e}), is cut at
 * SG_REPORT_FIELD_MAX bytes saying how many were left out, and is then
 * HTML-escaped (never inside an attribute) or JSON-escaped; a location's
 * path is percent-encoded. The same document gives the same bytes. */
#ifndef SG_VETREPORT_H
#define SG_VETREPORT_H

#include <stdio.h>

#include <jansson.h>

enum sg_vetreport_fmt { SG_VETREPORT_HTML, SG_VETREPORT_SARIF };

#define SG_VETREPORT_SCHEMA "skillgate.vetreport/1"
#define SG_VETREPORT_EVIDENCE_MAX 400 /* bytes of one evidence line in SARIF */

/* Write the merged vetting (a skillgate.vetreport/1 document) to out in
 * fmt. 0, or -EINVAL (not such a document, unknown fmt), or -EIO when out
 * failed. */
int sg_vetreport_write(json_t *merged, int fmt, FILE *out);

#endif
