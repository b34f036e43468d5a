/* OpenClaw's line-by-line reading of a frontmatter (fmlines.h). */
#include "fmlines.h"

#include <errno.h>
#include <string.h>

#include "util.h"

struct line {
    const char *s;
    size_t len;
};

/* The line at *pos, moving *pos past its end ("\n", "\r\n" or "\r"). */
static struct line next_line(const char *buf, size_t len, size_t *pos)
{
    struct line l = {buf + *pos, 0};
    while (*pos + l.len < len && buf[*pos + l.len] != '\n' && buf[*pos + l.len] != '\r')
        l.len++;
    size_t p = *pos + l.len;
    if (p < len && buf[p] == '\r' && p + 1 < len && buf[p + 1] == '\n')
        p++;
    *pos = p < len ? p + 1 : len;
    return l;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\n' || ch == '\r';
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_space(**s))
        (*s)++, (*n)--;
    while (*n && is_space((*s)[*n - 1]))
        (*n)--;
}

static bool key_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-';
}

/* "key:" at the start of the line (JavaScript's \w and '-'): the key's
 * length, or 0. */
static size_t key_len(struct line l)
{
    size_t k = 0;
    while (k < l.len && key_char(l.s[k]))
        k++;
    return k && k < l.len && l.s[k] == ':' ? k : 0;
}

static struct sg_ynode *scalar(const char *s, size_t n, int line, int col, bool quoted)
{
    struct sg_ynode *v = sg_xcalloc(1, sizeof *v);
    v->type = SG_Y_SCALAR;
    v->str = sg_xmalloc(n + 1);
    memcpy(v->str, s, n);
    v->str[n] = '\0';
    v->len = n;
    v->line = line;
    v->col = col;
    v->quoted = quoted;
    return v;
}

/* at most this many keys said again are told (a file of one key said on
 * every line would tell 80,000), past which one error still refuses */
#define SAID_AGAIN_TOLD 32

struct reading {
    bool (*strict)(const char *key);
    const char *file;
    struct sg_diags *d;
    unsigned told;
    bool refused;
    int open_line;  /* a value opened a quote or bracket it did not close there; 0 */
    int *seen;      /* the lines a strict key was read at (as a field or refused) */
    size_t nseen, seen_cap;
};

static void seen_at(struct reading *rd, int line)
{
    sg_grow(&rd->seen, &rd->seen_cap, rd->nseen + 1, sizeof *rd->seen);
    rd->seen[rd->nseen++] = line;
}

/* An error of the line reading is told, at most SAID_AGAIN_TOLD of them
 * once one is: the first refuses, and 80,000 alike tell nothing more. */
static bool tell(struct reading *rd)
{
    bool told = rd->told++ < SAID_AGAIN_TOLD || !rd->refused;
    rd->refused = true;
    return told;
}

/* Was a strict key read at line? The lines are asked in order, and seen
 * holds them in order: one pass over both (*at moves), never a search per
 * line (80,000 key lines would cost billions). */
static bool was_seen(const struct reading *rd, int line, size_t *at)
{
    while (*at < rd->nseen && rd->seen[*at] < line)
        (*at)++;
    return *at < rd->nseen && rd->seen[*at] == line;
}

/* Does a value's text open a quote, "[" or "{" it does not close? YAML
 * then reads the lines below as part of it; OpenClaw reads each as a
 * field. */
static bool opens(const char *s, size_t n)
{
    if (!n || !strchr("\"'[{", s[0]))
        return false;
    int depth = 0;
    char q = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (q && ch == '\\' && q == '"')
            i++;
        else if (q)
            q = ch == q ? 0 : q;
        else if (ch == '"' || ch == '\'')
            q = ch;
        else
            depth += (ch == '[' || ch == '{') - (ch == ']' || ch == '}');
    }
    return depth > 0 || q;
}

/* key said again: the last saying wins in the first one's place, as in
 * OpenClaw's object; said. */
