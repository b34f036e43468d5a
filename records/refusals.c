#include "refusals.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sanitize.h"
#include "protected.h"
#include "util.h"

/* One refused request while the list is made. */
struct refusal {
    char *tool, *subject, *why, *rule, *allow;
    const char *attempt; /* read, write, exec, connect, lookup */
    bool attack;         /* part of an attack: no way to allow it is said */
    long long decided, evented; /* refusals seen as decisions, as events: the
                                   same refusal is often both */
};

struct list {
    struct refusal v[SG_REFUSALS_MAX];
    size_t n;
    bool agent;
    const char *attack; /* the run's severity when high or critical, else NULL */
    long long dropped;  /* distinct requests past the cap */
};

/* What the skill attempted, in the word a person uses: a Fetch with a
 * port (an address, or the proxy's CONNECT) was a connect, a name alone a
 * lookup. */
static const char *attempt_of(const char *tool, int port)
{
    static const struct {
        const char *tool, *attempt;
    } words[] = {{"Bash", "exec"}, {"Write", "write"}, {"Read", "read"},
                 {"Connect", "connect"}, {"Env", "read"}};
    for (size_t i = 0; i < SG_ARRAY_LEN(words); i++)
        if (!strcmp(tool, words[i].tool))
            return words[i].attempt;
    if (!strcmp(tool, "Fetch"))
        return port > 0 ? "connect" : "lookup";
    return "request";
}

/* The program as the run's PATH names it: "pdfinfo" when the first
 * pdfinfo on the sandbox's PATH is this very file, else its real path. */
static char *program_name(const char *real)
{
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    for (size_t i = 0; i < SG_ARRAY_LEN(dirs); i++) {
        cleanup_free char *c = sg_xasprintf("%s/%s", dirs[i], base);
        cleanup_free char *r = realpath(c, NULL);
        if (r)
            return sg_xstrdup(strcmp(r, real) ? real : base);
    }
    return sg_xstrdup(real);
}

/* How the rule or the manifest names the request, and where that goes,
 * from who refused it. */
