/* The skill an argument names, one reading for every front end (`run`,
 * `validate`, `inspect`, MCP's run_skill and inspect_skill): a path (it
 * holds a '/', or a file or folder of that name exists here) is loaded as
 * it is; anything else is a name as discovery keys it, the "id" that
 * `skillgate list --json` and MCP's list_skills return ("pdf", or a
 * plugin's "plugin:pdf"), found in the usual places. MCP run_skill once
 * took only folders, so the ids list_skills gave it were "not a skill". */
#ifndef SG_RESOLVE_H
#define SG_RESOLVE_H

#include "discover.h"
#include "skill.h"

/* 0 and *out; -ENOENT for a name nothing found (*d, when given, keeps
 * the discovery for a "did you mean"; else it is freed); -ENOTUNIQ for a
 * name a skill of the working folder's and one of the person's own both
 * answer (sg_discovery_ambiguous; sg_resolve_ambiguous says it); or the load's
 * -errno for a path (*path_given set). cwd: for the project's skills,
 * NULL: the current folder. */
int sg_skill_resolve(const char *arg, const char *cwd, struct sg_skill **out,
                     struct sg_discovery *d, bool *path_given);

/* What refuses a name -ENOTUNIQ refused: the two skills' paths and
 * places, and how to name one (allocated). */
char *sg_resolve_ambiguous(const struct sg_discovery *d, const char *arg);

#endif
