/* The terminal UI: screens over one poll() loop, a permission prompt the
 * skill cannot fake, themes and rebindable keys.
 *
 * Each screen is one file filling one struct tui_view_ops (tig's view_ops):
 * the main loop knows only the struct. Every action is one line of
 * TUI_ACTIONS; the default keys, the config names and the help screen come
 * from that list. One loop (loop.h) runs the terminal, the attach socket
 * and, while a skill runs, the run's own sources: one poll() serves all. */
#ifndef SG_TUI_H
#define SG_TUI_H

#include <curses.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "loop.h"
#include "perm.h"
#include "theme.h"

#define TUI_COPY_MAX 65536 /* bytes y copies at most (tui_copy) */

/* X(ID, "config-name", "default keys", group, "help") */
#define TUI_ACTIONS(X)                                                                       \
    X(QUIT, "quit", "q", GLOBAL, "leave this screen (quit from the skills screen)")          \
    X(HELP, "help", "? F1", GLOBAL, "this help, made from the key table")                    \
    X(VIEW_SKILLS, "view-skills", "1 F2", GLOBAL, "the skills screen")                       \
    X(VIEW_RUN, "view-run", "2 F3", GLOBAL, "the run screen (the last run)")                 \
    X(VIEW_TRACES, "view-traces", "3 F4", GLOBAL, "the traces screen (past runs)")           \
    X(VIEW_GRANTS, "view-grants", "4 F5", GLOBAL, "the grants screen (\"always\" decisions)") \
    X(VIEW_AGENT, "view-agent", "5 F6", GLOBAL, "the agent's own tool calls (tui --attach)") \
    X(REDRAW, "redraw", "^L", GLOBAL, "redraw the screen")                                   \
    X(THEME, "next-theme", "t", GLOBAL, "switch to the next theme")                          \
    X(MESSAGES, "messages", "L", GLOBAL, "the status line's messages, whole")                \
    X(PALETTE, "palette", ":", GLOBAL, "every action by name, with its keys: Tab completes")  \
    X(UP, "move-up", "k Up", MOVE, "one line up")                                            \
    X(DOWN, "move-down", "j Down", MOVE, "one line down")                                    \
    X(PAGE_UP, "page-up", "PgUp ^B", MOVE, "one page up")                                    \
    X(PAGE_DOWN, "page-down", "PgDn ^F Space", MOVE, "one page down")                        \
    X(HOME, "move-first", "Home g", MOVE, "the first line")                                  \
    X(END, "move-last", "End G", MOVE, "the last line (and follow new output)")              \
    X(LEFT, "scroll-left", "Left h", MOVE, "scroll left")                                    \
    X(RIGHT, "scroll-right", "Right l", MOVE, "scroll right")                                \
    X(SEARCH, "search", "/", MOVE, "search (in the focused pane)")                           \
    X(SEARCH_NEXT, "search-next", "n", MOVE, "next match")                                   \
    X(SEARCH_PREV, "search-prev", "N", MOVE, "previous match")                               \
    X(NEXT_REFUSED, "next-refused", "]", MOVE, "the next refusal in the events (run)")       \
    X(PREV_REFUSED, "prev-refused", "[", MOVE, "the previous refusal in the events (run)")   \
    X(NEXT_ASKED, "next-asked", "}", MOVE, "the next question asked in the events (run)")   \
    X(PREV_ASKED, "prev-asked", "{", MOVE, "the previous question asked (run)")             \
    X(ENTER, "enter", "Enter", VIEW, "run the skill / open the trace")                       \
    X(DRY_RUN, "dry-run", "d", VIEW, "dry run: the plan, nothing executed (skills)")          \
    X(BODY, "instructions", "i", VIEW, "the skill's instructions (Tier 2, read now)")        \
    X(RELOAD, "reload", "R", VIEW, "discover skills / read traces and grants again")         \
    X(FOCUS, "focus", "Tab", VIEW, "switch pane (run)")                                      \
    X(MAXIMIZE, "maximize", "m", VIEW, "maximize the focused pane, or restore (run)")        \
    X(WRAP, "wrap", "w", VIEW, "wrap long lines, or scroll them sideways (run, pager)")     \
    X(FILTER, "filter", "f", VIEW, "filter events by kind or severity / traces by text")     \
    X(DELETE, "delete", "x Delete", VIEW, "stop the run / revoke the grant")                 \
    X(SORT, "sort", "s", VIEW, "next sort order (traces)")                                   \
    X(SORT_REVERSE, "sort-reverse", "S", VIEW, "reverse the sort order (traces)")            \
    X(EXPORT, "export", "e", VIEW, "export the trace to a file")                             \
    X(REPORT, "report", "p", VIEW, "write the run's report to share (HTML, one file)")       \
    X(COPY, "copy", "y", VIEW, "copy: a request's rule, a path, a trace, a skill's folder")  \
    X(TIMELINE, "timeline", "T", VIEW, "show or hide the run's timeline (run)")             \
    X(DIFF, "diff", "c", VIEW, "changes since your last look / between runs")           \
    X(MARK, "mark", "v", VIEW, "mark a run to compare with (traces)")                   \
    X(RECORD, "record", "r", VIEW, "record what it uses, each use asked (skills)")          \
    X(SEEN, "mark-seen", "M", VIEW, "mark the skill's manifests as seen (skills)")          \
    X(P_ONCE, "allow-once", "a", PROMPT, "allow this request once")                          \
    X(P_RUN, "allow-run", "r", PROMPT, "allow it for the rest of this run")                  \
    X(P_FOLDER, "allow-folder", "f", PROMPT, "allow writes in its folder for the rest of this run") \
    X(P_PROGRAM, "allow-program", "p", PROMPT, "allow the program with any arguments and root's programs it runs, this run") \
    X(P_ALWAYS, "allow-always", "A", PROMPT, "allow it always (shows the rule, asks to confirm)") \
    X(P_DENY, "deny", "d Esc", PROMPT, "deny it (the default; Enter never allows)")          \
    X(P_DENY_ALWAYS, "deny-always", "D", PROMPT, "deny it always (a grant)")                 \
    X(P_DETAILS, "details", "?", PROMPT, "more about the request")

