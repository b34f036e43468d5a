/* A trace in SkillSandbox's own trace format (its ExecutionTrace, as its
 * serde reads it), for the tools that read SkillSandbox's traces: every
 * event kind one of its 20, every classification one of its 7 classes, its
 * required fields as it types them. What has no place there stays beside
 * it under skillgate_* keys (its reader ignores unknown fields):
 *   events[].skillgate_kind      our kind (the nearest of its kinds is kind)
 *   violation_summary            its classes: ours mapped where the meaning
 *                                is contained (dns_exfiltration is data
 *                                exfiltration, sandbox_escape_attempt a
 *                                privilege escalation, persistence an
 *                                unauthorized file access), counts summed;
 *                                total_enforcements its sum of the counts;
 *                                left out when none, as it does
 *   skillgate_classifications    our whole list, every class
 *   skillgate_total_enforcements our count of enforcement events
 * docs/json.md says field by field what is the same and what is not. */
#ifndef SG_SSEXPORT_H
#define SG_SSEXPORT_H

#include <jansson.h>

/* A new document from a skillgate.trace/1 document (borrowed). */
json_t *sg_trace_skillsandbox(const json_t *doc);

#endif
