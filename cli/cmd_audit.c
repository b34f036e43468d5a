/* skillgate audit verify|tail|show: the hash-chained log of runs and decisions. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "sanitize.h"
#include "util.h"

static int verify(const char *path)
{
    struct sg_audit_check c;
    int r = sg_audit_verify(path, &c);
    if (r == -ENOENT) {
        printf("%s: no audit log yet\n", path);
        return SG_EXIT_OK;
    }
    if (r < 0 && r != -EBADMSG) {
        fprintf(stderr, "skillgate: %s: %s\n", path, strerror(-r));
        return SG_EXIT_USAGE;
    }
    if (c.torn_taken)
        printf("%s: %zu torn line%s (a crash mid-write) taken off by a later append, each "
               "recorded in the chain (torn_line)\n",
               path, c.torn_taken, c.torn_taken == 1 ? "" : "s");
    if (c.torn)
        printf("%s: 1 torn line (a crash mid-write) ends the log without its newline: not a "
               "record; the next append takes it off and records it\n", path);
    if (r == -EBADMSG && c.bad_line) {
        printf("%s:%zu: the chain breaks here: %s (%zu good records before it)\n", c.file,
               c.bad_line, c.why, c.records);
        return SG_EXIT_INVALID;
    }
    if (r == -EBADMSG) {
        cleanup_free char *t = sg_xasprintf("%s: %s", c.trace, c.why);
        sg_print_safe(stdout, t); /* a file name in the folder: anyone's bytes */
        fputc('\n', stdout);
        printf("%s: %zu records, chain intact in itself, but %zu trace%s name%s a head it does "
               "not hold: the log is not the one those runs wrote\n",
               path, c.records, c.traces_bad, c.traces_bad == 1 ? "" : "s",
               c.traces_bad == 1 ? "s" : "");
        return SG_EXIT_INVALID;
    }
    if (c.files > 1)
        printf("%s: %zu records in %zu files, chain intact\n", path, c.records, c.files);
    else
        printf("%s: %zu records, chain intact\n", path, c.records);
    if (c.head_seq)
        printf("head: record #%lld %s\n", c.head_seq, c.head);
    printf("traces: %zu name a record of the chain as their run's last", c.traces);
    if (c.traces_old)
        printf(" (%zu older ones name none)", c.traces_old);
    printf("\n");
    return SG_EXIT_OK;
}

static void print_record(json_t *rec)
{
    const char *type = json_string_value(json_object_get(rec, "type"));
    cleanup_free char *s = NULL;
    if (type && !strcmp(type, "run")) {
        s = sg_xasprintf("#%lld %s run %s %s: %s (exit %lld, %lld ms)",
                         (long long)json_integer_value(json_object_get(rec, "seq")),
                         json_string_value(json_object_get(rec, "started_at")) ?: "?",
                         json_string_value(json_object_get(rec, "run_id")) ?: "?",
                         json_string_value(json_object_get(rec, "skill")) ?: "?",
                         json_string_value(json_object_get(rec, "status")) ?: "?",
                         (long long)json_integer_value(json_object_get(rec, "exit_code")),
                         (long long)json_integer_value(json_object_get(rec, "duration_ms")));
    } else {
        s = sg_xasprintf("#%lld %s decision %s %s: %s %s -> %s by %s",
                         (long long)json_integer_value(json_object_get(rec, "seq")),
                         json_string_value(json_object_get(rec, "time")) ?: "?",
                         json_string_value(json_object_get(rec, "run_id")) ?: "?",
                         json_string_value(json_object_get(rec, "skill")) ?: "?",
                         json_string_value(json_object_get(rec, "tool")) ?: "?",
                         json_string_value(json_object_get(rec, "request")) ?: "?",
                         json_string_value(json_object_get(rec, "decision")) ?: "?",
                         json_string_value(json_object_get(rec, "decided_by")) ?: "?");
    }
    sg_print_safe(stdout, s);
    fputc('\n', stdout);
}

static int each(const char *path, const char *run, long tail)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "skillgate: %s: %s\n", path, strerror(errno));
        return SG_EXIT_USAGE;
    }
    json_t *all = json_array();
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *rec = json_loads(line, 0, NULL);
        if (!rec)
            continue;
        const char *id = json_string_value(json_object_get(rec, "run_id"));
        if (run && (!id || strcmp(id, run) != 0)) {
            json_decref(rec);
            continue;
        }
        json_array_append_new(all, rec);
    }
    free(line);
    fclose(f);
    size_t n = json_array_size(all);
    size_t from = tail > 0 && (size_t)tail < n ? n - (size_t)tail : 0;
    for (size_t i = from; i < n; i++) {
        if (run) {
            json_t *r = json_array_get(all, i);
            sg_print_json(stdout, r);
        } else {
            print_record(json_array_get(all, i));
        }
    }
    json_decref(all);
    if (run && n == 0) {
        fprintf(stderr, "skillgate: no records for run %s\n", run);
        return SG_EXIT_INVALID;
    }
    return SG_EXIT_OK;
}

int cmd_audit(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"file", required_argument, NULL, 'f'},
                                         {"lines", required_argument, NULL, 'n'},
                                         {0}};
    cleanup_free char *path = sg_audit_path();
    long long lines = 20;
    int c;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "hf:n:", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "audit");
            printf("\n  verify          check the hash chain, and the traces against it; exit 1\n"
                   "                  at the first bad record or a trace whose head is gone\n"
                   "  tail [-n N]     the last N records, one line each\n"
                   "  show RUN        every record of one run, as JSON\n"
                   "  -f, --file F    another audit log; default:\n                  %s\n", path);
            return SG_EXIT_OK;
        case 'f':
            free(path);
            path = sg_xstrdup(optarg);
            break;
        case 'n':
            if (sg_parse_ll(optarg, 1, 1000000, &lines) < 0) {
                fprintf(stderr, "skillgate: -n takes a count\n");
                return SG_EXIT_USAGE;
            }
            break;
        default:
            sg_command_usage(stderr, "audit");
            return SG_EXIT_USAGE;
        }
    }
    const char *verb = optind < argc ? argv[optind] : "";
    if (!strcmp(verb, "verify") && optind + 1 == argc)
        return verify(path);
    if (!strcmp(verb, "tail") && optind + 1 == argc)
        return each(path, NULL, (long)lines);
    if (!strcmp(verb, "show") && optind + 2 == argc)
        return each(path, argv[optind + 1], 0);
    static const char *const verbs[] = {"verify", "tail", "show", NULL};
    return sg_subcommand_error("audit", verb, verbs);
}
