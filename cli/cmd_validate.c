#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "discover.h"
#include "protected.h"
#include "sanitize.h"
#include "skill.h"
#include "util.h"

/* One skill's problems and summary; the exit status it calls for. */
static int validate_one(struct sg_skill *sk, bool strict, bool quiet)
{
    sg_print_diags(stderr, &sk->diags);
    /* what the skill's uid meets in its write folders, run from here */
    struct sg_run_identity id;
    sg_run_identity(&id);
    for (size_t i = 0; !quiet && i < sk->policy.nwrite; i++) {
        cleanup_free char *note = sg_write_folder_note(sk->policy.write[i].path, &id);
        cleanup_free char *shown = note ? sg_sanitize_str(note, 0) : NULL;
        if (shown)
            fprintf(stderr, "note: %s\n", shown);
        cleanup_free char *prot = sg_protected_note(sk->policy.write[i].path);
        cleanup_free char *pshown = prot ? sg_sanitize_str(prot, 0) : NULL;
        if (pshown)
            fprintf(stderr, "note: %s %s\n", sk->policy.write[i].path, pshown);
    }
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
    return ne || (strict && nw) ? SG_EXIT_INVALID : SG_EXIT_OK;
}

/* A folder that is no skill but holds skills (a collection, a plugin's
 * skills/ folder): each one found in it, as discovery finds them. -1 when
 * it holds none. */
static int validate_folder(const char *dir, bool strict, bool quiet)
{
    struct sg_discovery d;
    const char *dirs[] = {dir};
    struct sg_discover_opts o = {.dirs = dirs, .ndirs = 1};
    sg_discover(&o, &d);
    if (!d.n) {
        sg_discovery_free(&d);
        return -1;
    }
    int rc = SG_EXIT_OK;
    size_t bad = 0, n = 0;
    for (size_t i = 0; i < d.n; i++) {
        struct sg_skill *sk = NULL;
        if (sg_skill_load(d.v[i].skill->root, &sk) < 0)
            continue;
        n++;
        if (validate_one(sk, strict, quiet) != SG_EXIT_OK) {
            rc = SG_EXIT_INVALID;
            bad++;
        }
        sg_skill_free(sk);
    }
    if (!quiet) {
        cleanup_free char *shown = sg_sanitize_str(dir, 0);
        printf("%s: %zu skill%s, %zu valid, %zu not\n", shown, n, n == 1 ? "" : "s", n - bad,
               bad);
    }
    sg_discovery_free(&d);
    return rc;
}

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
    while ((c = sg_getopt(argc, argv, "hsq", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "validate");
            printf("\nEach problem is printed as FILE:LINE:COL: error|warning: field: message.\n"
                   "  -s, --strict   warnings fail the validation too\n"
                   "  -q, --quiet    print problems only, no per-skill summary\n"
                   "A folder that is no skill but holds skills is validated skill by skill;\n"
                   "a NAME with no '/' that is no file here is the skill `run NAME` takes\n"
                   "(a plugin's plugin:skill too). A skill found where OpenClaw keeps skills,\n"
                   "or carrying its metadata, is judged by OpenClaw's own rules.\n"
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
        struct stat st;
        if (argv[i][0] && !strchr(argv[i], '/') && lstat(argv[i], &st) < 0) {
            /* a skill's name, found as `run NAME` finds it (a plugin's
             * "plugin:skill" too): one function for both */
            if (sg_load_skill_arg(argv[i], NULL, &sk) != 0) {
                rc = SG_EXIT_USAGE;
                continue;
            }
            int one = validate_one(sk, strict, quiet);
            if (one != SG_EXIT_OK && rc == SG_EXIT_OK)
                rc = one;
            sg_skill_free(sk);
            continue;
        }
        int r = sg_skill_load(argv[i], &sk), v;
        if (r == -ENODATA && (v = validate_folder(argv[i], strict, quiet)) >= 0) {
            if (v != SG_EXIT_OK && rc == SG_EXIT_OK)
                rc = v;
            continue;
        }
        if (r < 0) {
            sg_load_error(argv[i], r);
            rc = SG_EXIT_USAGE;
            continue;
        }
        int one = validate_one(sk, strict, quiet);
        if (one != SG_EXIT_OK && rc == SG_EXIT_OK)
            rc = one;
        sg_skill_free(sk);
    }
    return rc;
}
