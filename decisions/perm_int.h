/* Between the permission engine's files (perm.c the engine, rules.c,
 * grants.c, toolcheck.c): nothing outside them includes this. */
#ifndef SG_PERM_INT_H
#define SG_PERM_INT_H

#include <stdint.h>

#include "perm.h"
#include "shellcmd.h"

/* grants.c: every grant in path (an empty list when there is none, or the
 * file is not private: *err -EPERM and *why, which the caller frees) */
json_t *sg_grants_read(const char *path, struct sg_diags *d, int *err, char **why);

/* perm.c: the audit record (counted) and event of a decision */
void sg_perm_audit(struct sg_perm *p, const struct sg_preq *q, enum sg_decision d,
                   const char *by, int64_t latency);

/* perm.c: an agent's command line as it wrote it (check_tool_permission
 * puts the first word in subject, the rest in args), and q narrowed to one
 * simple command c of it */
char *sg_agent_line(const struct sg_preq *q);
void sg_agent_one_command(const struct sg_preq *q, const struct sg_shell_cmd *c,
                          struct sg_preq *out);

#endif
