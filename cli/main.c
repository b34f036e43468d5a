/* skillgate: run AI-agent skills under a sandbox that enforces what they
 * declared. This file only dispatches; each command lives in cmd_*.c. */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *usage, *summary;
} commands[] = {
#define X(name, fn, usage, summary) {#name, fn, usage, summary},
    SG_COMMANDS(X)
#undef X
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: skillgate COMMAND [OPTIONS]\n\n"
               "Run AI-agent skills under a sandbox that enforces what they declared.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-26s %s\n", commands[i].usage, commands[i].summary);
    fprintf(f, "\nOptions:\n  -h, --help      show this help (also: skillgate COMMAND --help)\n"
               "  -V, --version   show the version\n\n"
               "Without a command, skillgate opens the TUI on a terminal and lists the skills\n"
               "it discovers otherwise.\n");
}

void sg_command_usage(FILE *f, const char *cmd)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(commands[i].name, cmd)) {
            fprintf(f, "usage: skillgate %s\n%s\n", commands[i].usage, commands[i].summary);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    /* only the character set: wide characters on screen (ncurses, wcwidth);
     * messages, numbers and dates stay as they are in any locale, and loading
     * every category cost 60 system calls at each start */
    setlocale(LC_CTYPE, "");
    if (argc < 2) {
        sg_recover_runs();
        /* on a terminal, the TUI; in a pipe, the list */
        char *av[] = {isatty(0) && isatty(1) ? "tui" : "list", NULL};
        return isatty(0) && isatty(1) ? cmd_tui(1, av) : cmd_list(1, av);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < NCOMMANDS; i++) {
                if (!strcmp(commands[i].name, argv[2])) {
                    char *av[] = {argv[2], "--help", NULL};
                    return commands[i].fn(2, av);
                }
            }
        }
        usage(stdout);
        return SG_EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("skillgate %s\n", SG_VERSION);
        return SG_EXIT_OK;
    }
    sg_recover_runs(); /* a killed broker's run gets its records at the next start */
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, cmd))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "skillgate: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return SG_EXIT_USAGE;
}
