#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "protected.h"
#include "digest.h"
#include "keephome.h"
#include "openclaw.h"
#include "plantext.h"
#include "sanitize.h"
#include "skill.h"
#include "skilljson.h"
#include "util.h"

static void origin(FILE *f, const struct sg_origin *o)
{
    fputs("  <- ", f);
    if (!o->file || !strcmp(o->file, "default")) {
        fprintf(f, "default%s%s", o->field && *o->field ? ": " : "", o->field ? o->field : "");
    } else if (!strcmp(o->file, "detected")) {
        fputs("detected by convention", f);
    } else {
        fputs(o->file, f);
        if (o->line)
            fprintf(f, ":%d:%d", o->line, o->col);
        if (o->field && *o->field) {
            fputc(' ', f);
            sg_print_safe(f, o->field);
        }
    }
    fputc('\n', f);
}

static void caps_text(FILE *f, unsigned caps)
{
    static const struct {
        unsigned bit;
        const char *text;
    } t[] = {{SG_CAP_READ_ROOT, "read skill root"},
             {SG_CAP_WRITE_ROOT, "write skill root"},
             {SG_CAP_EXEC, "run programs"},
             {SG_CAP_NETWORK, "network (declared hosts; others ask)"}};
    bool first = true;
    for (size_t i = 0; i < SG_ARRAY_LEN(t); i++) {
        if (caps & t[i].bit) {
            fprintf(f, "%s%s", first ? "" : ", ", t[i].text);
            first = false;
        }
    }
    if (first)
        fputs("(none known: treated as high risk)", f);
}

static void print_bins(FILE *f, const char *label, const struct sg_strv *bins, const char *how)
{
    if (!bins->n)
        return;
    fprintf(f, "  %-16s", label);
    for (size_t i = 0; i < bins->n; i++) {
        cleanup_free char *at = sg_openclaw_which(bins->v[i]);
        fputs(i ? ", " : "", f);
        sg_print_safe(f, bins->v[i]);
        fputs(at ? " -> " : " (not found)", f);
        if (at)
            sg_print_safe(f, at);
    }
    fprintf(f, "  (%s)\n", how);
}

/* ClawHub's runtime metadata: what it means here, each in a word. */
static void print_openclaw(FILE *f, const struct sg_openclaw *o)
{
    fprintf(f, "\nOpenClaw (metadata.%s: ClawHub's runtime metadata)\n", o->key);
    print_bins(f, "needs programs", &o->bins, "asked as Bash unless a rule allows them");
    print_bins(f, "any one of", &o->any_bins, "asked as Bash unless a rule allows it");
    if (o->primary_env) {
        fputs("  primary env     ", f);
        sg_print_safe(f, o->primary_env);
        fputs("  (passed: see Environment)\n", f);
    }
    for (size_t i = 0; i < o->config.n; i++) {
        fputs(i ? "                  " : "  reads config    ", f);
        sg_print_safe(f, o->config.v[i]);
        fputs("  (shown only: nothing of it is read or passed)\n", f);
    }
    for (size_t i = 0; i < o->install.n; i++) {
        fputs(i ? "                  " : "  install         ", f);
        sg_print_safe(f, o->install.v[i]);
        fputs("  (shown only: never run)\n", f);
    }
    for (size_t i = 0; i < o->os.n; i++) {
        fputs(i ? ", " : "  os              ", f);
        sg_print_safe(f, o->os.v[i]);
        if (i + 1 == o->os.n)
            fputc('\n', f);
    }
    if (o->homepage) {
        fputs("  homepage        ", f);
        sg_print_safe(f, o->homepage);
        fputc('\n', f);
    }
}

/* What the skill may reach: egress, published ports, host sockets. */
static void print_network(FILE *f, const struct sg_policy *p)
{
    fputs("\nNetwork egress\n", f);
    for (size_t i = 0; i < p->negress; i++) {
        fputs("  ", f);
        sg_print_dest(f, p->egress[i].domain, p->egress[i].ports, p->egress[i].nports);
        origin(f, &p->egress[i].origin);
    }
    if (!p->negress)
        fprintf(f, "  (none declared: %s)\n",
                p->caps & SG_CAP_NETWORK ? "every host asks for approval"
                                         : "every connection is refused");

    fputs("\nPorts published on this machine's 127.0.0.1 only (a page the skill serves), each\n"
          "at a port the kernel picks for the run (run --publish HOSTPORT:PORT names one)\n", f);
    for (size_t i = 0; i < p->nlisten; i++) {
        fprintf(f, "  the skill's :%u", p->listen[i]);
        origin(f, &p->listen_origin);
    }
    if (!p->nlisten)
        fprintf(f, "  (none declared: a port the skill listens on %s)\n",
                !p->tools_restricted || (p->caps & SG_CAP_NETWORK)
                    ? "asks to be published (Fetch 127.0.0.1:PORT)"
                                         : "is not published");

    fprintf(f, "\nHost unix sockets (a daemon outside the sandbox acts for the skill) %s\n",
            sg_risk_badge(f, SG_RISK_HIGH));
    for (size_t i = 0; i < p->nsockets; i++) {
        fputs("  connect ", f);
        sg_print_safe(f, p->sockets[i].path);
        origin(f, &p->sockets[i].origin);
    }
    if (!p->nsockets) {
        bool asks = !p->tools_restricted;
        for (size_t i = 0; i < p->ntools; i++)
            asks |= p->tools[i].id == SG_TOOL_CONNECT;
        fprintf(f, "  (none declared: %s)\n",
                asks ? "a connect to a host socket asks (Connect)" : "every host socket is refused");
    }
}

