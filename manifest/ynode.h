/* A small YAML tree built from libyaml's event stream, keeping the line and
 * column of every node. It refuses what a manifest never needs and an
 * attacker would love: aliases (billion laughs), duplicate keys, non-scalar
 * keys, custom tags, deep nesting and huge node counts. */
#ifndef SG_YNODE_H
#define SG_YNODE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

#define SG_YAML_MAX_DEPTH 32
#define SG_YAML_MAX_NODES 20000

enum sg_ytype { SG_Y_SCALAR, SG_Y_SEQ, SG_Y_MAP };

struct sg_ynode {
    enum sg_ytype type;
    int line, col;   /* 1-based, in the file (frontmatter offset applied) */
    char *str;       /* scalar text */
    size_t len;
    bool quoted;     /* a quoted or block scalar: never null/bool/int */
    struct sg_ynode **kids; /* seq: items; map: key0, value0, key1, value1 ... */
    size_t n, cap;
};

/* What a tab where YAML wants indentation is said as, in place of
 * libyaml's "found character that cannot start any token". */
#define SG_YAML_TAB "tabs are not allowed in YAML indentation; use spaces"

/* How a refusal of characters (not of syntax) begins: a line break only
 * YAML sees (U+0085, U+2028, U+2029, a "\r" with no "\n" after it), or a
 * character libyaml's reader refuses. Never read another way. */
#define SG_YAML_CHARS "YAML characters: "

/* Parse buf (one YAML document). line_base is added to every line number
 * (the frontmatter of SKILL.md starts on line 2). A line break only YAML
 * sees is refused before libyaml reads anything (lines are counted by "\n"
 * only, as a person and grep count them). Problems go to d with the
 * file name given. Returns 0 and *out (NULL for an empty document), or
 * -EINVAL after recording at least one error. */
int sg_yaml_parse(const char *buf, size_t len, int line_base, const char *file,
                  struct sg_diags *d, struct sg_ynode **out);
void sg_ynode_free(struct sg_ynode *n);

const char *sg_ytype_name(enum sg_ytype t);
bool sg_y_is_null(const struct sg_ynode *n);
/* Value of key in a mapping, or NULL. */
const struct sg_ynode *sg_y_get(const struct sg_ynode *map, const char *key);

#endif
