/* skillgate hook: a skill's script run by the agent, rewritten into
 * skillgate's sandbox (hook.h: sg_hook_rewrite), and whether a person has
 * vetted the skill. */
#include "hook.h"
#include "hook_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentdirs.h"
#include "config.h"
#include "notifpath.h"
#include "shellcmd.h"
#include "skill.h"
#include "policy.h"
#include "pyenv.h"
#include "sanitize.h"
#include "seen.h"
#include "util.h"

/* ---- a skill's script, run by the agent: into the sandbox ---- */

const char *sg_hook_base_of(const char *w)
{
    return strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
}

/* python, python3, python3.N: a Python 3 (python2 is not what run starts) */
static bool python_name(const char *b)
{
    if (!strcmp(b, "python") || !strcmp(b, "python3"))
        return true;
    return !strncmp(b, "python3.", 8) && b[8] && strspn(b + 8, "0123456789") == strlen(b + 8);
}

static bool interpreter(const char *w)
{
    static const char *const known[] = {"bash", "sh", "node", "perl", "ruby"};
    const char *b = sg_hook_base_of(w);
    for (size_t i = 0; i < SG_ARRAY_LEN(known); i++)
        if (!strcmp(b, known[i]))
            return true;
    return python_name(b);
}

/* The script's word in a command that runs one: INTERPRETER SCRIPT (1),
 * uv run [--] [python] SCRIPT; 0 for any other command. */
size_t sg_hook_script_at(const struct sg_shell_cmd *c)
{
    if (c->argc >= 2 && interpreter(c->argv[0]))
        return 1;
    if (c->argc < 3 || strcmp(sg_hook_base_of(c->argv[0]), "uv") || strcmp(c->argv[1], "run"))
        return 0;
    size_t k = 2;
    if (!strcmp(c->argv[k], "--"))
        k++;
    if (k + 1 < c->argc && python_name(c->argv[k]) && !strchr(c->argv[k], '/'))
        k++;
    return k < c->argc && c->argv[k][0] != '-' ? k : 0;
}

static void quoted(struct sg_buf *b, const char *w)
{
    sg_shell_quote(b, w, false);
}

/* The folder with a SKILL.md that holds path (at most 6 levels up), or NULL. */
static char *skill_root_of(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 6; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return NULL;
        *slash = '\0';
        cleanup_free char *md = sg_xasprintf("%s/SKILL.md", dir);
        if (access(md, F_OK) == 0)
            return sg_xstrdup(dir);
    }
    return NULL;
}

/* Does the line name a skill's folder or a file in one (a word with a /,
 * quotes aside, a leading ~/ read as the home)? Then a line that is not
 * rewritten says why. */
bool sg_hook_names_skill_file(const char *line, const char *cwd)
{
    cleanup_free char *copy = sg_xstrdup(line);
    const char *home = secure_getenv("HOME");
    for (char *sv, *w = strtok_r(copy, " \t\n;&|()<>", &sv); w;
         w = strtok_r(NULL, " \t\n;&|()<>", &sv)) {
        w += strspn(w, "'\"");
        w[strcspn(w, "'\"")] = '\0';
        bool tilde = w[0] == '~' && w[1] == '/' && home && home[0] == '/';
        if (!strchr(w, '/') || (w[0] != '/' && !tilde && cwd[0] != '/'))
            continue;
        cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w)
                                 : tilde     ? sg_xasprintf("%s%s", home, w + 1)
                                             : sg_xasprintf("%s/%s", cwd, w);
        cleanup_free char *real = sg_path_real(abs);
        cleanup_free char *root = skill_root_of(real);
        cleanup_free char *md = sg_xasprintf("%s/SKILL.md", real); /* a cd into one */
        if (root || access(md, F_OK) == 0)
            return true;
    }
    return false;
}

/* A program's name looked up in the hook's PATH (Claude Code's, which its
 * Bash tool's shell inherits), as bash finds it; NULL when none. */