/* How it is started: the entrypoint, or the scripts to pick from. */
static void print_entry(FILE *f, const struct sg_policy *p)
{
    fputs("\nEntrypoint ", f);
    if (p->entry.command) {
        sg_print_safe(f, p->entry.command);
        for (size_t i = 0; i < p->entry.nargs; i++) {
            fputc(' ', f);
            sg_print_safe(f, p->entry.args[i]);
        }
        origin(f, &p->entry.origin);
    } else if (p->mode == SG_MODE_WASM) {
        sg_plan_print_wasm_policy(f, p);
    } else if (p->mode == SG_MODE_SCRIPTS) {
        fputs("(none: several scripts; run one with `skillgate run SKILL --script PATH [--] "
              "[ARG...]`)\n", f);
    } else {
        fputs("(none: instruction-only, the agent runs the tools)\n", f);
    }
    if (p->nscripts) {
        fputs("Scripts\n", f);
        for (size_t i = 0; i < p->nscripts; i++) {
            fputs("  ", f);
            sg_print_safe(f, p->scripts[i]);
            if (p->script_usage[i]) {
                fputs("    usage: ", f);
                sg_print_safe(f, p->script_usage[i]);
            }
            fputc('\n', f);
        }
    }
}

/* The skill's own home, kept between its runs (run/keephome.h): where,
 * how much, and whether it belongs to this content. */
static json_t *kept_home(const struct sg_skill *sk, const char *digest)
{
    cleanup_free char *dir = sg_keephome_dir(sk->name ? sk->name : sk->dirname, sk->root);
    struct sg_keephome_count c;
    cleanup_free char *had = NULL;
    if (!dir)
        return json_null();
    bool kept = sg_keephome_info(dir, &c, &had) == 0;
    return json_pack("{s:s, s:b, s:I, s:I, s:b}", "place", dir, "kept", kept, "files",
                     (json_int_t)(kept ? c.files : 0), "bytes", (json_int_t)(kept ? c.bytes : 0),
                     "current", kept && digest && had && !strcmp(had, digest));
}

static void print_home(FILE *f, json_t *h)
{
    if (!json_is_object(h))
        return;
    fputs("Home      ", f);
    if (json_is_true(json_object_get(h, "kept")))
        fprintf(f, "%lld files, %lld bytes kept from its runs (%s); ",
                (long long)json_integer_value(json_object_get(h, "files")),
                (long long)json_integer_value(json_object_get(h, "bytes")),
                json_is_true(json_object_get(h, "current"))
                    ? "for this content"
                    : "from another version of the skill: dropped at its next run");
    else
        fputs("nothing kept yet; ", f);
    fputs("its own, kept in ", f);
    sg_print_safe(f, json_string_value(json_object_get(h, "place")));
    fputs(" (run --fresh-home starts clean)\n", f);
}

