#include "gitnamed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MAX_NAMED 256 /* names a repository may give before it is protected whole */

struct named {
    char *path;
    bool tree; /* the folder and all below */
    const char *why;
};

struct ident {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

struct repo {
    char *root;   /* the worktree's folder ("" for the person's own config) */
    char *gitdir; /* the real git folder, however .git led there */
    char *files[SG_GIT_FILES]; /* the configs read, with what they were then */
    struct ident id[SG_GIT_FILES];
    size_t nfiles;
    struct named v[MAX_NAMED];
    size_t n;
    struct named rel[16]; /* the person's own config: paths relative to each repository */
    size_t nrel;
    unsigned mine_gen; /* the person's config this repository's names were made with */
    bool whole;   /* named more than it could hold, or read past its caps */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct repo repos[SG_GIT_REPOS];
static size_t nrepos;
static struct repo mine; /* ~/.gitconfig, ~/.config/git/config */
static unsigned mine_gen;  /* counts its readings */

static const char WHY_HOOKS[] = "git runs its hooks from there (a repository's core.hooksPath, "
                                "or a hooks folder that leads there)";
static const char WHY_RUNS[] = "git runs it (a repository's core.fsmonitor)";
static const char WHY_CONFIG[] = "git reads it as a repository's configuration (include.path)";
static const char WHY_GITDIR[] = "a repository's own git folder, found through a .git file or "
                                 "commondir: its configuration, hooks and where git looks";
static const char WHY_WHOLE[] = "a repository whose configuration names more than skillgate "
                                "keeps: all of it is asked";
static const char WHY_MINE[] = "your own git configuration names more than skillgate keeps: "
                               "every write is asked";
static const char WHY_CMD[] = "git runs it (a repository's configuration names it as a "
                              "command: a pager, an editor, a filter, a helper)";
static const char WHY_BARE[] = "git would take this folder for a git folder (HEAD with objects "
                               "and refs, or a config): its configuration and hooks";

static void repo_clear(struct repo *r)
{
    free(r->root), free(r->gitdir);
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i]);
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].path);
    for (size_t i = 0; i < r->nrel; i++)
        free(r->rel[i].path);
    memset(r, 0, sizeof *r);
}

static void add(struct repo *r, char *path, bool tree, const char *why)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].tree == tree && !strcmp(r->v[i].path, path)) {
            free(path); /* named already */
            return;
        }
    if (r->n == MAX_NAMED) {
        r->whole = true;
        free(path);
        return;
    }
    r->v[r->n++] = (struct named){.path = path, .tree = tree, .why = why};
}

/* A path of the person's own config relative to whichever repository git
 * runs in: kept as written, matched in each (past the cap: every write). */
static void add_rel(struct repo *r, const char *v, bool tree, const char *why)
{
    if (r->nrel == SG_ARRAY_LEN(r->rel)) {
        r->whole = true;
        return;
    }
    r->rel[r->nrel++] = (struct named){.path = sg_xstrdup(v), .tree = tree, .why = why};
}

/* path made absolute against base (~/ the person's home), unresolved. */
static char *absolute(const char *base, const char *v)
{
    const char *home = sg_invoking_home();
    return v[0] == '/'                       ? sg_xstrdup(v)
           : !strncmp(v, "~/", 2) && home ? sg_xasprintf("%s/%s", home, v + 2)
                                           : sg_xasprintf("%s/%s", base, v);
}

/* abs with its links resolved as far as it exists: the real path of its
 * longest existing beginning, then the rest (tools -> build/bin, with no
 * run.sh yet: build/bin/run.sh, where it would be made). */
static char *resolve_partial(const char *abs)
{
    char *real = realpath(abs, NULL);
    if (real)
        return real;
    cleanup_free char *head = sg_xstrdup(abs);
    for (char *sl = strrchr(head, '/'); sl && sl > head; sl = strrchr(head, '/')) {
        *sl = '\0';
        cleanup_free char *hr = realpath(head, NULL);
        if (hr) {
            char *out = sg_xasprintf("%s/%s", strcmp(hr, "/") ? hr : "", abs + (sl - head) + 1);
            sg_path_normalize(out);
            return out;
        }
    }
    char *out = sg_xstrdup(abs);
    sg_path_normalize(out);
    return out;
}

