/* Files a person names on the run's command line, in the plan.
 *
 * `cd ~/w && skillgate run pdf --script scripts/check.py /elsewhere/form.pdf`
 * names a file the sandbox would not show (only the system folders, the
 * working folder, the skill's and the declared paths are in view): the
 * script failed with "No such file". Each argument given for the run (a
 * script's, a module's or an entrypoint's; not a wrapped command's, which
 * sees the home) or the value of an --option=VALUE in one, that names an existing regular file outside
 * the view is shown read-only for this run: the file itself, never its
 * folder, bound at the path the argument names from its real path (the
 * object pinned with the other binds, pin.h). A named file in a masked place
 * (credentials, an agent's or skillgate's own folders) refuses the run, and
 * what cannot be shown (a folder, a missing file whose folder is not in
 * view) is said at once (sg_plan.unshown). At most SG_NAMED_MAX files are
 * shown; past that each is said as not shown. */
#ifndef SG_NAMED_H
#define SG_NAMED_H

#include "sandbox.h"

#define SG_NAMED_MAX 256

/* Bind the named files no bind of the plan shows yet; called after the
 * other binds and before the masks. */
void sg_plan_named_mounts(struct sg_plan *p, const struct sg_run_opts *o);
/* After the masks: 0, or -EPERM with *why naming a named file a mask took. */
int sg_plan_named_check(const struct sg_plan *p, const char **why);

#endif
