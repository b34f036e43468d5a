/* Themes: the role table, theme files (YAML read with manifest/ynode, every
 * problem a FILE:LINE:COL diagnostic) and folding a theme's colours to what
 * the terminal has. */
#include "theme.h"

#include <fcntl.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#include "util.h"
#include "ynode.h"

/* Where named themes are found after the user's own folder; meson passes
 * "<srcdir>/themes:<prefix>/share/skillgate/themes". */
#ifndef SG_THEMES_DIRS
#define SG_THEMES_DIRS "themes"
#endif

#define THEME_FILE_MAX (64 * 1024) /* a theme is a few hundred bytes */
#define THEME_NAME_MAX 32
#define THEME_LIST_MAX 1024 /* directory entries looked at per folder */

/* ---- the tables ---- */

static const struct {
    const char *name;
    short fg, bg;
    const char *attrs, *mono;
} role_defs[] = {
#define X(id, name, fg, bg, attrs, mono, what) [TUI_R_##id] = {name, fg, bg, attrs, mono},
    TUI_ROLES(X)
#undef X
};

/* The attribute words of theme files and of the role table. */
#define TUI_ATTR_WORDS(X)     \
    X(bold, A_BOLD)           \
    X(dim, A_DIM)             \
    X(reverse, A_REVERSE)     \
    X(underline, A_UNDERLINE) \
    X(blink, A_BLINK)         \
    X(standout, A_STANDOUT)   \
    X(italic, A_ITALIC)

static const struct {
    const char *word;
    attr_t attr;
} attr_words[] = {
#define X(word, attr) {#word, attr},
    TUI_ATTR_WORDS(X)
#undef X
};

/* ", bold, dim, ..." for messages (skip the first two characters). */
static const char attr_help[] =
#define X(word, attr) ", " #word
    TUI_ATTR_WORDS(X)
#undef X
    ;

static const char *const colour_names[8] = {"black", "red",     "green", "yellow",
                                            "blue",  "magenta", "cyan",  "white"};

const char *tui_role_name(enum tui_role r)
{
    return (unsigned)r < TUI_ROLE_COUNT ? role_defs[r].name : NULL;
}

static int role_lookup(const char *name)
{
    for (int r = 0; r < TUI_ROLE_COUNT; r++)
        if (!strcmp(role_defs[r].name, name))
            return r;
    return -1;
}

/* ---- attributes ---- */

/* OR the space-separated attribute words of s into *out. Returns 0, or
 * -EINVAL with the first unknown word in *bad (*badlen bytes). */
static int attrs_parse(const char *s, attr_t *out, const char **bad, size_t *badlen)
{
    for (;;) {
        s += strspn(s, " \t");
        size_t len = strcspn(s, " \t");
        if (!len)
            return 0;
        size_t i = 0;
        while (i < SG_ARRAY_LEN(attr_words) &&
               (strlen(attr_words[i].word) != len || strncmp(attr_words[i].word, s, len)))
            i++;
        if (i == SG_ARRAY_LEN(attr_words)) {
            *bad = s;
            *badlen = len;
            return -EINVAL;
        }
        *out |= attr_words[i].attr;
        s += len;
    }
}

/* The role table's strings (checked by tests/test_theme.c). */
static attr_t attrs_builtin(const char *s)
{
    attr_t a = 0;
    const char *bad;
    size_t badlen;
    (void)attrs_parse(s, &a, &bad, &badlen);
    return a;
}

/* ---- colours ---- */

struct rgb {
    int r, g, b;
};

/* xterm's defaults for the 16 ANSI colours (terminals differ: approximate). */
static const struct rgb ansi_rgb[16] = {
    {0, 0, 0},       {205, 0, 0},     {0, 205, 0},   {205, 205, 0},
    {0, 0, 238},     {205, 0, 205},   {0, 205, 205}, {229, 229, 229},
    {127, 127, 127}, {255, 0, 0},     {0, 255, 0},   {255, 255, 0},
    {92, 92, 255},   {255, 0, 255},   {0, 255, 255}, {255, 255, 255},
};

static struct rgb xterm_rgb(int i)
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    if (i < 16)
        return ansi_rgb[i];
    if (i >= 232) {
        int v = 8 + 10 * (i - 232);
        return (struct rgb){v, v, v};
    }
    i -= 16;
    return (struct rgb){level[i / 36], level[i / 6 % 6], level[i % 6]};
}