static void again(struct reading *rd, struct sg_ynode *map, size_t i, struct sg_ynode *key,
                  struct sg_ynode *val)
{
    bool strict = rd->strict && rd->strict(key->str);
    if (rd->told++ < SAID_AGAIN_TOLD || (strict && !rd->refused))
        sg_diag_add(rd->d, strict ? SG_ERROR : SG_WARNING, rd->file, key->line, key->col,
                    key->str, "said again (first at line %d); %s", map->kids[i]->line,
                    strict ? "YAML readers differ on which counts, and skillgate enforces "
                             "this field: say it once"
                           : "the last is taken, as OpenClaw's loader takes it");
    rd->refused = rd->refused || strict;
    sg_ynode_free(map->kids[i + 1]);
    map->kids[i + 1] = val;
    sg_ynode_free(key);
}

static int put(struct reading *rd, struct sg_ynode *map, struct sg_ynode *key,
               struct sg_ynode *val)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (!strcmp(map->kids[i]->str, key->str)) {
            again(rd, map, i, key, val);
            return 0;
        }
    if (map->n / 2 >= SG_FMLINES_MAX_KEYS) {
        sg_ynode_free(key), sg_ynode_free(val);
        return -E2BIG;
    }
    sg_grow(&map->kids, &map->cap, map->n + 2, sizeof *map->kids);
    map->kids[map->n++] = key;
    map->kids[map->n++] = val;
    return 0;
}

/* The indented lines below an empty value (blank ones too), joined by
 * "\n" and trimmed; *pos and *line move past them. */
static struct sg_ynode *block_value(const char *buf, size_t len, size_t *pos, int *line)
{
    struct sg_buf b;
    sg_buf_init(&b, len + 1);
    int first = *line + 1;
    for (size_t p = *pos; p < len;) {
        struct line l = next_line(buf, len, &p);
        if (l.len && l.s[0] != ' ' && l.s[0] != '\t')
            break;
        if (*line >= first)
            sg_buf_append(&b, "\n", 1);
        sg_buf_append(&b, l.s, l.len); /* bytes as they are, a NUL too: pc_string says so */
        *pos = p, (*line)++;
    }
    const char *s = b.data ? b.data : "";
    size_t tl = b.len;
    int col = 1;
    for (size_t i = 0; i < tl && is_space(s[i]); i++) /* where the text starts */
        col = s[i] == '\n' ? (first++, 1) : col + 1;
    trim(&s, &tl);
    struct sg_ynode *v = tl ? scalar(s, tl, first, col, false) : NULL;
    sg_buf_free(&b);
    return v;
}

/* The value on the key's line; *empty when there is none at all (then the
 * lines below may be its value; a lone quote is a value, and nothing). */
static struct sg_ynode *inline_value(struct line l, size_t k, int line, bool *empty,
                                     bool *open)
{
    const char *s = l.s + k + 1;
    size_t n = l.len - k - 1;
    trim(&s, &n);
    *empty = n == 0;
    *open = opens(s, n);
    bool quoted = n && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0];
    int col = (int)(s - l.s) + 1;
    if (quoted) /* a lone quote too: nothing, as OpenClaw's slice(1, -1) */
        s++, n = n >= 2 ? n - 2 : 0;
    return n ? scalar(s, n, line, col, quoted) : NULL;
}

/* Is the line one YAML may read as a strict key (quoted, spaced before
 * the colon, indented, or in the "? key" form)? */
static bool names_strict(const struct reading *rd, struct line l)
{
    size_t i = 0;
    while (i < l.len && is_space(l.s[i]))
        i++;
    bool question = i < l.len && l.s[i] == '?';
    for (i += question; i < l.len && is_space(l.s[i]);)
        i++;
    i += i < l.len && (l.s[i] == '"' || l.s[i] == '\'');
    size_t start = i;
    while (i < l.len && key_char(l.s[i]))
        i++;
    char key[32];
    if (i == start || i - start >= sizeof key)
        return false;
    memcpy(key, l.s + start, i - start);
    key[i - start] = '\0';
    i += i < l.len && (l.s[i] == '"' || l.s[i] == '\'');
    while (i < l.len && is_space(l.s[i]))
        i++;
    return (question || (i < l.len && l.s[i] == ':')) && rd->strict(key);
}

/* A strict key YAML may read that the line reading did not take: an
 * error, for skillgate would drop what a YAML reader grants. */
