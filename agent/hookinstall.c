/* skillgate hook install|uninstall: our PreToolUse entry merged into a
 * Claude Code settings.json as a text edit, so that every other byte (the
 * person's formatting, key order, other hooks) stays as it was, and
 * uninstall gives back the bytes install was given. jansson reads the file
 * to check it and to find our entries; a small scanner finds where in the
 * text they are. */
#include "hook.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MAX_DEPTH 64
#define SETTINGS_MAX (8u << 20)

/* ---- a scanner that knows where each value is ---- */

struct span {
    size_t start, end; /* [start, end) of a value, or of a key string */
};

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The end of the value at i, or 0 when there is none (jansson has already
 * said the text is JSON: this only needs to find ends). */
static size_t value_end(const char *s, size_t n, size_t i, int depth)
{
    if (i >= n || depth > MAX_DEPTH)
        return 0;
    if (s[i] == '"') {
        for (i++; i < n; i++) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                return i + 1;
        }
        return 0;
    }
    if (s[i] == '{' || s[i] == '[') {
        char close = s[i] == '{' ? '}' : ']';
        i = skip_ws(s, n, i + 1);
        if (i < n && s[i] == close)
            return i + 1;
        for (;;) {
            if (close == '}') { /* "key" : */
                i = value_end(s, n, i, depth + 1);
                if (!i)
                    return 0;
                i = skip_ws(s, n, i);
                if (i >= n || s[i] != ':')
                    return 0;
                i = skip_ws(s, n, i + 1);
            }
            i = value_end(s, n, i, depth + 1);
            if (!i)
                return 0;
            i = skip_ws(s, n, i);
            if (i < n && s[i] == close)
                return i + 1;
            if (i >= n || s[i] != ',')
                return 0;
            i = skip_ws(s, n, i + 1);
        }
    }
    while (i < n && !strchr(",]} \t\r\n", s[i]))
        i++;
    return i;
}

/* The members of the object at o (key and value spans), up to max. */
static size_t members(const char *s, size_t n, size_t o, struct span *keys, struct span *vals,
                      size_t max)
{
    size_t k = 0, i = skip_ws(s, n, o + 1);
    if (i >= n || s[i] == '}')
        return 0;
    while (k < max) {
        size_t ke = value_end(s, n, i, 1);
        if (!ke)
            return k;
        keys[k] = (struct span){i, ke};
        i = skip_ws(s, n, skip_ws(s, n, ke) + 1);
        size_t ve = value_end(s, n, i, 1);
        if (!ve)
            return k;
        vals[k++] = (struct span){i, ve};
        i = skip_ws(s, n, ve);
        if (i >= n || s[i] != ',')
            break;
        i = skip_ws(s, n, i + 1);
    }
    return k;
}

/* The elements of the array at a. */
static size_t elements(const char *s, size_t n, size_t a, struct span *el, size_t max)
{
    size_t k = 0, i = skip_ws(s, n, a + 1);
    if (i >= n || s[i] == ']')
        return 0;
    while (k < max) {
        size_t e = value_end(s, n, i, 1);
        if (!e)
            return k;
        el[k++] = (struct span){i, e};
        i = skip_ws(s, n, e);
        if (i >= n || s[i] != ',')
            break;
        i = skip_ws(s, n, i + 1);
    }
    return k;
}

static bool key_is(const char *s, struct span k, const char *name)
{
    size_t l = strlen(name);
    return k.end - k.start == l + 2 && !memcmp(s + k.start + 1, name, l);
}

#define MAXM 256

/* ---- which entries are ours ---- */

/* A hook command that runs some skillgate's `hook`: the program's base name
 * is skillgate and its first argument is hook (install refuses a path that
 * would need quoting, so the first space ends the program). */
static bool runs_our_hook(const char *cmd)
{
    const char *sp = strchr(cmd, ' ');
    if (!sp)
        return false;
    const char *b = cmd;
    for (const char *c = cmd; c < sp; c++)
        if (*c == '/')
            b = c + 1;
    return sp - b == 9 && !strncmp(b, "skillgate", 9) &&
           (!strcmp(sp, " hook") || !strncmp(sp, " hook ", 6));
}