/* Squared distance, weighted because the eye is most sensitive to green. */
static long rgb_dist(struct rgb a, struct rgb b)
{
    long dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
    return 2 * dr * dr + 4 * dg * dg + 3 * db * db;
}

/* The xterm colour in [from, to) nearest to c. */
static short rgb_nearest(struct rgb c, int from, int to)
{
    int best = from;
    for (int i = from + 1; i < to; i++)
        if (rgb_dist(c, xterm_rgb(i)) < rgb_dist(c, xterm_rgb(best)))
            best = i;
    return (short)best;
}

/* "rrggbb" to the nearest of xterm's 240 fixed colours (16..255: the 16
 * ANSI ones are whatever the terminal's palette says). */
static int colour_hex(const char *h, short *out)
{
    if (strlen(h) != 6 || strspn(h, "0123456789abcdefABCDEF") != 6)
        return -EINVAL;
    unsigned long v = strtoul(h, NULL, 16);
    struct rgb c = {(int)(v >> 16) & 0xff, (int)(v >> 8) & 0xff, (int)v & 0xff};
    *out = rgb_nearest(c, 16, 256);
    return 0;
}

/* A colour by name, number 0..255 or "#rrggbb": 0 and *out, or -EINVAL. */
static int colour_parse(const char *s, short *out)
{
    if (!strcasecmp(s, "default")) {
        *out = -1;
        return 0;
    }
    if (!strcasecmp(s, "gray") || !strcasecmp(s, "grey")) {
        *out = 8;
        return 0;
    }
    bool bright = !strncasecmp(s, "bright-", 7);
    for (int i = 0; i < 8; i++) {
        if (!strcasecmp(bright ? s + 7 : s, colour_names[i])) {
            *out = (short)(bright ? i + 8 : i);
            return 0;
        }
    }
    long long v;
    if (sg_parse_ll(s, 0, 255, &v) == 0) {
        *out = (short)v;
        return 0;
    }
    return s[0] == '#' ? colour_hex(s + 1, out) : -EINVAL;
}

/* ---- the built-in themes ---- */

void tui_theme_builtin(struct tui_theme *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "default");
    for (int r = 0; r < TUI_ROLE_COUNT; r++) {
        t->role[r] = (struct tui_style){role_defs[r].fg, role_defs[r].bg,
                                        attrs_builtin(role_defs[r].attrs)};
        t->attr[r] = t->role[r].attrs;
    }
}

void tui_theme_mono(struct tui_theme *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "mono");
    t->mono = true;
    for (int r = 0; r < TUI_ROLE_COUNT; r++) {
        t->role[r] = (struct tui_style){-1, -1, attrs_builtin(role_defs[r].mono)};
        t->attr[r] = t->role[r].attrs;
    }
}

/* ---- reading a theme file ---- */

struct tctx {
    const char *file;
    struct sg_diags *d;
    bool mono;
};

__attribute__((format(printf, 5, 6)))
static void tdiag(struct tctx *c, enum sg_severity sev, const struct sg_ynode *n,
                  const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *msg = sg_xvasprintf(fmt, ap);
    va_end(ap);
    sg_diag_add(c->d, sev, c->file, n ? n->line : 0, n ? n->col : 0, field, "%s", msg);
}

/* The text of a non-empty scalar, or NULL after an error "must be WHAT". */
static const char *tscalar(struct tctx *c, const struct sg_ynode *n, const char *field,
                           const char *what)
{
    if (n->type == SG_Y_SCALAR && !sg_y_is_null(n) && !memchr(n->str, '\0', n->len))
        return n->str;
    tdiag(c, SG_ERROR, n, field, "must be %s, not %s", what,
          n->type == SG_Y_SCALAR ? "empty" : sg_ytype_name(n->type));
    return NULL;
}

static void tbool(struct tctx *c, const struct sg_ynode *n, const char *field, bool *out)
{
    const char *s = n->type == SG_Y_SCALAR && !n->quoted ? n->str : "";
    if (!strcmp(s, "true") || !strcmp(s, "yes"))
        *out = true;
    else if (!strcmp(s, "false") || !strcmp(s, "no"))
        *out = false;
    else
        tdiag(c, SG_ERROR, n, field, "must be true or false");
}

