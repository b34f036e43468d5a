/* skillgate traces list|diff|report: the past runs, what one run reached
 * for that another did not, and one run as a file to hand on. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "report.h"
#include "ssexport.h"
#include "sanitize.h"
#include "traceindex.h"
#include "tracediff.h"
#include "util.h"

/* The rows of one skill's runs, oldest first. */
static json_t *rows_of_skill(json_t *rows, const char *skill)
{
    json_t *out = json_array();
    size_t i;
    json_t *r;
    json_array_foreach (rows, i, r) {
        const char *s = json_string_value(json_object_get(r, "skill_name"));
        if (s && !strcmp(s, skill))
            json_array_append(out, r);
    }
    return out;
}

/* A trace named on the command line: a file's path; a trace's file name
 * or run id in the traces folder; SKILL (its latest run) or SKILL~N (the
 * one N runs before). NULL after saying why. */
static json_t *load_arg(int dfd, json_t *rows, const char *arg, char **shown)
{
    struct stat st;
    if (strchr(arg, '/') || (stat(arg, &st) == 0 && S_ISREG(st.st_mode))) {
        cleanup_free char *text = NULL;
        size_t len;
        int r = sg_read_file_capped(arg, SG_TRACE_FILE_MAX, &text, &len);
        json_t *doc = r < 0 ? NULL : json_loadb(text, len, 0, NULL);
        if (!json_is_object(doc) || !json_object_get(doc, "events")) {
            cleanup_free char *s = sg_sanitize_str(arg, 0);
            fprintf(stderr, "skillgate: %s: %s\n", s,
                    r < 0 ? strerror(-r) : "not a skillgate trace (trace.json)");
            json_decref(doc);
            return NULL;
        }
        *shown = sg_xstrdup(arg);
        return doc;
    }
    cleanup_free char *as_id = sg_xasprintf("-%s.json", arg);
    cleanup_free char *as_file = sg_xasprintf("%s.json", arg);
    json_t *hit = NULL;
    size_t i, hits = 0;
    json_t *r;
    json_array_foreach (rows, i, r) {
        const char *f = json_string_value(json_object_get(r, "file"));
        if (f && (!strcmp(f, arg) || !strcmp(f, as_file) || sg_str_has_suffix(f, as_id))) {
            hit = r;
            hits++;
        }
    }
    if (!hits) {
        /* SKILL or SKILL~N */
        cleanup_free char *skill = sg_xstrdup(arg);
        char *tilde = strrchr(skill, '~');
        long long back = 0;
        if (tilde && sg_parse_ll(tilde + 1, 0, 100000, &back) == 0)
            *tilde = 0;
        json_t *mine = rows_of_skill(rows, skill);
        size_t m = json_array_size(mine);
        if (m > (size_t)back) {
            hit = json_array_get(mine, m - 1 - (size_t)back); /* rows hold it too */
            hits = 1;
        } else if (m) {
            cleanup_free char *s = sg_sanitize_str(skill, 0);
            fprintf(stderr, "skillgate: %s has %zu trace%s: there is no %s~%lld\n", s, m,
                    m == 1 ? "" : "s", s, back);
            json_decref(mine);
            return NULL;
        }
        json_decref(mine);
    }
    cleanup_free char *s = sg_sanitize_str(arg, 0);
    if (hits > 1) {
        fprintf(stderr, "skillgate: %s names %zu traces: give the whole file name\n", s, hits);
        return NULL;
    }
    if (!hit) {
        fprintf(stderr,
                "skillgate: no trace %s: not a file, nor a trace's name or run id, nor a skill "
                "with traces (skillgate traces list)\n", s);
        return NULL;
    }
    const char *file = json_string_value(json_object_get(hit, "file"));
    json_t *doc = sg_trace_load_at(dfd, file);
    if (!doc) {
        cleanup_free char *f = sg_sanitize_str(file, 0);
        fprintf(stderr, "skillgate: %s: cannot be read as a trace\n", f);
        return NULL;
    }
    *shown = sg_xstrdup(file);
    return doc;
}

