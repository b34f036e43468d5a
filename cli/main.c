/* skillgate: run AI-agent skills under a sandbox that enforces what they
 * declared. This file only dispatches; each command lives in cmd_*.c. */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sanitize.h"
#include "util.h"

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

/* text from column col, words wrapped before column 80 to column cont */
static void wrapped(FILE *f, const char *text, int col, int cont)
{
    int x = col;
    bool first = true;
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " ");
        if (!first && x + 1 + (int)n > 79) {
            fprintf(f, "\n%*s", cont, "");
            x = cont;
        } else if (!first) {
            fputc(' ', f);
            x++;
        }
        fwrite(w, 1, n, f);
        x += (int)n;
        first = false;
        w += n;
        while (*w == ' ')
            w++;
    }
    fputc('\n', f);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: skillgate COMMAND [OPTIONS]\n\n"
               "Run AI-agent skills under a sandbox that enforces what they declared.\n\n"
               "Commands:\n");
    /* a usage longer than its column gets a line of its own (wrapped too),
     * and its summary starts below, in the summary column */
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strlen(commands[i].usage) > 26) {
            fputs("  ", f);
            wrapped(f, commands[i].usage, 2, 6);
            fprintf(f, "%29s", "");
        } else {
            fprintf(f, "  %-26s ", commands[i].usage);
        }
        wrapped(f, commands[i].summary, 29, 29);
    }
    fprintf(f, "\nOptions:\n  -h, --help      show this help (also: skillgate COMMAND --help)\n"
               "  -V, --version   show the version\n\n"
               "Without a command, skillgate opens the TUI on a terminal and lists the skills\n"
               "it discovers otherwise.\n\n"
               "The manual: man skillgate, and docs/manual/ (installed in\n"
               "share/doc/skillgate/manual/).\n");
}

void sg_command_usage(FILE *f, const char *cmd)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(commands[i].name, cmd)) {
            fputs("usage: skillgate ", f);
            wrapped(f, commands[i].usage, 17, 21);
            fprintf(f, "%s\n", commands[i].summary);
            return;
        }
    }
}

int sg_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    /* an unknown long option: optopt 0, and optind already past it */
    if (c != '?' || optopt != 0 || optind < 1 || optind > argc ||
        !sg_str_has_prefix(argv[optind - 1], "--"))
        return c;
    const char *arg = argv[optind - 1] + 2;
    cleanup_free char *word = sg_xstrndup(arg, strcspn(arg, "="));
    struct sg_nearest near;
    sg_nearest_init(&near, word);
    for (const struct option *o = longopts; o->name; o++) {
        if (*word && sg_str_has_prefix(o->name, word))
            return c; /* ambiguous, not unknown */
        sg_nearest_offer(&near, o->name);
    }
    if (near.best)
        fprintf(stderr, "skillgate: did you mean --%s?\n", near.best);
    return c;
}

/* The command a typo most likely meant: within two edits, or the only one
 * the word starts. NULL when none is close. */
static const char *nearest_command(const char *word)
{
    const char *best = NULL, *prefix = NULL;
    size_t bd = 3, nprefix = 0;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t dd = sg_edit_distance(word, commands[i].name);
        if (dd < bd)
            bd = dd, best = commands[i].name;
        if (*word && !strncmp(commands[i].name, word, strlen(word)))
            prefix = commands[i].name, nprefix++;
    }
    return best ? best : nprefix == 1 ? prefix : NULL;
}

int sg_subcommand_error(const char *cmd, const char *verb, const char *const *verbs)
{
    bool known = false;
    struct sg_buf list;
    sg_buf_init(&list, 256);
    for (size_t i = 0; verbs[i]; i++) {
        known |= verb && !strcmp(verb, verbs[i]);
        sg_buf_printf(&list, "%s%s", i ? ", " : "", verbs[i]);
    }
    cleanup_free char *names = sg_buf_steal(&list);
    cleanup_free char *shown = verb ? sg_sanitize_str(verb, 0) : NULL;
    if (!verb || !*verb)
        fprintf(stderr, "skillgate: %s needs a command: %s\n", cmd, names);
    else if (!known)
        fprintf(stderr, "skillgate: %s has no command '%s' (%s)\n", cmd, shown, names);
    else
        fprintf(stderr, "skillgate: %s %s: wrong arguments\n", cmd, shown);
    sg_command_usage(stderr, cmd);
    return SG_EXIT_USAGE;
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
    cleanup_free char *shown = sg_sanitize_str(cmd, 0);
    if (cmd[0] == '-') {
        fprintf(stderr, "skillgate: unknown option '%s' (options come after a command; "
                        "skillgate --help lists them)\n", shown);
        return SG_EXIT_USAGE;
    }
    const char *near = nearest_command(cmd);
    if (near)
        fprintf(stderr, "skillgate: unknown command '%s': did you mean %s?\n", shown, near);
    else
        fprintf(stderr, "skillgate: unknown command '%s' (skillgate --help lists them)\n",
                shown);
    return SG_EXIT_USAGE;
}
