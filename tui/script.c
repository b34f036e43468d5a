/* Headless scripted runs for tests (tig's approach): keys come from a
 * file instead of the terminal, the screen is drawn into curses' own
 * buffers at a fixed size, and "dump FILE" writes it out as text to be
 * compared with an expected screen. Commands, one per line:
 *   key NAME...      keys by their names in the key table (a, Enter, Down, ^L, F1)
 *   type TEXT        each character of TEXT as a key
 *   dump FILE        the screen as text
 *   wait-text TEXT   until TEXT is on the screen (30 s at most)
 *   wait-prompt      until a permission prompt is open (30 s)
 *   wait-idle        until no skill runs (60 s)
 *   sleep MS
 *   resize COLSxROWS
 *   click X Y        a mouse click at column X, row Y (from 0,0)
 *   wheel up|down X Y  the mouse wheel there
 * A wait that times out makes the run exit 1 with a message on stderr. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui.h"
#include "util.h"

#define SCRIPT_MAX (256 * 1024)

enum wait_kind { W_NONE, W_TEXT, W_PROMPT, W_IDLE, W_SLEEP };

struct tui_script {
    char *buf, *path;
    char **line;
    size_t n, next;
    enum wait_kind wait;
    char wait_text[256];
    int64_t deadline;
    int failed;
};

int tui_script_open(struct tui *t, const char *path)
{
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "skillgate: %s: %s\n", path, strerror(errno));
        return -errno;
    }
    struct tui_script *s = sg_xcalloc(1, sizeof *s);
    s->buf = sg_xmalloc(SCRIPT_MAX + 1);
    ssize_t n = read(fd, s->buf, SCRIPT_MAX + 1);
    if (n < 0 || n > SCRIPT_MAX) {
        fprintf(stderr, "skillgate: %s: unreadable or over %d bytes\n", path, SCRIPT_MAX);
        free(s->buf);
        free(s);
        return -EINVAL;
    }
    s->buf[n] = '\0';
    s->path = sg_xstrdup(path);
    size_t cap = 0;
    char *save = NULL;
    for (char *l = strtok_r(s->buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        while (*l == ' ')
            l++;
        if (!*l || *l == '#')
            continue;
        sg_grow(&s->line, &cap, s->n + 1, sizeof *s->line);
        s->line[s->n++] = l;
    }
    t->script = s;
    return 0;
}

void tui_script_free(struct tui *t)
{
    struct tui_script *s = t->script;
    if (!s)
        return;
    free(s->buf), free(s->line), free(s->path);
    free(s);
    t->script = NULL;
}

int tui_script_result(const struct tui *t)
{
    return t->script && t->script->failed ? 1 : 0;
}

static void screen_text(struct sg_buf *b)
{
    for (int y = 0; y < LINES; y++) {
        size_t start = b->len;
        for (int x = 0; x < COLS; x++) {
            cchar_t cc;
            wchar_t wc[CCHARW_MAX + 1] = {0};
            attr_t a = 0;
            short pair = 0;
            if (mvwin_wch(curscr, y, x, &cc) == ERR || getcchar(&cc, wc, &a, &pair, NULL) == ERR ||
                !wc[0])
                wc[0] = L' ';
            if (a & A_ALTCHARSET) { /* line drawing, as the terminal would show it */
                static const char acs[] = "qxlkmjtuvwn", *uni[] = {"─", "│", "┌", "┐", "└", "┘",
                                                                  "├", "┤", "┴", "┬", "┼"};
                const char *hit = wc[0] < 128 ? strchr(acs, (int)wc[0]) : NULL;
                if (hit && *hit) {
                    sg_buf_append(b, uni[hit - acs], strlen(uni[hit - acs]));
                    continue;
                }
            }
            char u[MB_LEN_MAX * (CCHARW_MAX + 1)];
            mbstate_t st = {0};
            const wchar_t *p = wc;
            size_t k = wcsrtombs(u, &p, sizeof u, &st);
            sg_buf_append(b, k == (size_t)-1 ? "?" : u, k == (size_t)-1 ? 1 : k);
            int cw = wcwidth(wc[0]);
            if (cw == 2)
                x++; /* the cell after a wide character is its second half */
        }
        while (b->len > start && b->data[b->len - 1] == ' ')
            b->len--; /* trailing blanks are not content */
        sg_buf_append(b, "\n", 1);
    }
}

int tui_screen_dump(const char *path)
{
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    screen_text(&b);
    cleanup_free char *text = sg_buf_steal(&b);
    cleanup_file FILE *f = fopen(path, "we");
    if (!f)
        return -errno;
    fputs(text, f);
    return fflush(f) == 0 ? 0 : -errno;
}

static bool screen_has(const char *needle)
{
    struct sg_buf b;
    sg_buf_init(&b, 1u << 20);
    screen_text(&b);
    bool has = b.data && strstr(b.data, needle);
    sg_buf_free(&b);
    return has;
}