static char *on_path(const char *name)
{
    const char *path = secure_getenv("PATH");
    if (!path || strchr(name, '/'))
        return NULL;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        cleanup_free char *c = n ? sg_xasprintf("%.*s/%s", (int)n, p, name) : NULL;
        struct stat st;
        if (c && c[0] == '/' && stat(c, &st) == 0 && S_ISREG(st.st_mode) && access(c, X_OK) == 0)
            return steal_pointer(&c);
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* Where skillgate run finds a bare name (plan.c): the first of these. */
static char *run_finds(const char *name)
{
    return sg_run_path_find(name);
}

/* Two programs are one when both are found and are the same file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* A program that is a script itself (#!): a version manager's shim. */
static bool a_script(const char *prog)
{
    char head[2] = {0};
    int fd = open(prog, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t r = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0)
        close(fd);
    return r == 2 && head[0] == '#' && head[1] == '!';
}

/* A program Python runs as an environment's: a pyvenv.cfg next to it or
 * in the folder above, on the path skillgate run execs (pyenv.h). */
static bool in_venv(const char *prog)
{
    struct sg_pyenv e;
    bool venv = sg_pyenv_read(prog, &e) == 0 && e.env;
    sg_pyenv_free(&e);
    return venv;
}

/* The system's python3 as it is: the very file run finds by its real
 * path, and no pyvenv.cfg where Python would read one (pyenv.h). */
static bool plain_python(const char *abs)
{
    struct sg_pyenv e = {0};
    cleanup_free char *sys = run_finds("python3");
    cleanup_free char *rs = sys ? realpath(sys, NULL) : NULL;
    struct stat st;
    bool plain = false; /* a folder is an environment's, never the system's Python */
    if (rs && stat(abs, &st) == 0 && S_ISREG(st.st_mode) && sg_pyenv_read(abs, &e) == 0 &&
        !e.env) {
        cleanup_free char *ra = realpath(e.prog, NULL);
        plain = ra && !strcmp(ra, rs);
    }
    sg_pyenv_free(&e);
    return plain;
}

/* What a script starts with: skillgate run's choice (plan.c's
 * script_command: python3, bash or node by the name's ending, else the #!
 * line), or the kernel's (the #! line only). */
struct starts_with {
    char *name;     /* the program's name (a #! env's argument), NULL when none */
    char *path;     /* its file as found, NULL when none is */
    bool by_ending; /* run's, by the ending: --python replaces a python3 */
    bool shebang;   /* there is a usable #! line */
    bool env;       /* #!/usr/bin/env NAME: name is looked up */
    bool option;    /* the #! line passes an option: nothing here can say it */
};

static void starts_with(const char *abs, bool run, struct starts_with *s)
{
    memset(s, 0, sizeof *s);
    const char *by_name = run ? sg_script_interpreter(abs) : NULL;
    if (by_name) {
        s->name = sg_xstrdup(by_name);
        s->path = run_finds(by_name);
        s->by_ending = true;
        return;
    }
    char head[SG_SHEBANG_MAX], prog[PATH_MAX], arg[SG_SHEBANG_MAX + 1];
    int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    ssize_t r = fd >= 0 ? read(fd, head, sizeof head) : -1;
    if (fd >= 0)
        close(fd);
    if (r <= 0 || sg_shebang_parse(head, (size_t)r, prog, sizeof prog, arg, sizeof arg) < 0)
        return;
    s->shebang = true;
    if (!strcmp(sg_hook_base_of(prog), "env") && arg[0] && arg[0] != '-' && !strchr(arg, ' ')) {
        s->name = sg_xstrdup(arg);
        s->env = true;
        s->path = run ? run_finds(arg) : on_path(arg); /* the sandbox's PATH, or the shell's */
        return;
    }
    s->name = sg_xstrdup(sg_hook_base_of(prog));
    s->path = sg_xstrdup(prog);
    s->option = arg[0] != '\0';
}

/* The agent's Python (word, found at agent_path) kept for a run whose
 * own would be run_path: *py the --python that keeps it (NULL: run's own,
 * the same), *note what differs and is said; NULL, or why it cannot be
 * kept (caller frees). A venv's has the packages the script needs. */
static char *keep_python(const char *word, const char *agent_path, const char *run_path,
                         char **py, char **note)
{
    const char *aname = sg_hook_base_of(word);
    if (strchr(word, '/')) {
        if (!agent_path || access(agent_path, X_OK) < 0)
            return sg_xasprintf("the Python %s is not a program here", word);
        *py = sg_xstrdup(word);
    } else if (!agent_path && strcmp(aname, "python") && strcmp(aname, "python3")) {
        return sg_xasprintf("%s is not on the PATH skillgate sees", aname);
    } else if (agent_path && a_script(agent_path)) {
        /* a shim (pyenv, asdf) finds its Python in a home the sandbox hides */
        if (!same_file(agent_path, run_path))
            *note = sg_xasprintf("%s on PATH is a shim (%s): skillgate run uses %s", aname,
                                 agent_path, run_path ? run_path : "python3");
    } else if (agent_path && (in_venv(agent_path) || secure_getenv("VIRTUAL_ENV") ||
                              !same_file(agent_path, run_path))) {
        *py = sg_xstrdup(agent_path); /* what bash would start, not run's python3 */
    }
    return NULL;
}

/* The program word names, as bash finds it from the folder where. */
static char *agent_program(const char *word, const char *where)
{
    return word[0] == '/' ? sg_xstrdup(word)
           : strchr(word, '/') ? sg_xasprintf("%s/%s", where, word) : on_path(word);
}

/* Whether skillgate run starts the script (abs) with the program the
 * agent's line does (word, or the script itself when NULL), read in the
 * folder where: NULL when it does, with *py the --python that keeps the
 * agent's Python (NULL: run's own, the same) and *note what differs and
 * is said; else why not (caller frees). */
static char *same_program(const char *word, const char *abs, const char *rel, const char *where,
                          char **py, char **note)
{
    struct starts_with run, agent;
    starts_with(abs, true, &run);
    cleanup_free char *run_path = run.path, *agent_path = NULL;
    cleanup_free char *run_name_owned __attribute__((unused)) = run.name; /* freed at return */
    cleanup_free char *agent_name = NULL;
    const char *aname;
    if (word) {
        aname = sg_hook_base_of(word);
        agent_path = agent_program(word, where);
    } else {
        starts_with(abs, false, &agent);
        agent_name = agent.name;
        if (access(abs, X_OK) < 0)
            return free(agent.path), sg_xasprintf("%s is not executable: as written it does not "
                                                  "run", rel);
        if (!agent.shebang || agent.option)
            return free(agent.path), sg_xasprintf("%s has %s: skillgate run cannot start it "
                                                  "the same way", rel, agent.shebang
                                                  ? "an option on its #! line" : "no #! line");
        aname = agent.name, agent_path = agent.path;
        word = agent.env || !agent.path ? agent.name : agent.path;
    }
    if (run.option)
        return sg_xasprintf("%s has an option on its #! line, which skillgate run would drop", rel);
    if (!run.name)
        return sg_xasprintf("skillgate run cannot tell what runs %s (no .py, .sh or .js ending, "
                            "no #! line)", rel);
    if (python_name(aname) && python_name(run.name) && run.by_ending)
        return keep_python(word, agent_path, run_path, py, note);
    if (!strcmp(aname, "sh") && !strcmp(run.name, "bash") && run.by_ending && run_path) {
        *note = sg_xasprintf("skillgate runs a .sh with bash (%s), the agent named sh", run_path);
        return NULL;
    }
    bool same_name = !strcmp(aname, run.name) || (python_name(aname) && python_name(run.name));
    if (same_name && same_file(agent_path, run_path))
        return NULL;
    return sg_xasprintf("the line runs %s with %s, skillgate run would start %s (%s): it keeps "
                        "only a Python the agent names (--python)", rel,
                        agent_path ? agent_path : word, run_path ? run_path : run.name,
                        run.by_ending ? "by the script's name" : "by its #! line");
}

/* python -m: the agent's Python kept as for a .py script (run -m starts
 * python3, or --python). NULL, or why not (caller frees). */
static char *module_python(const char *word, const char *where, char **py, char **note)
{
    cleanup_free char *agent_path = agent_program(word, where);
    cleanup_free char *run_path = run_finds("python3");
    return keep_python(word, agent_path, run_path, py, note);
}

/* Is root in one of the person's own skills folders (~/.claude/skills,
 * ~/.claude/plugins, or the same under CLAUDE_CONFIG_DIR)? A project's
 * .claude/skills, or any folder with a SKILL.md, is what a repository or
 * a download brings: not the person's. */
static bool in_personal_skills(const char *root)
{
    const char *home = secure_getenv("HOME"), *ccd = secure_getenv("CLAUDE_CONFIG_DIR");
    cleanup_free char *base = ccd && ccd[0] == '/' ? sg_xstrdup(ccd)
                              : home && home[0] == '/' ? sg_xasprintf("%s/.claude", home)
                                                       : NULL;
    if (!base)
        return false;
    static const char *const areas[] = {"skills", "plugins"};
    for (size_t i = 0; i < SG_ARRAY_LEN(areas); i++) {
        cleanup_free char *a = sg_xasprintf("%s/%s", base, areas[i]);
        cleanup_free char *real = sg_path_real(a);
        size_t n = strlen(real);
        if (!strncmp(root, real, n) && root[n] == '/')
            return true;
    }
    return false;
}

/* Has a person vetted the skill at root: kept in their own skills folder,
 * its manifests and its code (the content digest) as they last looked at
 * them (a run, the Skills screen)? */
static void vet_skill(const struct sg_skill *sk, const char *root, struct sg_hook_vet *v)
{
    cleanup_free char *asks = sg_skill_grants_beyond(sk, true);
    v->risky = sg_sanitize_str(asks[0] ? asks : "nothing beyond its own folder", 0);
    struct sg_seen seen;
    v->installed = in_personal_skills(root);
    if (!v->installed) {
        v->why = sg_xasprintf("not one of your installed skills (~/.claude/skills): a "
                              "repository or a download can put a SKILL.md anywhere");
    } else if (sg_seen_compare_code(sk, &seen) < 0 || seen.state == SG_SEEN_NEW) {
        v->why = sg_xstrdup("installed, but you have not looked at it yet (skillgate run, "
                            "or the Skills screen)");
    } else if (seen.state == SG_SEEN_CHANGED) {
        v->why = sg_xasprintf("its manifest changed since you looked at it (%s)", seen.when);
    } else if (!seen.code_same) { /* a pull, or the agent, swapped a script */
        v->why = sg_xasprintf("its code changed since you looked at it (%s)", seen.when);
    } else {
        v->vetted = true;
        v->why = sg_xasprintf("installed in your skills and unchanged since you looked at it "
                              "(%s)", seen.when);
    }
}

void sg_hook_vet_free(struct sg_hook_vet *v)
{
    free(v->why), free(v->risky);
    memset(v, 0, sizeof *v);
}

/* The folder at or above dir holding name (a file or folder), or NULL. */
static char *up_from(const char *dir, const char *name)
{
    cleanup_free char *d = sg_xstrdup(dir);
    for (int up = 0; up < 64; up++) {
        char *c = sg_xasprintf("%s/%s", strcmp(d, "/") ? d : "", name);
        if (access(c, F_OK) == 0)
            return free(c), sg_xstrdup(d);
        free(c);
        char *sl = strrchr(d, '/');
        if (!sl || !strcmp(d, "/"))
            return NULL;
        if (sl == d)
            sl[1] = '\0'; /* up to / */
        else
            *sl = '\0';
    }
    return NULL;
}

/* `uv run SCRIPT.py` (or `uv run python SCRIPT.py`) in the folder where:
 * the environment uv would run it in, as --python in *py; NULL, or why
 * uv's run cannot be said as skillgate's (caller frees). */
static char *uv_python(const char *abs, const char *rel, const char *where, char **py)
{
    if (!sg_str_has_suffix(abs, ".py"))
        return sg_xasprintf("uv runs %s as a command, not a Python script", rel);
    static const char advice[] = "make the environment, then run skillgate run SKILL --python "
                                 "ENV --script SCRIPT";
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (sg_read_file_capped(abs, 1 << 20, &text, &len) == 0 && text &&
        (sg_str_has_prefix(text, "# /// script\n") || strstr(text, "\n# /// script\n")))
        return sg_xasprintf("uv run would first install the dependencies %s declares (its "
                            "# /// script block) into an environment of its own, which "
                            "skillgate run cannot do: %s", rel, advice);
    cleanup_free char *project = up_from(where, "pyproject.toml");
    if (project)
        return sg_xasprintf("uv run in a project (%s/pyproject.toml) first syncs the project's "
                            "environment, which skillgate run cannot do: uv sync, then "
                            "skillgate run SKILL --python %s/.venv --script SCRIPT", project,
                            project);
    const char *venv = secure_getenv("VIRTUAL_ENV"), *conda = secure_getenv("CONDA_PREFIX");
    if (venv && venv[0] == '/') {
        *py = sg_xstrdup(venv);
        return NULL;
    }
    if (conda && *conda)
        return sg_xasprintf("uv run would use the Conda environment %s: %s", conda, advice);
    cleanup_free char *holder = up_from(where, ".venv/pyvenv.cfg");
    if (holder) {
        *py = sg_xasprintf("%s/.venv", strcmp(holder, "/") ? holder : "");
        return NULL;
    }
    return sg_xasprintf("uv run here picks a Python itself (no environment is active or in "
                        ".venv: one uv manages, or the first on PATH), which skillgate cannot "
                        "tell: %s", advice);
}

/* A .. anywhere in a path (bash's cd reads it as written, the kernel
 * through links: two places). */
static bool has_dotdot(const char *p)
{
    return !strcmp(p, "..") || sg_str_has_prefix(p, "../") || strstr(p, "/../") ||
           sg_str_has_suffix(p, "/..");
}

/* The agent's line as a script's run: [cd DIR &&] RUNNER SCRIPT ARGS. */
struct script_line {
    const struct sg_shell_cmd *run; /* the interpreter's command (nohup's words after it) */
    struct sg_shell_cmd after_nohup;
    const char *cd;     /* the cd's folder as bash reads it, NULL when none */
    char *where;        /* the folder the script runs in (absolute) */
    size_t at;          /* the script's word in run (with -m: the module's) */
    const char *module; /* python -m MODULE: the module's name, else NULL */
    char *nohup;        /* nohup before the interpreter: the system's, kept by its path */
    bool background;    /* the line ends with &: kept */
};

/* The nohup the rewrite names by its absolute path (never by PATH, which
 * an agent-writable folder such as a venv's bin/ can lead first): the
 * system's, root's alone, and the one the agent's own line would start.
 * NULL with *nohup, or why not (caller frees). */
static char *system_nohup(char **nohup)
{
    cleanup_free char *sys = run_finds("nohup"), *agents = on_path("nohup");
    if (!sys || !sg_path_roots_alone(sys))
        return sg_xstrdup("no nohup of root's alone in /usr/local/bin, /usr/bin or /bin");
    if (!same_file(sys, agents))
        return sg_xasprintf("nohup on the agent's PATH is %s, not the system's %s: the line "
                            "would start another program than skillgate's rewrite",
                            agents ? agents : "none", sys);
    *nohup = steal_pointer(&sys);
    return NULL;
}

/* nohup COMMAND (no option: only --help and --version are nohup's): the
 * command it runs, which the rewrite runs under the system's nohup again;
 * NULL, or why the line is not rewritten (caller frees). */
static char *under_nohup(struct script_line *l)
{
    const struct sg_shell_cmd *c = l->run;
    if (c->argc < 2 || strcmp(c->argv[0], "nohup") || c->argv[1][0] == '-')
        return NULL;
    char *no = system_nohup(&l->nohup);
    if (no)
        return no;
    l->after_nohup = (struct sg_shell_cmd){.argv = c->argv + 1, .argc = c->argc - 1};
    memcpy(l->after_nohup.op, c->op, sizeof c->op);
    l->run = &l->after_nohup;
    return NULL;
}

/* python -m MODULE ARGS (python, python3, python3.N by name, or a path
 * to one): the module's word, 0 when the line is no such run. */
static size_t module_at(const struct sg_shell_cmd *c)
{
    if (c->argc < 3 || !python_name(sg_hook_base_of(c->argv[0])) || strcmp(c->argv[1], "-m"))
        return 0;
    return 2;
}

/* NULL with l filled, or why the line is no such run (caller frees). */
static char *read_line(const struct sg_shell *sh, const char *cwd, struct script_line *l)
{
    memset(l, 0, sizeof *l);
    if (sh->n == 2 && !strcmp(sh->cmds[0].argv[0], "cd")) {
        const struct sg_shell_cmd *c = &sh->cmds[0];
        if (strcmp(c->op, "&&"))
            return sg_xstrdup("a cd and the run not joined by && (the run would go on where "
                              "the cd failed)");
        l->cd = c->argc == 2 ? c->argv[1]
                : c->argc == 3 && !strcmp(c->argv[1], "--") ? c->argv[2] : NULL;
        const char *cdpath = secure_getenv("CDPATH");
        if (!l->cd || !l->cd[0] || !strcmp(l->cd, "-"))
            return sg_xstrdup("a cd with options, or to no folder or the last one (cd -)");
        if (l->cd[0] != '/' && l->cd[0] != '.' && cdpath && *cdpath)
            return sg_xstrdup("a cd that CDPATH may lead elsewhere");
        if (has_dotdot(l->cd))
            return sg_xstrdup("a cd with .. (bash reads it as written, the kernel through "
                              "links)");
    } else if (sh->n != 1) {
        return sg_xstrdup("more than one command (only [cd DIR &&] INTERPRETER SCRIPT ARGS "
                          "is rewritten)");
    }
    l->run = &sh->cmds[sh->n - 1];
    l->background = !strcmp(l->run->op, "&"); /* the last command: the whole list goes */
    char *no = under_nohup(l);
    if (no)
        return no;
    const char *a0 = l->run->argv[0];
    l->at = module_at(l->run);
    if (l->at)
        l->module = l->run->argv[l->at];
    else
        l->at = sg_hook_script_at(l->run);
    if (!l->at && l->run->argc >= 2 && (interpreter(a0) || !strcmp(sg_hook_base_of(a0), "uv")))
        return sg_xasprintf("an option before the script (%s %s ...): skillgate run cannot "
                            "pass it", a0, l->run->argv[1]);
    if (!l->at && !strchr(a0, '/'))
        return sg_xasprintf("%s is not what skillgate rewrites (python, python3, python3.N, uv "
                            "run, bash, sh, node, perl, ruby, or the script's own path)", a0);
    if (l->at && l->run->argv[l->at][0] == '-')
        return sg_xasprintf("an option before the script (%s): skillgate run cannot pass it",
                            l->run->argv[l->at]);
    const char *to = l->cd ? l->cd : cwd;
    l->where = to[0] == '/' ? sg_xstrdup(to) : cwd[0] == '/' ? sg_xasprintf("%s/%s", cwd, to)
                                                             : NULL;
    if (!l->where)
        return sg_xstrdup("a relative path and no cwd to read it from");
    return NULL;
}

/* A regular file whose real path is in root, or NULL (caller frees). */
static char *file_in(const char *root, const char *path)
{
    struct stat st;
    cleanup_free char *real = sg_path_real(path);
    if (stat(real, &st) < 0 || !S_ISREG(st.st_mode) || !sg_path_within(real, root))
        return NULL;
    return steal_pointer(&real);
}

/* Does the folder (a real path, or NULL) hold a SKILL.md? */
static bool is_skill_root(const char *dir)
{
    cleanup_free char *md = dir ? sg_xasprintf("%s/SKILL.md", dir) : NULL;
    return md && access(md, F_OK) == 0;
}

/* `python -m MODULE` in the folder where: the skill's file it runs, when
 * where is a skill's folder (its real path has the SKILL.md) and Python
 * finds MODULE there first (sys.path[0] is the working folder, as run -m
 * makes it the skill's): every package on the way a regular one (an
 * __init__.py: a namespace package would yield to one later on the
 * path), then NAME.py, or NAME/__main__.py of a package. *root the
 * skill's folder. NULL with *file, or why not (caller frees). */
static char *module_file(const char *where, const char *mod, char **root, char **file)
{
    *root = sg_path_real(where);
    if (!sg_python_module_ok(mod))
        return sg_xasprintf("%s is not a Python module name skillgate run -m takes", mod);
    if (sg_hook_stdlib_name(mod))
        return sg_xasprintf("%.*s is a name of Python's own library: python -m may run that "
                            "one (loaded at its start), not the skill's file",
                            (int)strcspn(mod, "."), mod);
    if (!is_skill_root(*root))
        return sg_xasprintf("python -m runs %s from the working folder, which is no skill's "
                            "folder (no SKILL.md in %s)", mod, where);
    if (secure_getenv("PYTHONSAFEPATH"))
        return sg_xstrdup("PYTHONSAFEPATH is set: python -m does not look in the working "
                          "folder");
    cleanup_free char *rel = sg_xstrdup(mod);
    for (char *d = strchr(rel, '.'); d; d = strchr(d + 1, '.')) {
        cleanup_free char *init = sg_xasprintf("%s/%.*s/__init__.py", *root, (int)(d - rel),
                                               rel);
        cleanup_free char *f = file_in(*root, init);
        if (!f)
            return sg_xasprintf("%.*s is no package of the skill's (no __init__.py)",
                                (int)(d - rel), mod);
        *d = '/';
    }
    cleanup_free char *init = sg_xasprintf("%s/%s/__init__.py", *root, rel);
    cleanup_free char *pkg = file_in(*root, init);
    cleanup_free char *main = sg_xasprintf("%s/%s/__main__.py", *root, rel);
    cleanup_free char *py = sg_xasprintf("%s/%s.py", *root, rel);
    *file = pkg ? file_in(*root, main) : file_in(*root, py);
    if (!*file)
        return sg_xasprintf("%s is no module of the skill's (%s)", mod,
                            pkg ? "a package with no __main__.py" : "no such .py file in it");
    return NULL;
}

/* The rewritten line: [cd DIR &&] [/usr/bin/nohup] SELF run ROOT --prompt attached
 * [--python PY] --script REL|-m MODULE -- ARGS [&], or NULL when too long. */
static char *rewritten(const struct script_line *l, const char *self, const char *root,
                       const char *rel, const char *py)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_SHELL_MAX * 2);
    if (l->cd) {
        sg_buf_append(&b, l->cd[0] == '-' ? "cd -- " : "cd ", l->cd[0] == '-' ? 6 : 3);
        quoted(&b, l->cd);
        sg_buf_append(&b, " && ", 4);
    }
    if (l->nohup) {
        sg_shell_quote(&b, l->nohup, true);
        sg_buf_append(&b, " ", 1);
    }
    sg_shell_quote(&b, self, !l->nohup);
    sg_buf_append(&b, " run ", 5);
    quoted(&b, root);
    sg_buf_append(&b, " --prompt attached", 18);
    if (py) {
        sg_buf_append(&b, " --python ", 10);
        quoted(&b, py);
    }
    sg_buf_append(&b, l->module ? " -m " : " --script ", l->module ? 4 : 10);
    quoted(&b, l->module ? l->module : rel);
    sg_buf_append(&b, " --", 3);
    for (size_t i = l->at + 1; i < l->run->argc; i++) {
        sg_buf_append(&b, " ", 1);
        quoted(&b, l->run->argv[i]);
    }
    if (l->background)
        sg_buf_append(&b, " &", 2);
    char *out = b.dropped ? NULL : sg_buf_steal(&b);
    sg_buf_free(&b);
    return out;
}

