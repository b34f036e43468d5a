#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "sanitize.h"
#include "skill.h"
#include "util.h"

int cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"strict", no_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {0},
    };
    bool strict = false, quiet = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hsq", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "validate");
            printf("\nEach problem is printed as FILE:LINE:COL: error|warning: field: message.\n"
                   "  -s, --strict   warnings fail the validation too\n"
                   "  -q, --quiet    print problems only, no per-skill summary\n"
                   "Exit status: 0 valid, 1 a skill has errors, 2 a path is not a skill.\n");
            return SG_EXIT_OK;
        case 's':
            strict = true;
            break;
        case 'q':
            quiet = true;
            break;
        default:
            sg_command_usage(stderr, "validate");
            return SG_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        sg_command_usage(stderr, "validate");
        return SG_EXIT_USAGE;
    }
    int rc = SG_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct sg_skill *sk = NULL;
        int r = sg_skill_load(argv[i], &sk);
        if (r < 0) {
            sg_load_error(argv[i], r);
            rc = SG_EXIT_USAGE;
            continue;
        }
        sg_print_diags(stderr, &sk->diags);
        size_t ne = sg_diags_count(&sk->diags, SG_ERROR);
        size_t nw = sg_diags_count(&sk->diags, SG_WARNING);
        if (!quiet) {
            cleanup_free char *disp = sg_sanitize_str(sk->display, 0);
            if (ne)
                printf("%s: invalid (%zu error%s, %zu warning%s)\n", disp, ne, ne == 1 ? "" : "s",
                       nw, nw == 1 ? "" : "s");
            else if (nw)
                printf("%s: valid, %zu warning%s\n", disp, nw, nw == 1 ? "" : "s");
            else
                printf("%s: valid\n", disp);
        }
        if ((ne || (strict && nw)) && rc == SG_EXIT_OK)
            rc = SG_EXIT_INVALID;
        sg_skill_free(sk);
    }
    return rc;
}