static int list(json_t *rows, const char *skill, bool as_json)
{
    json_t *mine = skill ? rows_of_skill(rows, skill) : json_incref(rows);
    if (as_json) {
        sg_print_json(stdout, mine);
    } else {
        size_t i;
        json_t *r;
        json_array_foreach (mine, i, r) {
            json_t *ex = json_object_get(r, "exit_code");
            char code[24] = "-";
            if (json_is_integer(ex))
                snprintf(code, sizeof code, "%lld", (long long)json_integer_value(ex));
            cleanup_free char *line = sg_xasprintf(
                "%s  %-20s %-10s %4s  %-8s %3lld enforcements  %s",
                json_string_value(json_object_get(r, "started_at")) ?: "?",
                json_string_value(json_object_get(r, "skill_name")) ?: "?",
                json_string_value(json_object_get(r, "status")) ?: "?", code,
                json_string_value(json_object_get(r, "max_severity")) ?: "?",
                (long long)json_integer_value(json_object_get(r, "enforcements")),
                json_string_value(json_object_get(r, "file")) ?: "?");
            sg_print_safe(stdout, line);
            fputc('\n', stdout);
        }
        if (!json_array_size(mine))
            printf(skill ? "no traces of that skill\n" : "no traces\n");
    }
    json_decref(mine);
    return SG_EXIT_OK;
}

struct report_opts {
    int fmt;             /* SG_REPORT_HTML (the default) or SG_REPORT_MD */
    const char *out;     /* -o FILE; NULL: stdout */
    const char *against; /* --against TRACE; NULL: the previous version's run */
    bool no_diff;
};

/* The run to diff against: --against, else the latest earlier run of the
 * skill with another content digest (none: NULL, said in the report). */
static json_t *report_prev(int dfd, json_t *rows, json_t *doc, const struct report_opts *o,
                           bool *failed)
{
    cleanup_free char *shown = NULL;
    if (o->no_diff)
        return NULL;
    if (o->against) {
        json_t *p = load_arg(dfd, rows, o->against, &shown);
        *failed = !p;
        return p;
    }
    json_t *row = sg_report_prev_row(rows, doc);
    const char *file = json_string_value(json_object_get(row, "file"));
    return file && dfd >= 0 ? sg_trace_load_at(dfd, file) : NULL;
}

static int report(int dfd, json_t *rows, const char *arg, const struct report_opts *o)
{
    cleanup_free char *shown = NULL;
    json_t *doc = load_arg(dfd, rows, arg, &shown);
    bool failed = false;
    json_t *prev = doc ? report_prev(dfd, rows, doc, o, &failed) : NULL;
    if (!doc || failed) {
        json_decref(doc);
        return SG_EXIT_USAGE;
    }
    FILE *f = stdout;
    if (o->out) {
        /* private as the trace it comes from (what the skill printed is in it) */
        int fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f) {
            cleanup_free char *s = sg_sanitize_str(o->out, 0);
            fprintf(stderr, "skillgate: %s: %s\n", s, strerror(errno));
            if (fd >= 0)
                close(fd);
            json_decref(doc);
            json_decref(prev);
            return SG_EXIT_USAGE;
        }
    }
    int r = sg_report_write(doc, prev, o->fmt, f);
    if ((f != stdout && fclose(f) != 0) || (f == stdout && fflush(f) != 0))
        r = r ? r : -EIO;
    if (r < 0)
        fprintf(stderr, "skillgate: the report could not be written: %s\n", strerror(-r));
    json_decref(doc);
    json_decref(prev);
    return r < 0 ? SG_EXIT_USAGE : SG_EXIT_OK;
}

/* One trace in SkillSandbox's own trace format (ssexport.h), to stdout or
 * FILE (private: what the skill printed is in it). */
static int export_ss(int dfd, json_t *rows, const char *arg, const char *out)
{
    cleanup_free char *shown = NULL;
    json_t *doc = load_arg(dfd, rows, arg, &shown);
    if (!doc)
        return SG_EXIT_USAGE;
    json_t *ss = sg_trace_skillsandbox(doc);
    json_decref(doc);
    FILE *f = stdout;
    int fd = -1;
    if (out) {
        fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f) {
            cleanup_free char *s = sg_sanitize_str(out, 0);
            fprintf(stderr, "skillgate: %s: %s\n", s, strerror(errno));
            if (fd >= 0)
                close(fd);
            json_decref(ss);
            return SG_EXIT_USAGE;
        }
    }
    int r = json_dumpf(ss, f, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    fputc('\n', f);
    if ((f != stdout && fclose(f) != 0) || (f == stdout && fflush(f) != 0) || r != 0) {
        fprintf(stderr, "skillgate: the export could not be written\n");
        json_decref(ss);
        return SG_EXIT_USAGE;
    }
    json_decref(ss);
    return SG_EXIT_OK;
}

