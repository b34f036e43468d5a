/* The input a skill's instructions document (docinput.h). */
#include "docinput.h"

#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* Where "input" stands in line as a word (SKILL_INPUT is not one), or NULL. */
static const char *input_word(const char *line, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++)
        if (!strncasecmp(line + i, "input", 5) &&
            (i == 0 || !(isalnum((unsigned char)line[i - 1]) || line[i - 1] == '_')) &&
            (i + 5 == len || !(isalnum((unsigned char)line[i + 5]) || line[i + 5] == '_')))
            return line + i;
    return NULL;
}

/* text if it is one JSON object short enough for the input line (NULL:
 * it is not one, or too long to be shown whole): as written (a code span
 * is one line), or compact (a block's lines joined). */
static char *json_object_text(const char *text, size_t len, bool as_written)
{
    json_t *j = len <= SG_DOCINPUT_JSON_MAX ? json_loadb(text, len, 0, NULL) : NULL;
    char *out = !json_is_object(j) ? NULL
                : as_written       ? sg_xstrndup(text, len)
                                   : json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (out && strlen(out) > SG_DOCINPUT_JSON_MAX) { /* shown whole or not at all */
        free(out);
        out = NULL;
    }
    return out;
}

/* The first `{...}` code span of line from `from` on that is a JSON object. */
static char *input_in_spans(const char *line, size_t len, const char *from)
{
    const char *end = line + len;
    for (const char *p = memchr(line, '`', len); p && p + 1 < end;) {
        const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
        if (!q)
            break;
        char *found = p >= from ? json_object_text(p + 1, (size_t)(q - p - 1), true) : NULL;
        if (found)
            return found;
        p = memchr(q + 1, '`', (size_t)(end - q - 1));
    }
    return NULL;
}

/* A line saying what comes out, not what goes in ("prints:", "Output"). */
static bool about_output(const char *line, size_t len)
{
    static const char *const words[] = {"output", "print", "return", "result"};
    for (size_t i = 0; i < SG_ARRAY_LEN(words); i++)
        for (size_t k = 0, n = strlen(words[i]); k + n <= len; k++)
            if (!strncasecmp(line + k, words[i], n))
                return true;
    return false;
}

/* body: NUL-terminated; see sg_documented_input. */
static char *scan(const char *body)
{
    char *found = NULL;
    bool para = false; /* the paragraph so far spoke of the input */
    const char *prev = "", *l = body;
    size_t plen = 0;
    for (const char *e; !found && *l; l = *e ? e + 1 : e) {
        e = l + strcspn(l, "\n");
        size_t len = (size_t)(e - l);
        if (len >= 3 && !strncmp(l, "```", 3)) { /* a fenced block, read whole */
            const char *close = strstr(e, "\n```"), *in = *e ? e + 1 : e;
            bool json = len >= 7 && !strncmp(l + 3, "json", 4);
            if (json && close && close >= in && !about_output(prev, plen))
                found = json_object_text(in, (size_t)(close - in), false);
            e = close ? close + 1 + strcspn(close + 1, "\n") : e + strlen(e);
            continue;
        }
        const char *w = input_word(l, len);
        if (!len || l[0] == '#')
            para = false;
        else
            found = input_in_spans(l, len, para ? l : w ? w : e);
        para = para || (len && l[0] != '#' && w);
        if (len)
            prev = l, plen = len;
    }
    return found;
}

char *sg_documented_input(const char *text, size_t len)
{
    if (!text || len > SG_DOCINPUT_MAX)
        return NULL;
    cleanup_free char *body = sg_xstrndup(text, len); /* a NUL in it ends the text */
    return scan(body);
}