static void how_to_allow(struct refusal *r, const char *tool, const char *subject, int port,
                         const char *by, bool agent, const char *protect)
{
    cleanup_free char *rule = NULL;
    bool bash = !strcmp(tool, "Bash"), write = !strcmp(tool, "Write");
    if (bash) {
        cleanup_free char *name = program_name(subject);
        rule = sg_xasprintf("Bash(%s:*)", name);
    } else if (write) {
        rule = sg_xasprintf("Write(%s)", subject);
    } else if (!strcmp(tool, "Fetch")) {
        rule = port > 0 ? sg_xasprintf("Fetch(%s:%d)", subject, port)
                        : sg_xasprintf("Fetch(%s)", subject);
    } else if (!strcmp(tool, "Connect")) {
        rule = sg_xasprintf("Connect(%s)", subject);
    } else if (!strcmp(tool, "Read")) { /* masked: a decoy, or nothing, is all it sees */
        r->allow = sg_xstrdup("nothing may allow it (the sandbox never shows that file)");
        return;
    } else if (!strcmp(tool, "Env")) { /* run_skill's env (runner.c) */
        r->rule = sg_xstrdup("Env");
        r->allow = sg_xasprintf("a person asked (skillgate tui --attach), or skillgate run "
                                "--env %s", subject);
        return;
    } else {
        return;
    }
    const char *up = strstr(by, "--allow-upstream ");
    if (up) { /* the proxy refused the address itself (loopback, private, this machine's) */
        up += strlen("--allow-upstream ");
        free(steal_pointer(&rule));
        r->allow = sg_xasprintf("%sskillgate run --allow-upstream %.*s (no rule, grant or "
                                "answer reaches that address)",
                                agent ? "only the person's own " : "",
                                (int)strcspn(up, " )"), up);
        return;
    }
    if (strstr(by, "no --write may show it")) {
        free(steal_pointer(&rule));
        r->allow = sg_xstrdup("nothing may allow it (the sandbox never shows that folder)");
        return;
    }
    if (strstr(by, "not shown in the sandbox")) {
        /* no rule or answer can write where no host folder is behind it */
        cleanup_free char *dir = sg_xstrdup(subject);
        char *sl = strrchr(dir, '/');
        if (sl)
            *(sl == dir ? sl + 1 : sl) = '\0';
        free(steal_pointer(&rule));
        r->allow = sg_xasprintf("show its folder: run --write %s, or %s in a declared write "
                                "path (permissions.filesystem.write); no rule or answer can "
                                "write a folder the sandbox does not show", dir, dir);
        return;
    }
    if (strstr(by, "allowed-tools") && !strcmp(tool, "Fetch")) {
        /* Fetch(host) in allowed-tools lets it ask; only a declared host is
         * let through unasked */
        r->allow = sg_xasprintf("Fetch in SKILL.md's allowed-tools (then a person or a --policy "
                                "FILE with %s under allow: decides), or the host declared in "
                                "skillsandbox.yaml's permissions.network.egress", rule);
    } else if (strstr(by, "allowed-tools")) {
        /* the manifest refused it: no rule or person may widen it */
        r->allow = sg_xasprintf("%s in SKILL.md's allowed-tools", rule);
    } else if (sg_str_has_prefix(by, "grant")) {
        r->allow = sg_xasprintf("a deny-always grant refused it (%s): skillgate grants revoke "
                                "it, and the next run asks again", by);
    } else if (sg_str_has_prefix(by, "rule")) {
        r->allow = sg_xasprintf("a deny rule refused it (%s): remove that rule, then %s in a "
                                "--policy file's allow list", by, rule);
    } else if (sg_str_has_prefix(by, "your answer")) {
        r->allow = sg_xasprintf("your own deny (%s) held for the rest of the run: the next "
                                "run asks again, or %s in a --policy file's allow list", by,
                                rule);
    } else if (strstr(by, "own folder") || strstr(by, "own system folder") ||
               strstr(by, "symbolic link") || strstr(by, "only regular files") ||
               strstr(by, "shows nothing") ||
               strstr(by, "changed since it was asked") || strstr(by, "through a descriptor") ||
               strstr(by, "program swapped") || strstr(by, "not a DNS query") ||
               strstr(by, "could not be done")) {
        /* allowed already, and the host (not a rule) refused it */
        free(steal_pointer(&rule));
        r->allow = sg_xstrdup("nothing may allow it");
    } else if (agent) { /* an agent's run asks an attached TUI, or nobody */
        r->allow = sg_xasprintf("a person asked in skillgate tui --attach (always: a grant for "
                                "this skill), or the person's own skillgate run with --policy "
                                "FILE with %s under allow:", rule);
    } else {
        const char *dir_hint = "";
        cleanup_free char *dir = NULL;
        const char *prot = !write ? NULL : protect ? protect : sg_protected_path(subject, NULL);
        if (prot) { /* no folder covers it: only that file, by its name */
            r->allow = sg_xasprintf("--policy FILE with %s under allow: (a protected target: "
                                    "%s; no folder grant covers it), or a person asked "
                                    "(--prompt tty, or skillgate tui --attach with --prompt "
                                    "attached)", rule, prot);
            r->rule = steal_pointer(&rule);
            return;
        }
        if (write) { /* a folder the person names for one run */
            dir = sg_xstrdup(subject);
            char *sl = strrchr(dir, '/');
            if (sl)
                *(sl == dir ? sl + 1 : sl) = '\0';
            dir_hint = ", or run --write ";
        }
        r->allow = sg_xasprintf("--policy FILE with %s under allow:%s%s, or a person asked "
                                "(--prompt tty, or skillgate tui --attach with --prompt "
                                "attached)", rule, dir_hint, dir ? dir : "");
    }
    r->rule = steal_pointer(&rule);
}

