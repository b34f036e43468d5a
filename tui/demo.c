/* skillgate demo: a narrated walkthrough for an audience, safe anywhere
 * offline. It builds a throwaway workspace (copies of the example skills, a
 * fake home with fake credentials, a throwaway CA) and steps through:
 *   1. malicious-weather WITHOUT skillgate, inside fresh user, network and
 *      mount namespaces made with unshare(1), where "the internet" is
 *      demo/world.py's stand-in on loopback: the audience sees what it steals;
 *   2. the same skill under skillgate: every vector blocked, classified live;
 *   3. the honest weather skill working against a stand-in API on loopback;
 *   4. a risky request (an undeclared rm) the presenter approves or denies.
 * Space steps; --auto steps by itself every --pace seconds (and denies the
 * risky request) for recordings. Nothing here reaches a real address: the
 * unenforced run has only loopback, and the sandboxed ones go through the
 * broker's proxy to 127.0.0.1 (--resolve). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perm.h"
#include "tui.h"
#include "util.h"

#ifndef SG_DEMO_DIRS
#define SG_DEMO_DIRS "demo"
#endif
#ifndef SG_EXAMPLES_DIRS
#define SG_EXAMPLES_DIRS "examples/skills"
#endif

enum action { A_NONE, A_UNENFORCED, A_ENFORCED, A_LEGIT, A_RISKY };

static const struct step {
    const char *title, *text;
    enum action act;
} steps[] = {
    {"skillgate demo",
     "malicious-weather looks like a weather lookup from a skills marketplace.\n"
     "First it runs the way agents run skills today: no sandbox at all.\n"
     "Everything is a throwaway world: fake credentials, and \"the internet\" is a stand-in "
     "on loopback.",
     A_NONE},
    {"1. Without skillgate",
     "malicious-weather runs with your (fake) environment and home folder.\n"
     "In the events pane, every red line is something the attacker's stand-in received.",
     A_UNENFORCED},
    {"2. The same skill under skillgate",
     "Its own namespaces, Landlock, seccomp, nftables, a filtered environment, decoy credentials.\n"
     "Every way out is blocked and classified live; the trace names the MITRE techniques.\n"
     "\"stash: SUCCEEDED\" means it wrote into the sandbox's throwaway home: gone with the run.",
     A_ENFORCED},
    {"3. An honest skill still works",
     "weather declares one API: api.weather.test:443 (a stand-in on loopback here).\n"
     "skillgate lets exactly that through its proxy, and nothing else.",
     A_LEGIT},
    {"4. A risky request: you decide",
     "tidy-cache runs rm -rf on a folder: a program its manifest does not declare.\n"
     "skillgate stops the call and asks: a allows it once, d denies it.",
     A_RISKY},
    {"That was skillgate",
     "Every run left a trace (listed here, screen 3) and a hash-chained audit record, in the "
     "demo's own throwaway state (--keep DIR keeps it).\n"
     "q quits; skillgate tui DIR browses your skills.",
     A_NONE},
};
#define NSTEPS (sizeof steps / sizeof steps[0])

enum state { ST_READY, ST_DONE };

struct tui_demo {
    size_t step;
    enum state st;
    bool auto_mode;
    int pace_ms;
    int64_t since;
    int64_t ran_until; /* --auto: the pace counts from the end of the step's run */
    char *ws, *world, *examples;
    const char *keep; /* --keep DIR: the demo's records are copied there at the end */
    char *env[16];
};