static void traces_help(void)
{
    sg_command_usage(stdout, "traces");
    printf("\n  list [SKILL]        the past runs, oldest first\n"
           "  diff A B            what run B reached for that run A did not: new hosts,\n"
           "                      programs, paths, denials, limits, classes; what went\n"
           "                      away; how its end, duration and output changed\n"
           "  diff SKILL          its last run against the one before\n"
           "  report TRACE        one run as a self-contained file to hand on: the skill,\n"
           "                      its digest and manifest, the verdict and classes (MITRE\n"
           "                      ids), a timeline, every decision and who made it, every\n"
           "                      refused attempt, the diff against the previous version's\n"
           "                      run, the commands to reproduce it\n"
           "A trace is named by its file (a path, or its name in the traces folder), its\n"
           "run id, SKILL (that skill's latest run) or SKILL~N (N runs before it).\n"
           "  --json              machine-readable (skillgate.tracediff/1)\n"
           "  --html              report: HTML, no script, nothing loaded (the default)\n"
           "  --md                report: Markdown, for a pull request or an issue\n"
           "  -o, --output FILE   report: write to FILE instead of stdout\n"
           "  --against TRACE     report: diff against this run instead\n"
           "  --no-diff           report: no diff\n"
           "  export TRACE        the run in SkillSandbox's trace format, for its readers\n"
           "                      (-o FILE: write there); docs/json.md says what maps how\n");
}

int cmd_traces(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'}, {"json", no_argument, NULL, 'j'},
        {"html", no_argument, NULL, 'H'},  {"md", no_argument, NULL, 'M'},
        {"output", required_argument, NULL, 'o'}, {"against", required_argument, NULL, 'a'},
        {"no-diff", no_argument, NULL, 'N'}, {0}};
    int c;
    bool as_json = false;
    struct report_opts ro = {.fmt = SG_REPORT_HTML};
    optind = 1;
    while ((c = sg_getopt(argc, argv, "hjo:", opts)) != -1) {
        switch (c) {
        case 'j': as_json = true; continue;
        case 'H': ro.fmt = SG_REPORT_HTML; continue;
        case 'M': ro.fmt = SG_REPORT_MD; continue;
        case 'o': ro.out = optarg; continue;
        case 'a': ro.against = optarg; continue;
        case 'N': ro.no_diff = true; continue;
        case 'h': traces_help(); return SG_EXIT_OK;
        }
        sg_command_usage(stderr, "traces");
        return SG_EXIT_USAGE;
    }
    const char *verb = optind < argc ? argv[optind] : "list";
    int nargs = argc - optind - 1;
    bool is_list = !strcmp(verb, "list") && nargs <= 1;
    bool is_diff = !strcmp(verb, "diff") && nargs >= 1 && nargs <= 2;
    bool is_report = !strcmp(verb, "report") && nargs == 1;
    bool is_export = !strcmp(verb, "export") && nargs == 1;
    if (!is_list && !is_diff && !is_report && !is_export) {
        static const char *const verbs[] = {"list", "diff", "report", "export", NULL};
        return sg_subcommand_error("traces", verb, verbs);
    }
    cleanup_free char *state = sg_state_dir();
    cleanup_free char *dir = sg_xasprintf("%s/traces", state);
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 && errno != ENOENT) {
        fprintf(stderr, "skillgate: %s: %s\n", dir, strerror(errno));
        return SG_EXIT_USAGE;
    }
    json_t *rows = dfd >= 0 ? sg_trace_index_rows(dfd) : json_array();
    int rc = SG_EXIT_OK;
    if (is_list) {
        rc = list(rows, nargs ? argv[optind + 1] : NULL, as_json);
        json_decref(rows);
        return rc;
    }
    if (is_export) {
        rc = export_ss(dfd, rows, argv[optind + 1], ro.out);
        json_decref(rows);
        return rc;
    }
    if (is_report) {
        rc = report(dfd, rows, argv[optind + 1], &ro);
        json_decref(rows);
        return rc;
    }
    const char *an = argv[optind + 1], *bn = nargs == 2 ? argv[optind + 2] : NULL;
    cleanup_free char *prev = NULL;
    if (!bn) {
        prev = sg_xasprintf("%s~1", an);
        bn = an;
        an = prev;
    }
    cleanup_free char *sa = NULL, *sb = NULL;
    json_t *a = load_arg(dfd, rows, an, &sa);
    json_t *b = a ? load_arg(dfd, rows, bn, &sb) : NULL;
    if (!a || !b) {
        rc = SG_EXIT_USAGE;
    } else {
        json_t *d = sg_trace_diff(a, b, sa, sb);
        if (as_json) {
            sg_print_json(stdout, d);
        } else {
            cleanup_free char *text = sg_trace_diff_text(d);
            fputs(text, stdout);
        }
        json_decref(d);
    }
    json_decref(a);
    json_decref(b);
    json_decref(rows);
    return rc;
}
