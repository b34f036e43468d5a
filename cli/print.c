#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "cli.h"
#include "discover.h"
#include "journal.h"
#include "resolve.h"
#include "sanitize.h"
#include "skill.h"
#include "util.h"

bool sg_color(FILE *f)
{
    const char *nc = getenv("NO_COLOR");
    return isatty(fileno(f)) && !(nc && *nc);
}

const char *sg_risk_badge(FILE *f, enum sg_risk r)
{
    if (!sg_color(f))
        return r == SG_RISK_LOW ? "[low]" : r == SG_RISK_MEDIUM ? "[med]" : "[HIGH]";
    return r == SG_RISK_LOW      ? "\033[32m[low]\033[0m"
           : r == SG_RISK_MEDIUM ? "\033[33m[med]\033[0m"
                                 : "\033[1;31m[HIGH]\033[0m";
}

void sg_print_diag(FILE *f, const struct sg_diag *g)
{
    cleanup_free char *line = sg_diag_format(g);
    cleanup_free char *t = sg_sanitize_str(line, 0);
    if (sg_color(f)) {
        /* colour the severity word only */
        const char *word = g->sev == SG_ERROR ? ": error: " : ": warning: ";
        char *at = strstr(t, word);
        if (at) {
            fprintf(f, "%.*s: %s%s\033[0m: %s\n", (int)(at - t), t,
                    g->sev == SG_ERROR ? "\033[1;31m" : "\033[1;35m",
                    g->sev == SG_ERROR ? "error" : "warning", at + strlen(word));
            return;
        }
    }
    fprintf(f, "%s\n", t);
}

void sg_print_diags(FILE *f, const struct sg_diags *d)
{
    for (size_t i = 0; i < d->n; i++)
        sg_print_diag(f, &d->v[i]);
}

int sg_load_error(const char *path, int err)
{
    cleanup_free char *p = sg_sanitize_str(path, 0);
    if (err == -ENODATA)
        fprintf(stderr, "skillgate: %s: not a skill (no SKILL.md or skillsandbox.yaml)\n", p);
    else if (err == -ENOTDIR)
        fprintf(stderr, "skillgate: %s: not a skill folder\n", p);
    else
        fprintf(stderr, "skillgate: %s: %s\n", p, strerror(-err));
    return SG_EXIT_USAGE;
}

/* A plugin's skills that end in the name ("plug:NAME" for "NAME"), said
 * as "did you mean a, b?" (at most five) when say; false when none. */
static bool plugin_names_like(const char *arg, const struct sg_discovery *d, bool say)
{
    size_t al = strlen(arg), shown = 0;
    for (size_t i = 0; i < d->n && shown < 5; i++) {
        const char *n = d->v[i].name, *colon = strrchr(n, ':');
        size_t nl = strlen(n);
        bool like = (colon && !strcmp(colon + 1, arg)) ||
                    (nl > al && n[nl - al - 1] == ':' && !strcmp(n + nl - al, arg));
        if (!like || d->v[i].shadowed_by != SIZE_MAX)
            continue;
        if (!say)
            return true;
        cleanup_free char *s = sg_sanitize_str(n, 0);
        fprintf(stderr, "%s %s", shown++ ? "," : "did you mean", s);
    }
    if (shown)
        fputs("?\n", stderr);
    return shown > 0;
}

/* No skill has that name: where discovery looked and the plugin names
 * that end in it; else the one a typo most likely meant, when one is near
 * (the places are beside the point then); else where discovery looked. */
static int no_such_name(const char *arg, const struct sg_discovery *d)
{
    cleanup_free char *a = sg_sanitize_str(arg, 0);
    size_t near = plugin_names_like(arg, d, false) ? SIZE_MAX : sg_discovery_nearest(d, arg);
    if (near != SIZE_MAX) {
        cleanup_free char *s = sg_sanitize_str(d->v[near].name, 0);
        fprintf(stderr, "skillgate: %s: no such folder, and no skill of that name; did you mean "
                        "\"%s\"?\n", a, s);
        return SG_EXIT_USAGE;
    }
    fprintf(stderr, "skillgate: %s: no such folder, and no skill of that name in:\n", a);
#define X(id, name, desc)                                                                  \
    if (SG_SRC_##id != SG_SRC_CLI)                                                         \
        fprintf(stderr, "  %-8s %s\n", name, desc);
    SG_SOURCES(X)
#undef X
    if (!plugin_names_like(arg, d, true))
        fputs("(skillgate list shows the skills found there)\n", stderr);
    return SG_EXIT_USAGE;
}

/* A name that is also the folder another skill was installed in (ClawHub's
 * slug: agent-wallet named by one skill, the folder of another): which one
 * the name took, and how to name the other. */
static void other_by_folder(const char *arg, const struct sg_skill *sk,
                            const struct sg_discovery *d)
{
    size_t j = sg_discovery_find_folder(d, arg);
    if (j == SIZE_MAX || !strcmp(d->v[j].skill->root, sk->root))
        return;
    cleanup_free char *a = sg_sanitize_str(arg, 0);
    cleanup_free char *took = sg_sanitize_str(sk->display, 0);
    cleanup_free char *p = sg_sanitize_str(d->v[j].skill->display, 0);
    fprintf(stderr, "skillgate: note: \"%s\" names the skill in %s; another skill is kept in "
                    "a folder of that name, %s: name it by that path\n", a, took, p);
}

static int ambiguous(const char *arg, const struct sg_discovery *d)
{
    cleanup_free char *m = sg_resolve_ambiguous(d, arg);
    fprintf(stderr, "skillgate: %s\n", m);
    return SG_EXIT_USAGE;
}

int sg_load_skill_arg(const char *arg, const char *cwd, struct sg_skill **out)
{
    struct sg_discovery d;
    bool path = false;
    int r = sg_skill_resolve(arg, cwd, out, &d, &path); /* MCP's reading too */
    if (r == 0 && !path)
        other_by_folder(arg, *out, &d);
    int rc = r == 0 ? 0 : path ? sg_load_error(arg, r) : r == -ENOTUNIQ ? ambiguous(arg, &d)
                                                                        : no_such_name(arg, &d);
    sg_discovery_free(&d);
    return rc;
}

void sg_print_json(FILE *f, json_t *j)
{
    /* One write: json_dumpf would call fwrite per token. */
    cleanup_free char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (s) {
        fputs(s, f);
        fputc('\n', f);
    }
}


const char *sg_recovered_notice;

void sg_recover_runs(void)
{
    struct sg_recovered *v;
    size_t n = sg_journal_recover(&v);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        cleanup_free char *skill = sg_sanitize_str(v[i].skill, 0);
        if (v[i].err)
            fprintf(stderr, "skillgate: the run %s of %s ended without its records, and they "
                            "still cannot be written: %s (its journal stays)\n",
                    v[i].run_id, skill, strerror(-v[i].err));
        else
            fprintf(stderr, "skillgate: recovered the run %s of %s (%s); trace %s\n", v[i].run_id,
                    skill, v[i].end_reason, v[i].trace_path);
        ok += !v[i].err;
    }
    static char notice[256];
    if (ok) {
        snprintf(notice, sizeof notice,
                 "%zu run%s whose broker was killed recovered from %s journal%s: see Traces", ok,
                 ok == 1 ? "" : "s", ok == 1 ? "its" : "their", ok == 1 ? "" : "s");
        sg_recovered_notice = notice;
    }
    sg_recovered_free(v, n);
}