static void print_human(FILE *f, const struct sg_skill *sk, const char *digest, size_t nfiles)
{
    const struct sg_policy *p = &sk->policy;
    fputs("Skill     ", f);
    sg_print_safe(f, sk->name ? sk->name : sk->dirname);
    fprintf(f, "  %s  mode: %s%s\n", sg_risk_badge(f, sg_policy_max_risk(p)),
            sg_mode_name(p->mode), p->fork_context ? " (context: fork)" : "");
    fputs("Location  ", f);
    sg_print_safe(f, sk->root);
    fputc('\n', f);
    if (sk->description) {
        fputs("About     ", f);
        cleanup_free char *one = sg_one_line(sk->description, 200);
        sg_print_safe(f, one);
        fputc('\n', f);
    }
    if (sk->version) {
        fputs("Version   ", f);
        sg_print_safe(f, sk->version);
        fputc('\n', f);
    }
    fprintf(f, "Files     %s%s%s\n", sk->skill_md ? "SKILL.md" : "",
            sk->skill_md && sk->sandbox_yaml ? ", " : "", sk->sandbox_yaml ? "skillsandbox.yaml" : "");
    if (digest)
        fprintf(f, "Digest    %s (%zu files)\n", digest, nfiles);
    json_t *home = kept_home(sk, digest);
    print_home(f, home);
    json_decref(home);

    fprintf(f, "\nTools%s\n", p->tools_restricted ? "" : "  (allowed-tools is empty: every tool "
                                                         "may be asked for; risky ones prompt)");
    for (size_t i = 0; i < p->ntools; i++) {
        const struct sg_tool *t = &p->tools[i];
        fputs("  ", f);
        sg_print_safe(f, t->name);
        if (t->scope) {
            fputc('(', f);
            sg_print_safe(f, t->scope);
            fputc(')', f);
        }
        fprintf(f, " %s ", sg_risk_badge(f, t->risk));
        caps_text(f, t->caps);
        origin(f, &t->origin);
    }

    fputs("\nFilesystem (read-only view of the host; credential paths masked)\n", f);
    for (size_t i = 0; i < p->nread; i++) {
        fputs("  read   ", f);
        sg_print_safe(f, p->read[i].path);
        origin(f, &p->read[i].origin);
    }
    struct sg_run_identity id;
    sg_run_identity(&id);
    for (size_t i = 0; i < p->nwrite; i++) {
        fputs("  write  ", f);
        sg_print_safe(f, p->write[i].path);
        origin(f, &p->write[i].origin);
        cleanup_free char *note = sg_write_folder_note(p->write[i].path, &id);
        if (note) {
            fputs("         ", f);
            sg_print_safe(f, note);
            fputc('\n', f);
        }
        cleanup_free char *prot = sg_protected_note(p->write[i].path);
        if (prot) {
            fputs("         ", f);
            sg_print_safe(f, prot);
            fputc('\n', f);
        }
    }
    for (size_t i = 0; i < p->ncwd_write; i++) {
        fputs("  write  ", f);
        sg_print_safe(f, p->cwd_write[i].declared);
        fputs(" (in the working folder a run starts in; made there if missing)", f);
        origin(f, &p->cwd_write[i].origin);
    }
    if (!p->nwrite && !p->ncwd_write)
        fputs("  write  (nothing declared: /tmp and HOME are private; other writes ask, when the skill may ask for Write)\n", f);

    print_network(f, p);

    fputs("\nEnvironment (everything else is stripped)\n", f);
    for (size_t i = 0; i < p->nenv; i++) {
        fputs("  ", f);
        sg_print_safe(f, p->env[i].name);
        origin(f, &p->env[i].origin);
    }
    fputs("  + SKILL_ID SKILL_NAME SKILL_INPUT SKILL_ROOT TIMEOUT_MS PATH HOME TMPDIR "
          "(set by skillgate)\n", f);

    if (sk->openclaw)
        print_openclaw(f, sk->openclaw);

    fprintf(f, "\nSyscalls  %s", sg_seccomp_profile_name(p->profile));
    origin(f, &p->profile_origin);

    fputs("\nLimits\n", f);
#define X(fl, key, def, min, max, unit)                                 \
    fprintf(f, "  %-20s %lld %s", key, p->limits.fl.value, unit);       \
    origin(f, &p->limits.fl.origin);
    SG_LIMITS(X)
#undef X

    print_entry(f, p);
    if (sk->diags.n) {
        fputs("\nProblems\n", f);
        for (size_t i = 0; i < sk->diags.n; i++) {
            fputs("  ", f);
            sg_print_diag(f, &sk->diags.v[i]);
        }
    }
}

int cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {0},
    };
    bool json = false;
    int c;
    optind = 1;
    while ((c = sg_getopt(argc, argv, "hj", opts)) != -1) {
        switch (c) {
        case 'h':
            sg_command_usage(stdout, "inspect");
            printf("\nEvery capability the skill would get, where it came from (file:line "
                   "field),\nthe risk of each tool and the content digest.\n"
                   "  --json   machine output (schema \"%s\", see docs/json.md)\n"
                   "Exit status: 0 valid, 1 the skill has errors, 2 not a skill.\n",
                   SG_INSPECT_SCHEMA);
            return SG_EXIT_OK;
        case 'j':
            json = true;
            break;
        default:
            sg_command_usage(stderr, "inspect");
            return SG_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        sg_command_usage(stderr, "inspect");
        return SG_EXIT_USAGE;
    }
    struct sg_skill *sk = NULL;
    int rc = sg_load_skill_arg(argv[optind], NULL, &sk);
    if (rc)
        return rc;
    char digest[SG_DIGEST_STRLEN];
    size_t nfiles = 0;
    int dr = sg_skill_digest(sk->root, digest, &nfiles);
    if (dr < 0)
        sg_diag_add(&sk->diags, SG_ERROR, sk->display, 0, 0, NULL,
                    "cannot compute the content digest: %s",
                    dr == -EFBIG ? "more than 100000 files or 1 GiB" : strerror(-dr));
    if (json) {
        json_t *j = sg_skill_to_json(sk, dr < 0 ? NULL : digest);
        json_object_set_new(j, "home", kept_home(sk, dr < 0 ? NULL : digest));
        sg_print_json(stdout, j);
        json_decref(j);
    } else {
        print_human(stdout, sk, dr < 0 ? NULL : digest, nfiles);
    }
    rc = sg_skill_has_errors(sk) ? SG_EXIT_INVALID : SG_EXIT_OK;
    sg_skill_free(sk);
    return rc;
}