enum tui_action {
    TUI_A_NONE,
#define X(id, name, keys, group, help) TUI_A_##id,
    TUI_ACTIONS(X)
#undef X
    TUI_A_COUNT
};

enum tui_group { TUI_G_GLOBAL, TUI_G_MOVE, TUI_G_VIEW, TUI_G_PROMPT, TUI_G_COUNT };

/* A key: a character (its code point) or a curses KEY_ code | TUI_KEY_FN. */
#define TUI_KEY_FN 0x40000000
#define TUI_MAX_BINDINGS 160

struct tui_keymap {
    struct {
        int key;
        enum tui_action action;
    } b[TUI_MAX_BINDINGS];
    size_t n;
};

/* keys.c */
void tui_keymap_default(struct tui_keymap *m);
/* Rebind from config (each keys: line; problems to d with the file, line, column). */
struct sg_config;
int tui_keymap_config(struct tui_keymap *m, const struct sg_config *cfg, struct sg_diags *d);
/* The action for key in a group (actions of other groups are never returned). */
enum tui_action tui_keymap_lookup(const struct tui_keymap *m, int key, enum tui_group g);
/* "Up k" for the help screen. */
void tui_keymap_describe(const struct tui_keymap *m, enum tui_action a, char *out, size_t n);
int tui_key_parse(const char *name);
void tui_key_name(int key, char *out, size_t n);
const char *tui_action_name(enum tui_action a);
const char *tui_action_help(enum tui_action a);
enum tui_group tui_action_group(enum tui_action a);
const char *tui_group_name(enum tui_group g);
/* The first key bound to a (its name, as the help shows it), or ":NAME"
 * when none is: how a message names the way to reach an action. */
void tui_action_key(const struct tui_keymap *m, enum tui_action a, char *out, size_t n);

/* ---- the screens ---- */

struct tui;
struct tui_view;

