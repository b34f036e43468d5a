/* libFuzzer target for the reader of an agent's shell commands
 * (broker/shellcmd.c): any bytes up to its cap. A parse either fails with a
 * reason or gives 1..SG_SHELL_MAX_CMDS commands of at least one word. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shellcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_SHELL_MAX + 1)
        size = SG_SHELL_MAX + 1;
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = '\0';
    struct sg_shell sh;
    const char *why = NULL;
    if (sg_shell_parse(line, &sh, &why) == 0) {
        if (sh.n == 0 || sh.n > SG_SHELL_MAX_CMDS)
            abort();
        for (size_t i = 0; i < sh.n; i++) {
            if (sh.cmds[i].argc == 0 || sh.cmds[i].argv[sh.cmds[i].argc])
                abort();
            free(sg_shell_join(&sh.cmds[i]));
        }
        sg_shell_free(&sh);
    } else if (!why || sh.n || sh.cmds) {
        abort();
    }
    free(line);
    return 0;
}
