/* libFuzzer target for what skillgate reads of a skill's scripts: the
 * bytes as the skill's Markdown, scanned for the usage lines of a fixed
 * list of scripts (sg_script_usage_scan), and their first bytes as a
 * script's #! line (sg_shebang_parse). Inputs over the manifest cap are
 * cut, as the loader reads no more. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "skill.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_MANIFEST_MAX)
        size = SG_MANIFEST_MAX;
    static const char *const names[] = {"scripts/a.py", "scripts/sub/b.js", "scripts/c.sh",
                                        "scripts/a.pyc"};
    struct sg_policy p = {0};
    p.nscripts = SG_ARRAY_LEN(names);
    p.scripts = sg_xcalloc(p.nscripts, sizeof *p.scripts);
    p.script_usage = sg_xcalloc(p.nscripts, sizeof *p.script_usage);
    for (size_t i = 0; i < p.nscripts; i++)
        p.scripts[i] = sg_xstrdup(names[i]);
    char *text = sg_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    sg_script_usage_scan(&p, text);
    for (size_t i = 0; i < p.nscripts; i++) {
        if (p.script_usage[i] && strlen(p.script_usage[i]) > SG_USAGE_MAX)
            abort(); /* the cap is what the screens and JSON rely on */
        free(p.scripts[i]);
        free(p.script_usage[i]);
    }
    free(p.scripts);
    free(p.script_usage);
    free(text);

    char prog[PATH_MAX], arg[SG_SHEBANG_MAX + 1];
    if (sg_shebang_parse((const char *)data, size, prog, sizeof prog, arg, sizeof arg) == 0 &&
        (prog[0] != '/' || strchr(prog, '\n') || strchr(arg, '\n') || strchr(arg, ' ')))
        abort(); /* an absolute program and one word of argument, or nothing */
    return 0;
}