static void tcolour(struct tctx *c, const struct sg_ynode *v, const char *field, short *out)
{
    if (sg_y_is_null(v)) {
        tdiag(c, SG_ERROR, v, field,
              "is empty (write \"#rrggbb\" in quotes: an unquoted # starts a comment)");
        return;
    }
    const char *s = tscalar(c, v, field, "a colour");
    if (s && colour_parse(s, out) < 0)
        tdiag(c, SG_ERROR, v, field,
              "\"%.40s\" is not a colour (default, red, bright-red, gray, 0-255 or \"#rrggbb\")",
              s);
    if (c->mono)
        tdiag(c, SG_WARNING, v, field, "colours are ignored in a mono theme");
}

static void tattr_words(struct tctx *c, const struct sg_ynode *n, const char *field,
                        attr_t *out)
{
    const char *s = tscalar(c, n, field, "attribute names");
    const char *bad;
    size_t badlen;
    if (s && attrs_parse(s, out, &bad, &badlen) < 0)
        tdiag(c, SG_ERROR, n, field, "\"%.*s\" is not an attribute (%s)",
              (int)(badlen > 40 ? 40 : badlen), bad, attr_help + 2);
}

/* attrs: [bold, underline] or attrs: "bold underline" */
static void tattrs(struct tctx *c, const struct sg_ynode *v, const char *field, attr_t *out)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_SEQ) {
        tattr_words(c, v, field, out);
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        cleanup_free char *f = sg_xasprintf("%s[%zu]", field, i);
        tattr_words(c, v->kids[i], f, out);
    }
}

/* One role: {fg: C, bg: C, attrs: [...]}. What it leaves out is the terminal's
 * default colour and no attributes: a role in a file is the whole style. */
static void tstyle(struct tctx *c, const struct sg_ynode *v, const char *field,
                   struct tui_style *out)
{
    if (v->type != SG_Y_MAP) {
        tdiag(c, SG_ERROR, v, field, "must be a mapping such as {fg: red, attrs: [bold]}");
        return;
    }
    struct tui_style s = {-1, -1, 0};
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i], *val = v->kids[i + 1];
        cleanup_free char *f = sg_xasprintf("%s.%.64s", field, k->str);
        if (!strcmp(k->str, "fg"))
            tcolour(c, val, f, &s.fg);
        else if (!strcmp(k->str, "bg"))
            tcolour(c, val, f, &s.bg);
        else if (!strcmp(k->str, "attrs"))
            tattrs(c, val, f, &s.attrs);
        else
            tdiag(c, SG_WARNING, k, f, "unknown key, ignored (fg, bg, attrs)");
    }
    *out = s;
}

static void troles(struct tctx *c, const struct sg_ynode *v, struct tui_theme *t)
{
    if (sg_y_is_null(v))
        return;
    if (v->type != SG_Y_MAP) {
        tdiag(c, SG_ERROR, v, "roles", "must be a mapping of role names to styles");
        return;
    }
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct sg_ynode *k = v->kids[i];
        cleanup_free char *f = sg_xasprintf("roles.%.64s", k->str);
        int r = role_lookup(k->str);
        if (r < 0)
            tdiag(c, SG_ERROR, k, f, "unknown role (themes/default.yaml lists them all)");
        else
            tstyle(c, v->kids[i + 1], f, &t->role[r]);
    }
}

static void tname(struct tctx *c, const struct sg_ynode *v, const char *stem)
{
    const char *s = tscalar(c, v, "name", "a theme name");
    if (s && strcmp(s, stem) != 0)
        tdiag(c, SG_WARNING, v, "name", "\"%.40s\" differs from the file's name \"%s\"", s,
              stem);
}

/* The whole file; stem is the file's name without ".yaml". */
static void ttheme(struct tctx *c, const struct sg_ynode *root, const char *stem,
                   struct tui_theme *t)
{
    const struct sg_ynode *m = sg_y_get(root, "mono");
    if (m)
        tbool(c, m, "mono", &c->mono);
    c->mono ? tui_theme_mono(t) : tui_theme_builtin(t);
    snprintf(t->name, sizeof t->name, "%s", stem);
    if (sg_y_is_null(root))
        return;
    if (root->type != SG_Y_MAP) {
        tdiag(c, SG_ERROR, root, NULL, "a theme must be a mapping (name, mono, roles)");
        return;
    }
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        const struct sg_ynode *k = root->kids[i], *v = root->kids[i + 1];
        if (!strcmp(k->str, "name"))
            tname(c, v, stem);
        else if (!strcmp(k->str, "description"))
            (void)tscalar(c, v, "description", "a string");
        else if (!strcmp(k->str, "roles"))
            troles(c, v, t);
        else if (strcmp(k->str, "mono") != 0)
            tdiag(c, SG_WARNING, k, k->str, "unknown key, ignored");
    }
}