/* An element of PreToolUse that is only our entry. */
static bool entry_is_ours(const char *text, struct span e)
{
    json_t *j = json_loadb(text + e.start, e.end - e.start, 0, NULL);
    json_t *hs = json_object_get(j, "hooks");
    bool ours = json_array_size(hs) > 0;
    for (size_t i = 0; ours && i < json_array_size(hs); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(hs, i), "command"));
        ours = c && runs_our_hook(c);
    }
    json_decref(j);
    return ours;
}

/* ---- the edit ---- */

static char *text_splice(const char *s, size_t n, size_t from, size_t to, const char *ins)
{
    size_t il = strlen(ins);
    char *out = sg_xmalloc(n - (to - from) + il + 1);
    memcpy(out, s, from);
    memcpy(out + from, ins, il);
    memcpy(out + from + il, s + to, n - to);
    out[n - (to - from) + il] = '\0';
    return out;
}

/* Remove the only item [a, b) of the container at open, with the space on
 * each side that install puts around an item it adds to an empty one. */
static char *drop_only(const char *s, size_t n, size_t open, size_t a, size_t b)
{
    if (a > open + 1 && s[a - 1] == ' ' && b < n && s[b] == ' ')
        a--, b++;
    return text_splice(s, n, a, b, "");
}

/* Remove member k of an object with nk members (spans), as its comma and
 * whitespace came: what an insert after the last member added goes away
 * exactly. */
static char *drop_member(const char *s, size_t n, size_t open, const struct span *keys,
                         const struct span *vals, size_t nk, size_t k)
{
    if (k > 0)
        return text_splice(s, n, vals[k - 1].end, vals[k].end, "");
    if (nk > 1)
        return text_splice(s, n, keys[0].start, keys[1].start, "");
    return drop_only(s, n, open, keys[0].start, vals[0].end);
}

static char *drop_element(const char *s, size_t n, size_t open, const struct span *el, size_t ne,
                          size_t k)
{
    if (k > 0)
        return text_splice(s, n, el[k - 1].end, el[k].end, "");
    if (ne > 1)
        return text_splice(s, n, el[0].start, el[1].start, "");
    return drop_only(s, n, open, el[0].start, el[0].end);
}

/* The text with one of our entries taken out, or NULL when it has none. */
static char *remove_one(const char *s, size_t n)
{
    struct span keys[MAXM], vals[MAXM], hk[MAXM], hv[MAXM], el[MAXM];
    size_t o = skip_ws(s, n, 0);
    size_t nk = members(s, n, o, keys, vals, MAXM);
    for (size_t k = 0; k < nk; k++) {
        if (!key_is(s, keys[k], "hooks") || s[vals[k].start] != '{')
            continue;
        size_t nh = members(s, n, vals[k].start, hk, hv, MAXM);
        for (size_t h = 0; h < nh; h++) {
            if (!key_is(s, hk[h], "PreToolUse") || s[hv[h].start] != '[')
                continue;
            size_t ne = elements(s, n, hv[h].start, el, MAXM);
            for (size_t e = 0; e < ne; e++) {
                if (!entry_is_ours(s, el[e]))
                    continue;
                /* a container goes only when its text is exactly what
                 * install wrote: the person's own "hooks": {} stays */
                cleanup_free char *arr = sg_xasprintf("[%.*s]", (int)(el[e].end - el[e].start),
                                                      s + el[e].start);
                cleanup_free char *obj = sg_xasprintf("{\"PreToolUse\": %s}", arr);
                bool made_arr = ne == 1 && hv[h].end - hv[h].start == strlen(arr) &&
                                !memcmp(s + hv[h].start, arr, strlen(arr));
                bool made_obj = made_arr && nh == 1 &&
                                vals[k].end - vals[k].start == strlen(obj) &&
                                !memcmp(s + vals[k].start, obj, strlen(obj));
                if (made_obj)
                    return drop_member(s, n, o, keys, vals, nk, k);
                if (made_arr)
                    return drop_member(s, n, vals[k].start, hk, hv, nh, h);
                return drop_element(s, n, hv[h].start, el, ne, e);
            }
        }
    }
    return NULL;
}

