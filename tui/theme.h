/* Themes: YAML files in themes/ that give each semantic role of the UI a
 * foreground, background and attributes. The roles are one list (below);
 * the compiled-in values are the "default" theme, used when no file is
 * found, and mono (attributes only) is used for NO_COLOR and for terminals
 * without colour. */
#ifndef SG_TUI_THEME_H
#define SG_TUI_THEME_H

#include <curses.h>
#include <stdbool.h>

#include "diag.h"

/* X(ID, "name", default fg, default bg, "default attrs", "mono attrs", "what it colours")
 * colours: -1 the terminal's default, 0-7 the ANSI colours, 8-15 bright, 16-255 xterm. */
#define TUI_ROLES(X)                                                                   \
    X(NORMAL, "normal", -1, -1, "", "", "ordinary text")                               \
    X(DIM, "dim", 8, -1, "", "dim", "secondary text: times, paths, hints")             \
    X(TITLE, "title", 15, 4, "bold", "reverse bold", "the title bar")                  \
    X(TAB, "tab", 7, 4, "", "reverse", "inactive screen tabs in the title bar")        \
    X(TAB_ACTIVE, "tab-active", 0, 6, "bold", "bold", "the current screen's tab")      \
    X(STATUS, "status", 0, 7, "", "reverse", "the status bar")                         \
    X(SELECTED, "selected", 0, 6, "", "reverse", "the selected line")                  \
    X(BORDER, "border", 8, -1, "", "", "pane borders")                                 \
    X(BORDER_FOCUS, "border-focus", 6, -1, "bold", "bold", "the focused pane's border") \
    X(HEADER, "header", 6, -1, "bold", "bold underline", "column and section headers") \
    X(STDOUT, "stdout", -1, -1, "", "", "the skill's standard output")                \
    X(STDERR, "stderr", 3, -1, "", "dim", "the skill's standard error")               \
    X(ESCAPED, "escaped", 5, -1, "", "underline", "bytes shown escaped (\\e, \\xNN)")   \
    X(SEV_INFO, "info", -1, -1, "", "", "events: information")                         \
    X(SEV_NOTICE, "notice", 6, -1, "", "", "events: notices (allowed, asked)")         \
    X(SEV_WARNING, "warning", 3, -1, "bold", "bold", "events: something was stopped") \
    X(SEV_ERROR, "error", 1, -1, "bold", "bold reverse", "events: errors, failures")   \
    X(RISK_LOW, "risk-low", 2, -1, "", "", "low-risk tools")                           \
    X(RISK_MEDIUM, "risk-medium", 3, -1, "", "bold", "medium-risk tools")              \
    X(RISK_HIGH, "risk-high", 1, -1, "bold", "bold reverse", "high-risk tools")        \
    X(OK, "ok", 2, -1, "bold", "bold", "success")                                      \
    X(PROMPT, "prompt", 15, 1, "", "reverse", "the permission prompt")                 \
    X(PROMPT_TITLE, "prompt-title", 11, 1, "bold", "reverse bold", "the prompt's title") \
    X(KEY, "key", 14, -1, "bold", "bold", "key names in hints and help")               \
    X(MATCH, "match", 0, 3, "", "reverse underline", "search matches")                \
    X(DEGRADED, "degraded", 15, 1, "bold blink", "reverse bold", "the degraded-mode banner") \
    X(DIFF_ADD, "diff-add", 2, -1, "", "bold", "lines a changed manifest gained")       \
    X(DIFF_DEL, "diff-del", 1, -1, "", "dim", "lines a changed manifest lost")

enum tui_role {
#define X(id, name, fg, bg, attrs, mono, what) TUI_R_##id,
    TUI_ROLES(X)
#undef X
    TUI_ROLE_COUNT
};

struct tui_style {
    short fg, bg;  /* -1 default, 0..255 */
    attr_t attrs;  /* A_BOLD, A_REVERSE, ... */
};

struct tui_theme {
    char name[64];
    bool mono;     /* attributes only */
    struct tui_style role[TUI_ROLE_COUNT];
    attr_t attr[TUI_ROLE_COUNT]; /* after tui_theme_apply: what wattrset takes */
};

const char *tui_role_name(enum tui_role r);
/* The compiled-in default theme; the mono theme. */
void tui_theme_builtin(struct tui_theme *t);
void tui_theme_mono(struct tui_theme *t);
/* Load a theme by NAME ($XDG_CONFIG_HOME/skillgate/themes/NAME.yaml, then each
 * folder of SG_THEMES_DIRS) or by a path ending in .yaml. Roles the file does
 * not name keep the built-in values. Problems go to d as FILE:LINE:COL field
 * messages; returns 0, -ENOENT (no such theme), or -EINVAL (errors). */
int tui_theme_load(const char *name, struct tui_theme *t, struct sg_diags *d);
/* Names of the themes found (caller frees each and the array). */
char **tui_theme_list(size_t *n);
/* After start_color(): colour pairs for every role, colours folded to what
 * the terminal has (256, 16 or 8; none: mono). */
void tui_theme_apply(struct tui_theme *t);

#endif
