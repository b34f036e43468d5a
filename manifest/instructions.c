#include "instructions.h"
const char *sg_finding_kind_name(int kind) { (void)kind; return "x"; }
const char *sg_finding_kind_desc(int kind) { (void)kind; return "x"; }
int sg_skill_static_scan(const struct sg_skill *sk, struct sg_findings *out) { (void)sk; (void)out; return 0; }
void sg_findings_free(struct sg_findings *f) { (void)f; }
