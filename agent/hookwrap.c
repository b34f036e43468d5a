/* The hook's sandboxed Bash (hookwrap.h). */
#include "hookwrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shellcmd.h"
#include "util.h"

/* Claude Code's settings for the project at cwd, the `sandbox` keys the
 * hook needs, by the precedence Claude Code gives its files (managed, then
 * the project's local, the project's, the user's): the first file that
 * sets a key decides it; excludedCommands merge. */
struct claude_sandbox {
    const char *unreadable; /* a project's settings file there and not readable */
    int enabled;          /* -1 unset */
    int allow_unsandboxed;
    const char *unsandboxed_by; /* the file that set allowUnsandboxedCommands */
    json_t *excluded;     /* strings */
};

static void read_settings(const char *path, struct claude_sandbox *cs)
{
    char *buf = NULL;
    size_t len = 0;
    /* links followed, as Claude Code follows them */
    int e = sg_read_file_follow_capped(path, 1 << 20, &buf, &len);
    json_t *root = buf ? json_loadb(buf, len, 0, NULL) : NULL;
    free(buf);
    if ((e < 0 || (buf && !json_is_object(root))) && !cs->unreadable)
        cs->unreadable = path; /* what Claude Code makes of it cannot be told */
    json_t *sb = json_object_get(root, "sandbox");
    json_t *v;
    if (cs->enabled < 0 && json_is_boolean(v = json_object_get(sb, "enabled")))
        cs->enabled = json_is_true(v);
    if (cs->allow_unsandboxed < 0 &&
        json_is_boolean(v = json_object_get(sb, "allowUnsandboxedCommands"))) {
        cs->allow_unsandboxed = json_is_true(v);
        cs->unsandboxed_by = path;
    }
    size_t i;
    json_t *x;
    json_array_foreach (json_object_get(sb, "excludedCommands"), i, x)
        if (json_is_string(x))
            json_array_append(cs->excluded, x);
    json_decref(root);
}

/* files[1] and files[2] are the project's: the repository's own */
static void claude_settings(const char *cwd, struct claude_sandbox *cs, char *files[4])
{
    *cs = (struct claude_sandbox){.enabled = -1, .allow_unsandboxed = -1,
                                  .excluded = json_array()};
    const char *home = sg_invoking_home();
    /* the project's settings are its root's (Claude Code names it; the
     * agent may have moved into a subfolder), else the event's folder */
    const char *cp = secure_getenv("CLAUDE_PROJECT_DIR");
    const char *proj = cp && cp[0] == '/' ? cp : cwd;
    files[0] = sg_xstrdup("/etc/claude-code/managed-settings.json");
    files[1] = sg_xasprintf("%s/.claude/settings.local.json", proj);
    files[2] = sg_xasprintf("%s/.claude/settings.json", proj);
    files[3] = sg_xasprintf("%s/.claude/settings.json", home ? home : "/");
    for (size_t i = 0; i < 4; i++)
        read_settings(files[i], cs);
}

/* An excludedCommands entry ("docker", "docker:*", "git push *") names
 * the simple command when its words begin the command's words. */
static bool excluded_by(const char *pat, const struct sg_shell_cmd *c)
{
    cleanup_free char *p = sg_xstrdup(pat);
    size_t n = strlen(p);
    if (n >= 2 && (!strcmp(p + n - 2, ":*") || !strcmp(p + n - 2, " *")))
        p[n - 2] = '\0';
    size_t k = 0;
    char *save = NULL;
    for (char *w = strtok_r(p, " ", &save); w; w = strtok_r(NULL, " ", &save), k++) {
        if (k >= c->argc)
            return false;
        const char *a = c->argv[k];
        const char *base = k == 0 && strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
        if (strcmp(a, w) && strcmp(base, w))
            return false;
    }
    return k > 0;
}

/* The excludedCommands entry a line's simple command matches; a line that
 * cannot be read is taken as matching when any entry is set (it might). */
static const char *excluded(const char *line, json_t *list)
{
    if (!json_array_size(list))
        return NULL;
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse(line, &sh, &why) < 0)
        return json_string_value(json_array_get(list, 0));
    const char *hit = NULL;
    for (size_t i = 0; i < sh.n && !hit; i++) {
        size_t j;
        json_t *x;
        json_array_foreach (list, j, x)
            if (!hit && excluded_by(json_string_value(x), &sh.cmds[i]))
                hit = json_string_value(x);
    }
    sg_shell_free(&sh);
    return hit;
}

void sg_hook_wrap_line(const char *line, json_t *input, const char *cwd, const char *self,
                       const char *policy, struct sg_hook_wrap *w)
{
    memset(w, 0, sizeof *w);
    if (json_is_true(json_object_get(input, "dangerouslyDisableSandbox"))) {
        w->ask = sg_xstrdup("the agent asked to run it outside any sandbox "
                            "(dangerouslyDisableSandbox)");
        return;
    }
    struct claude_sandbox cs;
    char *files[4];
    claude_settings(cwd, &cs, files);
    const char *ex = excluded(line, cs.excluded);
    bool repo = cs.unsandboxed_by == files[1] || cs.unsandboxed_by == files[2];
    if (cs.unreadable) {
        w->ask = sg_xasprintf("Claude Code's settings %s cannot be read here (not a file, too "
                              "big, or not JSON): which sandbox runs the line cannot be told",
                              cs.unreadable);
    } else if (ex) {
        w->ask = sg_xasprintf("Claude Code's sandbox.excludedCommands names it (\"%s\"): it "
                              "runs outside any sandbox", ex);
    } else if (cs.enabled == 1 && cs.allow_unsandboxed == 0 && repo) {
        /* the repository may not keep skillgate's sandbox out */
        w->ask = sg_xasprintf("the repository's %s keeps skillgate's sandbox out "
                              "(sandbox.allowUnsandboxedCommands: false): a person decides",
                              cs.unsandboxed_by);
    } else if (cs.enabled == 1 && cs.allow_unsandboxed == 0) {
        w->note = sg_xstrdup("Claude Code's own sandbox runs it (sandbox.enabled, and "
                             "allowUnsandboxedCommands: false keeps skillgate's out: never "
                             "two nested)");
    } else {
        struct sg_buf b;
        sg_buf_init(&b, strlen(line) * 4 + strlen(self) * 4 + (policy ? strlen(policy) * 4 : 0) + 256);
        sg_shell_quote(&b, self, true);
        sg_buf_append(&b, " wrap --prompt attached", 23);
        if (policy && access(policy, F_OK) == 0) {
            sg_buf_append(&b, " --policy ", 10);
            sg_shell_quote(&b, policy, false);
        }
        sg_buf_append(&b, " -- bash -c ", 12);
        sg_shell_quote(&b, line, false);
        w->command = steal_pointer(&b.data);
        sg_buf_free(&b);
        w->off_claude = cs.enabled == 1;
        w->note = sg_xstrdup(cs.enabled == 1
                                 ? "skillgate's sandbox runs it in place of Claude Code's "
                                   "(dangerouslyDisableSandbox in the rewritten call: never "
                                   "two nested)"
                                 : "skillgate's sandbox runs it");
    }
    json_decref(cs.excluded);
    for (size_t i = 0; i < 4; i++)
        free(files[i]);
}

void sg_hook_wrap_free(struct sg_hook_wrap *w)
{
    free(w->command), free(w->ask), free(w->note);
    memset(w, 0, sizeof *w);
}
