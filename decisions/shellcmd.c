#include "shellcmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct parser {
    struct sg_shell *sh;
    char **words; /* the command being read */
    size_t nwords;
    struct sg_buf word;
    bool in_word, quoted_word;
    size_t total_words;
    const char *home; /* ~ and ~/ at a word's start read as this; NULL: refused */
};

static const char *const keywords[] = {"if", "then", "else", "elif", "fi", "case", "esac",
                                       "for", "while", "until", "do", "done", "function",
                                       "select", "time", "in", "coproc", "[[", "]]", "!", "{",
                                       "}"};

static int end_word(struct parser *ps, const char **why)
{
    if (!ps->in_word)
        return 0;
    if (ps->nwords + 1 >= SG_SHELL_MAX_WORDS || ++ps->total_words > SG_SHELL_MAX_WORDS) {
        *why = "too many words";
        return -EINVAL;
    }
    char *w = ps->word.data ? sg_buf_steal(&ps->word) : sg_xstrdup("");
    sg_buf_init(&ps->word, SG_SHELL_MAX);
    if (ps->nwords == 0 && !ps->quoted_word)
        for (size_t i = 0; i < SG_ARRAY_LEN(keywords); i++)
            if (!strcmp(w, keywords[i])) {
                free(w);
                *why = "a shell keyword (if, for, while, case, { }, ...)";
                return -EINVAL;
            }
    ps->words = realloc(ps->words, (ps->nwords + 2) * sizeof *ps->words);
    if (!ps->words)
        abort();
    ps->words[ps->nwords++] = w;
    ps->words[ps->nwords] = NULL;
    ps->in_word = ps->quoted_word = false;
    return 0;
}

static int end_command(struct parser *ps, bool after_operator, const char *op,
                       const char **why)
{
    if (ps->nwords == 0) {
        if (!after_operator)
            return 0; /* a blank line */
        *why = "an operator with no command before it";
        return -EINVAL;
    }
    struct sg_shell *sh = ps->sh;
    if (sh->n == SG_SHELL_MAX_CMDS) {
        *why = "too many commands";
        return -EINVAL;
    }
    sh->cmds = realloc(sh->cmds, (sh->n + 1) * sizeof *sh->cmds);
    if (!sh->cmds)
        abort();
    sh->cmds[sh->n] = (struct sg_shell_cmd){.argv = ps->words, .argc = ps->nwords};
    snprintf(sh->cmds[sh->n++].op, sizeof sh->cmds[0].op, "%s", op);
    ps->words = NULL;
    ps->nwords = 0;
    return 0;
}

/* An assignment word (NAME=...) as the command's first word is an
 * environment prefix: LD_PRELOAD=… ls is not ls. */
