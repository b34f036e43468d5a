#include "ynode.h"

#include <stdio.h>
#include <yaml.h>

#include "util.h"

struct builder {
    const char *file;
    int line_base;
    struct sg_diags *d;
    struct sg_ynode *stack[SG_YAML_MAX_DEPTH + 1];
    int depth;
    size_t nodes;
    struct sg_ynode *root;
    int docs;
    bool failed;
};

void sg_ynode_free(struct sg_ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        sg_ynode_free(n->kids[i]);
    free(n->kids);
    free(n->str);
    free(n);
}

const char *sg_ytype_name(enum sg_ytype t)
{
    switch (t) {
    case SG_Y_SCALAR: return "a scalar";
    case SG_Y_SEQ: return "a list";
    case SG_Y_MAP: return "a mapping";
    }
    return "?";
}

bool sg_y_is_null(const struct sg_ynode *n)
{
    if (!n)
        return true;
    if (n->type != SG_Y_SCALAR || n->quoted)
        return false;
    return n->len == 0 || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
           !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

const struct sg_ynode *sg_y_get(const struct sg_ynode *map, const char *key)
{
    if (!map || map->type != SG_Y_MAP)
        return NULL;
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (!strcmp(map->kids[i]->str, key))
            return map->kids[i + 1];
    return NULL;
}

__attribute__((format(printf, 3, 4)))
static void err_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cleanup_free char *msg = sg_xvasprintf(fmt, ap);
    va_end(ap);
    sg_diag_add(b->d, SG_ERROR, b->file, (int)m->line + 1 + b->line_base, (int)m->column + 1,
                NULL, "%s", msg);
    b->failed = true;
}

static bool tag_ok(const yaml_char_t *tag)
{
    /* Only the core schema's own tags ("!!str 443") are accepted. */
    static const char *const core[] = {"str", "int", "bool", "null", "float", "seq", "map"};
    static const char prefix[] = "tag:yaml.org,2002:";
    if (!tag || !strcmp((const char *)tag, "!"))
        return true;
    if (!sg_str_has_prefix((const char *)tag, prefix))
        return false;
    for (size_t i = 0; i < SG_ARRAY_LEN(core); i++)
        if (!strcmp((const char *)tag + sizeof prefix - 1, core[i]))
            return true;
    return false;
}

/* "<<" as a key is YAML 1.1's merge key: PyYAML, js-yaml and Go's yaml
 * merge the mapping it names into this one, so a manifest would mean one
 * thing to them (allowed-tools, paths, hosts) and another to skillgate,
 * which does not merge. Refused, quoted or not (loaders differ on a quoted
 * one), naming where it is: "permissions.<<". */
static void merge_key(struct builder *b, const struct sg_ynode *key)
{
    char field[256] = "";
    size_t len = 0;
    for (int d = 1; d < b->depth && len < sizeof field; d++) {
        const struct sg_ynode *up = b->stack[d - 1];
        int w = up->type == SG_Y_MAP && up->n >= 2
                    ? snprintf(field + len, sizeof field - len, "%s%.60s", len ? "." : "",
                               up->kids[up->n - 2]->str)
                    : snprintf(field + len, sizeof field - len, "[%zu]", up->n ? up->n - 1 : 0);
        len += w > 0 ? (size_t)w : 0;
    }
    if (len < sizeof field)
        snprintf(field + len, sizeof field - len, "%s<<", len ? "." : "");
    sg_diag_add(b->d, SG_ERROR, b->file, key->line, key->col, field,
                "YAML merge keys (<<) are refused: other YAML loaders merge the mapping in and "
                "would read this manifest differently from skillgate; write the keys out");
    b->failed = true;
}

/* Attach a finished node to its parent, checking mapping keys. */
static void attach(struct builder *b, struct sg_ynode *n)
{
    if (b->depth == 0) {
        b->root = n;
        return;
    }
    struct sg_ynode *p = b->stack[b->depth - 1];
    if (p->type == SG_Y_MAP && p->n % 2 == 0) {
        /* n is a key */
        if (n->type != SG_Y_SCALAR) {
            sg_diag_add(b->d, SG_ERROR, b->file, n->line, n->col, NULL,
                        "a mapping key must be a plain string, not %s", sg_ytype_name(n->type));
            b->failed = true;
        } else if (!strcmp(n->str, "<<")) {
            merge_key(b, n);
        } else {
            for (size_t i = 0; i < p->n; i += 2) {
                if (!strcmp(p->kids[i]->str, n->str)) {
                    sg_diag_add(b->d, SG_ERROR, b->file, n->line, n->col, n->str,
                                "duplicate key (first at line %d)", p->kids[i]->line);
                    b->failed = true;
                    break;
                }
            }
        }
    }
    sg_grow(&p->kids, &p->cap, p->n + 1, sizeof *p->kids);
    p->kids[p->n++] = n;
}

