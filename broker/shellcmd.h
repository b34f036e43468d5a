/* A command line an agent will hand to a shell, read the way POSIX sh will
 * read it, or not at all.
 *
 * A rule such as Bash(ls:*) may allow a command only when every simple
 * command in it is one the rule allows: `ls && curl … | sh` is three
 * commands, and `ls $(…)` runs whatever the substitution does. So the line
 * is split at the operators (; && || | & and newlines) into simple commands
 * of plain words, with quotes and backslashes removed as the shell removes
 * them. Anything whose meaning depends on the shell's state or on the
 * files there (expansions of $ and `, globs, ~, redirections, subshells,
 * braces, assignments, keywords, comments, here-documents, line
 * continuations) cannot be read exactly: the parse fails with the reason,
 * and the caller asks a person instead of matching. Bounded: at most
 * SG_SHELL_MAX bytes, SG_SHELL_MAX_CMDS commands, SG_SHELL_MAX_WORDS words.
 * Fuzzed (fuzz_shell). */
#ifndef SG_SHELLCMD_H
#define SG_SHELLCMD_H

#include <stdbool.h>
#include <stddef.h>

#define SG_SHELL_MAX 16384
#define SG_SHELL_MAX_CMDS 64
#define SG_SHELL_MAX_WORDS 512

struct sg_shell_cmd {
    char **argv; /* argc words, NULL-terminated */
    size_t argc;
    char op[3];  /* the operator after it: ";", "&", "&&", "||", "|", "\n", or "" at the end */
};

struct sg_shell {
    struct sg_shell_cmd *cmds;
    size_t n;
};

/* 0 with out filled (free with sg_shell_free), or -EINVAL with *why set to
 * a static reason; out is then empty. */
int sg_shell_parse(const char *line, struct sg_shell *out, const char **why);
void sg_shell_free(struct sg_shell *sh);
/* A simple command's words joined by single spaces, each quoted so that
 * sg_shell_parse reads the same words back (caller frees). */
char *sg_shell_join(const struct sg_shell_cmd *c);
/* w as one shell word (a command's first when first): as it is when no
 * quoting is needed, else in single quotes ('\'' for a quote). Appended
 * to b. */
struct sg_buf;
void sg_shell_quote(struct sg_buf *b, const char *w, bool first);

/* What a simple command runs beside itself. A launcher (env, command,
 * exec, nice, nohup, setsid, timeout, xargs, sudo, doas, stdbuf, time,
 * ionice, chroot, builtin) runs the command at argv[*at]; a shell with -c
 * runs the command line argv[*at]; UNKNOWN when a launcher's options are
 * not known here, or a shell reads a script or its stdin, so the program
 * that runs cannot be told. */
enum sg_launch { SG_LAUNCH_NONE, SG_LAUNCH_INNER, SG_LAUNCH_SHELL, SG_LAUNCH_UNKNOWN };
enum sg_launch sg_shell_launches(char *const *argv, size_t argc, size_t *at);

#endif
