/* skillgate grants list|revoke N: the "always" decisions in grants.yaml. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "perm.h"
#include "sanitize.h"
#include "util.h"

int cmd_grants(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    cleanup_free char *path = sg_grants_path();
    while ((c = sg_getopt(argc, argv, "h", opts)) != -1) {
        if (c == 'h') {
            sg_command_usage(stdout, "grants");
            printf("\n  list        every grant: skill, content digest, rule, allow or deny\n"
                   "  revoke N    remove grant N (as numbered by list)\n"
                   "Grants live in\n  %s\neach pinned to a skill's content digest: changed code is asked "
                   "again.\n", path);
            return SG_EXIT_OK;
        }
        sg_command_usage(stderr, "grants");
        return SG_EXIT_USAGE;
    }
    const char *verb = optind < argc ? argv[optind] : "list";
    struct sg_diags d = {0};
    json_t *list = NULL;
    int r = sg_grants_list(path, &list, &d);
    sg_print_diags(stderr, &d);
    sg_diags_free(&d);
    if (r < 0) {
        json_decref(list);
        return SG_EXIT_USAGE;
    }
    int rc = SG_EXIT_OK;
    if (!strcmp(verb, "list") && optind + 1 >= argc) {
        size_t i;
        json_t *g;
        json_array_foreach(list, i, g)
        {
            cleanup_free char *line = sg_xasprintf(
                "%zu  %s  %s  %s %s  (%s)", i + 1,
                json_string_value(json_object_get(g, "skill")) ?: "?",
                json_string_value(json_object_get(g, "digest")) ?: "?",
                json_string_value(json_object_get(g, "effect")) ?: "?",
                json_string_value(json_object_get(g, "rule")) ?: "?",
                json_string_value(json_object_get(g, "created")) ?: "?");
            sg_print_safe(stdout, line);
            fputc('\n', stdout);
        }
        if (!json_array_size(list))
            printf("no grants (%s)\n", path);
    } else if (!strcmp(verb, "revoke") && optind + 2 == argc) {
        long long n;
        if (sg_parse_ll(argv[optind + 1], 1, (long long)json_array_size(list), &n) < 0) {
            fprintf(stderr, "skillgate: no grant %s (see skillgate grants list)\n", argv[optind + 1]);
            rc = SG_EXIT_USAGE;
        } else {
            json_array_remove(list, (size_t)n - 1);
            r = sg_grants_save(path, list);
            if (r < 0) {
                fprintf(stderr, "skillgate: %s: %s\n", path, strerror(-r));
                rc = SG_EXIT_USAGE;
            } else {
                printf("revoked grant %lld\n", n);
            }
        }
    } else {
        static const char *const verbs[] = {"list", "revoke", NULL};
        rc = sg_subcommand_error("grants", verb, verbs);
    }
    json_decref(list);
    return rc;
}
