/* What hook.c and hookscript.c share (agent-internal). */
#ifndef SG_HOOK_INT_H
#define SG_HOOK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "shellcmd.h"

/* The last component of a program's word. */
const char *sg_hook_base_of(const char *w);
/* The script's word in a command that runs one: INTERPRETER SCRIPT (1),
 * uv run [python] SCRIPT, ...; 0 when none. */
size_t sg_hook_script_at(const struct sg_shell_cmd *c);
/* Does the line name a skill's folder or a file in one (a word with a /,
 * read from cwd)? */
bool sg_hook_names_skill_file(const char *line, const char *cwd);

#endif
