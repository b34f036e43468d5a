/* Key bindings: one table (TUI_ACTIONS), rebindable from config.yaml. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "tui.h"
#include "util.h"

static const struct {
    const char *name, *keys, *help;
    enum tui_group group;
} actions[TUI_A_COUNT] = {
    [TUI_A_NONE] = {"none", "", "", TUI_G_GLOBAL},
#define X(id, nm, k, g, h) [TUI_A_##id] = {nm, k, h, TUI_G_##g},
    TUI_ACTIONS(X)
#undef X
};

static const struct {
    const char *name;
    int key;
} named[] = {
    {"Up", TUI_KEY_FN | KEY_UP},       {"Down", TUI_KEY_FN | KEY_DOWN},
    {"Left", TUI_KEY_FN | KEY_LEFT},   {"Right", TUI_KEY_FN | KEY_RIGHT},
    {"PgUp", TUI_KEY_FN | KEY_PPAGE},  {"PgDn", TUI_KEY_FN | KEY_NPAGE},
    {"Home", TUI_KEY_FN | KEY_HOME},   {"End", TUI_KEY_FN | KEY_END},
    {"Delete", TUI_KEY_FN | KEY_DC},   {"Backspace", TUI_KEY_FN | KEY_BACKSPACE},
    {"Enter", '\n'},                   {"Esc", 27},
    {"Tab", '\t'},                     {"Space", ' '},
    {"BackTab", TUI_KEY_FN | KEY_BTAB},
};

const char *tui_action_name(enum tui_action a) { return actions[a].name; }
const char *tui_action_help(enum tui_action a) { return actions[a].help; }
enum tui_group tui_action_group(enum tui_action a) { return actions[a].group; }

const char *tui_group_name(enum tui_group g)
{
    static const char *const n[] = {"Everywhere", "Moving around", "On a screen",
                                    "In the permission prompt"};
    return n[g];
}

int tui_key_parse(const char *s)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(named); i++)
        if (!strcmp(s, named[i].name))
            return named[i].key;
    if (s[0] == '^' && s[1] && !s[2] && isalpha((unsigned char)s[1]))
        return toupper((unsigned char)s[1]) - '@';
    if (s[0] == 'F' && s[1]) {
        long long n;
        if (sg_parse_ll(s + 1, 1, 12, &n) == 0)
            return TUI_KEY_FN | KEY_F((int)n);
    }
    unsigned cp;
    size_t len = strlen(s);
    if (len && sg_utf8_decode((const unsigned char *)s, len, &cp) == len && cp > ' ' && cp != 0x7f)
        return (int)cp;
    return -1;
}

void tui_key_name(int key, char *out, size_t n)
{
    for (size_t i = 0; i < SG_ARRAY_LEN(named); i++)
        if (named[i].key == key) {
            snprintf(out, n, "%s", named[i].name);
            return;
        }
    if ((key & TUI_KEY_FN) && (key & ~TUI_KEY_FN) >= KEY_F(1) && (key & ~TUI_KEY_FN) <= KEY_F(12))
        snprintf(out, n, "F%d", (key & ~TUI_KEY_FN) - KEY_F0);
    else if (key > 0 && key < 32)
        snprintf(out, n, "^%c", key + '@');
    else if (key >= 32 && key < 0x110000) {
        char u[8];
        wchar_t wc = (wchar_t)key;
        mbstate_t st = {0};
        size_t k = wcrtomb(u, wc, &st);
        snprintf(out, n, "%.*s", k == (size_t)-1 ? 1 : (int)k, k == (size_t)-1 ? "?" : u);
    } else
        snprintf(out, n, "key %#x", key);
}

static int bind(struct tui_keymap *m, int key, enum tui_action a)
{
    /* a key means one thing per group: a new binding replaces the old */
    for (size_t i = 0; i < m->n; i++)
        if (m->b[i].key == key && actions[m->b[i].action].group == actions[a].group) {
            m->b[i].action = a;
            return 0;
        }
    if (m->n >= SG_ARRAY_LEN(m->b))
        return -1;
    m->b[m->n].key = key;
    m->b[m->n].action = a;
    m->n++;
    return 0;
}

static void unbind_action(struct tui_keymap *m, enum tui_action a)
{
    size_t o = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->b[i].action != a)
            m->b[o++] = m->b[i];
    m->n = o;
}

void tui_keymap_default(struct tui_keymap *m)
{
    m->n = 0;
    for (int a = 1; a < TUI_A_COUNT; a++) {
        cleanup_free char *ks = sg_xstrdup(actions[a].keys);
        char *save = NULL;
        for (char *k = strtok_r(ks, " ", &save); k; k = strtok_r(NULL, " ", &save))
            bind(m, tui_key_parse(k), (enum tui_action)a);
    }
}