struct tui_view_ops {
    const char *name;  /* tab label */
    void (*open)(struct tui *t, struct tui_view *v);    /* (re)load its data */
    void (*draw)(struct tui *t, struct tui_view *v, WINDOW *w, int rows, int cols);
    /* Handle an action; return false to let the main loop handle it. */
    bool (*request)(struct tui *t, struct tui_view *v, enum tui_action a);
    /* The one-line hint in the status bar. */
    void (*status)(struct tui *t, struct tui_view *v, char *out, size_t n);
    void (*close)(struct tui *t, struct tui_view *v);
    /* A click at y,x of the screen's body (0,0 its top left): select what
     * is there. Optional. */
    void (*click)(struct tui *t, struct tui_view *v, int y, int x);
};

struct tui_view {
    const struct tui_view_ops *ops;
    void *data;    /* the screen's own state */
};

enum tui_screen { TUI_S_SKILLS, TUI_S_RUN, TUI_S_TRACES, TUI_S_GRANTS, TUI_S_AGENT, TUI_S_PAGER,
                  TUI_S_COUNT };

extern const struct tui_view_ops tui_skills_ops, tui_run_ops, tui_traces_ops, tui_grants_ops,
    tui_agent_ops, tui_pager_ops;

/* The agent screen (view_agent.c): the agent's own tool calls that came
 * through `skillgate hook` while this TUI was attached. add returns the
 * row's number for done (the decision, or why none came). */
size_t tui_agent_add(struct tui *t, const char *tool, const char *summary, const char *session,
                     const char *cwd);
void tui_agent_done(struct tui *t, size_t row, const char *outcome);

/* A line of input at the bottom of the screen (search, filter, SKILL_INPUT). */
typedef void (*tui_input_done)(struct tui *t, const char *text, void *ctx); /* text NULL: cancelled */

struct tui_prompt_state; /* prompt.c */
struct tui_script;       /* script.c */

struct tui_opts {
    const char *const *dirs; /* skill folders to browse (NULL: discovery defaults) */
    size_t ndirs;
    const char *theme;       /* --theme */
    const char *script;      /* --script FILE: headless, keys from the file */
    const char *size;        /* COLSxROWS of the headless screen */
    int prompt_timeout;      /* seconds */
    bool demo, demo_auto;    /* skillgate demo [--auto] */
    bool attach;             /* listen for the MCP server's runs and prompts */
    int demo_pace;           /* seconds per step with --auto */
    const char *demo_keep;   /* --keep DIR */
    const char *notice;      /* said on the first screen (runs recovered at this start) */
};

struct tui {
    struct tui_opts o;
    struct tui_keymap keys;
    struct tui_theme theme;
    char **theme_names;
    size_t nthemes;
    struct tui_view views[TUI_S_COUNT];
    enum tui_screen cur, back; /* back: where the pager returns to */
    bool quit, dirty, resized;
    bool wrap;               /* long lines wrap (w toggles; on in the demo) */
    int64_t last_draw_ms;
    int64_t key_ms;          /* when the key being handled was read */
    char message[512];       /* a one-shot message in the status bar */
    char copied[TUI_COPY_MAX + 1]; /* the last text y copied */
    struct {                       /* the tabs as last drawn, for a click */
        int x0, x1;
        enum tui_screen s;
    } tab[TUI_S_COUNT];
    size_t ntabs;
    int64_t message_ms;
    /* the input line */
    bool input_active, input_confirm;
    char input_label[256], input_buf[1024];
    size_t input_len;
    tui_input_done input_done;
    tui_input_done input_changed; /* filter as you type: called after each edit */
    void *input_ctx;
    /* the permission prompt (modal) */
    struct tui_prompt_state *prompt;
    struct tui_palette *palette; /* palette.c: the : line, while it is open */
    /* a run in progress */
    bool running;
    struct tui_demo *demo;   /* skillgate demo */
    struct tui_attach *attach; /* skillgate tui --attach */
    /* headless tests */
    struct tui_script *script;
    int tty_fd;
    struct sg_config *cfg;
};

/* app.c */
int tui_main(const struct tui_opts *o);
/* Do what a on the current screen does (a key, or the palette, asked for
 * it); false: nothing here does it. */