static struct sg_ynode *new_node(struct builder *b, enum sg_ytype t, const yaml_mark_t *m)
{
    if (++b->nodes > SG_YAML_MAX_NODES) {
        err_at(b, m, "too many YAML nodes (the cap is %d)", SG_YAML_MAX_NODES);
        return NULL;
    }
    struct sg_ynode *n = sg_xcalloc(1, sizeof *n);
    n->type = t;
    n->line = (int)m->line + 1 + b->line_base;
    n->col = (int)m->column + 1;
    return n;
}

static void handle(struct builder *b, const yaml_event_t *ev)
{
    struct sg_ynode *n;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++b->docs > 1)
            err_at(b, &ev->start_mark, "%s", "only one YAML document is allowed here");
        break;
    case YAML_ALIAS_EVENT:
        err_at(b, &ev->start_mark,
               "YAML aliases (*%s) are refused: a manifest never needs them and they can "
               "expand without bound",
               (const char *)ev->data.alias.anchor);
        break;
    case YAML_SCALAR_EVENT:
        if (!tag_ok(ev->data.scalar.tag)) {
            err_at(b, &ev->start_mark, "unsupported YAML tag %s", (const char *)ev->data.scalar.tag);
            break;
        }
        if (!(n = new_node(b, SG_Y_SCALAR, &ev->start_mark)))
            break;
        n->str = sg_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        n->len = ev->data.scalar.length;
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                    (ev->data.scalar.tag &&
                     !strcmp((const char *)ev->data.scalar.tag, "tag:yaml.org,2002:str"));
        attach(b, n);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        const yaml_char_t *tag = ev->type == YAML_SEQUENCE_START_EVENT
                                     ? ev->data.sequence_start.tag
                                     : ev->data.mapping_start.tag;
        if (!tag_ok(tag)) {
            err_at(b, &ev->start_mark, "unsupported YAML tag %s", (const char *)tag);
            break;
        }
        if (b->depth >= SG_YAML_MAX_DEPTH) {
            err_at(b, &ev->start_mark, "nesting deeper than %d levels", SG_YAML_MAX_DEPTH);
            break;
        }
        if (!(n = new_node(b, ev->type == YAML_SEQUENCE_START_EVENT ? SG_Y_SEQ : SG_Y_MAP,
                           &ev->start_mark)))
            break;
        attach(b, n);
        b->stack[b->depth++] = n;
        break;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        break;
    default:
        break;
    }
}

/* Is libyaml's complaint about a tab where it wants indentation? It says
 * "found character that cannot start any token" (or, inside a scalar,
 * "found a tab character that violates indentation", pointing at where
 * the scalar began), which tells a person nothing to act on. The mark
 * counts lines and characters (not bytes); a BOM is not counted. */
static bool tab_at_problem(const char *buf, size_t len, const yaml_parser_t *p)
{
    const yaml_mark_t *m = &p->problem_mark;
    if (!p->problem || (strcmp(p->problem, "found character that cannot start any token") != 0 &&
                        !strstr(p->problem, "found a tab character")))
        return false;
    size_t i = len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
    for (size_t line = 0; line < m->line && i < len; i++)
        line += buf[i] == '\n';
    for (size_t col = 0; col < m->column && i < len; col++) {
        unsigned cp;
        size_t w = sg_utf8_decode((const unsigned char *)buf + i, len - i, &cp);
        i += w ? w : 1;
    }
    return i < len && buf[i] == '\t';
}

/* Line and column (1-based, characters) of byte off, lines ended by "\n"
 * only. */
static void place_of(const char *buf, size_t len, size_t off, int line_base, int *line,
                     int *col)
{
    *line = 1 + line_base, *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n')
            (*line)++, *col = 1;
        else if (((unsigned char)buf[i] & 0xc0) != 0x80)
            (*col)++;
    }
}

/* The first line break libyaml sees and a person does not: its offset and
 * name, or false. */
