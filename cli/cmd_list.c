#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "rating.h"
#include "cli.h"
#include "discover.h"
#include "sanitize.h"
#include "skill.h"
#include "skilljson.h"
#include "util.h"

static void print_skill(FILE *f, const struct sg_discovery *d, size_t i)
{
    const struct sg_found *fd = &d->v[i];
    const struct sg_skill *sk = fd->skill;
    const struct sg_policy *p = &sk->policy;
    cleanup_free char *name = sg_sanitize_str(fd->name, 0);
    cleanup_free char *one = sg_one_line(sk->description, 70);
    cleanup_free char *desc = sg_sanitize_str(one, 0);
    bool cut = sk->description && strlen(one) < strlen(sk->description);
    fprintf(f, "%-24s %s %s%s\n", name, sg_risk_badge(f, sg_skill_risk(sk, NULL, 0)), desc,
            cut ? "..." : "");
    fputs("    ", f);
    sg_print_safe(f, sk->display);
    fprintf(f, "  (%s, %s)", sg_source_name(fd->source), sg_mode_name(p->mode));
    if (fd->shadowed_by != SIZE_MAX)
        fputs("  SHADOWED", f);
    fputc('\n', f);
    if (fd->plugin) {
        fputs("    plugin ", f);
        sg_print_safe(f, fd->plugin->id);
        fputs(fd->plugin->enabled > 0    ? " (enabled in Claude Code)\n"
              : fd->plugin->enabled == 0 ? " (disabled in Claude Code)\n"
                                         : " (not named in enabledPlugins)\n",
              f);
    }
    fputs("    tools: ", f);
    if (!p->tools_restricted)
        fputs("any (allowed-tools is empty)", f);
    for (size_t k = 0; k < p->ntools; k++) {
        if (k)
            fputc(' ', f);
        sg_print_safe(f, p->tools[k].name);
        if (p->tools[k].scope) {
            fputc('(', f);
            sg_print_safe(f, p->tools[k].scope);
            fputc(')', f);
        }
        fputs(sg_risk_badge(f, p->tools[k].risk), f);
    }
    fputc('\n', f);
    for (size_t k = 0; k < sk->diags.n; k++) {
        fputs("    ", f);
        sg_print_diag(f, &sk->diags.v[k]);
    }
}

int cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {"all", no_argument, NULL, 'a'},
        {0},
    };
    bool json = false, all = false;
    int c;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "hja", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "list");
            printf("\nWithout DIR, skillgate looks in these places, highest precedence first:\n");
#define X(id, name, desc) \
    if (SG_SRC_##id != SG_SRC_CLI) \
        printf("  %-8s %s\n", name, desc);
            SG_SOURCES(X)
#undef X
            printf("With DIR, only there (each DIR may be a skill or hold skills); --all adds\n"
                   "the places above after the DIRs. When two skills share a name the one\n"
                   "found first wins and the other is listed as shadowed.\n"
                   "  --json   machine output (schema \"%s\", see docs/json.md)\n",
                   SG_LIST_SCHEMA);
            return SG_EXIT_OK;
        case 'j':
            json = true;
            break;
        case 'a':
            all = true;
            break;
        default:
            sg_command_usage(stderr, "list");
            return SG_EXIT_USAGE;
        }
    }
    struct sg_discover_opts o = {
        .dirs = (const char *const *)argv + optind,
        .ndirs = (size_t)(argc - optind),
        .defaults = optind == argc || all,
    };
    struct sg_discovery d;
    sg_discover(&o, &d);
    if (json) {
        json_t *j = sg_discovery_to_json(&d);
        sg_print_json(stdout, j);
        json_decref(j);
    } else {
        for (size_t i = 0; i < d.n; i++)
            print_skill(stdout, &d, i);
        size_t bad = 0;
        for (size_t i = 0; i < d.n; i++)
            bad += sg_skill_has_errors(d.v[i].skill);
        printf("%zu skill%s found, %zu with errors\n", d.n, d.n == 1 ? "" : "s", bad);
        if (!d.n && o.defaults)
            printf("(looked in the places skillgate list --help names, Claude Code's and "
                   "OpenClaw's; try: skillgate list DIR)\n");
    }
    sg_print_diags(stderr, &d.diags);
    int rc = sg_diags_count(&d.diags, SG_ERROR) ? SG_EXIT_USAGE : SG_EXIT_OK;
    sg_discovery_free(&d);
    return rc;
}