static char *find_in(const char *dirs, const char *name)
{
    cleanup_free char *copy = sg_xstrdup(dirs);
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *p = sg_xasprintf("%s/%s", d, name);
        if (access(p, R_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* Copy a skill folder: regular files and folders only, never a symlink. */
static int copy_tree(const char *from, const char *to)
{
    if (mkdir(to, 0755) < 0 && errno != EEXIST)
        return -errno;
    DIR *d = opendir(from);
    if (!d)
        return -errno;
    int r = 0;
    for (struct dirent *e; !r && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        cleanup_free char *src = sg_xasprintf("%s/%s", from, e->d_name);
        cleanup_free char *dst = sg_xasprintf("%s/%s", to, e->d_name);
        struct stat st;
        if (lstat(src, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            r = copy_tree(src, dst);
        } else if (S_ISREG(st.st_mode)) {
            cleanup_fd int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            cleanup_fd int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 0755);
            char buf[65536];
            ssize_t n;
            if (in < 0 || out < 0)
                r = -errno;
            while (!r && (n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t)n) != n)
                    r = -EIO;
        }
    }
    closedir(d);
    return r;
}

static void remove_tree(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        for (struct dirent *e; d && (e = readdir(d));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                remove_tree(dirfd(d), e->d_name);
        if (d)
            closedir(d);
        else
            close(fd);
        unlinkat(parent, name, AT_REMOVEDIR);
    } else {
        unlinkat(parent, name, 0);
    }
}

static int put(const char *ws, const char *rel, const char *text, mode_t mode)
{
    cleanup_free char *p = sg_xasprintf("%s/%s", ws, rel);
    sg_mkdir_parent(p, 0755);
    cleanup_fd int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    size_t n = strlen(text);
    return write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
}

/* Run a command and wait (bounded by the command itself). */
static int run_wait(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        dup2(nul, 0), dup2(nul, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const char tidy_md[] =
    "---\nname: tidy-cache\n"
    "description: Clear this skill's cache folder and say how much space was freed.\n"
    "allowed-tools: Bash(ls:*) Bash(du:*) Read\n---\n\n# tidy-cache\n\n"
    "Lists the cache, then removes it. (A demo of a request the manifest does not declare: "
    "rm is not among its Bash scopes.)\n";
static const char tidy_sh[] =
    "#!/usr/bin/env bash\n"
    "# only ls and du are declared; rm is the request a person decides on\n"
    "echo 'cached thumbnails' > \"$HOME/thumbnails.cache\"\n"
    "ls -la \"$HOME/thumbnails.cache\"\n"
    "if rm -rf \"$HOME/thumbnails.cache\"; then echo \"removed the cache\"; "
    "else echo \"rm was refused: the cache stays\"; fi\n";

static int build_workspace(struct tui_demo *dm)
{
    char tmpl[] = "/var/tmp/skillgate-demo-XXXXXX"; /* not /tmp: the unenforced run hides it */
    if (!mkdtemp(tmpl))
        return -errno;
    chmod(tmpl, 0755); /* as root the skills run as nobody: they must read their copies */
    dm->ws = sg_xstrdup(tmpl);
    int r = 0;
    cleanup_free char *mw = sg_xasprintf("%s/malicious-weather", dm->examples);
    cleanup_free char *wx = sg_xasprintf("%s/weather", dm->examples);
    const char *copies[][2] = {{mw, "before/malicious-weather"},
                               {mw, "skills/malicious-weather"},
                               {wx, "skills/weather"}};
    for (size_t i = 0; i < SG_ARRAY_LEN(copies) && !r; i++) {
        cleanup_free char *to = sg_xasprintf("%s/%s", dm->ws, copies[i][1]);
        sg_mkdir_parent(to, 0755);
        r = copy_tree(copies[i][0], to);
    }
    if (r)
        return r;
    put(dm->ws, "home/.ssh/id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nDEMO-FAKE-KEY-not-a-real-key\n"
        "-----END OPENSSH PRIVATE KEY-----\n", 0600);
    put(dm->ws, "home/.aws/credentials",
        "[default]\naws_access_key_id = AKIADEMOFAKE0000KEY\n"
        "aws_secret_access_key = demo/fake/secret/wJalrXUtnFEMI\n", 0600);
    put(dm->ws, "home/.netrc", "machine git.example.test login demo password demo-fake-pass\n",
        0600);
    /* the demo's own world: a state (traces, audit log), a config (no
     * grants, no rebound keys, no theme of yours) and a home, so that
     * nothing of yours changes what the audience sees, and nothing of the
     * demo lands among your records */
    static const char *const own[] = {"state", "config", "cache", "data"};
    for (size_t i = 0; i < SG_ARRAY_LEN(own); i++) {
        cleanup_free char *d = sg_xasprintf("%s/%s", dm->ws, own[i]);
        if (mkdir(d, 0700) < 0)
            return -errno;
    }
    put(dm->ws, "skills/tidy-cache/SKILL.md", tidy_md, 0644);
    put(dm->ws, "skills/tidy-cache/main.sh", tidy_sh, 0755);
    /* the weather copy may read the throwaway CA (its code is unchanged) */
    cleanup_free char *y = sg_xasprintf("%s/skills/weather/skillsandbox.yaml", dm->ws);
    cleanup_file FILE *f = fopen(y, "re");
    char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    struct sg_buf b;
    sg_buf_init(&b, 16384);
    for (char *l = buf, *nl; l && *l; l = nl) {
        nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl++ - l) : strlen(l);
        if (len >= 8 && strstr(l, "read: []") && strstr(l, "read: []") < l + len)
            sg_buf_printf(&b, "    read: [%s/ca]\n", dm->ws);
        else if (strstr(l, "allow: [WEATHER_API_KEY]") && strstr(l, "allow: [WEATHER_API_KEY]") < l + len)
            sg_buf_printf(&b, "    allow: [WEATHER_API_KEY, SSL_CERT_FILE]\n");
        else
            sg_buf_printf(&b, "%.*s\n", (int)len, l);
    }
    cleanup_free char *text = sg_buf_steal(&b);
    put(dm->ws, "skills/weather/skillsandbox.yaml", text, 0644);
    cleanup_free char *ca = sg_xasprintf("%s/ca", dm->ws);
    char *argv[] = {"python3", dm->world, "ca", ca, NULL};
    if (run_wait(argv) != 0)
        return -EIO;
    return 0;
}

int tui_demo_open(struct tui *t, bool auto_mode, int pace_s, const char *keep)
{
    struct tui_demo *dm = sg_xcalloc(1, sizeof *dm);
    t->demo = dm;
    dm->keep = keep;
    dm->auto_mode = auto_mode;
    dm->pace_ms = pace_s * 1000;
    dm->world = find_in(SG_DEMO_DIRS, "world.py");
    cleanup_free char *mw = find_in(SG_EXAMPLES_DIRS, "malicious-weather");
    if (mw) {
        dm->examples = sg_xstrdup(mw);
        *strrchr(dm->examples, '/') = '\0';
    }
    if (!dm->world || !dm->examples) {
        fprintf(stderr, "skillgate: the demo's files are missing (looked in %s and %s)\n",
                SG_DEMO_DIRS, SG_EXAMPLES_DIRS);
        return -ENOENT;
    }
    fprintf(stderr, "skillgate: preparing the demo's throwaway world...\n");
    int r = build_workspace(dm);
    if (r < 0) {
        fprintf(stderr, "skillgate: cannot prepare the demo in %s: %s (python3 and openssl are "
                        "needed)\n", dm->ws ? dm->ws : "/var/tmp", strerror(-r));
        return r;
    }
    static const char *const xdg[][2] = {{"XDG_STATE_HOME", "state"},
                                         {"XDG_CONFIG_HOME", "config"},
                                         {"XDG_CACHE_HOME", "cache"},
                                         {"XDG_DATA_HOME", "data"},
                                         {"HOME", "home"}};
    for (size_t i = 0; i < SG_ARRAY_LEN(xdg); i++) {
        cleanup_free char *d = sg_xasprintf("%s/%s", dm->ws, xdg[i][1]);
        setenv(xdg[i][0], d, 1);
    }
    const char *path = secure_getenv("PATH");
    size_t k = 0;
    dm->env[k++] = sg_xasprintf("PATH=%s", path ? path : "/usr/bin:/bin");
    dm->env[k++] = sg_xasprintf("HOME=%s/home", dm->ws);
    dm->env[k++] = sg_xstrdup("LANG=C.UTF-8");
    dm->env[k++] = sg_xstrdup("WEATHER_API_KEY=demo-weather-key");
    dm->env[k++] = sg_xstrdup("AWS_ACCESS_KEY_ID=AKIADEMOFAKE0000KEY");
    dm->env[k++] = sg_xstrdup("AWS_SECRET_ACCESS_KEY=demo/fake/secret/wJalrXUtnFEMI");
    dm->env[k++] = sg_xstrdup("GITHUB_TOKEN=ghp_DEMOfakeTOKENnotREAL000000000000");
    dm->env[k++] = sg_xasprintf("SSL_CERT_FILE=%s/ca/ca.pem", dm->ws);
    dm->env[k] = NULL;
    dm->since = tui_now_ms();
    return 0;
}

void tui_demo_free(struct tui *t)
{
    struct tui_demo *dm = t->demo;
    if (!dm)
        return;
    if (dm->ws && dm->keep) {
        cleanup_free char *state = sg_xasprintf("%s/state", dm->ws);
        int r = copy_tree(state, dm->keep);
        if (r < 0)
            fprintf(stderr, "skillgate: the demo's records could not be kept in %s: %s\n",
                    dm->keep, strerror(-r));
        else
            fprintf(stderr, "skillgate: the demo's records are in %s (browse them with "
                            "XDG_STATE_HOME=%s skillgate tui)\n", dm->keep, dm->keep);
    }
    if (dm->ws && !strncmp(dm->ws, "/var/tmp/skillgate-demo-", 24))
        remove_tree(AT_FDCWD, dm->ws);
    for (size_t i = 0; dm->env[i]; i++)
        free(dm->env[i]);
    free(dm->ws), free(dm->world), free(dm->examples);
    free(dm);
    t->demo = NULL;
}

/* The stand-in weather API serves for the length of the run. */
struct standin {
    pid_t pid;
    int in; /* it serves until its stdin closes */
};

static void standin_stop(void *ctx)
{
    struct standin *s = ctx;
    close(s->in);
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
    }
    free(s);
}

static void legit(struct tui *t, struct tui_demo *dm)
{
    cleanup_free char *ca = sg_xasprintf("%s/ca", dm->ws);
    cleanup_free char *pf = sg_xasprintf("%s/api.port", dm->ws);
    int in[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        dup2(in[0], 0), dup2(nul, 1), dup2(nul, 2);
        char *argv[] = {"python3", dm->world, "api", ca, pf, NULL};
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    struct standin *si = sg_xmalloc(sizeof *si);
    *si = (struct standin){.pid = pid, .in = in[1]};
    char port[16] = "";
    for (int i = 0; i < 200 && pid > 0; i++) { /* 10 s at most */
        cleanup_file FILE *f = fopen(pf, "re");
        if (f && fgets(port, sizeof port, f))
            break;
        usleep(50000);
    }
    long long p;
    if (pid > 0 && sg_parse_ll(port, 1, 65535, &p) == 0) {
        char rsv[64];
        snprintf(rsv, sizeof rsv, "api.weather.test:443:127.0.0.1:%lld", p);
        const char *rs = rsv;
        cleanup_free char *skill = sg_xasprintf("%s/skills/weather", dm->ws);
        struct tui_run_spec s = {.path = skill, .input = "{\"city\": \"Oslo\"}",
                                 .pmode = SG_PERM_DENY_ALL, .pmode_set = true, .env = dm->env,
                                 .resolve = &rs, .nresolve = 1, .on_end = standin_stop,
                                 .end_ctx = si};
        tui_run(t, &s);
    } else {
        tui_message(t, "the stand-in weather API did not start");
        standin_stop(si);
    }
}

static void perform(struct tui *t, struct tui_demo *dm)
{
    const struct step *s = &steps[dm->step];
    switch (s->act) {
    case A_NONE: break;
    case A_UNENFORCED: {
        cleanup_free char *ca = sg_xasprintf("%s/ca", dm->ws);
        cleanup_free char *sk = sg_xasprintf("%s/before/malicious-weather", dm->ws);
        cleanup_free char *home = sg_xasprintf("%s/home", dm->ws);
        char *argv[] = {"unshare", "--user", "--map-root-user", "--net", "--mount", "--fork",
                        "python3", dm->world, "unenforced", ca, sk, home, NULL};
        tui_run_unsandboxed(t, "malicious-weather, no sandbox", argv);
        break;
    }
    case A_ENFORCED: {
        cleanup_free char *sk = sg_xasprintf("%s/skills/malicious-weather", dm->ws);
        struct tui_run_spec sp = {.path = sk, .input = "{\"city\": \"Oslo\"}",
                                  .pmode = SG_PERM_DENY_ALL, .pmode_set = true, .env = dm->env};
        tui_run(t, &sp);
        break;
    }
    case A_LEGIT: legit(t, dm); break;
    case A_RISKY: {
        cleanup_free char *sk = sg_xasprintf("%s/skills/tidy-cache", dm->ws);
        struct tui_run_spec sp = {.path = sk, .input = "{}", .env = dm->env};
        tui_run(t, &sp);
        break;
    }
    }
    dm->st = ST_DONE;
    dm->since = tui_now_ms();
    t->dirty = true;
}

static void advance(struct tui *t, struct tui_demo *dm)
{
    if (dm->st == ST_READY && steps[dm->step].act != A_NONE) {
        perform(t, dm);
        return;
    }
    if (dm->step + 1 >= NSTEPS) {
        t->quit = true;
        return;
    }
    dm->step++;
    dm->st = ST_READY;
    dm->since = tui_now_ms();
    t->dirty = true;
    if (dm->step + 1 == NSTEPS) /* the end: each run's verdict, never how to allow an attack */
        tui_switch(t, TUI_S_TRACES);
}

bool tui_demo_key(struct tui *t, int key)
{
    struct tui_demo *dm = t->demo;
    if (!dm || t->running)
        return false;
    if (key == ' ' || key == (TUI_KEY_FN | KEY_RIGHT) || key == 'n') {
        advance(t, dm);
        return true;
    }
    return false;
}

void tui_demo_tick(struct tui *t)
{
    struct tui_demo *dm = t->demo;
    if (!dm || !dm->auto_mode)
        return;
    int64_t now = tui_now_ms();
    if (t->running) {
        /* --auto: the presenter's answer to the risky request is a deny */
        if (tui_prompt_active(t) && now - dm->since > dm->pace_ms) {
            tui_feed_key(t, 'd');
            dm->since = now;
        }
        dm->ran_until = now; /* the audience sees how it ended for a pace too */
        return;
    }
    if (now - (dm->since > dm->ran_until ? dm->since : dm->ran_until) >= dm->pace_ms)
        advance(t, dm);
}

int tui_demo_timeout(const struct tui *t)
{
    const struct tui_demo *dm = t->demo;
    if (!dm || !dm->auto_mode)
        return -1;
    int64_t left = (dm->since > dm->ran_until ? dm->since : dm->ran_until) + dm->pace_ms -
                   tui_now_ms();
    return left < 0 ? 0 : (int)left;
}

int tui_demo_draw(struct tui *t, int bottom)
{
    struct tui_demo *dm = t->demo;
    if (!dm)
        return 0;
    const struct step *s = &steps[dm->step];
    /* the narration wraps at words (80x24 too), in at most a third of the
     * screen: the title, its lines, the hint */
    int most = LINES / 3 > 5 ? LINES / 3 : 5, text_rows = 0;
    for (const char *l = s->text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        text_rows += tui_put_wrapped(NULL, 0, 0, COLS - 3, most - 2 - text_rows, l, len, 0);
        l = nl ? nl + 1 : NULL;
    }
    int rows = text_rows + 2, y = bottom - rows + 1;
    attr_t a = tui_attr(t, TUI_R_TITLE);
    for (int r = 0; r < rows; r++)
        tui_fill(stdscr, y + r, 0, COLS, a);
    tui_putf(stdscr, y, 1, COLS - 2, a | A_BOLD, "%s  (%zu/%zu)", s->title, dm->step + 1, NSTEPS);
    int r = 1;
    for (const char *l = s->text; l && *l && r < rows - 1;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        r += tui_put_wrapped(stdscr, y + r, 2, COLS - 3, rows - 1 - r, l, len, a);
        l = nl ? nl + 1 : NULL;
    }
    const char *hint = t->running                                 ? "running..."
                       : dm->st == ST_READY && s->act != A_NONE   ? "Space: run this step"
                       : dm->step + 1 >= NSTEPS                   ? "Space or q: the end"
                                                                  : "Space: next";
    tui_putf(stdscr, y + rows - 1, 1, COLS - 2, a | A_REVERSE, " %s%s ", hint,
             dm->auto_mode ? " (auto)" : "");
    return rows;
}

int tui_demo_pane(const struct tui *t)
{
    const struct tui_demo *dm = t->demo;
    if (!dm)
        return -1;
    enum action a = steps[dm->step].act;
    return a == A_UNENFORCED || a == A_ENFORCED ? 1 : a == A_LEGIT || a == A_RISKY ? 0 : -1;
}

void tui_demo_intro(struct tui *t, WINDOW *w, int rows, int cols)
{
    const struct tui_demo *dm = t->demo;
    cleanup_free char *p = sg_xasprintf("%s/before/malicious-weather/SKILL.md", dm->ws);
    cleanup_fd int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    char text[8192];
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    text[n > 0 ? n : 0] = '\0';
    tui_box(w, 0, 0, rows, cols, tui_attr(t, TUI_R_BORDER),
            "malicious-weather, as a skills marketplace lists it (SKILL.md)");
    int y = 1, fences = 0; /* the frontmatter line by line, then paragraphs wrapped whole */
    for (const char *l = text, *e; *l && y < rows - 1; l = *e ? e + 1 : e) {
        e = l + strcspn(l, "\n");
        if (e == l) {
            y++;
            continue;
        }
        fences += !strncmp(l, "---", 3) && e - l == 3;
        char para[sizeof text];
        size_t len = 0;
        for (const char *m = l;; m = e + 1, e = m + strcspn(m, "\n")) {
            len += (size_t)snprintf(para + len, sizeof para - len, "%s%.*s", len ? " " : "",
                                    (int)(e - m), m);
            if (fences < 2 || *l == '#' || !*e || e[1] == '\n' || e[1] == '#' || !e[1])
                break;
        }
        y += tui_put_wrapped(w, y, 2, cols - 4, rows - 1 - y, para, len, tui_attr(t, TUI_R_NORMAL));
    }
}
