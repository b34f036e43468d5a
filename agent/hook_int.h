/* What hook.c and hookscript.c share (agent-internal). */
#ifndef SG_HOOK_INT_H
#define SG_HOOK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "shellcmd.h"

struct sg_hook_venv;

/* The last component of a program's word. */
const char *sg_hook_base_of(const char *w);
/* The script's word in a command that runs one: INTERPRETER SCRIPT (1),
 * uv run [python] SCRIPT, ...; 0 when none. */
size_t sg_hook_script_at(const struct sg_shell_cmd *c);
/* Does the line name a skill's folder or a file in one (a word with a /,
 * read from cwd)? */
bool sg_hook_names_skill_file(const char *line, const char *cwd);

/* Look at the Python py (a program or a venv's folder, absolute). */
void sg_hook_venv_look(const char *py, struct sg_hook_venv *v);
/* Is module's top level a name of Python's own library (or one Python
 * imports at its start): already loaded when -m looks for it, or it may
 * be, so -m runs that one and not the skill's file (hookstdlib.c)? */
bool sg_hook_stdlib_name(const char *module);
/* Keep v (dir and digest) as vetted. 0 or -errno. */
int sg_hook_venv_vet(const struct sg_hook_venv *v);
/* The words that show v to a person (its folder, its digest's start); an
 * "always" vets it only when the question held them whole. */
char *sg_hook_venv_shown(const struct sg_hook_venv *v);
void sg_hook_venv_free(struct sg_hook_venv *v);

#endif
