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
        if (!ps->in_word) {
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

int sg_shell_parse(const char *line, struct sg_shell *out, const char **why)
{
    memset(out, 0, sizeof *out);
    if (strlen(line) > SG_SHELL_MAX) {
        *why = "longer than 16 KiB";
        return -EINVAL;
    }
    struct parser ps = {.sh = out};
    sg_buf_init(&ps.word, SG_SHELL_MAX);
    bool pending = false;
    int r = 0;
    for (const char *p = line;;) {
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

/* A launcher's options: those without a value, those with one (as the
 * next word, or joined: -uNAME, --user=NAME), and how many operands come
 * before the command (timeout's duration). A word starting with - that is
 * neither is not known: the command it runs cannot be told. */
struct launcher {
    const char *name;
    const char *flags;      /* short options without a value */
    const char *valued;     /* short options with one */
    const char *const *lflags, *const *lvalued; /* long ones, without and with */
    int operands;
    bool assignments;       /* env: NAME=value words before the command */
    bool flag_digits;       /* nice -10 */
};

static const char *const env_lf[] = {"--ignore-environment", "--null", "--debug", NULL};
static const char *const env_lv[] = {"--unset", "--chdir", NULL};
static const char *const nice_lv[] = {"--adjustment", NULL};
static const char *const to_lf[] = {"--preserve-status", "--foreground", "--verbose", NULL};
static const char *const to_lv[] = {"--signal", "--kill-after", NULL};
static const char *const xa_lf[] = {"--null", "--no-run-if-empty", "--verbose", "--exit",
                                    "--interactive", "--open-tty", NULL};
static const char *const xa_lv[] = {"--delimiter", "--max-args", "--max-procs", "--max-lines",
                                    "--max-chars", "--arg-file", "--replace", "--eof",
                                    "--process-slot-var", NULL};
static const char *const sudo_lf[] = {"--preserve-env", "--set-home", "--non-interactive",
                                      "--stdin", "--background", "--reset-timestamp",
                                      "--remove-timestamp", NULL};
static const char *const sudo_lv[] = {"--user", "--group", "--close-from", "--chdir",
                                      "--host", "--prompt", "--role", "--type",
                                      "--command-timeout", "--other-user", NULL};
static const char *const none[] = {NULL};

static const struct launcher launchers[] = {
    {"env", "i0v", "uCP", env_lf, env_lv, 0, true, false},
    {"command", "p", "", none, none, 0, false, false},
    {"exec", "cl", "a", none, none, 0, false, false},
    {"nice", "", "n", none, nice_lv, 0, false, true},
    {"nohup", "", "", none, none, 0, false, false},
    {"setsid", "cfw", "", none, none, 0, false, false},
    {"timeout", "v", "sk", to_lf, to_lv, 1, false, false},
    {"xargs", "0rtpxo", "dnPLsaIEe", xa_lf, xa_lv, 0, false, false},
    {"sudo", "EHnSbkKA", "ugCDhprtTU", sudo_lf, sudo_lv, 0, false, false},
    {"doas", "n", "uC", none, none, 0, false, false},
    {"stdbuf", "", "ioe", none, none, 0, false, false},
    {"time", "pv", "fo", none, none, 0, false, false},
    {"ionice", "t", "cnp", none, none, 0, false, false},
    {"chroot", "", "", none, none, 1, false, false},
    {"builtin", "", "", none, none, 0, false, false},
};

static bool listed(const char *const *l, const char *w, size_t n)
{
    for (; *l; l++)
        if (strlen(*l) == n && !strncmp(*l, w, n))
            return true;
    return false;
}

static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"};

enum sg_launch sg_shell_launches(char *const *argv, size_t argc, size_t *at)
{
    *at = 0;
    if (!argc)
        return SG_LAUNCH_NONE;
    const char *b = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    for (size_t s = 0; s < SG_ARRAY_LEN(shells); s++) {
        if (strcmp(b, shells[s]))
            continue;
        /* sh [-eux...] -c STRING [NAME ARGS]: STRING is the command; a
         * shell reading a script file or stdin runs what nobody here sees */
        for (size_t i = 1; i < argc; i++) {
            const char *w = argv[i];
            if (w[0] != '-' || !w[1] || !strcmp(w, "--"))
                break;
            if (w[1] == '-' || strspn(w + 1, "euxvnfaChbmBEHPTklptc") != strlen(w + 1))
                return SG_LAUNCH_UNKNOWN;
            if (strchr(w + 1, 'c')) {
                if (i + 1 >= argc)
                    return SG_LAUNCH_UNKNOWN;
                *at = i + 1;
                return SG_LAUNCH_SHELL;
            }
        }
        return SG_LAUNCH_UNKNOWN;
    }
    const struct launcher *l = NULL;
    for (size_t i = 0; i < SG_ARRAY_LEN(launchers) && !l; i++)
        if (!strcmp(b, launchers[i].name))
            l = &launchers[i];
    if (!l)
        return SG_LAUNCH_NONE;
    size_t i = 1;
    int operands = l->operands;
    for (; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) {
            i++;
            break;
        }
        if (w[0] == '-' && w[1] == '-') {
            size_t n = strcspn(w, "=");
            if (listed(l->lflags, w, n) && !w[n])
                continue;
            if (!listed(l->lvalued, w, n))
                return SG_LAUNCH_UNKNOWN;
            if (!w[n] && ++i >= argc)
                return SG_LAUNCH_UNKNOWN;
            continue;
        }
        if (w[0] == '-' && w[1]) {
            if (l->flag_digits && strspn(w + 1, "0123456789") == strlen(w + 1))
                continue;
            for (size_t k = 1; w[k]; k++) {
                if (strchr(l->flags, w[k]))
                    continue;
                if (!strchr(l->valued, w[k]))
                    return SG_LAUNCH_UNKNOWN;
                if (!w[k + 1] && ++i >= argc) /* the value is the next word */
                    return SG_LAUNCH_UNKNOWN;
                break; /* the rest of this word is the value */
            }
            continue;
        }
        if (l->assignments && strchr(w, '=') && w[0] != '=')
            continue;
        if (operands > 0) {
            operands--;
            continue;
        }
        break;
    }
    if (i >= argc) /* nothing to run: env prints, xargs runs echo */
        return !strcmp(b, "xargs") ? SG_LAUNCH_UNKNOWN : SG_LAUNCH_NONE;
    *at = i;
    return SG_LAUNCH_INNER;
}