/* Read a regular file of at most THEME_FILE_MAX bytes into *buf. */
static int read_capped(const char *path, char **buf, size_t *len, struct sg_diags *d)
{
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "cannot be read: %s", strerror(e));
        return e == ENOENT ? -ENOENT : -EINVAL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > THEME_FILE_MAX) {
        sg_diag_add(d, SG_ERROR, path, 0, 0, NULL, "not a regular file under %d bytes",
                    THEME_FILE_MAX);
        return -EINVAL;
    }
    *buf = sg_xmalloc((size_t)st.st_size + 1);
    *len = 0;
    while (*len < (size_t)st.st_size) {
        ssize_t r = read(fd, *buf + *len, (size_t)st.st_size - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        *len += (size_t)r;
    }
    (*buf)[*len] = '\0';
    return 0;
}

/* The file's name without folders and ".yaml". */
static char *path_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    return sg_xstrndup(base, sg_str_has_suffix(base, ".yaml") ? len - 5 : len);
}

static int theme_read(const char *path, struct tui_theme *t, struct sg_diags *d)
{
    cleanup_free char *buf = NULL, *stem = path_stem(path);
    size_t len;
    int r = read_capped(path, &buf, &len, d);
    if (r < 0)
        return r;
    size_t before = sg_diags_count(d, SG_ERROR);
    struct sg_ynode *root = NULL;
    if (sg_yaml_parse(buf, len, 0, path, d, &root) < 0)
        return -EINVAL;
    struct tctx c = {.file = path, .d = d};
    struct tui_theme nt;
    ttheme(&c, root, stem, &nt);
    sg_ynode_free(root);
    if (sg_diags_count(d, SG_ERROR) > before)
        return -EINVAL;
    *t = nt;
    return 0;
}

/* ---- finding themes ---- */

struct strv {
    char **v;
    size_t n, cap;
};

static void strv_push(struct strv *s, char *str)
{
    sg_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->v[s->n++] = str;
}