static void unread_strict(struct reading *rd, const char *buf, size_t len, int first_line)
{
    int line = first_line - 1;
    size_t at = 0;
    for (size_t pos = 0; pos < len;) {
        struct line l = next_line(buf, len, &pos);
        line++;
        if (rd->strict && !was_seen(rd, line, &at) && names_strict(rd, l) && tell(rd))
            sg_diag_add(rd->d, SG_ERROR, rd->file, line, 1, NULL,
                        "YAML may read this line as a field skillgate enforces, but OpenClaw's "
                        "line-by-line reading does not (only \"key: value\" at the first column, "
                        "the key unquoted); fix the YAML");
    }
}

/* What the line reading takes of a strict key, or of metadata naming
 * variables, refused where YAML reads otherwise: after a value left open,
 * with no value, or wasm (OpenSkills' field, which OpenClaw does not
 * read). */
static void check_key(struct reading *rd, const struct sg_ynode *key, const struct sg_ynode *val)
{
    bool strict = rd->strict && rd->strict(key->str);
    bool env = !strcmp(key->str, "metadata") && val && strcasestr(val->str, "env");
    if (strict)
        seen_at(rd, key->line);
    bool after_open = (strict || env) && rd->open_line;
    bool wasm = !after_open && strict && !strcmp(key->str, "wasm");
    bool empty = !after_open && !wasm && strict && !val;
    if (!(after_open || wasm || empty) || !tell(rd))
        return;
    if (after_open)
        sg_diag_add(rd->d, SG_ERROR, rd->file, key->line, key->col, key->str,
                    "follows a value that opens a quote or bracket and does not close it on "
                    "its line (line %d): YAML would read this line as part of that value, "
                    "OpenClaw as a field; fix the YAML", rd->open_line);
    else if (wasm)
        sg_diag_add(rd->d, SG_ERROR, rd->file, key->line, key->col, key->str, "%s",
                    "is OpenSkills' field, which OpenClaw's loader does not read; in a "
                    "frontmatter read line by line it is refused: fix the YAML");
    else
        sg_diag_add(rd->d, SG_ERROR, rd->file, key->line, key->col, key->str, "%s",
                    "has no value read line by line (OpenClaw drops it; YAML may read the "
                    "lines below as its value); fix the YAML");
}

/* A line starting "---" or "...": OpenClaw's frontmatter ends at the
 * first "---" line; YAML's does not. */
static bool ends_early(struct reading *rd, struct line l, int line)
{
    if (l.len < 3 || (memcmp(l.s, "---", 3) != 0 && memcmp(l.s, "...", 3) != 0))
        return false;
    if (tell(rd))
        sg_diag_add(rd->d, SG_ERROR, rd->file, line, 1, NULL,
                    "a line starting \"%.3s\" inside the frontmatter: OpenClaw's loader ends "
                    "the frontmatter at it and YAML does not, so they read different fields; "
                    "fix the YAML",
                    l.s);
    return true;
}

int sg_fmlines_parse(const char *buf, size_t len, int first_line,
                     bool (*strict)(const char *key), const char *file, struct sg_diags *d,
                     struct sg_ynode **out)
{
    struct reading rd = {.strict = strict, .file = file, .d = d};
    struct sg_ynode *map = sg_xcalloc(1, sizeof *map);
    map->type = SG_Y_MAP;
    map->line = first_line, map->col = 1;
    int line = first_line - 1, r = 0;
    for (size_t pos = 0; pos < len && r == 0;) {
        struct line l = next_line(buf, len, &pos);
        size_t k = key_len(l);
        line++;
        if (ends_early(&rd, l, line) || !k)
            continue;
        struct sg_ynode *key = scalar(l.s, k, line, 1, false);
        bool empty, open;
        struct sg_ynode *val = inline_value(l, k, line, &empty, &open);
        if (empty && pos < len && (buf[pos] == ' ' || buf[pos] == '\t')) {
            val = block_value(buf, len, &pos, &line);
            open = val && opens(val->str, val->len);
        }
        check_key(&rd, key, val);
        rd.open_line = rd.open_line ? rd.open_line : open ? (val ? val->line : key->line) : 0;
        if (val)
            r = put(&rd, map, key, val);
        else
            sg_ynode_free(key);
    }
    unread_strict(&rd, buf, len, first_line);
    free(rd.seen);
    if (r < 0) {
        sg_ynode_free(map);
        map = NULL;
    }
    *out = map;
    return r;
}
