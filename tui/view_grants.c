/* The grants screen: every "always" decision (skill, content digest, rule,
 * allow or deny), and x to revoke one (asks first). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "perm.h"
#include "tui.h"
#include "util.h"

struct grants {
    json_t *list;
    char *path;
    size_t sel, top;
    int rows;
    char error[256];
};

static struct grants *G(struct tui_view *v)
{
    if (!v->data)
        v->data = sg_xcalloc(1, sizeof(struct grants));
    return v->data;
}

static const char *gs(json_t *g, const char *k)
{
    const char *s = json_string_value(json_object_get(g, k));
    return s ? s : "?";
}

static void open_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct grants *s = G(v);
    json_decref(s->list);
    s->list = NULL;
    free(s->path);
    s->path = sg_grants_path();
    struct sg_diags d = {0};
    s->error[0] = '\0';
    if (sg_grants_list(s->path, &s->list, &d) < 0 && d.n) {
        cleanup_free char *m = sg_diag_format(&d.v[0]);
        snprintf(s->error, sizeof s->error, "%s", m);
    }
    sg_diags_free(&d);
    if (!s->list)
        s->list = json_array();
    size_t n = json_array_size(s->list);
    if (s->sel >= n)
        s->sel = n ? n - 1 : 0;
}

static void draw(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols)
{
    struct grants *s = G(v);
    if (!s->list)
        open_view(t, v);
    attr_t hd = tui_attr(t, TUI_R_HEADER);
    tui_fill(w, 0, 0, cols, hd);
    tui_putf(w, 0, 1, cols - 2, hd, "%-5s %-16s %-12s %-10s %s", "", "SKILL", "DIGEST", "CREATED",
             "RULE");
    s->rows = rows - 2;
    size_t n = json_array_size(s->list);
    if (s->error[0])
        tui_put(w, rows - 1, 1, cols - 2, s->error, strlen(s->error), tui_attr(t, TUI_R_SEV_ERROR));
    if (!n) {
        tui_putf(w, 2, 2, cols - 4, tui_attr(t, TUI_R_DIM),
                 "No grants. An \"always\" answer to a prompt saves one here (in %s).", s->path);
        return;
    }
    if (s->sel < s->top)
        s->top = s->sel;
    if (s->sel >= s->top + (size_t)s->rows)
        s->top = s->sel - (size_t)s->rows + 1;
    for (int i = 0; i < s->rows && s->top + (size_t)i < n; i++) {
        size_t k = s->top + (size_t)i;
        json_t *g = json_array_get(s->list, k);
        bool sel = k == s->sel, deny = !strcmp(gs(g, "effect"), "deny");
        attr_t a = tui_attr(t, sel ? TUI_R_SELECTED : TUI_R_NORMAL);
        tui_fill(w, i + 1, 0, cols, a);
        int x = tui_putf(w, i + 1, 1, 6, sel ? a : tui_attr(t, deny ? TUI_R_SEV_WARNING : TUI_R_OK),
                         "%-5s ", deny ? "DENY" : "ALLOW");
        x += tui_putf(w, i + 1, 1 + x, 17, a, "%-16.16s ", gs(g, "skill"));
        const char *dg = gs(g, "digest");
        x += tui_putf(w, i + 1, 1 + x, 13, a, "%-12.12s ", strncmp(dg, "sha256:", 7) ? dg : dg + 7);
        x += tui_putf(w, i + 1, 1 + x, 11, a, "%-10.10s ", gs(g, "created"));
        tui_putf(w, i + 1, 1 + x, cols - 2 - x, a, "%s", gs(g, "rule"));
    }
}

static void revoke_confirmed(struct tui *t, const char *text, void *ctx)
{
    struct grants *s = ctx;
    if (!text || (text[0] != 'y' && text[0] != 'Y'))
        return;
    /* read the file again: another run may have added a grant meanwhile */
    json_t *sel = json_incref(json_array_get(s->list, s->sel));
    open_view(t, &t->views[TUI_S_GRANTS]);
    size_t i;
    json_t *g;
    bool done = false;
    json_array_foreach(s->list, i, g)
    {
        if (json_equal(g, sel)) {
            json_array_remove(s->list, i);
            int r = sg_grants_save(s->path, s->list);
            if (r < 0)
                tui_message(t, "%s: %s", s->path, strerror(-r));
            else
                tui_message(t, "revoked: %s %s", gs(sel, "skill"), gs(sel, "rule"));
            done = true;
            break;
        }
    }
    if (!done)
        tui_message(t, "that grant is gone already");
    json_decref(sel);
    open_view(t, &t->views[TUI_S_GRANTS]);
}

static bool request(struct tui *t, struct tui_view *v, enum tui_action a)
{
    struct grants *s = G(v);
    size_t n = json_array_size(s->list);
    if (!n && (a == TUI_A_COPY || a == TUI_A_DELETE)) {
        tui_message(t, "no grant to %s: an \"always\" answer to a prompt makes one",
                    a == TUI_A_COPY ? "copy" : "revoke");
        return true;
    }
    switch (a) {
    case TUI_A_COPY:
        if (s->sel < n)
            tui_copy(t, "grant's rule", gs(json_array_get(s->list, s->sel), "rule"));
        return true;
    case TUI_A_UP: if (s->sel) s->sel--; return true;
    case TUI_A_DOWN: if (s->sel + 1 < n) s->sel++; return true;
    case TUI_A_HOME: s->sel = 0; return true;
    case TUI_A_END: s->sel = n ? n - 1 : 0; return true;
    case TUI_A_RELOAD: open_view(t, v); return true;
    case TUI_A_DELETE: {
        if (!n)
            return true;
        json_t *g = json_array_get(s->list, s->sel);
        cleanup_free char *q = sg_xasprintf("revoke %s %s for %s? y/N ", gs(g, "effect"),
                                            gs(g, "rule"), gs(g, "skill"));
        tui_confirm(t, q, revoke_confirmed, s);
        return true;
    }
    default: return false;
    }
}

static void status(struct tui *t, struct tui_view *v, char *out, size_t n)
{
    (void)t;
    struct grants *s = G(v);
    snprintf(out, n, "%zu grant%s   x revoke  R reload  q back", json_array_size(s->list),
             json_array_size(s->list) == 1 ? "" : "s");
}

static void close_view(struct tui *t, struct tui_view *v)
{
    (void)t;
    struct grants *s = v->data;
    if (!s)
        return;
    json_decref(s->list);
    free(s->path);
    free(s);
    v->data = NULL;
}

static void click(struct tui *t, struct tui_view *v, int y, int x)
{
    (void)t, (void)x;
    struct grants *s = G(v);
    size_t k = s->top + (size_t)(y - 1);
    if (y >= 1 && y <= s->rows && k < json_array_size(s->list))
        s->sel = k;
}

const struct tui_view_ops tui_grants_ops = {
    .name = "Grants", .open = open_view, .draw = draw, .request = request, .status = status,
    .close = close_view, .click = click,
};