static struct refusal *find_or_add(struct list *l, const char *tool, const char *subject,
                                   const char *why, int port, const char *protect, bool attack)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].tool, tool) && !strcmp(l->v[i].subject, subject))
            return &l->v[i];
    if (l->n >= SG_REFUSALS_MAX) {
        l->dropped++;
        return NULL;
    }
    struct refusal *r = &l->v[l->n++];
    memset(r, 0, sizeof *r);
    r->tool = sg_xstrdup(tool);
    r->subject = sg_xstrdup(subject);
    /* who decided, in words (perm.c's decided_by) */
    r->why = !why || !*why            ? sg_xstrdup("refused")
             : !strcmp(why, "deny-all") ? sg_xstrdup("undeclared, and nobody to ask: --prompt "
                                                     "deny, or no terminal")
             : !strcmp(why, "person")   ? sg_xstrdup("denied when asked")
                                        : sg_xstrdup(why);
    r->attempt = attempt_of(tool, port);
    r->attack = attack || l->attack;
    if (!r->attack)
        how_to_allow(r, tool, subject, port, why ? why : "", l->agent, protect);
    return r;
}

/* One program is one request however PATH reached it. */
static char *canonical(const char *tool, const char *subject)
{
    if (!strcmp(tool, "Bash") && subject[0] == '/') {
        char *r = realpath(subject, NULL);
        if (r)
            return r;
    }
    return sg_xstrdup(subject);
}

static void note(struct list *l, const char *tool, const char *subject, const char *why,
                 int port, bool decision, const char *protect, bool attack)
{
    if (!subject || !*subject || !strcmp(subject, "?"))
        return;
    cleanup_free char *s = canonical(tool, subject);
    struct refusal *r = find_or_add(l, tool, s, why, port, protect, attack);
    if (r && attack)
        r->attack = true; /* its event says what its decision did not */
    if (r && decision)
        r->decided++;
    else if (r)
        r->evented++;
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A refused file: a read (a credential's decoy answered: nothing may show
 * the real one) or a write outside the writable paths. */
static void note_file(struct list *l, json_t *d, const char *why)
{
    const char *access = str(d, "access");
    if (access && !strcmp(access, "read")) {
        bool decoy = json_is_true(json_object_get(d, "decoy"));
        note(l, "Read", str(d, "path"),
             why ? why : decoy ? "an empty decoy answered: your credentials are not in the "
                                 "sandbox"
                               : "not shown in the sandbox",
             0, false, NULL, false);
        return;
    }
    note(l, "Write", str(d, "path"), why ? why : "outside the writable paths", 0, false,
         str(d, "protected"), false);
}

/* The run's severity when it is an attack's (high or critical): then no
 * refusal of it is followed by a way to allow it. */
static const char *attack_of(json_t *doc)
{
    const char *max = str(json_object_get(doc, "violation_summary"), "max_severity");
    if (max && (!strcmp(max, "critical") || !strcmp(max, "high")))
        return max;
    return NULL;
}

/* A prevented event that names what the skill asked for. */
static void note_event(struct list *l, json_t *ev)
{
    const char *kind = str(ev, "kind");
    json_t *d = json_object_get(ev, "data");
    if (!kind || !json_is_object(d) || !json_is_true(json_object_get(d, "prevented")))
        return;
    const char *why = str(d, "reason");
    if (!strcmp(kind, "syscall_blocked")) {
        const char *sc = str(d, "syscall");
        if (sc && !strcmp(sc, "execve"))
            note(l, "Bash", str(d, "program"), why, 0, false, NULL, false);
        else if (sc && !strcmp(sc, "connect") && str(d, "path"))
            note(l, "Connect", str(d, "path"), why, 0, false, NULL, false);
    } else if (!strcmp(kind, "fs_blocked") && !json_object_get(d, "reported_by")) {
        /* a WASM run's WASI-layer reports: no request a person could allow
         * (the module reaches only its preopens) */
        note_file(l, d, why);
    } else if (!strcmp(kind, "dns_blocked")) {
        /* a name that smuggles data is the attack itself, never a host to allow */
        note(l, "Fetch", str(d, "name"), why, 0, false, NULL,
             json_is_true(json_object_get(d, "exfil_suspect")));
    } else if (!strcmp(kind, "network_egress_blocked") &&
               !json_is_true(json_object_get(d, "upstream_failed"))) {
        /* (an allowed host this machine could not reach is no refusal) */
        const char *name = str(d, "name");
        note(l, "Fetch", name && *name ? name : str(d, "dst"), why,
             (int)json_integer_value(json_object_get(d, "port")), false, NULL, false);
    }
}

/* One entry, its strings freed. An attack's says no way to allow it. */
static json_t *entry_json(const struct list *l, struct refusal *r)
{
    long long count = r->decided > r->evented ? r->decided : r->evented;
    cleanup_free char *attack =
        !r->attack ? NULL
        : l->attack ? sg_xasprintf("not to be allowed: part of this run's attack (max severity "
                                   "%s)", l->attack)
                    : sg_xstrdup("not to be allowed: it carries data out (exfiltration)");
    const char *allow = attack ? attack : r->allow ? r->allow : "nothing may allow it";
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s?, s:s, s:b}", "tool", r->tool,
                          "attempt", r->attempt, "subject", r->subject, "count",
                          (json_int_t)count, "why", r->why, "rule", r->attack ? NULL : r->rule,
                          "allow", allow, "attack", r->attack);
    free(r->tool), free(r->subject), free(r->why), free(r->rule), free(r->allow);
    return o;
}

