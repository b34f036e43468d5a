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
 * braces, assignments, keywords, comments, here-documents) cannot be read
 * exactly: the parse fails with the reason, and the caller asks a person
 * instead of matching. Line continuations (backslash-newline outside
 * single quotes and comments) are taken out first, as bash's reader takes
 * them out before it reads words. Bounded: at most
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
/* The same, reading a ~ or ~/ at a word's start (unquoted, as bash
 * expands it) as home, when home is absolute: the agent hook, whose home
 * is the shell's. Every other tilde (~user, ~+, a quoted part after ~, ~
 * after = or :) is still refused. */
int sg_shell_parse_home(const char *line, const char *home, struct sg_shell *out,
                        const char **why);
void sg_shell_free(struct sg_shell *sh);
/* A simple command's words joined by single spaces, each quoted so that
 * sg_shell_parse reads the same words back (caller frees). */
char *sg_shell_join(const struct sg_shell_cmd *c);
/* w as one shell word (a command's first when first): as it is when no
 * quoting is needed, else in single quotes ('\'' for a quote). Appended
 * to b. */
struct sg_buf;
void sg_shell_quote(struct sg_buf *b, const char *w, bool first);

/* What a simple command runs beside itself, so that a deny or ask rule
 * names a program however it is reached.
 *
 * Followed (the program that runs is then read like any command, and the
 * caller reads it the same way again):
 *  - INNER, argv[*at] is the command: env, command, exec, nice, nohup,
 *    setsid, timeout, xargs, sudo, doas, stdbuf, time, ionice, chroot,
 *    builtin, busybox APPLET; each read by its getopt grammar (options up
 *    to the first operand or "--", env's lone "-", NAME=value words of env
 *    and sudo, the operand of timeout and chroot, also after "--").
 *    eval with several words when they join into exactly those words.
 *  - SHELL, argv[*at] is a command line: sh, bash, dash, ash, zsh, ksh,
 *    mksh with -c (a flag: the line is the first operand after all
 *    options, bash's -o/-O values and --long options skipped); eval WORD.
 * UNKNOWN (the caller asks, where a deny or ask Bash rule exists):
 *  - a launcher's or shell's option not known here, a shell reading a
 *    script or stdin (sh x.sh), bash --rcfile with -i, chroot with no
 *    command ($SHELL -i), xargs with none (echo), eval of words that join
 *    into other words or `eval -- …` (bash and dash differ);
 *  - env or sudo setting a name that is later run as code (BASH_ENV, ENV,
 *    SHELLOPTS, PS4, PAGER, EDITOR, GIT_SSH_COMMAND, GIT_CONFIG_*, LD_*,
 *    BASH_FUNC_*, ...: see loads_code), and declare/export/... of them;
 *  - builtins that run words or files as code: source, ., fc, trap with
 *    an action, alias NAME=…, enable -f, hash -p, and let, declare,
 *    export, local, readonly, typeset, unset, test, [, read, mapfile,
 *    wait, getopts, printf -v with a $ or ` in a word (an array subscript
 *    is arithmetic, and runs $(…));
 *  - find with -exec, -execdir, -ok or -okdir; git with -c, --config-env,
 *    --exec-path=, or -C, --git-dir, --work-tree (another repository's
 *    config: aliases, hooks) before its subcommand;
 *  - programs that run a command by a grammar not read here: watch,
 *    flock, unshare, setpriv, chrt, taskset, strace, ltrace, su, script,
 *    runuser, sg, ssh, parallel, fakeroot, systemd-run, nsenter, firejail,
 *    bwrap, proot, chpst, pkexec, ld.so, setarch, tmux, screen, ... (the
 *    opaque list in shellcmd.c).
 * NOT followed (NONE: the limit of a deny by program name, stated in the
 * manual, docs/manual/approvals.md): interpreters running code from an argument or a file (python
 * -c, perl -e, node -e, ruby -e, awk's system(), make, a script the agent
 * wrote, ./a.out); programs that run a command named in an option or in
 * a file they read (tar --to-command / -I, rsync -e, sort
 * --compress-program, sed's e command, vim -c, less, man -P, ssh's
 * ProxyCommand, git aliases and hooks set in .git/config, npm scripts);
 * names set by env or export that are not in loads_code; a launcher or
 * a shell not listed here. */
enum sg_launch { SG_LAUNCH_NONE, SG_LAUNCH_INNER, SG_LAUNCH_SHELL, SG_LAUNCH_UNKNOWN };
/* A NAME (or NAME=value) a shell or a program it starts runs as code
 * (BASH_ENV, PS4, PAGER, GIT_SSH_COMMAND, LD_*, BASH_FUNC_*, ...). */
bool sg_shell_name_loads_code(const char *w);
enum sg_launch sg_shell_launches(char *const *argv, size_t argc, size_t *at);

/* The reader is an allowlist (issue 51): a simple command is read whole
 * when what bash does with it lies in a grammar modelled completely: a
 * program (a name that is no builtin, or a path: the rules name the file
 * it runs), a builtin of SG_SHELL_MODELLED in shellcmd.c with only the
 * options listed there (never printf -v, jobs -x, declare, export, read,
 * set, shopt, hash, mapfile, compgen, trap, ...), a launcher whose command
 * is in the line and is read whole itself. Never xargs (its command is
 * its input) nor UNKNOWN launchers. A line not read whole is never allowed
 * by a rule or a default: it is asked (or sandboxed, hook.sandbox_bash).
 * false with *why (static). */
bool sg_shell_read_whole(char *const *argv, size_t argc, const char **why);
/* The same for one command of a line, in order: *moved says a cd came
 * before (or the agent works outside its project), and is set after a cd;
 * git anywhere in a moved command, through a launcher or sh -c too, is
 * not read whole (that folder's repository configuration runs). */
bool sg_shell_read_whole_in(char *const *argv, size_t argc, bool *moved, const char **why);

#endif