static bool assignment_so_far(const struct parser *ps)
{
    if (ps->nwords || ps->quoted_word || !ps->word.len)
        return false;
    size_t n = ps->word.len;
    if (n > 1 && ps->word.data[n - 1] == '+')
        n--; /* NAME+=value appends: an assignment too */
    for (size_t i = 0; i < n; i++) {
        char c = ps->word.data[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/* One word character (outside quotes) at p; returns bytes used or -1. */
static int word_char(struct parser *ps, const char *p, const char **why)
{
    unsigned char c = (unsigned char)*p;
    switch (c) {
    case '\\':
        if (!p[1]) {
            *why = "it ends with a backslash";
            return -1;
        }
        if (p[1] == '\n') {
            *why = "a line continuation";
            return -1;
        }
        sg_buf_append(&ps->word, p + 1, 1);
        ps->in_word = true;
        return 2;
    case '$': *why = "a $ expansion or substitution"; return -1;
    case '`': *why = "a command substitution (`…`)"; return -1;
    case '(': case ')': *why = "a subshell, a function or a process substitution"; return -1;
    case '<': case '>': *why = "a redirection"; return -1;
    case '{': case '}': *why = "braces (a group or a brace expansion)"; return -1;
    case '*': case '?': case '[': *why = "a glob, which the files there decide"; return -1;
    case '#':
        if (!ps->in_word) {
            *why = "a comment";
            return -1;
        }
        break;
    case '~':
        /* bash expands ~ at a word's start and after = or : in a word
         * that looks like an assignment (dd of=~/x, PATH=a:~/b); a lone
         * ~ or ~/ at a word's start is $HOME (sg_shell_parse_home) */
        if (!ps->in_word && ps->home && (!p[1] || strchr("/ \t\n;&|", p[1]))) {
            sg_buf_append(&ps->word, ps->home, strlen(ps->home));
            ps->in_word = true;
            return 1;
        }
        if (!ps->in_word || (ps->word.len && (ps->word.data[ps->word.len - 1] == '=' ||
                                              ps->word.data[ps->word.len - 1] == ':'))) {
            *why = "a tilde expansion";
            return -1;
        }
        break;
    case '!':
        if (!ps->in_word && !ps->nwords) {
            *why = "a negated pipeline";
            return -1;
        }
        break;
    case '=':
        if (assignment_so_far(ps)) {
            *why = "an assignment (VAR=value) before the command";
            return -1;
        }
        break;
    default:
        if (c < 0x20 || c == 0x7f) {
            *why = "a control character";
            return -1;
        }
    }
    sg_buf_append(&ps->word, p, 1);
    ps->in_word = true;
    return 1;
}

/* A quoted part starting at p ('…' or "…"); bytes used, or -1. */
static int quoted(struct parser *ps, const char *p, const char **why)
{
    const char *s = p + 1;
    ps->in_word = ps->quoted_word = true;
    if (*p == '\'') {
        const char *e = strchr(s, '\'');
        if (!e) {
            *why = "an unclosed quote";
            return -1;
        }
        sg_buf_append(&ps->word, s, (size_t)(e - s));
        return (int)(e + 1 - p);
    }
    for (; *s != '"'; s++) {
        if (!*s) {
            *why = "an unclosed quote";
            return -1;
        }
        if (*s == '$' || *s == '`') {
            *why = "an expansion inside double quotes";
            return -1;
        }
        if (*s == '\\' && s[1] && strchr("$`\"\\", s[1])) {
            sg_buf_append(&ps->word, ++s, 1);
            continue;
        }
        if (*s == '\\' && s[1] == '\n') {
            *why = "a line continuation";
            return -1;
        }
        sg_buf_append(&ps->word, s, 1);
    }
    return (int)(s + 1 - p);
}

/* The line with bash's line continuations taken out: a backslash and the
 * newline after it are removed before bash reads words (outside single
 * quotes, inside double quotes too; a comment ends at its newline), so
 * `ls \\<newline> -la` is ls -la and `&\\<newline>&` is &&. Caller frees. */
static char *joined_lines(const char *line)
{
    size_t n = strlen(line);
    char *out = sg_xmalloc(n + 1), *o = out;
    enum { OUT, SQ, DQ, COMMENT } st = OUT;
    bool word_start = true; /* bash's #: a comment only where a word starts */
    for (const char *p = line; *p; p++) {
        if (st == OUT && *p == '#' && word_start)
            st = COMMENT;
        else if (st == COMMENT && *p == '\n')
            st = OUT;
        else if ((st == OUT || st == DQ) && *p == '\\' && p[1] == '\n') {
            p++; /* both gone, and the word goes on as it was */
            continue;
        } else if ((st == OUT || st == DQ) && *p == '\\' && p[1]) {
            *o++ = *p++; /* an escaped character: never a quote's end or start */
            word_start = false;
            *o++ = *p;
            continue;
        } else if (st == OUT && (*p == '\'' || *p == '"')) {
            st = *p == '\'' ? SQ : DQ;
        } else if ((st == SQ && *p == '\'') || (st == DQ && *p == '"')) {
            st = OUT;
        }
        if (st == OUT || st == COMMENT)
            word_start = strchr(" \t\n;&|()<>", *p) != NULL;
        else
            word_start = false;
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

int sg_shell_parse(const char *line, struct sg_shell *out, const char **why)
{
    return sg_shell_parse_home(line, NULL, out, why);
}

int sg_shell_parse_home(const char *line, const char *home, struct sg_shell *out,
                        const char **why)
{
    memset(out, 0, sizeof *out);
    if (strlen(line) > SG_SHELL_MAX) {
        *why = "longer than 16 KiB";
        return -EINVAL;
    }
    if (home && (home[0] != '/' || strlen(home) > 4096))
        home = NULL; /* bash would read another home than this: refused */
    cleanup_free char *joined = joined_lines(line);
    struct parser ps = {.sh = out, .home = home};
    sg_buf_init(&ps.word, SG_SHELL_MAX);
    bool pending = false;
    int r = 0;
    for (const char *p = joined;;) {
        char c = *p;
        if (c == '\'' || c == '"') {
            int n = quoted(&ps, p, why);
            if (n < 0)
                goto bad;
            p += n;
            continue;
        }
        if (c && !strchr(" \t\n;&|", c)) {
            int n = word_char(&ps, p, why);
            if (n < 0)
                goto bad;
            p += n;
            continue;
        }
        if (end_word(&ps, why) < 0)
            goto bad;
        if (c == ' ' || c == '\t') {
            p++;
            continue;
        }
        if (!c) {
            if (pending && !ps.nwords) {
                *why = "it ends with an operator";
                goto bad;
            }
            if (end_command(&ps, false, "", why) < 0)
                goto bad;
            break;
        }
        if (c == '\n') { /* ends a command; a blank line (even after &&) is nothing */
            if (ps.nwords)
                pending = false;
            if (end_command(&ps, false, "\n", why) < 0)
                goto bad;
            p++;
            continue;
        }
        /* an operator: ; & && | || */
        size_t n = 1;
        if ((c == '&' && p[1] == '&') || (c == '|' && p[1] == '|'))
            n = 2;
        else if ((c == '|' && p[1] == '&') || (c == ';' && (p[1] == ';' || p[1] == '&')) ||
                 (c == '&' && p[1] == '>')) {
            *why = "an operator this reader does not take";
            goto bad;
        }
        char op[3] = {c, n == 2 ? p[1] : '\0', '\0'};
        if (end_command(&ps, true, op, why) < 0)
            goto bad;
        pending = n == 2 || c == '|'; /* && || | need a command after them */
        p += n;
    }
    if (!out->n) {
        *why = "no command";
        goto bad;
    }
    free(ps.word.data);
    return 0;
bad:
    r = -EINVAL;
    free(ps.word.data);
    for (size_t i = 0; i < ps.nwords; i++)
        free(ps.words[i]);
    free(ps.words);
    sg_shell_free(out);
    return r;
}

void sg_shell_free(struct sg_shell *sh)
{
    for (size_t i = 0; i < sh->n; i++) {
        for (size_t k = 0; k < sh->cmds[i].argc; k++)
            free(sh->cmds[i].argv[k]);
        free(sh->cmds[i].argv);
    }
    free(sh->cmds);
    memset(sh, 0, sizeof *sh);
}

void sg_shell_quote(struct sg_buf *b, const char *w, bool first)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789_-./,:@%+=";
    /* = is plain but in a command's first word (NAME=… is an assignment) */
    bool keyword = false; /* a quoted if is a program named if; a plain one is not */
    for (size_t i = 0; first && i < SG_ARRAY_LEN(keywords); i++)
        keyword |= !strcmp(w, keywords[i]);
    if (*w && strspn(w, plain) == strlen(w) && !(first && strchr(w, '=')) && !keyword) {
        sg_buf_append(b, w, strlen(w));
        return;
    }
    sg_buf_append(b, "'", 1);
    for (const char *c = w; *c; c++)
        if (*c == '\'')
            sg_buf_append(b, "'\\''", 4);
        else
            sg_buf_append(b, c, 1);
    sg_buf_append(b, "'", 1);
}

char *sg_shell_join(const struct sg_shell_cmd *c)
{
    struct sg_buf b;
    sg_buf_init(&b, SIZE_MAX / 2);
    for (size_t i = 0; i < c->argc; i++) {
        if (i)
            sg_buf_append(&b, " ", 1);
        sg_shell_quote(&b, c->argv[i], i == 0);
    }
    return b.data ? sg_buf_steal(&b) : sg_xstrdup("");
}

/* ---- launchers: what a command runs through env, sudo, sh -c ---- */

/* Names whose value a shell or a program later runs as code: set through
 * env, sudo or export, they make `bash -c ls`, `git log` or `man ls` run
 * what the value says. Not every such name (see shellcmd.h). */
bool sg_shell_name_loads_code(const char *w)
{
    static const char *const names[] = {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS0", "PS1", "PS2", "PS4",
        "PROMPT_COMMAND", "PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
        "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "LESSOPEN", "LESSCLOSE"};
    static const char *const prefixes[] = {"BASH_FUNC_", "LD_", "GIT_CONFIG_"};
    size_t n = strcspn(w, "=");
    if (n > 1 && w[n - 1] == '+')
        n--;
    for (size_t i = 0; i < SG_ARRAY_LEN(names); i++)
        if (strlen(names[i]) == n && !strncmp(names[i], w, n))
            return true;
    for (size_t i = 0; i < SG_ARRAY_LEN(prefixes); i++)
        if (!strncmp(w, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

static bool listed(const char *const *l, const char *w, size_t n)
{
    for (; l && *l; l++)
        if (strlen(*l) == n && !strncmp(*l, w, n))
            return true;
    return false;
}

/* A launcher's grammar, as its getopt string and manual give it: options
 * first (getopt stops at the first operand: all of these use "+"), then,
 * after them or after "--", env's lone "-", NAME=value words (env, sudo),
 * `operands` words (timeout's duration, chroot's root), then the command.
 * A word starting with - that is none of its options is not known: what
 * runs cannot be told. Long options are taken only whole (getopt also
 * takes an unambiguous prefix: such a word is not known here). */
struct launcher {
    const char *name;
    const char *flags;    /* short options without a value */
    const char *valued;   /* short options with one: the rest of the word, or the next word */
    const char *optional; /* short options whose value is only ever joined (xargs -e, -i, -l) */
    const char *const *lflags, *const *lvalued, *const *loptional; /* long ones */
    int operands;
    bool assignments;  /* NAME=value words before the command */
    bool dash_is_i;    /* env: a lone - after the options means -i */
    bool flag_digits;  /* nice -10 */
    enum sg_launch bare; /* with no command: chroot runs $SHELL -i, xargs runs echo */
};

static const char *const env_lf[] = {"--ignore-environment", "--null", "--debug", NULL};
static const char *const env_lv[] = {"--unset", "--chdir", NULL};
static const char *const nice_lv[] = {"--adjustment", NULL};
static const char *const to_lf[] = {"--preserve-status", "--foreground", "--verbose", NULL};
static const char *const to_lv[] = {"--signal", "--kill-after", NULL};
static const char *const xa_lf[] = {"--null", "--no-run-if-empty", "--verbose", "--exit",
                                    "--interactive", "--open-tty", NULL};
static const char *const xa_lv[] = {"--delimiter", "--max-args", "--max-procs", "--max-chars",
                                    "--arg-file", "--process-slot-var", NULL};
static const char *const xa_lo[] = {"--eof", "--replace", "--max-lines", NULL};
static const char *const sudo_lf[] = {"--preserve-env", "--set-home", "--non-interactive",
                                      "--stdin", "--background", "--reset-timestamp",
                                      "--remove-timestamp", NULL};
static const char *const sudo_lv[] = {"--user", "--group", "--close-from", "--chdir",
                                      "--host", "--prompt", "--role", "--type",
                                      "--command-timeout", "--other-user", NULL};
static const char *const sb_lv[] = {"--input", "--output", "--error", NULL};
static const char *const time_lf[] = {"--append", "--portability", "--quiet", "--verbose", NULL};
static const char *const time_lv[] = {"--format", "--output", NULL};
static const char *const ion_lf[] = {"--ignore", NULL};
static const char *const ion_lv[] = {"--class", "--classdata", "--pid", "--pgid", "--uid", NULL};
static const char *const sid_lf[] = {"--ctty", "--fork", "--wait", NULL};
static const char *const chr_lf[] = {"--skip-chdir", NULL};
static const char *const chr_lv[] = {"--groups", "--userspec", NULL};

static const struct launcher launchers[] = {
    {.name = "env", .flags = "i0v", .valued = "uCP", .lflags = env_lf, .lvalued = env_lv,
     .assignments = true, .dash_is_i = true},
    {.name = "command", .flags = "p"},
    {.name = "exec", .flags = "cl", .valued = "a"},
    {.name = "nice", .valued = "n", .lvalued = nice_lv, .flag_digits = true},
    {.name = "nohup"},
    {.name = "setsid", .flags = "cfw", .lflags = sid_lf},
    {.name = "timeout", .flags = "v", .valued = "sk", .lflags = to_lf, .lvalued = to_lv,
     .operands = 1},
    {.name = "xargs", .flags = "0rtpxo", .valued = "dnPLsaIE", .optional = "eil",
     .lflags = xa_lf, .lvalued = xa_lv, .loptional = xa_lo, .bare = SG_LAUNCH_UNKNOWN},
    {.name = "sudo", .flags = "EHnSbkKA", .valued = "ugCDhprtTU", .lflags = sudo_lf,
     .lvalued = sudo_lv, .assignments = true},
    {.name = "doas", .flags = "n", .valued = "uC"},
    {.name = "stdbuf", .valued = "ioe", .lvalued = sb_lv},
    {.name = "time", .flags = "apqv", .valued = "fo", .lflags = time_lf, .lvalued = time_lv},
    {.name = "ionice", .flags = "t", .valued = "cnpPu", .lflags = ion_lf, .lvalued = ion_lv},
    {.name = "chroot", .lflags = chr_lf, .lvalued = chr_lv, .operands = 1,
     .bare = SG_LAUNCH_UNKNOWN},
    {.name = "builtin"},
};

static enum sg_launch by_launcher(const struct launcher *l, char *const *argv, size_t argc,
                                  size_t *at)
{
    size_t i = 1;
    while (i < argc && argv[i][0] == '-' && argv[i][1]) {
        const char *w = argv[i++];
        if (!strcmp(w, "--"))
            break;
        if (w[1] == '-') {
            size_t n = strcspn(w, "=");
            if (!w[n] && listed(l->lflags, w, n))
                continue;
            if (listed(l->loptional, w, n))
                continue; /* --eof or --eof=X: never the next word */
            if (!listed(l->lvalued, w, n))
                return SG_LAUNCH_UNKNOWN;
            if (!w[n] && i++ >= argc)
                return SG_LAUNCH_UNKNOWN;
            continue;
        }
        if (l->flag_digits && strspn(w + 1, "0123456789") == strlen(w + 1))
            continue;
        for (size_t k = 1; w[k]; k++) {
            if (l->flags && strchr(l->flags, w[k]))
                continue;
            if (l->optional && strchr(l->optional, w[k]))
                break; /* the rest of the word, if any, is the value */
            if (!l->valued || !strchr(l->valued, w[k]))
                return SG_LAUNCH_UNKNOWN;
            if (!w[k + 1] && i++ >= argc) /* the value is the next word */
                return SG_LAUNCH_UNKNOWN;
            break; /* the rest of this word is the value */
        }
    }
    if (l->dash_is_i && i < argc && !strcmp(argv[i], "-"))
        i++;
    for (; l->assignments && i < argc && strchr(argv[i], '='); i++)
        if (argv[i][0] == '=' || sg_shell_name_loads_code(argv[i]))
            return SG_LAUNCH_UNKNOWN;
    for (int k = 0; k < l->operands; k++)
        if (i++ >= argc)
            return l->bare;
    if (i >= argc)
        return l->bare;
    *at = i;
    return SG_LAUNCH_INNER;
}

/* A shell's options, as its manual and its option loop read them: words
 * starting with - or + are options until the first operand ("-" and "--"
 * end them); each letter is a flag, except o and O that take the next
 * word whatever the letter's place (bash -oo posix nounset). -c is a flag:
 * the command line is the first operand after all options. bash's long
 * options come before the letters. A strict shell (zsh, ksh) is read only
 * in its plainest form. */
struct shell {
    const char *name;
    const char *flags;
    const char *valued;
    bool long_opts; /* bash's --name options */
    bool strict;    /* "-", "--" and "+" not taken */
};

static const char *const bash_lf[] = {"--debug", "--debugger", "--dump-po-strings",
                                      "--dump-strings", "--help", "--login", "--noediting",
                                      "--noprofile", "--norc", "--posix", "--pretty-print",
                                      "--protected", "--restricted", "--verbose", "--version",
                                      "--wordexp", NULL};
static const char *const bash_lv[] = {"--init-file", "--rcfile", NULL};

static const struct shell shells[] = {
    /* sh is bash or dash: bash's letters; one dash does not know fails */
    {"sh", "abefhkmnptuvxBCDEHPTilrsc", "oO", true, false},
    {"bash", "abefhkmnptuvxBCDEHPTilrsc", "oO", true, false},
    {"rbash", "abefhkmnptuvxBCDEHPTilrsc", "oO", true, false},
    {"dash", "abCefIilmnpqsuvVxEc", "o", false, false},
    {"ash", "abCefIilmnpqsuvVxEc", "o", false, false},
    {"zsh", "efhilnsuvxc", "o", false, true},
    {"ksh", "aefhiklmnprsuvxCc", "o", false, true},
    {"mksh", "aefhiklmnprsuvxCc", "o", false, true},
};

static enum sg_launch by_shell(const struct shell *sh, char *const *argv, size_t argc,
                               size_t *at)
{
    bool minus_c = false, rcfile = false, interactive = false;
    size_t i = 1;
    for (; sh->long_opts && i < argc && !strncmp(argv[i], "--", 2) && argv[i][2]; i++) {
        const char *w = argv[i];
        if (listed(bash_lv, w, strlen(w))) { /* read only by an interactive shell */
            rcfile = true;
            if (++i >= argc)
                return SG_LAUNCH_UNKNOWN;
        } else if (!listed(bash_lf, w, strlen(w))) {
            return SG_LAUNCH_UNKNOWN;
        }
    }
    for (; i < argc && (argv[i][0] == '-' || argv[i][0] == '+'); i++) {
        const char *w = argv[i];
        if (!strcmp(w, "-") || !strcmp(w, "--")) {
            if (sh->strict)
                return SG_LAUNCH_UNKNOWN;
            i++;
            break;
        }
        if (!w[1] && sh->strict)
            return SG_LAUNCH_UNKNOWN;
        size_t next = i + 1;
        for (const char *c = w + 1; *c; c++) {
            minus_c |= *c == 'c';
            interactive |= *c == 'i';
            if (strchr(sh->valued, *c)) {
                if (next++ >= argc)
                    return SG_LAUNCH_UNKNOWN;
            } else if (!strchr(sh->flags, *c)) {
                return SG_LAUNCH_UNKNOWN; /* --rcfile after a letter, -T tty, ... */
            }
        }
        i = next - 1;
    }
    /* no -c: a script file or stdin, which nobody here sees */
    if (!minus_c || i >= argc || (rcfile && interactive))
        return SG_LAUNCH_UNKNOWN;
    *at = i;
    return SG_LAUNCH_SHELL;
}

/* eval runs its words joined by spaces as a line. One word is that line;
 * several are the simple command they already are only when the joined
 * line reads back as exactly them (`eval touch 'F;' id` is two commands).
 * `eval -- x`: bash skips the --, dash runs a program named --. */
static enum sg_launch by_eval(char *const *argv, size_t argc, size_t *at)
{
    if (argc < 2)
        return SG_LAUNCH_NONE;
    if (argv[1][0] == '-' && argv[1][1])
        return SG_LAUNCH_UNKNOWN;
    *at = 1;
    if (argc == 2)
        return SG_LAUNCH_SHELL;
    struct sg_buf b;
    sg_buf_init(&b, SG_SHELL_MAX + 1);
    for (size_t i = 1; i < argc; i++)
        if ((i > 1 && sg_buf_append(&b, " ", 1) < 0) ||
            sg_buf_append(&b, argv[i], strlen(argv[i])) < 0) {
            sg_buf_free(&b);
            return SG_LAUNCH_UNKNOWN;
        }
    cleanup_free char *line = b.data ? sg_buf_steal(&b) : sg_xstrdup("");
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse(line, &sh, &why) < 0)
        return SG_LAUNCH_UNKNOWN;
    bool same = sh.n == 1 && sh.cmds[0].argc == argc - 1;
    for (size_t i = 0; same && i < argc - 1; i++)
        same = !strcmp(sh.cmds[0].argv[i], argv[i + 1]);
    sg_shell_free(&sh);
    return same ? SG_LAUNCH_INNER : SG_LAUNCH_UNKNOWN;
}

/* find runs a command only through -exec, -execdir, -ok, -okdir. */
static enum sg_launch by_find(char *const *argv, size_t argc, size_t *at)
{
    (void)at;
    for (size_t i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-exec") || !strcmp(argv[i], "-execdir") ||
            !strcmp(argv[i], "-ok") || !strcmp(argv[i], "-okdir"))
            return SG_LAUNCH_UNKNOWN;
    return SG_LAUNCH_NONE;
}

/* git's options before its subcommand: -c and --config-env set any
 * configuration (core.pager, alias.x=!cmd, core.sshCommand), --exec-path
 * names where its subcommands are found. */
static enum sg_launch by_git(char *const *argv, size_t argc, size_t *at)
{
    (void)at;
    static const char *const valued[] = {"-C", "--git-dir", "--work-tree", "--namespace",
                                         "--super-prefix", "--list-cmds", NULL};
    for (size_t i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *w = argv[i];
        /* -c and --config-env set any configuration; -C, --git-dir and
         * --work-tree pick a repository whose config (aliases, hooks, a
         * bare one shipped in a folder) the line does not show */
        if (w[1] == 'c' || w[1] == 'C' || !strncmp(w, "--config-env", 12) ||
            !strncmp(w, "--exec-path=", 12) || !strncmp(w, "--git-dir", 9) ||
            !strncmp(w, "--work-tree", 11))
            return SG_LAUNCH_UNKNOWN;
        if (listed(valued, w, strlen(w)))
            i++;
    }
    return SG_LAUNCH_NONE;
}

/* busybox APPLET ARGS runs the applet, itself a command to read. */
static enum sg_launch by_busybox(char *const *argv, size_t argc, size_t *at)
{
    if (argc < 2)
        return SG_LAUNCH_NONE;
    if (argv[1][0] == '-')
        return SG_LAUNCH_UNKNOWN;
    *at = 1;
    return SG_LAUNCH_INNER;
}

/* Builtins that run their words, or a file, as shell code. trap's action
 * runs later; alias NAME=… replaces a later command's name. Those that
 * evaluate a variable's subscript as arithmetic run $(…) inside it
 * (`let 'a[$(touch F)]'`, `test -v 'a[$(id)]'`), and the declaring ones
 * can set a name sg_shell_name_loads_code lists. */
static enum sg_launch by_builtin(char *const *argv, size_t argc, size_t *at)
{
    (void)at;
    static const char *const code[] = {"source", ".", "fc", NULL};
    static const char *const checked[] = {"let", "declare", "typeset", "local", "export",
                                          "readonly", "unset", "test", "[", "read", "mapfile",
                                          "readarray", "printf", "wait", "getopts", "alias",
                                          "trap", "enable", "hash", NULL};
    static const char *const declaring[] = {"declare", "typeset", "local", "export",
                                            "readonly", NULL};
    const char *b = argv[0];
    if (listed(code, b, strlen(b)))
        return SG_LAUNCH_UNKNOWN;
    if (!listed(checked, b, strlen(b)))
        return SG_LAUNCH_NONE;
    bool decl = listed(declaring, b, strlen(b)), named = strcmp(b, "printf");
    for (size_t i = 1; i < argc; i++)
        named |= !strcmp(argv[i], "-v"); /* printf names a variable only with -v */
    for (size_t i = 1; i < argc; i++) {
        const char *w = argv[i];
        if ((named && strpbrk(w, "$`")) || (decl && w[0] != '-' && sg_shell_name_loads_code(w)))
            return SG_LAUNCH_UNKNOWN;
        if (!strcmp(b, "alias") && strchr(w, '='))
            return SG_LAUNCH_UNKNOWN;
        if (!strcmp(b, "trap") && strcmp(w, "-l") && strcmp(w, "-p"))
            return SG_LAUNCH_UNKNOWN;
        if ((!strcmp(b, "enable") && !strncmp(w, "-f", 2)) ||
            (!strcmp(b, "hash") && w[0] == '-' && strchr(w, 'p')))
            return SG_LAUNCH_UNKNOWN; /* a builtin from a .so; hash -p PATH NAME */
    }
    return SG_LAUNCH_NONE;
}

/* Programs that run a command given in their words, with a grammar not
 * read here: what they run cannot be told. */
static const char *const opaque[] = {
    "watch", "flock", "unshare", "setpriv", "chrt", "taskset", "strace", "ltrace", "su",
    "script", "runuser", "sg", "ssh", "parallel", "sem", "fakeroot", "systemd-run",
    "nsenter", "firejail", "bwrap", "proot", "chpst", "pkexec", "run0", "prlimit", "capsh",
    "numactl", "cgexec", "setarch", "linux32", "linux64", "valgrind", "gdb", "catchsegv",
    "unbuffer", "rlwrap", "faketime", "torsocks", "proxychains", "proxychains4", "gosu",
    "su-exec", "setuidgid", "softlimit", "envdir", "runcon", "systemd-nspawn", "tmux",
    "screen", "entr", "xvfb-run", "dbus-launch", "start-stop-daemon", "daemonize", "expect",
    "ssh-agent", "dbus-run-session", "dbus-send", "at", "batch", "crontab", NULL};

enum sg_launch sg_shell_launches(char *const *argv, size_t argc, size_t *at)
{
    *at = 0;
    if (!argc)
        return SG_LAUNCH_NONE;
    const char *b = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    for (size_t i = 0; i < SG_ARRAY_LEN(shells); i++)
        if (!strcmp(b, shells[i].name))
            return by_shell(&shells[i], argv, argc, at);
    for (size_t i = 0; i < SG_ARRAY_LEN(launchers); i++)
        if (!strcmp(b, launchers[i].name))
            return by_launcher(&launchers[i], argv, argc, at);
    if (listed(opaque, b, strlen(b)) || !strncmp(b, "ld-linux", 8) || !strcmp(b, "ld.so"))
        return SG_LAUNCH_UNKNOWN; /* ld.so PROGRAM runs it */
    if (!strcmp(b, "eval"))
        return by_eval(argv, argc, at);
    if (!strcmp(b, "find"))
        return by_find(argv, argc, at);
    if (!strcmp(b, "git"))
        return by_git(argv, argc, at);
    if (!strcmp(b, "busybox"))
        return by_busybox(argv, argc, at);
    return by_builtin(argv, argc, at);
}

/* ---- the reader as an allowlist ---- */

/* Every bash builtin: a word that names one runs it, whatever PATH says. */
static const char *const builtins[] = {
    "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval",
    "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history",
    "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd",
    "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend",
    "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset",
    "wait", ".", ":", "[", NULL};

/* The builtins read completely, as data: the option letters each takes
 * that change nothing of what bash runs or where ("*": any words). Every
 * other builtin (declare, export, read, set, shopt, hash, mapfile,
 * compgen, trap, ...) can change lookup, set a variable bash reads later
 * (BASH_CMDS, PS4, HOME, CDPATH, IFS) or run words, and is not read. */
#define SG_SHELL_MODELLED(X)                                                              \
    X("cd", "LPe@") X("pushd", "n") X("popd", "n") X("pwd", "LP") X("echo", "*")          \
    X("printf", "") X(":", "*") X("true", "*") X("false", "*") X("exit", "*")             \
    X("return", "*") X("break", "*") X("continue", "*") X("shift", "*") X("type", "afptP") \
    X("help", "dms") X("times", "") X("dirs", "clpv") X("jobs", "lnprs") X("kill", "*")   \
    X("umask", "pS") X("ulimit", "*") X("disown", "ahr") X("fg", "") X("bg", "")

static const struct {
    const char *name, *opts;
} modelled[] = {
#define X(n, o) {n, o},
    SG_SHELL_MODELLED(X)
#undef X
};

/* A builtin's words: its options (before the first operand or "--") must
 * be letters its entry lists. */
static bool builtin_read(const char *opts, char *const *argv, size_t argc, const char **why)
{
    /* zsh (an agent's shell may be zsh) evaluates the numbers printf,
     * exit, return, shift, kill, ulimit ... take as arithmetic, where
     * 'a[$(cmd)]' runs cmd; only echo and the no-ops never read theirs */
    bool inert = !strcmp(argv[0], "echo") || !strcmp(argv[0], "true") ||
                 !strcmp(argv[0], "false") || !strcmp(argv[0], ":");
    for (size_t i = 1; i < argc && !inert; i++)
        if (strpbrk(argv[i], "$`[=") || strstr(argv[i], "++") ||
            (strstr(argv[i], "--") && strcmp(argv[i], "--"))) {
            *why = "a builtin's word with $, `, [, = or ++/-- (zsh reads such a number as "
                   "arithmetic, which runs $(...) or sets PATH)";
            return false;
        }
    if (!strcmp(opts, "*"))
        return true;
    for (size_t i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        for (const char *c = argv[i] + 1; *c; c++)
            if (!strchr(opts, *c)) {
                *why = "a builtin's option that changes what bash runs or where (printf -v, "
                       "jobs -x, ...)";
                return false;
            }
    }
    return true;
}

/* env and sudo words that move a command to another folder or point git
 * at another repository (env -C DIR, GIT_DIR=..., sudo -D DIR): what git
 * then reads (its config's aliases, pager, diff drivers) is not in the
 * line. */
static bool moves_elsewhere(const char *b, char *const *argv, size_t argc)
{
    bool env = !strcmp(b, "env"), sudo = !strcmp(b, "sudo");
    if (!env && !sudo)
        return false;
    for (size_t i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (w[0] == '-' && w[1] != '-' && strchr(w, env ? 'C' : 'D'))
            return true;
        if (!strncmp(w, "--chdir", 7))
            return true;
        if (w[0] != '-' && strchr(w, '=') && !strncmp(w, "GIT_", 4))
            return true;
        if (w[0] != '-' && !strchr(w, '='))
            break; /* the command */
    }
    return false;
}

/* git that writes its own configuration, or works on a bare repository
 * named by the folder it runs in. */
static bool git_config_or_bare(char *const *argv, size_t argc)
{
    size_t i = 1;
    for (; i < argc && argv[i][0] == '-'; i++)
        if (!strcmp(argv[i], "--bare"))
            return true;
    return i < argc && !strcmp(argv[i], "config");
}

static bool is_cd(const char *w)
{
    return !strcmp(w, "cd") || !strcmp(w, "pushd") || !strcmp(w, "popd");
}

/* moved: a cd came before in the line (or the agent's folder is not its
 * project's): git then reads that folder's repository configuration */
static bool read_whole(char *const *argv, size_t argc, const char **why, int depth,
                       bool *moved)
{
    if (!argc)
        return true;
    if (depth > 6) {
        *why = "launchers nested too deep";
        return false;
    }
    const char *b = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (!strcmp(b, "xargs")) {
        *why = "xargs runs what its input says";
        return false;
    }
    if (moves_elsewhere(b, argv, argc)) {
        *why = "env -C, sudo -D or GIT_*=: the command works elsewhere than the line shows";
        return false;
    }
    if (!strcmp(b, "git") && git_config_or_bare(argv, argc)) {
        *why = "git config or --bare: what git runs later is in a configuration the line does "
               "not show";
        return false;
    }
    if (!strcmp(b, "git") && *moved) {
        *why = "git in another folder than the project's reads that folder's repository "
               "configuration";
        return false;
    }
    /* command -v NAME, -V NAME: says what NAME is, runs nothing */
    if (!strcmp(argv[0], "command") && argc > 1 &&
        (!strcmp(argv[1], "-v") || !strcmp(argv[1], "-V")))
        return true;
    size_t at;
    switch (sg_shell_launches(argv, argc, &at)) {
    case SG_LAUNCH_UNKNOWN:
        *why = "it runs words or files the reader does not follow";
        return false;
    case SG_LAUNCH_INNER:
        return read_whole(argv + at, argc - at, why, depth + 1, moved);
    case SG_LAUNCH_SHELL: {
        struct sg_shell in;
        if (sg_shell_parse(argv[at], &in, why) < 0)
            return false;
        bool ok = true, inner = *moved;
        for (size_t i = 0; i < in.n && ok; i++) {
            ok = read_whole(in.cmds[i].argv, in.cmds[i].argc, why, depth + 1, &inner);
            inner |= is_cd(in.cmds[i].argv[0]);
        }
        sg_shell_free(&in);
        return ok;
    }
    case SG_LAUNCH_NONE:
        break;
    }
    if (strchr(argv[0], '/') || !listed(builtins, argv[0], strlen(argv[0])))
        return true; /* a program: what runs is the file the rules name */
    for (size_t i = 0; i < SG_ARRAY_LEN(modelled); i++)
        if (!strcmp(modelled[i].name, argv[0]))
            return builtin_read(modelled[i].opts, argv, argc, why);
    *why = "a builtin that can change what bash runs or where (declare, export, read, set, "
           "shopt, hash, mapfile, compgen, trap, ...)";
    return false;
}

bool sg_shell_read_whole(char *const *argv, size_t argc, const char **why)
{
    bool moved = false;
    *why = NULL;
    return read_whole(argv, argc, why, 0, &moved);
}

bool sg_shell_read_whole_in(char *const *argv, size_t argc, bool *moved, const char **why)
{
    *why = NULL;
    bool ok = read_whole(argv, argc, why, 0, moved);
    *moved |= argc && is_cd(argv[0]);
    return ok;
}