json_t *sg_refusals_of(json_t *doc, bool agent)
{
    struct list *l = sg_xcalloc(1, sizeof *l);
    l->agent = agent;
    l->attack = attack_of(doc);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(doc, "decisions"), i, v)
    {
        const char *dec = str(v, "decision");
        if (!dec || strncmp(dec, "deny", 4))
            continue;
        const char *tool = str(v, "tool");
        if (tool)
            note(l, tool, str(v, "subject"), str(v, "decided_by"),
                 (int)json_integer_value(json_object_get(v, "port")), true, str(v, "protected"),
                 false);
    }
    json_array_foreach(json_object_get(doc, "policy_violations"), i, v)
        note_event(l, v);
    json_t *out = json_array();
    for (size_t k = 0; k < l->n; k++)
        json_array_append_new(out, entry_json(l, &l->v[k]));
    if (l->dropped)
        json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:s, s:n, s:s}", "tool", "",
                                             "subject", "", "count", (json_int_t)l->dropped,
                                             "why", "more distinct requests refused than listed",
                                             "rule", "allow", "see the trace's decisions"));
    free(l);
    return out;
}

char *sg_refusals_text(json_t *refusals, const char *home)
{
    struct sg_buf b;
    sg_buf_init(&b, (SG_REFUSALS_MAX + 1) * 4 * 4096 + 4096); /* subjects are paths */
    size_t i;
    json_t *r;
    json_array_foreach(refusals, i, r)
    {
        json_int_t n = json_integer_value(json_object_get(r, "count"));
        const char *tool = str(r, "tool");
        if (!tool || !*tool) {
            sg_buf_printf(&b, "refused: %lld more requests (the trace's decisions list them)\n",
                          (long long)n);
            continue;
        }
        cleanup_free char *rawsubj = sg_sanitize_str(str(r, "subject"), 0);
        cleanup_free char *rawwhy = sg_sanitize_str(str(r, "why"), 0);
        cleanup_free char *subj = sg_home_short(rawsubj, home);
        cleanup_free char *why = sg_home_short(rawwhy, home);
        cleanup_free char *allow = sg_sanitize_str(str(r, "allow"), 0);
        const char *what = str(r, "attempt");
        char times[48] = "";
        if (n > 1)
            snprintf(times, sizeof times, ", %lld times", (long long)n);
        if (json_is_null(json_object_get(r, "rule")))
            sg_buf_printf(&b, "refused: %s %s%s (%s); %s\n", what ? what : tool, subj, times,
                          why, allow);
        else
            sg_buf_printf(&b, "refused: %s %s%s (%s) — allow with: %s\n", what ? what : tool,
                          subj, times, why, allow);
    }
    return sg_buf_steal(&b);
}
