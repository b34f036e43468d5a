#include "homenamed.h"

#include <stdbool.h>
#include <string.h>

#include "util.h"

static bool path_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("._-/+@", c));
}

/* The length of the prefix at text[i] that stands for the home ("~/",
 * "$HOME/", "${HOME}/"), after a character no word goes on with; 0 if none. */
static size_t home_prefix(const char *t, size_t len, size_t i)
{
    static const char *const forms[] = {"~/", "$HOME/", "${HOME}/"};
    if (i > 0 && (path_char(t[i - 1]) || t[i - 1] == '$' || t[i - 1] == '~'))
        return 0;
    for (size_t k = 0; k < SG_ARRAY_LEN(forms); k++) {
        size_t n = strlen(forms[k]);
        if (len - i >= n && !memcmp(t + i, forms[k], n))
            return n;
    }
    return 0;
}

/* REL's length at t (trailing '.' and '/' dropped), or 0 when it is no
 * path kept: empty, too long, or with a ".." part. */
static size_t rel_len(const char *t, size_t len)
{
    size_t n = 0;
    while (n < len && path_char(t[n]))
        n++;
    size_t all = n;
    while (n && (t[n - 1] == '.' || t[n - 1] == '/'))
        n--;
    if (!n || all > SG_HOMENAMED_LEN || t[0] == '/')
        return 0; /* "~//x": not a way anyone writes a home path */
    for (size_t i = 0; i + 1 < n; i++)
        if (t[i] == '.' && t[i + 1] == '.' && (i == 0 || t[i - 1] == '/') &&
            (i + 2 == n || t[i + 2] == '/'))
            return 0;
    return n;
}

static bool seen(char **out, size_t k, const char *t, size_t n)
{
    for (size_t i = 0; i < k; i++)
        if (strlen(out[i]) == n && !memcmp(out[i], t, n))
            return true;
    return false;
}

size_t sg_home_named(const char *text, size_t len, char **out, size_t max)
{
    size_t k = 0;
    if (max > SG_HOMENAMED_MAX)
        max = SG_HOMENAMED_MAX;
    for (size_t i = 0; text && i < len && k < max; i++) {
        size_t p = home_prefix(text, len, i);
        if (!p)
            continue;
        size_t n = rel_len(text + i + p, len - i - p);
        if (n && !seen(out, k, text + i + p, n))
            out[k++] = sg_xstrndup(text + i + p, n);
        i += p + n - 1;
    }
    return k;
}