static void fail(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct tui *t, const char *fmt, ...)
{
    struct tui_script *s = t->script;
    fprintf(stderr, "skillgate: script %s, step %zu (%s): ", s->path, s->next,
            s->line[s->next - 1]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    s->failed = 1;
    t->quit = true;
}

static bool waiting(struct tui *t)
{
    struct tui_script *s = t->script;
    if (s->wait == W_NONE)
        return false;
    if (t->dirty)
        tui_draw_now(t);
    bool done = s->wait == W_TEXT     ? screen_has(s->wait_text)
                : s->wait == W_PROMPT ? tui_prompt_active(t)
                : s->wait == W_IDLE   ? !t->running
                                      : false;
    if (done) {
        s->wait = W_NONE;
        return false;
    }
    if (tui_now_ms() >= s->deadline) {
        if (s->wait == W_SLEEP) {
            s->wait = W_NONE;
            return false;
        }
        s->wait = W_NONE;
        fail(t, "timed out waiting");
        return true;
    }
    return true;
}

static void set_wait(struct tui_script *s, enum wait_kind k, int ms)
{
    s->wait = k;
    s->deadline = tui_now_ms() + ms;
}

bool tui_script_step(struct tui *t)
{
    struct tui_script *s = t->script;
    if (!s || s->failed)
        return false;
    if (waiting(t))
        return !s->failed;
    if (tui_traces_busy(t))
        return true; /* each step acts on a screen whose traces are all read */
    if (s->next >= s->n)
        return t->running; /* the end of the script: let a run finish */
    if (t->dirty)
        tui_draw_now(t);
    char *l = s->line[s->next++];
    char *arg = strchr(l, ' ');
    size_t cl = arg ? (size_t)(arg - l) : strlen(l);
    arg = arg ? arg + 1 : (char *)"";
#define IS(c) (cl == strlen(c) && !strncmp(l, c, cl))
    if (IS("key")) {
        cleanup_free char *ks = sg_xstrdup(arg);
        char *save = NULL;
        for (char *k = strtok_r(ks, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
            int key = !strcmp(k, "Resize") ? (int)(TUI_KEY_FN | KEY_RESIZE) : tui_key_parse(k);
            if (key < 0) {
                fail(t, "unknown key %s", k);
                return false;
            }
            tui_feed_key(t, key);
        }
    } else if (IS("type")) {
        const unsigned char *p = (const unsigned char *)arg;
        size_t len = strlen(arg);
        while (len) {
            unsigned cp;
            size_t k = sg_utf8_decode(p, len, &cp);
            if (!k)
                break;
            tui_feed_key(t, (int)cp);
            p += k, len -= k;
        }
    } else if (IS("dump")) {
        tui_draw_now(t);
        if (tui_screen_dump(arg) < 0)
            fail(t, "cannot write %s", arg);
    } else if (IS("wait-text")) {
        snprintf(s->wait_text, sizeof s->wait_text, "%s", arg);
        set_wait(s, W_TEXT, 30000);
    } else if (IS("wait-prompt")) {
        set_wait(s, W_PROMPT, 30000);
    } else if (IS("wait-idle")) {
        set_wait(s, W_IDLE, 60000);
    } else if (IS("sleep")) {
        long long ms;
        if (sg_parse_ll(arg, 0, 60000, &ms) < 0)
            fail(t, "sleep takes 0..60000 ms, not %s", arg);
        set_wait(s, W_SLEEP, (int)ms);
    } else if (IS("click") || IS("wheel")) {
        char dir[8] = "";
        int x, y;
        bool ok = IS("click") ? sscanf(arg, "%d %d", &x, &y) == 2
                              : sscanf(arg, "%7s %d %d", dir, &x, &y) == 3 &&
                                    (!strcmp(dir, "up") || !strcmp(dir, "down"));
        if (!ok)
            fail(t, "click takes X Y, wheel up|down X Y (cells from 0,0): not %s", arg);
        else
            tui_mouse(t, IS("click") ? TUI_M_CLICK : dir[0] == 'u' ? TUI_M_WHEEL_UP
                                                                  : TUI_M_WHEEL_DOWN, y, x);
    } else if (IS("resize")) {
        int c, r;
        if (sscanf(arg, "%dx%d", &c, &r) != 2 || c < 10 || r < 5 || c > 1000 || r > 1000) {
            fail(t, "resize takes COLSxROWS, not %s", arg);
        } else {
            resizeterm(r, c);
            t->resized = t->dirty = true;
        }
    } else {
        fail(t, "unknown command %s", l);
    }
#undef IS
    return !s->failed;
}

int tui_script_timeout(const struct tui *t)
{
    const struct tui_script *s = t->script;
    if (!s)
        return -1;
    return s->wait == W_NONE ? 0 : 10;
}
