/* skillgate hook [install|uninstall]: Claude Code's command hook (hook.h). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hook.h"
#include "util.h"

int cmd_hook(int argc, char **argv)
{
    const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
    bool project = false, user = false, dry = false, no_rewrite = false;
    const char *settings = NULL;
    static const struct option longopts[] = {
        {"project", no_argument, NULL, 'p'},  {"user", no_argument, NULL, 'u'},
        {"dry-run", no_argument, NULL, 'n'},  {"no-rewrite", no_argument, NULL, 'R'},
        {"settings", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    int ch;
    optind = sub ? 2 : 1;
    while ((ch = sg_getopt(argc, argv, "h", longopts)) != -1) {
        switch (ch) {
        case 'p': project = true; break;
        case 'u': user = true; break;
        case 'n': dry = true; break;
        case 'R': no_rewrite = true; break;
        case 's': settings = optarg; break;
        case 'h':
            printf("usage: skillgate hook                 answer one Claude Code hook event "
                   "(stdin)\n"
                   "       skillgate hook install   [--user|--project] [--dry-run] [--no-rewrite]\n"
                   "       skillgate hook uninstall [--user|--project] [--dry-run]\n\n"
                   "install adds skillgate as Claude Code's PreToolUse hook in\n"
                   "~/.claude/settings.json (--user, the default) or ./.claude/settings.json\n"
                   "(--project), after a backup, keeping every other byte. --dry-run prints the\n"
                   "diff. --no-rewrite: never turn a skill's script into a sandboxed run.\n");
            return SG_EXIT_OK;
        default:
            return SG_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "skillgate hook: unexpected argument '%s'\n", argv[optind]);
        return SG_EXIT_USAGE;
    }
    if (!sub) {
        if (project || user || dry || settings) {
            fprintf(stderr, "skillgate hook: --user, --project, --dry-run and --settings go with "
                            "install or uninstall\n");
            return SG_EXIT_USAGE;
        }
        return sg_hook_main(!no_rewrite);
    }
    bool un = !strcmp(sub, "uninstall");
    if (!un && strcmp(sub, "install")) {
        fprintf(stderr, "skillgate hook: unknown subcommand '%s' (install, uninstall)\n", sub);
        return SG_EXIT_USAGE;
    }
    if (project && user) {
        fprintf(stderr, "skillgate hook: --user or --project, not both\n");
        return SG_EXIT_USAGE;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "skillgate hook: cannot tell where skillgate is (/proc/self/exe)\n");
        return SG_EXIT_USAGE;
    }
    self[n] = '\0';
    struct sg_hook_install_opts o = {.uninstall = un, .project = project, .dry_run = dry,
                                     .no_rewrite = no_rewrite, .command = self,
                                     .settings = settings};
    return sg_hook_install(&o) < 0 ? SG_EXIT_USAGE : SG_EXIT_OK;
}