static bool hidden_break(const char *buf, size_t len, size_t *off, const char **name)
{
    for (size_t i = 0; i < len; i++) {
        const unsigned char *u = (const unsigned char *)buf + i;
        *off = i;
        if (u[0] == '\r' && (i + 1 == len || u[1] != '\n'))
            return *name = "a carriage return (\"\\r\") with no line feed after it", true;
        if (u[0] == 0xc2 && i + 1 < len && u[1] == 0x85)
            return *name = "U+0085 (NEXT LINE)", true;
        if (u[0] == 0xe2 && i + 2 < len && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
            return *name = u[2] == 0xa8 ? "U+2028 (LINE SEPARATOR)" : "U+2029 (PARAGRAPH SEPARATOR)",
                   true;
    }
    return false;
}

static bool refuse_hidden_break(const char *buf, size_t len, int line_base, const char *file,
                                struct sg_diags *d)
{
    size_t off;
    const char *name;
    if (!hidden_break(buf, len, &off, &name))
        return false;
    int line, col;
    place_of(buf, len, off, line_base, &line, &col);
    sg_diag_add(d, SG_ERROR, file, line, col, NULL,
                SG_YAML_CHARS "%s is a line break to YAML but not to OpenClaw, grep or an "
                              "editor, so YAML would read lines no one sees; remove it",
                name);
    return true;
}

/* libyaml's reader refuses a character (a control one, U+FFFE): where it
 * is, by the byte offset the reader gives. */
static void reader_error(const char *buf, size_t len, int line_base, const char *file,
                         struct sg_diags *d, const yaml_parser_t *p)
{
    int line, col;
    place_of(buf, len, p->problem_offset, line_base, &line, &col);
    char cp[16] = "";
    if (p->problem_value >= 0)
        snprintf(cp, sizeof cp, " (U+%04X)", (unsigned)p->problem_value);
    sg_diag_add(d, SG_ERROR, file, line, col, NULL, SG_YAML_CHARS "%s%s; remove it",
                p->problem ? p->problem : "a character YAML refuses", cp);
}

int sg_yaml_parse(const char *buf, size_t len, int line_base, const char *file,
                  struct sg_diags *d, struct sg_ynode **out)
{
    struct builder b = {.file = file, .line_base = line_base, .d = d};
    yaml_parser_t p;
    *out = NULL;
    if (refuse_hidden_break(buf, len, line_base, file, d))
        return -EINVAL;
    if (!yaml_parser_initialize(&p))
        abort();
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            const char *prob = p.problem ? p.problem : "malformed YAML";
            const yaml_mark_t *m = &p.problem_mark, *c = &p.context_mark;
            /* where the unclosed quote or bracket opened is what a person
             * fixes: the diagnostic points there, and says where the parser
             * gave up */
            if (p.error == YAML_READER_ERROR)
                reader_error(buf, len, line_base, file, d, &p);
            else if (tab_at_problem(buf, len, &p))
                sg_diag_add(d, SG_ERROR, file, (int)m->line + 1 + line_base, (int)m->column + 1,
                            NULL, "YAML syntax: %s", SG_YAML_TAB);
            else if (p.context && (c->line != m->line || c->column != m->column))
                sg_diag_add(d, SG_ERROR, file, (int)c->line + 1 + line_base, (int)c->column + 1,
                            NULL, "YAML syntax: %s that starts here: %s at %d:%d", p.context,
                            prob, (int)m->line + 1 + line_base, (int)m->column + 1);
            else if (p.context)
                sg_diag_add(d, SG_ERROR, file, (int)m->line + 1 + line_base, (int)m->column + 1,
                            NULL, "YAML syntax: %s %s", p.context, prob);
            else
                sg_diag_add(d, SG_ERROR, file, (int)m->line + 1 + line_base, (int)m->column + 1,
                            NULL, "YAML syntax: %s", prob);
            b.failed = true;
            break;
        }
        bool end = ev.type == YAML_STREAM_END_EVENT;
        /* Stop building at the first structural error: a partial tree would
         * only produce confusing follow-on errors. */
        if (!b.failed || ev.type == YAML_DOCUMENT_START_EVENT)
            handle(&b, &ev);
        yaml_event_delete(&ev);
        if (end || b.failed)
            break;
    }
    yaml_parser_delete(&p);
    if (b.failed) {
        sg_ynode_free(b.root);
        return -EINVAL;
    }
    *out = b.root;
    return 0;
}