/* What goes between the members of the container at open: a newline and
 * the first member's indent when the file puts members on lines of their
 * own, else a space. */
static char *separator(const char *s, size_t n, size_t open, size_t first)
{
    if (first >= n || !memchr(s + open, '\n', first - open))
        return sg_xstrdup(" ");
    size_t ls = first;
    while (ls > open && s[ls - 1] != '\n')
        ls--;
    return sg_xasprintf("\n%.*s", (int)(first - ls), s + ls);
}

static char *entry_text(const char *command)
{
    json_t *cmd = json_string(command);
    cleanup_free char *q = json_dumps(cmd, JSON_ENCODE_ANY);
    json_decref(cmd);
    return sg_xasprintf("{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": %s, "
                        "\"timeout\": %d}]}",
                        q, SG_HOOK_TIMEOUT_S);
}

/* Insert value text as a new last member (key) or element (key NULL) of
 * the container at open whose members/elements are the spans (count m). */
static char *append(const char *s, size_t n, size_t open, const struct span *last,
                    const struct span *first, size_t m, const char *key, const char *val)
{
    cleanup_free char *item = key ? sg_xasprintf("\"%s\": %s", key, val) : sg_xstrdup(val);
    if (m) {
        cleanup_free char *sep = separator(s, n, open, first->start);
        cleanup_free char *ins = sg_xasprintf(",%s%s", sep, item);
        return text_splice(s, n, last->end, last->end, ins);
    }
    /* into a container that was there, empty: spaced, so that uninstall
     * can tell it from one install made (and keeps the person's {}) */
    cleanup_free char *spaced = sg_xasprintf(" %s ", item);
    return text_splice(s, n, open + 1, open + 1, spaced);
}

static char *add(const char *s, size_t n, const char *command)
{
    struct span keys[MAXM], vals[MAXM], hk[MAXM], hv[MAXM], el[MAXM];
    cleanup_free char *entry = entry_text(command);
    size_t o = skip_ws(s, n, 0);
    size_t nk = members(s, n, o, keys, vals, MAXM);
    for (size_t k = 0; k < nk; k++) {
        if (!key_is(s, keys[k], "hooks"))
            continue;
        size_t nh = members(s, n, vals[k].start, hk, hv, MAXM);
        for (size_t h = 0; h < nh; h++) {
            if (!key_is(s, hk[h], "PreToolUse"))
                continue;
            size_t ne = elements(s, n, hv[h].start, el, MAXM);
            return append(s, n, hv[h].start, ne ? &el[ne - 1] : NULL, el, ne, NULL, entry);
        }
        cleanup_free char *arr = sg_xasprintf("[%s]", entry);
        return append(s, n, vals[k].start, nh ? &hv[nh - 1] : NULL, hk, nh, "PreToolUse", arr);
    }
    cleanup_free char *obj = sg_xasprintf("{\"PreToolUse\": [%s]}", entry);
    return append(s, n, o, nk ? &vals[nk - 1] : NULL, keys, nk, "hooks", obj);
}

char *sg_hook_settings_edit(const char *text, size_t len, const char *command, bool uninstall,
                            bool *changed, const char **why)
{
    *changed = false;
    size_t first = skip_ws(text, len, 0);
    if (first == len) { /* no file, or an empty one */
        if (uninstall)
            return sg_xstrndup(text, len);
        cleanup_free char *entry = entry_text(command);
        *changed = true;
        return sg_xasprintf("{\n  \"hooks\": {\n    \"PreToolUse\": [\n      %s\n    ]\n  }\n}\n",
                            entry);
    }
    json_error_t err;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    json_t *hooks = json_object_get(j, "hooks"), *pre = json_object_get(hooks, "PreToolUse");
    *why = !json_is_object(j)                   ? "the file is not a JSON object"
           : hooks && !json_is_object(hooks)    ? "its \"hooks\" is not an object"
           : pre && !json_is_array(pre)         ? "its \"hooks\".\"PreToolUse\" is not a list"
           : json_object_size(j) > MAXM || json_object_size(hooks) > MAXM ||
                   json_array_size(pre) > MAXM ? "it has more entries than skillgate edits"
                                               : NULL;
    json_decref(j);
    if (*why)
        return NULL;
    char *cur = sg_xstrndup(text, len);
    size_t n = len;
    for (int i = 0; i < MAXM; i++) { /* every entry of ours, however many */
        char *next = remove_one(cur, n);
        if (!next)
            break;
        free(cur);
        cur = next;
        n = strlen(cur);
    }
    if (!uninstall) {
        char *next = add(cur, n, command);
        free(cur);
        cur = next;
    }
    /* what was written must read back as the settings it should be */
    json_t *back = json_loads(cur, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(back)) {
        json_decref(back);
        free(cur);
        *why = "skillgate could not edit this file's text (unusual escapes in its keys?)";
        return NULL;
    }
    json_decref(back);
    *changed = strlen(cur) != len || memcmp(cur, text, len);
    return cur;
}

