/* TEMP STUB (not committed) */
#ifndef SG_INSTRUCTIONS_H
#define SG_INSTRUCTIONS_H
#include <stddef.h>
struct sg_skill;
enum sg_find_level { SG_FIND_NOTE, SG_FIND_REVIEW, SG_FIND_MALICIOUS };
struct sg_finding { int kind; enum sg_find_level level; char *file; int line; char *excerpt; char *decoded; };
struct sg_findings { struct sg_finding *v; size_t n, cap; size_t dropped; };
const char *sg_finding_kind_name(int kind);
const char *sg_finding_kind_desc(int kind);
int sg_skill_static_scan(const struct sg_skill *sk, struct sg_findings *out);
void sg_findings_free(struct sg_findings *f);
#endif
