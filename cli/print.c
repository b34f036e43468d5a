#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sanitize.h"
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

void sg_print_json(FILE *f, json_t *j)
{
    /* One write: json_dumpf would call fwrite per token. */
    cleanup_free char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (s) {
        fputs(s, f);
        fputc('\n', f);
    }
}