/* path made absolute against base, its links resolved as far as it exists. */
static char *resolve_against(const char *base, const char *v)
{
    cleanup_free char *abs = absolute(base, v);
    return resolve_partial(abs);
}

/* A regular file, opened for reading, never blocking and never opening
 * anything else (a FIFO, a device or a socket a config names is no file,
 * and opening a device can do something): decided on an O_PATH descriptor,
 * then that very object reopened. -1 when it is no regular file. */
static int open_regular(const char *path, struct stat *st)
{
    int o = open(path, O_PATH | O_CLOEXEC);
    if (o < 0)
        return -1;
    int fd = -1, e = EINVAL; /* no regular file */
    if (fstat(o, st) == 0 && S_ISREG(st->st_mode)) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", o);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        e = errno;
    }
    close(o);
    errno = e;
    return fd;
}

/* Up to max bytes from fd: how many. */
static size_t read_fd_head(int fd, char *buf, size_t max)
{
    size_t got = 0;
    while (got < max) {
        ssize_t k = read(fd, buf + got, max - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/* A regular file's first max bytes (a .git file's or commondir's line, as
 * git reads the first): the length, or -1. */
static ssize_t read_head(const char *path, char *buf, size_t max)
{
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return -1;
    size_t n = read_fd_head(fd, buf, max);
    close(fd);
    return (ssize_t)n;
}

/* One value as git reads it: quotes joined, \" \\ \t \n unescaped,
 * comments (# ;) outside quotes cut, blanks at the ends dropped. */
static void unquote(char *v)
{
    char *o = v;
    bool q = false;
    for (char *c = v; *c; c++) {
        if (*c == '"') {
            q = !q;
        } else if (*c == '\\' && c[1]) {
            c++;
            *o++ = *c == 't' ? '\t' : *c == 'n' ? '\n' : *c;
        } else if (!q && (*c == '#' || *c == ';')) {
            break;
        } else {
            *o++ = *c;
        }
    }
    *o = '\0';
    while (o > v && (o[-1] == ' ' || o[-1] == '\t' || o[-1] == '\r'))
        *--o = '\0';
}

/* abs as git names it, then again each time a link on its way (a folder
 * or the last name) is followed, one link at a time, to what is there at
 * the end (or where it would be made): git walks those names, and at any
 * of them a skill could put a folder or file of its own in place of a
 * link. Past 40 links, or a link text that does not fit: the repository
 * whole. */
static void add_hops(struct repo *r, const char *abs, bool tree, const char *why)
{
    char *p = sg_xstrdup(abs);
    sg_path_normalize(p);
    int hop = 0;
    for (; hop < 40; hop++) {
        add(r, sg_xstrdup(p), tree, why);
        /* the first link on the way: its name ends at end */
        char *end = NULL;
        struct stat st;
        for (char *c = strchr(p + 1, '/');; c = strchr(c + 1, '/')) {
            char keep = c ? *c : '\0';
            if (c)
                *c = '\0';
            int e = lstat(p, &st);
            if (c)
                *c = keep;
            if (e < 0)
                break; /* not there (yet): the rest is where it would be */
            if (S_ISLNK(st.st_mode)) {
                end = c ? c : p + strlen(p);
                break;
            }
            if (!c)
                break;
        }
        if (!end)
            break;
        char t[PATH_MAX];
        char keep = *end;
        *end = '\0';
        ssize_t n = readlink(p, t, sizeof t - 1);
        char *sl = strrchr(p, '/');
        *end = keep;
        if (n <= 0 || (size_t)n >= sizeof t - 1 || !sl) {
            r->whole = true;
            break;
        }
        t[n] = '\0';
        char *next = t[0] == '/' ? sg_xasprintf("%s%s", t, end)
                                 : sg_xasprintf("%.*s/%s%s", (int)(sl - p), p, t, end);
        sg_path_normalize(next);
        free(p);
        p = next;
    }
    if (hop == 40)
        r->whole = true;
    free(p);
}

/* v (against base): add_hops. */
static void add_path(struct repo *r, const char *base, const char *v, bool tree,
                     const char *why)
{
    cleanup_free char *abs = absolute(base, v);
    add_hops(r, abs, tree, why);
}

static void read_config(struct repo *r, const char *cfg, const char *root, int depth);
static void mine_fresh(void);

/* path watched (fresh): as it is (st), or as absent (NULL, a zero ident:
 * made later, r is read again). The caller checked the file cap. */
static void watch(struct repo *r, const char *path, const struct stat *st)
{
    r->files[r->nfiles] = sg_xstrdup(path);
    r->id[r->nfiles++] = st ? (struct ident){st->st_dev, st->st_ino, st->st_size, st->st_mtim,
                                             st->st_ctim}
                            : (struct ident){0};
}

/* A hooks folder's entries that are symbolic links: git runs what they
 * lead to (pre-commit -> ../../scripts/check.sh, or -> pre-commit.sample),
 * which is protected by that name too. The folder is watched as a config
 * is (an entry added or changed there: read again); past 256 entries, the
 * repository whole. */
static void scan_hooks(struct repo *r, const char *dir)
{
    if (r->nfiles == SG_GIT_FILES) {
        r->whole = true;
        return;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    DIR *d = dfd >= 0 && fstat(dfd, &st) == 0 ? fdopendir(dfd) : NULL;
    if (!d) { /* not there: watched as absent (made later, read then);
               * no folder (core.hooksPath = /dev/null): watched as it is */
        int e = errno;
        if (dfd >= 0)
            close(dfd);
        if (e == ENOENT)
            watch(r, dir, NULL);
        else if (stat(dir, &st) == 0)
            watch(r, dir, &st);
        return;
    }
    watch(r, dir, &st);
    struct dirent *e;
    for (size_t seen = 0; (e = readdir(d)); seen++) {
        if (seen == 256 + 2) {
            r->whole = true;
            break;
        }
        struct stat ls;
        if (fstatat(dirfd(d), e->d_name, &ls, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(ls.st_mode))
            continue;
        cleanup_free char *p = sg_xasprintf("%s/%s", dir, e->d_name);
        add_hops(r, p, stat(p, &ls) == 0 && S_ISDIR(ls.st_mode), WHY_HOOKS);
    }
    closedir(d);
}

/* Does git run the value of section.key as a command? */
static bool runs_command(const char *section, const char *key, const char *v)
{
    static const struct {
        const char *section, *key; /* key "*": any key of the section */
    } cmd[] = {{"core", "pager"},      {"core", "editor"},       {"core", "sshCommand"},
               {"core", "askPass"},    {"sequence", "editor"},   {"diff", "external"},
               {"diff", "textconv"},   {"diff", "command"},      {"filter", "clean"},
               {"filter", "smudge"},   {"filter", "process"},    {"merge", "driver"},
               {"credential", "helper"}, {"gpg", "program"},     {"pager", "*"},
               {"web", "browser"},     {"sendemail", "smtpServer"}};
    if (!strcasecmp(section, "alias"))
        return v[0] == '!'; /* "!cmd": a shell command */
    for (size_t i = 0; i < SG_ARRAY_LEN(cmd); i++)
        if (!strcasecmp(section, cmd[i].section) &&
            (!strcmp(cmd[i].key, "*") || !strcasecmp(key, cmd[i].key)))
            return true;
    return false;
}

/* The next word of a shell command at *c, quotes and backslashes taken as
 * the shell takes them (operators ; | & ( ) < > end one), into out; *c
 * moves past it. false at the end; *cut when a word does not fit; *odd
 * when it holds what the reader does not model (a command substitution,
 * backquotes, $'...' quoting) outside single quotes. */
static bool next_word(const char **c, char *out, size_t n, bool *cut, bool *odd)
{
    const char *p = *c;
    while (*p && strchr(" \t\n;|&()<>", *p))
        p++;
    if (!*p)
        return false;
    size_t k = 0;
    char q = 0;
    for (; *p && (q || !strchr(" \t\n;|&()<>", *p)); p++) {
        if (q != '\'' && (*p == '`' || (*p == '$' && (p[1] == '(' || (!q && p[1] == '\'')))))
            *odd = true;
        if (!q && (*p == '\'' || *p == '"')) {
            q = *p;
            continue;
        }
        if (q && *p == q) {
            q = 0;
            continue;
        }
        if (*p == '\\' && q != '\'' && p[1])
            p++;
        if (k + 1 < n)
            out[k++] = *p;
        else
            *cut = true;
    }
    out[k] = '\0';
    *c = p;
    return true;
}

/* One word that names a file: protected (relative to the person's own
 * config, root "": each repository's, kept in rel). */
static void add_word(struct repo *r, const char *w, const char *root, const char *why)
{
    const char *dollar = strchr(w, '$'), *sl = NULL;
    for (const char *q = w; dollar && q < dollar; q++) /* the last '/' before it */
        if (*q == '/')
            sl = q;
    if (!strncmp(w, "$HOME/", 6) || !strncmp(w, "${HOME}/", 8)) {
        cleanup_free char *t = sg_xasprintf("~/%s", strchr(w, '/') + 1);
        add_word(r, t, root, why);
    } else if (dollar && !sl) {
        r->whole = true; /* a path that a variable begins: not modeled */
    } else if (dollar) { /* tools/$1.sh: all of the folder before it */
        cleanup_free char *dir = sg_xstrndup(w, (size_t)(sl - w));
        if (root[0] || dir[0] == '/' || !strncmp(dir, "~/", 2))
            add_path(r, root, dir, true, why);
        else
            add_rel(r, dir, true, why);
    } else if (root[0] || w[0] == '/' || !strncmp(w, "~/", 2)) {
        add_path(r, root, w, false, why);
    } else {
        add_rel(r, w, false, why);
    }
}

/* Each word of a command that names a file (has a '/', or is the program
 * itself when first) is protected, and the path after an '=' in one
 * (--require=./x.js, VAR=tools/x); a word that could be a command line
 * (sh -c 'tools/lint.sh "$@"') is read as one too, four deep. What the reader
 * does not model (a command substitution, $'...' quoting, a path made by
 * a variable, a word too long) protects the repository whole. */
static void add_words(struct repo *r, const char *v, const char *root, bool first_too,
                      const char *why, int depth)
{
    const char *c = v + (v[0] == '!');
    if (depth > 4) {
        r->whole = true;
        return;
    }
    char w[PATH_MAX];
    bool cut = false, odd = false, first = true;
    while (next_word(&c, w, sizeof w, &cut, &odd)) {
        bool named = strchr(w, '/') || (first && first_too);
        first = false;
        if (cut || odd) {
            r->whole = true;
            return;
        }
        /* a command line in one word, or a path with a blank: both read */
        if (w[strcspn(w, " \t\n;|&()<>")]) {
            add_words(r, w, root, false, why, depth + 1);
            if (strchr(w, '$'))
                continue; /* its words were: as a path it would be none */
        }
        const char *eq = strchr(w, '=');
        if (eq && strchr(eq + 1, '/'))
            add_word(r, eq + 1, root, why);
        if (named && w[0])
            add_word(r, w, root, why);
    }
}

/* One "key = value" of a section. */
static void take(struct repo *r, const char *section, char *kv, const char *cfg,
                 const char *root, int depth)
{
    char *eq = strchr(kv, '=');
    if (!eq)
        return;
    *eq = '\0';
    char *key = kv + strspn(kv, " \t");
    key[strcspn(key, " \t")] = '\0';
    char *v = eq + 1 + strspn(eq + 1, " \t");
    unquote(v);
    if (!*v)
        return;
    bool core = !strcasecmp(section, "core");
    bool incl = !strcasecmp(section, "include") || !strcasecmp(section, "includeIf");
    /* the person's own config names a folder of whichever repository git runs in */
    bool rel = !root[0] && v[0] != '/' && strncmp(v, "~/", 2);
    if (core && !strcasecmp(key, "hooksPath")) {
        if (rel)
            add_rel(r, v, true, WHY_HOOKS);
        else {
            add_path(r, root, v, true, WHY_HOOKS);
            cleanup_free char *hp = resolve_against(root, v);
            scan_hooks(r, hp);
        }
    } else if (core && !strcasecmp(key, "fsmonitor") && strcasecmp(v, "true") &&
               strcasecmp(v, "false")) {
        add_words(r, v, root, true, WHY_RUNS, 0); /* a command: its program, and its paths */
    } else if (runs_command(section, key, v)) {
        add_words(r, v, root, false, WHY_CMD, 0);
    } else if (incl && !strcasecmp(key, "path")) {
        cleanup_free char *dir = sg_xstrdup(cfg);
        char *sl = strrchr(dir, '/');
        if (sl)
            *sl = '\0';
        cleanup_free char *inc = resolve_against(dir, v);
        read_config(r, inc, root, depth + 1);
        add_path(r, dir, v, false, WHY_CONFIG);
    }
}

/* cfg's keys that name what git runs or reads, and its includes (depth
 * and file count bounded: past them, the repository is protected whole). */
static void read_config(struct repo *r, const char *cfg, const char *root, int depth)
{
    if (depth > 10 || r->nfiles == SG_GIT_FILES) { /* git's own include depth is 10 */
        r->whole = true;
        return;
    }
    /* read at its size, to the cap; what lies past the cap is not read,
     * and the repository is protected whole, what is read still counts
     * (an absolute hooksPath names a folder outside the worktree) */
    struct stat st;
    int fd = open_regular(cfg, &st);
    if (fd < 0) { /* none (config.worktree, an include): made later, read then */
        if (errno == ENOENT)
            watch(r, cfg, NULL);
        return;
    }
    size_t cap = (unsigned long long)st.st_size > SG_GIT_CONFIG_MAX ? SG_GIT_CONFIG_MAX
                                                                    : (size_t)st.st_size;
    cleanup_free char *text = sg_xmalloc(cap + 1);
    text[read_fd_head(fd, text, cap)] = '\0';
    close(fd);
    if ((unsigned long long)st.st_size > SG_GIT_CONFIG_MAX)
        r->whole = true;
    watch(r, cfg, &st);
    char section[64] = "";
    char *start = !strncmp(text, "\xEF\xBB\xBF", 3) ? text + 3 : text; /* a BOM, as git skips */
    for (char *save = NULL, *line = strtok_r(start, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *l = line + strspn(line, " \t");
        if (*l == '[') { /* [core] hooksPath = x: a section, then maybe a key */
            char *end = strchr(l, ']');
            snprintf(section, sizeof section, "%.*s", (int)strcspn(l + 1, " \t\".]"), l + 1);
            if (!end)
                continue;
            l = end + 1 + strspn(end + 1, " \t");
        }
        if (*l && *l != '#' && *l != ';')
            take(r, section, l, cfg, root, depth);
    }
}

/* The repository whose worktree holds dir: its root and git folder. */
static bool find_repo(const char *dir, char **root, char **gitdir)
{
    cleanup_free char *d = sg_xstrdup(dir);
    for (int depth = 0; depth < 256 && d[0] == '/'; depth++) {
        cleanup_free char *dotgit = sg_xasprintf("%s/.git", strcmp(d, "/") ? d : "");
        struct stat st;
        if (lstat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) ||
                                        S_ISLNK(st.st_mode))) {
            char line[PATH_MAX + 16];
            ssize_t n = S_ISDIR(st.st_mode) ? -1 : read_head(dotgit, line, sizeof line - 1);
            char *gd = NULL;
            if (n > 7 && !strncmp(line, "gitdir:", 7)) { /* a worktree, a submodule */
                line[n] = '\0';
                char *v = line + 7 + strspn(line + 7, " \t");
                v[strcspn(v, "\r\n")] = '\0';
                gd = resolve_against(d, v);
            }
            *gitdir = gd ? gd : resolve_against(d, ".git");
            *root = sg_xstrdup(d);
            return true;
        }
        if (!strcmp(d, "/"))
            break;
        char *sl = strrchr(d, '/');
        *(sl == d ? sl + 1 : sl) = '\0';
    }
    return false;
}

/* The git folder's own protected names, and its commondir's: the
 * commondir (allocated), or NULL. */
static char *add_gitdir(struct repo *r, const char *gd, int depth)
{
    static const struct {
        const char *name;
        bool tree;
    } own[] = {{"", false},        {"config", false}, {"config.worktree", false},
               {"commondir", false}, {"hooks", true}};
    for (size_t i = 0; i < SG_ARRAY_LEN(own); i++)
        add(r, own[i].name[0] ? sg_xasprintf("%s/%s", gd, own[i].name) : sg_xstrdup(gd),
            own[i].tree, WHY_GITDIR);
    if (depth > 0)
        return NULL;
    cleanup_free char *cd = sg_xasprintf("%s/commondir", gd);
    char line[PATH_MAX];
    ssize_t n = read_head(cd, line, sizeof line - 1);
    if (n <= 0)
        return NULL;
    line[n] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    char *common = resolve_against(gd, line);
    free(add_gitdir(r, common, 1));
    return common;
}

static void fill(struct repo *r, const char *root, const char *gitdir)
{
    r->root = sg_xstrdup(root);
    r->gitdir = sg_xstrdup(gitdir);
    cleanup_free char *common = add_gitdir(r, gitdir, 0);
    cleanup_free char *cfg = sg_xasprintf("%s/config", common ? common : gitdir);
    read_config(r, cfg, root, 0);
    cleanup_free char *wt = sg_xasprintf("%s/config.worktree", gitdir);
    read_config(r, wt, root, 0);
    /* a hooks folder that is a symlink leads git where it leads */
    cleanup_free char *hooks = sg_xasprintf("%s/hooks", common ? common : gitdir);
    struct stat st;
    if (lstat(hooks, &st) == 0 && S_ISLNK(st.st_mode))
        add_hops(r, hooks, true, WHY_HOOKS);
    scan_hooks(r, hooks);
    /* the person's own config's relative paths (a hooks folder, a command):
     * this repository's, made here once (not per check) */
    r->mine_gen = mine_gen;
    for (size_t k = 0; k < mine.nrel; k++) {
        cleanup_free char *p = sg_xasprintf("%s/%s", root, mine.rel[k].path);
        add_hops(r, p, mine.rel[k].tree, mine.rel[k].why);
        if (mine.rel[k].tree)
            scan_hooks(r, p);
    }
}

/* Are the configs r read still what they were? */
static bool fresh(const struct repo *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        struct stat st;
        const struct ident *id = &r->id[i];
        bool absent = !id->dev && !id->ino; /* watched as absent: still so? */
        if (stat(r->files[i], &st) < 0) {
            if (absent && errno == ENOENT)
                continue;
            return false;
        }
        if (st.st_dev != id->dev || st.st_ino != id->ino ||
            st.st_size != id->size || st.st_mtim.tv_sec != id->mtime.tv_sec ||
            st.st_mtim.tv_nsec != id->mtime.tv_nsec || st.st_ctim.tv_sec != id->ctime.tv_sec ||
            st.st_ctim.tv_nsec != id->ctime.tv_nsec)
            return false;
    }
    return true;
}

/* The known repository of that git folder, read now if it is new or its
 * configs changed. Called with mu held. */
static bool known(const char *root, const char *gitdir)
{
    mine_fresh();
    struct repo *r = NULL;
    for (size_t i = 0; i < nrepos && !r; i++)
        if (!strcmp(repos[i].gitdir, gitdir) && !strcmp(repos[i].root, root))
            r = &repos[i];
    if (r && r->mine_gen == mine_gen && fresh(r))
        return true;
    if (!r && nrepos == SG_GIT_REPOS)
        return false; /* past the cap: protected whole (sg_git_named) */
    if (!r)
        r = &repos[nrepos++];
    repo_clear(r);
    fill(r, root, gitdir);
    return true;
}

static bool under(const char *path, const char *dir, bool tree)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '\0' || (tree && path[n] == '/'));
}

static bool has(const char *dir, const char *name)
{
    cleanup_free char *p = sg_xasprintf("%s/%s", dir, name);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Is dir inside a git folder the list or a known repository covers (a
 * *.git folder, a repository's own)? Its own names are protected there. */
static bool in_known_gitdir(const char *dir)
{
    cleanup_free char *d = sg_xstrdup(dir);
    char *save = NULL;
    for (char *c = strtok_r(d, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        size_t n = strlen(c);
        if (n >= 4 && !strcasecmp(c + n - 4, ".git"))
            return true;
    }
    for (size_t i = 0; i < nrepos; i++)
        if (under(dir, repos[i].gitdir, true))
            return true;
    return false;
}

/* Does dir hold what makes git take it for a git folder (HEAD, and objects
 * and refs), leaving out one name (the one being made)? */
static bool gitish(const char *dir, const char *making)
{
    bool head = strcmp(making, "HEAD") && has(dir, "HEAD");
    bool objs = strcmp(making, "objects") && has(dir, "objects");
    bool refs = strcmp(making, "refs") && has(dir, "refs");
    bool cfg = strcmp(making, "config") && has(dir, "config");
    return head || (objs && refs) || (!strcmp(making, "HEAD") && (cfg || objs || refs));
}

/* A folder git would take for a git folder whatever its name: what makes
 * it one is asked as the last of it is made (HEAD beside a config, objects
 * or refs; a config, objects or refs beside HEAD), and its hooks. Called
 * with mu held. */
static const char *made_gitdir(const char *path)
{
    cleanup_free char *dir = sg_xstrdup(path);
    char *sl = strrchr(dir, '/');
    if (!sl || sl == dir)
        return NULL;
    *sl = '\0';
    const char *base = sl + 1;
    if (in_known_gitdir(dir))
        return NULL;
    static const char *const makes[] = {"HEAD", "config", "config.worktree", "commondir",
                                        "objects", "refs"};
    for (size_t i = 0; i < SG_ARRAY_LEN(makes); i++)
        if (!strcmp(base, makes[i]) && gitish(dir, base))
            return WHY_BARE;
    /* a hooks folder of such a folder, and what is in it */
    cleanup_free char *up = sg_xstrdup(path);
    for (char *h = strstr(up, "/hooks"); h; h = strstr(h + 6, "/hooks")) {
        if (h[6] != '/' && h[6] != '\0')
            continue;
        *h = '\0';
        bool g = up[0] && gitish(up, "");
        *h = '/';
        if (g)
            return WHY_BARE;
    }
    return NULL;
}

static void mine_fresh(void)
{
    const char *home = sg_invoking_home();
    if ((mine.root && fresh(&mine)) || !home || home[0] != '/')
        return;
    repo_clear(&mine);
    mine_gen++; /* each repository's names are made again with it */
    mine.root = sg_xstrdup("");
    mine.gitdir = sg_xstrdup("");
    cleanup_free char *gc = sg_xasprintf("%s/.gitconfig", home);
    cleanup_free char *xc = sg_xasprintf("%s/.config/git/config", home);
    read_config(&mine, gc, "", 0);
    read_config(&mine, xc, "", 0);
}


static const char *names(const struct repo *r, const char *path, bool exact)
{
    if (r->whole && r->root[0] && under(path, r->root, true))
        return WHY_WHOLE;
    for (size_t i = 0; i < r->n; i++)
        if (under(path, r->v[i].path, r->v[i].tree && !exact))
            return r->v[i].why;
    return NULL;
}

/* r's names made again when the person's config changed since (its
 * relative paths are every repository's). Called with mu held. */
static void with_mine(struct repo *r)
{
    if (r->mine_gen == mine_gen)
        return;
    cleanup_free char *root = sg_xstrdup(r->root), *gitdir = sg_xstrdup(r->gitdir);
    repo_clear(r);
    fill(r, root, gitdir);
}

const char *sg_git_named(const char *path, bool exact)
{
    cleanup_free char *dir = sg_xstrdup(path);
    char *sl = strrchr(dir, '/');
    if (!sl)
        return NULL;
    *(sl == dir ? sl + 1 : sl) = '\0';
    cleanup_free char *root = NULL, *gitdir = NULL;
    bool repo = find_repo(dir, &root, &gitdir);
    pthread_mutex_lock(&mu);
    /* a repository past what is kept: its worktree whole */
    const char *why = repo && !known(root, gitdir) && under(path, root, true) ? WHY_WHOLE : NULL;
    if (!repo) /* known() saw to it */
        mine_fresh();
    if (!why)
        why = names(&mine, path, exact);
    if (!why && !exact)
        why = made_gitdir(path);
    for (size_t i = 0; !why && i < nrepos; i++) {
        with_mine(&repos[i]);
        why = names(&repos[i], path, exact);
    }
    if (!why && mine.whole)
        why = WHY_MINE;
    pthread_mutex_unlock(&mu);
    return why;
}

/* Is path below dir (dir itself excluded)? */
static bool strictly_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && path[n] == '/';
}

/* Does r name something below dir (dir itself excluded)? */
static bool names_below(const struct repo *r, const char *dir)
{
    for (size_t i = 0; i < r->n; i++)
        if (strictly_below(r->v[i].path, dir))
            return true;
    return false;
}

const char *sg_git_named_below(const char *dir)
{
    pthread_mutex_lock(&mu);
    mine_fresh();
    bool below = names_below(&mine, dir);
    for (size_t i = 0; !below && i < nrepos; i++) {
        with_mine(&repos[i]);
        below = names_below(&repos[i], dir);
    }
    pthread_mutex_unlock(&mu);
    return below ? "a folder that holds, or would hold, what a repository's configuration "
                   "names (its hooks folder, a program or file git runs or reads)"
                 : NULL;
}

static void learn(const char *path, int dfd, size_t *left, int depth, int max_depth, dev_t dev)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && *left) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        (*left)--;
        cleanup_free char *p = sg_xasprintf("%s/%s", path, e->d_name);
        if (!strcmp(e->d_name, ".git")) {
            cleanup_free char *root = NULL, *gitdir = NULL;
            if (find_repo(path[0] ? path : "/", &root, &gitdir)) {
                pthread_mutex_lock(&mu);
                known(root, gitdir);
                pthread_mutex_unlock(&mu);
            }
            continue; /* git's own folder: nothing to learn inside */
        }
        struct stat st;
        if (depth >= max_depth || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_dev != dev)
            continue;
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            learn(p, sub, left, depth + 1, max_depth, dev);
    }
    closedir(d);
}

void sg_git_learn(const char *dir, size_t max_entries, int max_depth)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return;
    }
    /* the repository above it too: its config may name a folder here */
    cleanup_free char *root = NULL, *gitdir = NULL;
    if (find_repo(dir, &root, &gitdir)) {
        pthread_mutex_lock(&mu);
        known(root, gitdir);
        pthread_mutex_unlock(&mu);
    }
    size_t left = max_entries;
    learn(strcmp(dir, "/") ? dir : "", fd, &left, 0, max_depth, st.st_dev);
}
