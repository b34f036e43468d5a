/* libFuzzer target for the reader of an agent's shell commands
 * (decisions/shellcmd.c): any bytes up to its cap. A parse either fails with a
 * reason or gives 1..SG_SHELL_MAX_CMDS commands of at least one word; each
 * command's joined words read back as the same words; what a launcher
 * runs is a word inside the command, however deep it is followed; the
 * allowlist (sg_shell_read_whole) reads it whole or says why not. */
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
            char *j = sg_shell_join(&sh.cmds[i]);
            struct sg_shell back;
            const char *bwhy;
            if (sg_shell_parse(j, &back, &bwhy) == 0) {
                if (back.n != 1 || back.cmds[0].argc != sh.cmds[i].argc)
                    abort();
                for (size_t k = 0; k < back.cmds[0].argc; k++)
                    if (strcmp(back.cmds[0].argv[k], sh.cmds[i].argv[k]))
                        abort();
                sg_shell_free(&back);
            } else if (strlen(j) <= SG_SHELL_MAX) {
                abort(); /* a joined command must read back */
            }
            free(j);
            /* the allowlist reads it whole or says why not */
            const char *rwhy = NULL;
            if (!sg_shell_read_whole(sh.cmds[i].argv, sh.cmds[i].argc, &rwhy) && !rwhy)
                abort();
            /* followed as the rules follow it: env sudo sh -c … */
            char **argv = sh.cmds[i].argv;
            size_t argc = sh.cmds[i].argc, at;
            for (int depth = 0; depth < 8; depth++) {
                enum sg_launch l = sg_shell_launches(argv, argc, &at);
                if ((l == SG_LAUNCH_INNER || l == SG_LAUNCH_SHELL) && (at == 0 || at >= argc))
                    abort();
                if (l != SG_LAUNCH_INNER)
                    break;
                argv += at;
                argc -= at;
            }
        }
        sg_shell_free(&sh);
    } else if (!why || sh.n || sh.cmds) {
        abort();
    }
    free(line);
    return 0;
}
