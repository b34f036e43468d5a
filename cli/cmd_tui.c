/* skillgate tui [DIR...]: the terminal UI (also what `skillgate` alone opens
 * on a terminal). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcp.h"
#include "tui.h"
#include "util.h"

int cmd_tui(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"theme", required_argument, NULL, 't'},
        {"script", required_argument, NULL, 's'},
        {"size", required_argument, NULL, 'S'},
        {"prompt-timeout", required_argument, NULL, 'T'},
        {"list-themes", no_argument, NULL, 'L'},
        {"attach", no_argument, NULL, 'a'},
        {0},
    };
    struct tui_opts o = {.prompt_timeout = 60, .notice = sg_recovered_notice};
    int c;
    long long v;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "tui");
            printf("\n  DIR...               folders of skills to browse (default: the discovery\n"
                   "                       places, as skillgate list)\n"
                   "  --theme NAME         a theme from themes/ or ~/.config/skillgate/themes\n"
                   "                       (or a .yaml path); NO_COLOR means attributes only\n"
                   "  --list-themes        the themes found\n"
                   "  --attach             show the runs of agents using `skillgate serve` and\n"
                   "                       answer their requests (listens on attach.sock,\n"
                   "                       mode 0600, in $XDG_RUNTIME_DIR/skillgate, or\n"
                   "                       /run/skillgate for root, or the state folder's run/)\n"
                   "  --prompt-timeout S   an unanswered prompt is a deny after S seconds (60)\n"
                   "  --script FILE        headless: keys from FILE, screens dumped (for tests)\n"
                   "  --size COLSxROWS     the headless screen's size (80x24)\n");
            return SG_EXIT_OK;
        case 't': o.theme = optarg; break;
        case 'a': o.attach = true; break;
        case 's': o.script = optarg; break;
        case 'S': o.size = optarg; break;
        case 'T':
            if (sg_parse_ll(optarg, 1, 3600, &v) < 0) {
                fprintf(stderr, "skillgate: --prompt-timeout takes seconds, 1..3600\n");
                return SG_EXIT_USAGE;
            }
            o.prompt_timeout = (int)v;
            break;
        case 'L': {
            size_t n;
            char **names = tui_theme_list(&n);
            for (size_t i = 0; i < n; i++) {
                puts(names[i]);
                free(names[i]);
            }
            free(names);
            return SG_EXIT_OK;
        }
        default:
            sg_command_usage(stderr, "tui");
            return SG_EXIT_USAGE;
        }
    }
    o.dirs = (const char *const *)argv + optind;
    o.ndirs = (size_t)(argc - optind);
    return tui_main(&o);
}

int cmd_demo(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"auto", no_argument, NULL, 'a'},
        {"pace", required_argument, NULL, 'p'},
        {"theme", required_argument, NULL, 't'},
        {"keep", required_argument, NULL, 'k'},
        {0},
    };
    struct tui_opts o = {.prompt_timeout = 120, .demo = true, .demo_pace = 4};
    int c;
    long long v;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "demo");
            printf("\n  --auto        step by itself (for recordings); the risky request is denied\n"
                   "  --pace S      seconds between automatic steps (4)\n"
                   "  --theme NAME  a shipped theme (skillgate tui --list-themes)\n"
                   "  --keep DIR    copy the demo's records (traces, audit log) to DIR at the end\n\n"
                   "The demo has a world of its own: a state, config and home made for it and\n"
                   "removed at the end, so your grants, keys, theme and history change nothing\n"
                   "the audience sees, and its runs never land among your records.\n"
                   "Safe anywhere offline: the unsandboxed run happens in fresh user, network\n"
                   "and mount namespaces with only loopback, with fake credentials; \"the\n"
                   "internet\" is a stand-in on loopback. Needs python3, openssl and unshare.\n");
            return SG_EXIT_OK;
        case 'a': o.demo_auto = true; break;
        case 't': o.theme = optarg; break;
        case 'k': o.demo_keep = optarg; break;
        case 'p':
            if (sg_parse_ll(optarg, 1, 120, &v) < 0) {
                fprintf(stderr, "skillgate: --pace takes seconds, 1..120\n");
                return SG_EXIT_USAGE;
            }
            o.demo_pace = (int)v;
            break;
        default:
            sg_command_usage(stderr, "demo");
            return SG_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        sg_command_usage(stderr, "demo");
        return SG_EXIT_USAGE;
    }
    return tui_main(&o);
}

int cmd_serve(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        sg_command_usage(stdout, "serve");
        printf("\nAn MCP server on stdin/stdout (JSON-RPC 2.0, one message per line) with\n"
               "the tools list_skills, validate_skill, inspect_skill, run_skill and\n"
               "check_tool_permission. Approvals go to `skillgate tui --attach` when one\n"
               "runs, else to this terminal if there is one, else they are denied.\n");
        return SG_EXIT_OK;
    }
    if (argc > 1) {
        sg_command_usage(stderr, "serve");
        return SG_EXIT_USAGE;
    }
    return sg_mcp_serve(STDIN_FILENO, STDOUT_FILENO);
}