/* ---- the file ---- */

/* The lines of text (views into it, without their newlines). */
static size_t split_lines(const char *text, const char ***lines, size_t **lens)
{
    size_t n = 0, cap = 0;
    *lines = NULL, *lens = NULL;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *lines = sg_xrealloc(*lines, cap * sizeof **lines);
            *lens = sg_xrealloc(*lens, cap * sizeof **lens);
        }
        (*lines)[n] = p, (*lens)[n++] = l;
        p += l + (e != NULL);
    }
    return n;
}

/* A unified diff of a and b as one hunk (an edit is in one place). */
static void print_diff(const char *path, const char *a, const char *b)
{
    const char **la, **lb;
    size_t *sa, *sb;
    size_t na = split_lines(a, &la, &sa), nb = split_lines(b, &lb, &sb), pre = 0, suf = 0;
    while (pre < na && pre < nb && sa[pre] == sb[pre] && !memcmp(la[pre], lb[pre], sa[pre]))
        pre++;
    while (suf < na - pre && suf < nb - pre && sa[na - 1 - suf] == sb[nb - 1 - suf] &&
           !memcmp(la[na - 1 - suf], lb[nb - 1 - suf], sa[na - 1 - suf]))
        suf++;
    printf("--- %s\n+++ %s\n@@ -%zu,%zu +%zu,%zu @@\n", path, path, pre + 1, na - pre - suf,
           pre + 1, nb - pre - suf);
    for (size_t i = pre; i < na - suf; i++)
        printf("-%.*s\n", (int)sa[i], la[i]);
    for (size_t i = pre; i < nb - suf; i++)
        printf("+%.*s\n", (int)sb[i], lb[i]);
    free(la), free(lb), free(sa), free(sb);
}

/* Settings that keep Claude Code from running the hook at all: its
 * "disableAllHooks": true in any settings file it reads (the managed one,
 * the person's, the project's and its local one), or the managed file's
 * "allowManagedHooksOnly": true, under which no hook of the person's or
 * the project's runs. Said on stderr, naming the file; how many. A file
 * that does not read as JSON says nothing here (install refuses that one). */
static int hooks_blocked(const char *path, const char *text)
{
    const char *home = secure_getenv("HOME");
    const char *ccd = secure_getenv("CLAUDE_CONFIG_DIR");
    cleanup_free char *user = home && home[0] == '/'
                                  ? sg_xasprintf("%s/.claude/settings.json", home)
                                  : NULL;
    cleanup_free char *ccdu = ccd && ccd[0] == '/' ? sg_xasprintf("%s/settings.json", ccd) : NULL;
    const struct {
        const char *file;
        bool managed;
    } files[] = {{path, false},
                 {"/etc/claude-code/managed-settings.json", true},
                 {user, false},
                 {ccdu, false},
                 {".claude/settings.json", false},
                 {".claude/settings.local.json", false}};
    int n = 0;
    cleanup_free char *real_path = realpath(path, NULL);
    for (size_t i = 0; i < SG_ARRAY_LEN(files); i++) {
        if (!files[i].file)
            continue;
        cleanup_free char *real = realpath(files[i].file, NULL);
        if (i && real && real_path && !strcmp(real, real_path))
            continue; /* the file installed into: read from the text written */
        cleanup_free char *t = NULL;
        size_t len = 0;
        if (i && sg_read_file_capped(files[i].file, SETTINGS_MAX, &t, &len) < 0)
            continue;
        json_t *j = i ? (t ? json_loadb(t, len, 0, NULL) : NULL)
                      : json_loads(text ? text : "", 0, NULL);
        bool off = json_is_true(json_object_get(j, "disableAllHooks"));
        bool only = files[i].managed && json_is_true(json_object_get(j, "allowManagedHooksOnly"));
        json_decref(j);
        if (off || only) {
            fprintf(stderr, "skillgate hook: %s sets \"%s\": true: Claude Code runs %s while it "
                    "does, so skillgate's hook will not run and nothing is checked; take that "
                    "setting out to turn it on\n", files[i].file,
                    off ? "disableAllHooks" : "allowManagedHooksOnly",
                    off ? "no hook at all" : "only the managed settings' hooks");
            n++;
        }
    }
    return n;
}