static void strv_free(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

#define cleanup_strv __attribute__((cleanup(strv_free)))

static bool name_ok(const char *s)
{
    size_t len = strlen(s);
    return len >= 1 && len <= THEME_NAME_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

/* The folders searched, in order: the user's own, then SG_THEMES_DIRS. */
static void theme_dirs(struct strv *dirs)
{
    const char *xdg = secure_getenv("XDG_CONFIG_HOME");
    const char *home = sg_invoking_home();
    if (xdg && xdg[0] == '/')
        strv_push(dirs, sg_xasprintf("%s/skillgate/themes", xdg));
    else if (home)
        strv_push(dirs, sg_xasprintf("%s/.config/skillgate/themes", home));
    for (const char *p = SG_THEMES_DIRS; *p;) {
        size_t len = strcspn(p, ":");
        if (len)
            strv_push(dirs, sg_xstrndup(p, len));
        p += len + (p[len] == ':');
    }
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The first DIR/NAME.yaml; -ENOENT with the folders in *looked. */
static int theme_find(const char *name, char **path, struct sg_buf *looked)
{
    cleanup_strv struct strv dirs = {0};
    theme_dirs(&dirs);
    for (size_t i = 0; i < dirs.n; i++) {
        cleanup_free char *p = sg_xasprintf("%s/%s.yaml", dirs.v[i], name);
        if (exists(p)) {
            *path = steal_pointer(&p);
            return 0;
        }
        sg_buf_printf(looked, "%s%s", i ? ", " : "", dirs.v[i]);
    }
    return -ENOENT;
}

/* "default" and "mono" load even without a file. */
static bool builtin_named(const char *name, struct tui_theme *t)
{
    if (!strcmp(name, "default"))
        tui_theme_builtin(t);
    else if (!strcmp(name, "mono"))
        tui_theme_mono(t);
    else
        return false;
    return true;
}

int tui_theme_load(const char *name, struct tui_theme *t, struct sg_diags *d)
{
    if (sg_str_has_suffix(name, ".yaml"))
        return theme_read(name, t, d);
    if (!name_ok(name)) {
        sg_diag_add(d, SG_ERROR, "theme", 0, 0, NULL,
                    "\"%.40s\" is not a theme name (a-z, 0-9 and '-', at most %d) nor a "
                    "path ending in .yaml",
                    name, THEME_NAME_MAX);
        return -EINVAL;
    }
    cleanup_free char *path = NULL;
    struct sg_buf looked;
    sg_buf_init(&looked, 4096);
    int r = theme_find(name, &path, &looked);
    if (r == 0)
        r = theme_read(path, t, d);
    else if (builtin_named(name, t))
        r = 0;
    else
        sg_diag_add(d, SG_ERROR, name, 0, 0, NULL, "no such theme (looked for %s.yaml in %s)",
                    name, looked.data ? looked.data : "no folder");
    sg_buf_free(&looked);
    return r;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the NAME of each NAME.yaml in dir. */
static void list_folder(const char *dir, struct strv *names)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char **ents;
    size_t n;
    if (fd < 0 || sg_list_dir_fd(fd, SG_LIST_ALL, THEME_LIST_MAX, &ents, &n) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        char *stem = sg_str_has_suffix(ents[i], ".yaml") ? path_stem(ents[i]) : NULL;
        if (stem && name_ok(stem))
            strv_push(names, steal_pointer(&stem));
        free(stem);
        free(ents[i]);
    }
    free(ents);
}

char **tui_theme_list(size_t *n)
{
    cleanup_strv struct strv dirs = {0}, names = {0};
    theme_dirs(&dirs);
    /* the two that load even without a file */
    strv_push(&names, sg_xstrdup("default"));
    strv_push(&names, sg_xstrdup("mono"));
    for (size_t i = 0; i < dirs.n; i++)
        list_folder(dirs.v[i], &names);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    size_t w = 0;
    for (size_t i = 0; i < names.n; i++) {
        if (w && !strcmp(names.v[w - 1], names.v[i]))
            free(names.v[i]);
        else
            names.v[w++] = names.v[i];
    }
    *n = w;
    names.n = 0;
    return steal_pointer(&names.v);
}

/* ---- on the terminal ---- */

/* A theme colour as the terminal can show it: 16..255 to the nearest ANSI
 * colour below 256 colours, bright to normal (+ bold for text) below 16,
 * and the default colour to white on black when the terminal has none.
 * Direct-colour terminals (xterm-direct: COLORS > 256) take 0..7 as ANSI
 * and anything else as 0xRRGGBB. */
static int fold(int c, bool fg, bool have_default, attr_t *extra)
{
    if (c < 0)
        return have_default ? -1 : fg ? COLOR_WHITE : COLOR_BLACK;
    if (c >= 8 && COLORS > 256) {
        struct rgb v = xterm_rgb(c);
        return v.r << 16 | v.g << 8 | v.b;
    }
    if (c >= 16 && COLORS < 256)
        c = rgb_nearest(xterm_rgb(c), 0, 16);
    if (c >= 8 && COLORS < 16) {
        c -= 8;
        if (fg)
            *extra |= A_BOLD;
    }
    return c;
}

static int make_pair(int pair, int fg, int bg)
{
#if NCURSES_EXT_COLORS
    return init_extended_pair(pair, fg, bg);
#else
    if (fg > SHRT_MAX || bg > SHRT_MAX)
        return ERR;
    return init_pair((short)pair, (short)fg, (short)bg);
#endif
}

/* What wattrset takes for role r: its colour pair, or (when the terminal has
 * too few pairs) the role's attributes for terminals without colour. */
static attr_t role_pair(int r, const struct tui_style *s, bool have_default)
{
    attr_t extra = 0;
    int fg = fold(s->fg, true, have_default, &extra);
    int bg = fold(s->bg, false, have_default, &extra);
    if (r + 1 >= COLOR_PAIRS || make_pair(r + 1, fg, bg) == ERR)
        return attrs_builtin(role_defs[r].mono);
    return COLOR_PAIR(r + 1) | s->attrs | extra;
}

void tui_theme_apply(struct tui_theme *t)
{
    if (t->mono || !has_colors() || COLORS < 8) {
        use_default_colors(); /* started colours: the terminal's own, not white on black */
        for (int r = 0; r < TUI_ROLE_COUNT; r++)
            t->attr[r] = t->mono ? t->role[r].attrs : attrs_builtin(role_defs[r].mono);
        return;
    }
    bool have_default = use_default_colors() == OK || assume_default_colors(-1, -1) == OK;
    for (int r = 0; r < TUI_ROLE_COUNT; r++)
        t->attr[r] = role_pair(r, &t->role[r], have_default);
}