bool tui_act(struct tui *t, enum tui_action a);
void tui_switch(struct tui *t, enum tui_screen s);
void tui_message(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tui_input(struct tui *t, const char *label, const char *initial, tui_input_done done,
               void *ctx);
/* The same, with changed(text) called after every edit (filter as you
 * type); done(NULL) on Esc. */
void tui_input_live(struct tui *t, const char *label, const char *initial,
                    tui_input_done changed, tui_input_done done, void *ctx);
/* A y/N question: one key answers it (y yes, anything else no). */
void tui_confirm(struct tui *t, const char *question, tui_input_done done, void *ctx);
/* Show text in the pager (takes a copy); back returns to the current screen. */
void tui_pager_show(struct tui *t, const char *title, const char *text);
void tui_draw_now(struct tui *t);
void tui_mark_dirty(struct tui *t);
/* Read pending keys and act on them (used by the run's poll hook too). */
void tui_handle_input(struct tui *t);
/* The mouse (never for a prompt: its answer stays a deliberate key). */
enum tui_mouse { TUI_M_CLICK, TUI_M_WHEEL_UP, TUI_M_WHEEL_DOWN };
void tui_mouse(struct tui *t, enum tui_mouse m, int y, int x);
int64_t tui_now_ms(void);

/* messages.c: every status-line message is kept (tui_message formats
 * through vkeep: the whole text to the log, what fits to the line) */
void tui_messages_vkeep(struct tui *t, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The log in the pager, oldest first, each message whole (L, :messages). */
void tui_messages_show(struct tui *t);
/* s with the invoking user's home said as ~ (a path as a person types
 * it). Caller frees. */
char *tui_home_short(const char *s);

/* draw.c: every string from a skill is drawn through these */
/* Draw s (any bytes) at y,x clipped to width cells, sanitized; returns cells used. */
int tui_put(WINDOW *w, int y, int x, int width, const char *s, size_t len, attr_t attr);
int tui_putf(WINDOW *w, int y, int x, int width, attr_t attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Same, skipping the first skip cells (horizontal scroll). */
int tui_put_scrolled(WINDOW *w, int y, int x, int width, int skip, const char *s, size_t len,
                     attr_t attr, attr_t escaped_attr);
/* s in rows of width cells, broken at spaces (a word wider than the line
 * at its edge), at most max_rows (the last one cut, marked ›); returns the
 * rows used. With w NULL, only counts them. */
int tui_put_wrapped(WINDOW *w, int y, int x, int width, int max_rows, const char *s, size_t len,
                    attr_t attr);
/* s in rows of width cells, broken between characters (an escape is
 * never split, a wide character never cut): the rows put together are the
 * text. At most max_rows (the last one cut, marked ›); returns the rows
 * used. With w NULL, only counts them. */
int tui_put_wrapped_chars(WINDOW *w, int y, int x, int width, int max_rows, const char *s,
                          size_t len, attr_t attr, attr_t escaped_attr);
/* s in rows of width cells, broken at spaces (text a person reads: the
 * pager, w): a word wider than the line starts a row and is broken
 * between characters as tui_put_wrapped_chars breaks it; the spaces at a
 * break are not drawn. At most max_rows (the last one cut, marked ›);
 * returns the rows used. With w NULL, only counts them. Each row costs
 * at most a row's worth of measuring per word. */
int tui_put_wrapped_words(WINDOW *w, int y, int x, int width, int max_rows, const char *s,
                          size_t len, attr_t attr, attr_t escaped_attr);
/* s from y,x to the column right, then on as many rows as it takes (at
 * most max_rows) from the column indent, broken between characters: a
 * path that goes on where a line ends, never cut short of max_rows (with
 * fewer than 8 cells left at x, it starts on the next row). Returns the
 * rows used. */
int tui_put_flow(WINDOW *w, int y, int x, int right, int indent, int max_rows, const char *s,
                 size_t len, attr_t attr, attr_t escaped_attr);
/* y: text to the terminal's clipboard through OSC 52 (over ssh, in
 * tmux), sanitized first; said on the message line as "copied the WHAT";
 * the last copy is kept in t->copied (headless tests read it there). */
void tui_copy(struct tui *t, const char *what, const char *text);
/* Display width of s after sanitizing. */
int tui_width(const char *s, size_t len);
void tui_fill(WINDOW *w, int y, int x, int width, attr_t attr);
void tui_hline(WINDOW *w, int y, int x, int n, attr_t attr);
void tui_vline(WINDOW *w, int y, int x, int n, attr_t attr);
void tui_box(WINDOW *w, int y, int x, int h, int wd, attr_t attr, const char *title);
attr_t tui_attr(const struct tui *t, enum tui_role r);
attr_t tui_severity_attr(const struct tui *t, int severity);
/* Case-insensitive search of needle in the sanitized form of s. */
bool tui_matches(const char *s, size_t len, const char *needle);

/* keys.c: a key that did nothing says why: bound to nothing ("unknown
 * key"), its action not for this screen, or for the prompt (none open).
 * how names the key or the palette's command ("] " or ":sort"). */
void tui_key_unhandled(struct tui *t, int key);
void tui_action_unhandled(struct tui *t, const char *how, enum tui_action a);

/* palette.c: the command palette, ":" (k9s, lazygit): the input line with
 * every action that matches what is typed listed above it, with its keys
 * and help; Tab completes, Up/Down choose, Enter runs, Esc closes. */
struct tui_palette;
void tui_palette_open(struct tui *t);
/* Tab, BackTab, Up, Down while it is open (the line takes the rest);
 * false: not the palette's. */
bool tui_palette_key(struct tui *t, int key);
void tui_palette_draw(struct tui *t);
void tui_palette_free(struct tui *t);

/* prompt.c: the modal */
void tui_prompt_init(struct tui *t);
void tui_prompt_free(struct tui *t);
bool tui_prompt_active(const struct tui *t);
void tui_prompt_draw(struct tui *t);
/* Marks the screen dirty when the prompt's arming or countdown changed. */
void tui_prompt_tick(struct tui *t);
/* A key while the prompt is open (the raw key: Enter must never allow). */
void tui_prompt_key(struct tui *t, int key);
/* ms until the prompt needs a redraw (countdown), -1 none. */
int tui_prompt_timeout(const struct tui *t);
struct sg_perm_prompt;
void tui_prompt_show(void *ctx, const struct sg_perm_prompt *pr); /* sg_perm_show_fn */
/* The same for a prompt of an attached run: answer() gets the decision;
 * rows are the command's rows as the run read them (lineprompt.h; taken,
 * left empty). */
struct sg_prompt_rows;
void tui_prompt_show_remote(struct tui *t, const struct sg_perm_prompt *pr,
                            struct sg_prompt_rows *rows,
                            void (*answer)(void *ctx, enum sg_decision d), void *ctx);

/* view_run.c: start a run of the skill at path (input JSON) from any screen;
 * returns when it is over (the session's loop polls the terminal meanwhile). */
struct sg_skill;
struct sg_resolve;
struct tui_run_spec {
    const char *path, *input;
    int pmode;                       /* an sg_perm_mode; PROMPT unless set */
    bool pmode_set;
    char *const *env;                /* the environment to filter; NULL: ours */
    const char *const *resolve;      /* NAME:PORT:ADDR[:PORT2], as --resolve */
    size_t nresolve;
    const char *script;              /* run this script of the skill (--script) */
    char *const *args;
    size_t nargs;
    const char *work_dir;            /* --cwd */
    const char *const *write;        /* folders writable for this run (--write) */
    size_t nwrite;
    bool record;                     /* a recording: declared beside observed at the end */
    void (*on_end)(void *ctx);       /* called once the run ended, or did not start */
    void *end_ctx;
};
/* Start a run: it goes on in the TUI's loop (tui_run_sources) and the call
 * returns at once. */
void tui_run(struct tui *t, const struct tui_run_spec *spec);
void tui_run_start(struct tui *t, const char *skill_path, const char *input);
/* Run argv outside skillgate (the demo's unenforced world), its output shown
 * like a skill's; lines starting with "[attacker] " become red events. */
void tui_run_unsandboxed(struct tui *t, const char *title, char *const argv[]);
/* The local run's poll sources, for the TUI's loop (none when idle). */
size_t tui_run_sources(struct tui *t, struct sg_loop_source *out, size_t max);
/* skillgate got signo (SIGTERM, SIGHUP): a live run ends "interrupted". */
void tui_run_interrupt(struct tui *t, int signo);
/* A stop the person confirmed, carried out now rather than at the turn's
 * end (the prompt's ^C/x kill the sandbox before the request on screen is
 * denied, so the skill runs no further). */
void tui_run_stop_now(struct tui *t);

/* view_run.c: an agent's run, as the MCP server streams it */
void tui_run_remote_begin(struct tui *t, const char *skill);
void tui_run_remote_event(struct tui *t, const char *kind, int sev, const char *msg,
                          int64_t wall_ms, json_t *data);
void tui_run_remote_end(struct tui *t, const char *outcome, const char *trace);

/* attach.c: skillgate tui --attach listens for the MCP server's runs */
struct tui_attach;
int tui_attach_open(struct tui *t);
void tui_attach_close(struct tui *t);
/* The listener and the agents' connections, as a source of the TUI's loop. */
struct sg_loop_source tui_attach_source(struct tui *t);

/* demo.c: the narrated walkthrough (skillgate demo) */
struct tui_demo;
/* Builds the demo's throwaway world and moves this process into it (HOME
 * and the XDG folders): call it before anything reads the config. */
int tui_demo_open(struct tui *t, bool auto_mode, int pace_s, const char *keep);
void tui_demo_free(struct tui *t);
/* Draw the narration into rows at the bottom of the body; returns rows used. */
int tui_demo_draw(struct tui *t, int bottom_row);
/* A key for the demo (next step, quit); true when it took it. */
bool tui_demo_key(struct tui *t, int key);
/* Called from every loop: --auto pacing. */
void tui_demo_tick(struct tui *t);
int tui_demo_timeout(const struct tui *t);
/* The pane the demo's step is about (0 output, 1 events, -1 none): the
 * step's run starts with it focused and shown from its first line; on a
 * narrow screen the Run screen shows the focused pane alone, at full
 * height. */
int tui_demo_pane(const struct tui *t);
/* Before the first run: the skill as a marketplace lists it. */
void tui_demo_intro(struct tui *t, WINDOW *w, int rows, int cols);
/* view_traces.c: a trace file in the pager; a copy of it elsewhere (0,
 * -EEXIST when dest exists and overwrite is false, else -errno); e's
 * question (where to, in your home by default; overwrite?) and the copy */
void tui_trace_open(struct tui *t, const char *path);
int tui_trace_export(const char *path, const char *dest, bool overwrite);
void tui_trace_export_ask(struct tui *t, const char *path);
/* p: the run's HTML report to share (records/report.h), at a path asked for. */
int tui_trace_report(const char *path, const char *dest, bool overwrite);
void tui_trace_report_ask(struct tui *t, const char *path);
/* The Traces screen's reader of traces the index lacks, for the loop;
 * busy while it reads. */
struct sg_loop_source tui_traces_source(struct tui *t);
bool tui_traces_busy(struct tui *t);
/* view_pager.c: the pager shows this trace (e exports it); from this line */
void tui_pager_set_trace(struct tui *t, const char *path);
void tui_pager_goto(struct tui *t, size_t line);
/* A line of the trace shown that is a refusal or a question (] [ } { go
 * from one to the next) or where its timeline is (T): set after show. */
enum tui_mark { TUI_MARK_REFUSED, TUI_MARK_ASKED, TUI_MARK_TIMELINE };
void tui_pager_mark(struct tui *t, size_t line, enum tui_mark kind);
/* The text shown wraps whatever w says (until the next text). */
void tui_pager_wrap(struct tui *t);

/* view_skills.c: the skill under the cursor (NULL: none) */
const struct sg_skill *tui_skills_selected(struct tui *t);

/* script.c: headless runs (tests), tig's approach */
int tui_script_open(struct tui *t, const char *path);
void tui_script_free(struct tui *t);
/* Feed the next scripted step if the UI is ready for it; returns true
 * while the script has more to do. */
bool tui_script_step(struct tui *t);
int tui_script_timeout(const struct tui *t);
/* The exit status of a script: 0, or 1 when a wait timed out or a step failed. */
int tui_script_result(const struct tui *t);
/* A key, as if typed (the script's keys enter here). */
void tui_feed_key(struct tui *t, int key);
/* Write what is on the screen as text. */
int tui_screen_dump(const char *path);

#endif