int sg_hook_install(const struct sg_hook_install_opts *o)
{
    cleanup_free char *path = NULL;
    if (o->settings)
        path = sg_xstrdup(o->settings);
    else if (o->project)
        path = sg_xstrdup(".claude/settings.json");
    else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
            fprintf(stderr, "skillgate hook: HOME is not set to an absolute path\n");
            return -EINVAL;
        }
        path = sg_xasprintf("%s/.claude/settings.json", home);
    }
    cleanup_free char *text = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(path, SETTINGS_MAX, &text, &len);
    if (r < 0) {
        fprintf(stderr, "skillgate hook: %s: %s\n", path,
                r == -EFBIG ? "too big for a settings file" : strerror(-r));
        return r;
    }
    struct stat st;
    mode_t mode = text && stat(path, &st) == 0 ? st.st_mode & 07777 : 0600;
    cleanup_free char *command = sg_xasprintf("%s hook%s", o->command,
                                              o->no_rewrite ? " --no-rewrite" : "");
    if (strpbrk(o->command, " \t'\"\\$`")) {
        fprintf(stderr, "skillgate hook: the path %s needs quoting; install from a path "
                        "without spaces or quotes\n", o->command);
        return -EINVAL;
    }
    bool changed;
    const char *why = NULL;
    cleanup_free char *out = sg_hook_settings_edit(text ? text : "", len, command, o->uninstall,
                                                   &changed, &why);
    if (!out) {
        fprintf(stderr, "skillgate hook: %s: %s; nothing changed\n", path, why);
        return -EINVAL;
    }
    /* installed into settings that turn every hook off is no protection:
     * said, and the status says it too (issue 35, item 10) */
    int blocked = o->uninstall ? 0 : hooks_blocked(path, out);
    if (!changed) {
        printf("%s: %s\n", path, o->uninstall ? "no skillgate hook in it; nothing to do"
                                              : "skillgate's hook is there already; nothing to do");
        return blocked ? -ECANCELED : 0;
    }
    if (o->dry_run) {
        print_diff(path, text ? text : "", out);
        return blocked ? -ECANCELED : 0;
    }
    if (text) {
        cleanup_free char *bak = sg_xasprintf("%s.skillgate.bak", path);
        if ((r = sg_write_file_atomic(bak, text, mode)) < 0) {
            fprintf(stderr, "skillgate hook: cannot write the backup %s: %s; nothing changed\n",
                    bak, strerror(-r));
            return r;
        }
        printf("backup: %s\n", bak);
    } else if ((r = sg_mkdir_parent(path, 0700)) < 0) {
        fprintf(stderr, "skillgate hook: cannot make the folder of %s: %s\n", path, strerror(-r));
        return r;
    }
    if ((r = sg_write_file_atomic(path, out, mode)) < 0) {
        fprintf(stderr, "skillgate hook: cannot write %s: %s\n", path, strerror(-r));
        return r;
    }
    if (blocked) {
        printf("%s: skillgate's hook written, but Claude Code will not run it (see above)\n",
               path);
        return -ECANCELED;
    }
    printf("%s: %s\n", path, o->uninstall ? "skillgate's hook taken out"
                                          : "skillgate is now Claude Code's PreToolUse hook");
    return 0;
}