int tui_keymap_config(struct tui_keymap *m, const struct sg_config *cfg, struct sg_diags *d)
{
    int bad = 0;
    for (size_t i = 0; i < cfg->nkeys; i++) {
        const struct sg_config_key *ck = &cfg->keys[i];
        enum tui_action a = TUI_A_NONE;
        for (int k = 1; k < TUI_A_COUNT; k++)
            if (!strcmp(actions[k].name, ck->action))
                a = (enum tui_action)k;
        cleanup_free char *field = sg_xasprintf("keys.%s", ck->action);
        if (a == TUI_A_NONE) {
            sg_diag_add(d, SG_ERROR, cfg->path, ck->key_line, ck->key_col, field,
                        "no such action (skillgate tui shows them with ?)");
            bad = 1;
            continue;
        }
        cleanup_free char *ks = sg_xstrdup(ck->keys);
        char *save = NULL;
        int keys[8], nk = 0;
        bool ok = true;
        for (char *k = strtok_r(ks, " ", &save); k && ok; k = strtok_r(NULL, " ", &save)) {
            int key = tui_key_parse(k);
            if (key < 0 || nk >= (int)SG_ARRAY_LEN(keys)) {
                sg_diag_add(d, SG_ERROR, cfg->path, ck->line, ck->col, field,
                            key < 0 ? "unknown key name '%s' (a character, ^X, F1-F12, Up, Down, "
                                      "Left, Right, PgUp, PgDn, Home, End, Enter, Esc, Tab, Space, "
                                      "Delete)"
                                    : "at most 8 keys per action ('%s')",
                            k);
                ok = false;
            } else
                keys[nk++] = key;
        }
        if (!ok || !nk) {
            if (ok)
                sg_diag_add(d, SG_ERROR, cfg->path, ck->line, ck->col, field, "no keys given");
            bad = 1;
            continue;
        }
        if (actions[a].group == TUI_G_PROMPT) {
            for (int k = 0; k < nk; k++)
                if (keys[k] == '\n' || keys[k] == '\r' || keys[k] == ' ') {
                    sg_diag_add(d, SG_ERROR, cfg->path, ck->line, ck->col, field,
                                "Enter and Space can never answer the prompt");
                    ok = false;
                }
            /* a key that denies (or Esc, ^C: "get me out") never comes to
             * allow: binding it would silently take its deny away */
            bool allows = a == TUI_A_P_ONCE || a == TUI_A_P_RUN || a == TUI_A_P_ALWAYS ||
                          a == TUI_A_P_FOLDER || a == TUI_A_P_PROGRAM;
            for (int k = 0; allows && k < nk; k++) {
                enum tui_action was = tui_keymap_lookup(m, keys[k], TUI_G_PROMPT);
                if (keys[k] == 27 || keys[k] == 3 || was == TUI_A_P_DENY ||
                    was == TUI_A_P_DENY_ALWAYS) {
                    char kn[32];
                    tui_key_name(keys[k], kn, sizeof kn);
                    sg_diag_add(d, SG_ERROR, cfg->path, ck->line, ck->col, field,
                                "%s denies (or leaves) the prompt: it can never allow (rebind "
                                "deny first to free it)", kn);
                    ok = false;
                }
            }
            if (!ok) {
                bad = 1;
                continue;
            }
        }
        unbind_action(m, a);
        for (int k = 0; k < nk; k++)
            bind(m, keys[k], a);
    }
    return bad ? -EINVAL : 0;
}

enum tui_action tui_keymap_lookup(const struct tui_keymap *m, int key, enum tui_group g)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->b[i].key == key && actions[m->b[i].action].group == g)
            return m->b[i].action;
    return TUI_A_NONE;
}

void tui_keymap_describe(const struct tui_keymap *m, enum tui_action a, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < m->n && o < n; i++) {
        if (m->b[i].action != a)
            continue;
        char k[32];
        tui_key_name(m->b[i].key, k, sizeof k);
        o += (size_t)snprintf(out + o, n - o, "%s%s", o ? " " : "", k);
    }
}

void tui_action_key(const struct tui_keymap *m, enum tui_action a, char *out, size_t n)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->b[i].action == a) {
            tui_key_name(m->b[i].key, out, n);
            return;
        }
    snprintf(out, n, ":%s", actions[a].name);
}

void tui_action_unhandled(struct tui *t, const char *how, enum tui_action a)
{
    /* why first: a long help may be cut at the screen's edge */
    if (actions[a].group == TUI_G_PROMPT)
        tui_message(t, "%s is for the permission prompt, and none is open: %s", how,
                    actions[a].help);
    else if (how[0] == ':') /* the palette's command: its name is there already */
        tui_message(t, "%s does nothing here: %s", how, actions[a].help);
    else
        tui_message(t, "%s does nothing here: it is %s, %s", how, actions[a].name,
                    actions[a].help);
}

void tui_key_unhandled(struct tui *t, int key)
{
    static const enum tui_group order[] = {TUI_G_VIEW, TUI_G_MOVE, TUI_G_GLOBAL, TUI_G_PROMPT};
    char kn[32];
    tui_key_name(key, kn, sizeof kn);
    for (size_t i = 0; i < SG_ARRAY_LEN(order); i++) {
        enum tui_action a = tui_keymap_lookup(&t->keys, key, order[i]);
        if (a != TUI_A_NONE) {
            tui_action_unhandled(t, kn, a);
            return;
        }
    }
    char pk[32];
    tui_action_key(&t->keys, TUI_A_PALETTE, pk, sizeof pk);
    tui_message(t, "unknown key '%s': %s lists every command", kn, pk);
}