/* Why the agent's own Python py is asked: no environment, or one not
 * vetted (as it is now), and how a person vets it (caller frees). */
static char *venv_not_vetted(const char *py, const struct sg_hook_venv *v)
{
    if (!v->dir)
        return sg_xasprintf("the agent names its own Python (%s): vetting the skill does not "
                            "vet it, nor its packages, which run as code with the skill's "
                            "grants", py);
    if (!v->digest[0])
        return sg_xasprintf("the agent's Python is the environment %s, which cannot be vetted "
                            "once: %s", v->dir, v->why);
    cleanup_free char *shown = sg_hook_venv_shown(v);
    return sg_xasprintf("%s, %s (its packages run with the skill's grants): \"always\" in "
                        "skillgate tui --attach vets it as it is now", shown,
                        v->changed ? "changed since you vetted it" : "not vetted");
}

/* What the run holds beyond the skill the person vetted, or NULL: a
 * Python the agent names (its own program, or an environment whose
 * packages run as code with the skill's grants), or a working folder a cd
 * in the line picks outside the skill. Caller frees. */
static char *beyond_the_skill(const struct script_line *l, const char *root, const char *py,
                              struct sg_hook_venv *venv)
{
    if (py) {
        cleanup_free char *abs = py[0] == '/' ? sg_xstrdup(py) : sg_xasprintf("%s/%s", l->where,
                                                                              py);
        bool plain = plain_python(abs);
        if (!plain)
            sg_hook_venv_look(abs, venv);
        if (!plain && !venv->vetted)
            return venv_not_vetted(py, venv);
    }
    cleanup_free char *where = l->cd ? sg_path_real(l->where) : NULL;
    if (where && !sg_path_within(where, root))
        return sg_xasprintf("the line's cd makes %s the skill's working folder (shown to it "
                            "read-only), a folder you did not choose", where);
    return NULL;
}

/* The line's words joined again (~ read as the home), for the rules. */
static char *line_as_read(const struct sg_shell *sh)
{
    struct sg_buf b;
    sg_buf_init(&b, SG_SHELL_MAX * 2);
    for (size_t i = 0; i < sh->n; i++) {
        cleanup_free char *j = sg_shell_join(&sh->cmds[i]);
        sg_buf_printf(&b, "%s%s%s", j, sh->cmds[i].op[0] ? " " : "", sh->cmds[i].op);
        if (sh->cmds[i].op[0] && i + 1 < sh->n)
            sg_buf_append(&b, " ", 1);
    }
    char *out = sg_buf_steal(&b);
    sg_buf_free(&b);
    return out;
}

size_t sg_hook_arg_paths(char *const *args, size_t n, const char *from, char ***out)
{
    *out = sg_xcalloc(n ? n : 1, sizeof **out);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *a = args[i], *s = a;
        if (a[0] == '-') {
            const char *eq = strchr(a, '=');
            s = eq && eq[1] ? eq + 1 : NULL;
        }
        if (!s || !s[0] || (s[0] != '/' && !from))
            continue; /* a relative one with no folder to read it from: not shown either */
        char *abs = s[0] == '/' ? sg_xstrdup(s) : sg_xasprintf("%s/%s", from, s);
        if (strlen(abs) >= PATH_MAX || sg_path_normalize(abs) < 0) {
            free(abs);
            continue;
        }
        (*out)[k++] = abs;
    }
    return k;
}

void sg_hook_rewrite_free(struct sg_hook_rewrite *rw)
{
    for (size_t i = 0; i < rw->nnamed; i++)
        free(rw->named[i]);
    free(rw->named);
    free(rw->command), free(rw->why_not), free(rw->by_hand), free(rw->note);
    free(rw->root), free(rw->line), free(rw->beyond);
    sg_hook_vet_free(&rw->vet);
    sg_hook_venv_free(&rw->venv);
    memset(rw, 0, sizeof *rw);
}

int sg_hook_rewrite(const char *command, const char *cwd, const char *self,
                    struct sg_hook_rewrite *rw)
{
    memset(rw, 0, sizeof *rw);
    struct sg_shell sh;
    const char *why;
    if (sg_shell_parse_home(command, secure_getenv("HOME"), &sh, &why) < 0) {
        rw->why_not = sg_xasprintf("skillgate cannot read the line exactly (%s)", why);
        return -EINVAL;
    }
    struct script_line l;
    cleanup_free char *script = NULL, *root = NULL, *py = NULL;
    char *no = read_line(&sh, cwd, &l);
    const char *w = no ? NULL : l.run->argv[l.at];
    if (!no && l.module) {
        no = module_file(l.where, l.module, &root, &script);
        if (no && !is_skill_root(root)) /* not the skill's: said, no run by hand */
            free(steal_pointer(&root));
    } else if (!no) {
        cleanup_free char *abs = w[0] == '/' ? sg_xstrdup(w) : sg_xasprintf("%s/%s", l.where, w);
        script = sg_path_real(abs);
        root = skill_root_of(script); /* the nearest folder above with a SKILL.md */
        struct stat st;
        if (!root)
            no = sg_xasprintf("%s is in no skill's folder (none above it has a SKILL.md)", w);
        else if (stat(script, &st) < 0 || !S_ISREG(st.st_mode))
            no = sg_xasprintf("%s is no file", w);
    }
    const char *rel = root && script ? script + strlen(root) + 1 : NULL;
    if (root) {
        struct sg_buf b;
        sg_buf_init(&b, SG_SHELL_MAX);
        sg_buf_append(&b, "skillgate run ", 14);
        quoted(&b, root);
        sg_buf_append(&b, l.module ? " -m " : " --script ", l.module ? 4 : 10);
        quoted(&b, l.module ? l.module : rel);
        rw->by_hand = sg_buf_steal(&b);
        sg_buf_free(&b);
    }
    if (!no && !strcmp(sg_hook_base_of(l.run->argv[0]), "uv"))
        no = uv_python(script, rel, l.where, &py);
    else if (!no && l.module)
        no = module_python(l.run->argv[0], l.where, &py, &rw->note);
    else if (!no)
        no = same_program(l.at ? l.run->argv[0] : NULL, script, rel, l.where, &py, &rw->note);
    for (size_t i = l.at + 1; !no && i < l.run->argc; i++)
        if (l.run->argv[i][0] == '\0')
            no = sg_xstrdup("an empty argument");
    struct sg_skill *sk = NULL;
    if (!no && (sg_skill_load(root, &sk) < 0 || !sk || sg_diags_blocking(&sk->diags)))
        no = sg_xstrdup("the skill does not load (skillgate validate says why)");
    if (!no)
        vet_skill(sk, root, &rw->vet);
    sg_skill_free(sk);
    if (!no && !(rw->command = rewritten(&l, self, root, rel, py)))
        no = sg_xstrdup("too long");
    if (!no) {
        rw->root = sg_xstrdup(root);
        rw->line = line_as_read(&sh);
        rw->nnamed = sg_hook_arg_paths(l.run->argv + l.at + 1, l.run->argc - l.at - 1, l.where,
                                       &rw->named);
        rw->beyond = beyond_the_skill(&l, root, py, &rw->venv);
    }
    if (no)
        sg_hook_vet_free(&rw->vet);
    rw->why_not = no;
    free(l.where), free(l.nohup);
    sg_shell_free(&sh);
    return no ? -EINVAL : 0;
}
