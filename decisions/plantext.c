#include "plantext.h"

#include <sys/sysmacros.h>

#include <string.h>
#include <sys/stat.h>

#include "landlock.h"
#include "netns.h"
#include "protected.h"
#include "sanitize.h"
#include "util.h"
#include "wasm.h"

void sg_print_safe(FILE *f, const char *s)
{
    cleanup_free char *t = sg_sanitize_str(s, 0);
    fputs(t, f);
}

void sg_print_dest(FILE *f, const char *domain, const uint16_t *ports, size_t nports)
{
    sg_print_safe(f, domain);
    fputc(':', f);
    for (size_t k = 0; k < nports; k++)
        fprintf(f, "%s%u", k ? "," : "", ports[k]);
}

static const char *mount_word(enum sg_mount_kind k)
{
    switch (k) {
    case SG_MNT_BIND_RO: return "ro";
    case SG_MNT_BIND_RW: return "rw";
    case SG_MNT_TMPFS: return "tmpfs";
    case SG_MNT_PROC: return "proc";
    case SG_MNT_DEV: return "dev";
    case SG_MNT_MASK: return "mask";
    case SG_MNT_SYMLINK: return "link";
    }
    return "?";
}

/* One word of a command as a shell would need it typed: quoted when it
 * holds anything but plain characters, so "a b" is not read as two. */
static void print_word(FILE *f, const char *w)
{
    if (w[0] && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                          "_./:=@%+,-") == strlen(w)) {
        sg_print_safe(f, w);
        return;
    }
    struct sg_buf b;
    sg_buf_init(&b, 4 * strlen(w) + 3);
    sg_buf_append(&b, "'", 1);
    for (const char *c = w; *c; c++)
        if (*c == '\'')
            sg_buf_append(&b, "'\\''", 4);
        else
            sg_buf_append(&b, c, 1);
    sg_buf_append(&b, "'", 1);
    sg_print_safe(f, b.data);
    sg_buf_free(&b);
}

/* A declared folder the skill's uid may not write by its mode, and the
 * protected targets it holds (protected.h), said. */
static void print_uid_limit(FILE *f, const struct sg_plan *p, const struct sg_mount *m)
{
    if (m->kind != SG_MNT_BIND_RW)
        return;
    struct sg_run_identity id = {.as_root = p->as_root, .via_sudo = p->via_sudo,
                                 .uid = p->skill_uid, .gid = p->skill_gid};
    cleanup_free char *note = sg_write_folder_note(m->src, &id);
    cleanup_free char *prot = sg_protected_note(m->src);
    const char *said[] = {note, prot};
    for (size_t i = 0; i < SG_ARRAY_LEN(said); i++) {
        if (!said[i])
            continue;
        fputs("           ", f);
        sg_print_safe(f, said[i]);
        fputc('\n', f);
    }
}

/* The network section of the dry run: the nftables rules, the allowlist,
 * host sockets, published ports and --resolve overrides. */
static void print_network(FILE *f, const struct sg_plan *p)
{
    fputs("\nNetwork (own namespace: loopback only; every refused packet is an event)\n", f);
    for (const char *s = sg_nft_ruleset_text(), *e; *s; s = e + 1) {
        e = strchrnul(s, '\n');
        fprintf(f, "  %.*s\n", (int)(e - s), s);
        if (!*e)
            break;
    }

    fputs("  allowlist (the DNS stub answers these; the proxy lets these name:port through):\n", f);
    for (size_t i = 0; i < p->negress; i++) {
        fputs("    ", f);
        sg_print_dest(f, p->egress[i].domain, p->egress[i].ports, p->egress[i].nports);
        fputc('\n', f);
    }
    if (!p->negress)
        fputs("    (nothing: every name is refused, every connection reset)\n", f);
    fputs("  host unix sockets (HIGH risk: a daemon outside the sandbox acts for the skill;\n"
          "  the broker connects only to the socket pinned here, by device and inode):\n", f);
    for (size_t i = 0; i < p->nsockets; i++) {
        const struct sg_plan_socket *k = &p->sockets[i];
        fputs("    ", f);
        sg_print_safe(f, k->path);
        if (k->present)
            fprintf(f, "  [HIGH; inode %llu on device %u:%u, uid %u, mode %04o; %s]\n",
                    (unsigned long long)k->ino, major(k->dev), minor(k->dev), (unsigned)k->uid,
                    k->mode, k->bound ? "this socket file bound read-only" : "shown by a bind above");
        else
            fputs("  [HIGH; no socket there now: nothing pinned or bound]\n", f);
    }
    if (!p->nsockets)
        fputs("    (none declared: a connect to any other host socket asks (Connect), or is "
              "refused)\n", f);
    fputs("  published on this machine's 127.0.0.1 only, at a port the kernel picks unless\n"
          "  --publish names one (permissions.network.listen, --publish; an undeclared\n"
          "  listening port is asked as Fetch 127.0.0.1:PORT):\n", f);
    for (size_t i = 0; i < p->nlisten + p->npublish; i++) {
        uint16_t port = i < p->nlisten ? p->listen[i] : p->publish[i - p->nlisten].port, host = 0;
        bool listed = false;
        for (size_t k = 0; k < p->npublish; k++)
            if (p->publish[k].port == port)
                host = p->publish[k].host;
        for (size_t k = 0; i >= p->nlisten && k < p->nlisten; k++)
            listed |= p->listen[k] == port;
        if (listed)
            continue; /* said with the declared ones */
        if (host)
            fprintf(f, "    127.0.0.1:%u (--publish) -> the skill's port %u\n", host, port);
        else
            fprintf(f, "    127.0.0.1:(a port the kernel picks) -> the skill's port %u%s\n", port,
                    i < p->nlisten ? "" : " (--publish)");
    }
    if (!p->nlisten && !p->npublish)
        fputs("    (none declared)\n", f);
    for (size_t i = 0; i < p->nresolve; i++) {
        fputs("  --resolve ", f);
        sg_print_safe(f, p->resolve[i].name);
        fprintf(f, ":%u -> %s:%u\n", p->resolve[i].port, p->resolve[i].addr,
                p->resolve[i].to_port ? p->resolve[i].to_port : p->resolve[i].port);
    }
}

/* The environment the skill gets, and what was stripped. */
static void print_environment(FILE *f, const struct sg_plan *p)
{
    fputs("\nEnvironment (exactly this; everything else is stripped)\n", f);
    for (size_t i = 0; i < p->nenv; i++) {
        const char *e = p->envp[i];
        const char *eq = strchr(e, '=');
        const char *from = NULL;
        for (size_t k = 0; k < p->npassed && !from; k++)
            if (eq && strlen(p->passed[k]) == (size_t)(eq - e) &&
                !strncmp(p->passed[k], e, (size_t)(eq - e)))
                from = p->passed_from ? p->passed_from[k] : "declared";
        fputs("  ", f);
        if (from) {
            fprintf(f, "%.*s=<from your environment, %zu characters>  <- ", (int)(eq - e), e,
                    strlen(eq + 1));
            sg_print_safe(f, from);
            fputc('\n', f);
        } else {
            sg_print_safe(f, e);
            fputc('\n', f);
        }
    }
    fprintf(f, "  stripped: %zu variable%s", p->nstripped, p->nstripped == 1 ? "" : "s");
    for (size_t i = 0; i < p->nstripped && i < 12; i++) {
        fputs(i ? ", " : " (", f);
        sg_print_safe(f, p->stripped[i]);
    }
    fputs(p->nstripped > 12 ? ", ...)\n" : p->nstripped ? ")\n" : "\n", f);
    fputs("  stdin: the input JSON\n", f);
}

/* A WASM run's two layers (wasm.h). */
static void print_wasm(FILE *f, const struct sg_plan *p)
{
    const struct sg_plan_wasm *w = p->wasm;
    fputs("\nWASM module ", f);
    sg_print_safe(f, w->module);
    fputs(" (WASI preview 1), in two layers\n  1. WASI layer: node:wasi of Node.js ", f);
    sg_print_safe(f, sg_wasm_runtime_version(w->runtime));
    fputs(" (", f);
    sg_print_safe(f, w->runtime);
    fputs(")\n", f);
    for (size_t i = 0; i < w->npre; i++) {
        fputs("     preopen ", f);
        sg_print_safe(f, w->pre[i].guest);
        if (strcmp(w->pre[i].guest, w->pre[i].host)) {
            fputs(" -> ", f);
            sg_print_safe(f, w->pre[i].host);
        }
        fputs(w->pre[i].write ? "  read-write\n"
                              : "  read-only (writes refused by the runner: node:wasi has no "
                                "read-only preopen)\n", f);
    }
    fputs("     environment:", f);
    for (size_t i = 0; i < w->nenv; i++) {
        fputc(' ', f);
        sg_print_safe(f, w->env[i]);
    }
    fputs(" (nothing else; the runtime's own is skillgate's)\n", f);
    fputs("     arguments: /skill/<module>; input: SKILL_INPUT and stdin\n", f);
    if (w->module_mb > 0)
        fprintf(f, "     memory: %lld MB (%lld pages of 64 KiB, V8's --wasm-max-mem-pages)\n",
                w->module_mb, w->module_mb * 16);
    if (w->seeded)
        fprintf(f, "     random_seed %lld: random_get gives SHA-256 of the seed and a counter, "
                "the same bytes every run\n", w->seed);
    else
        fputs("     random_seed: none; random_get is the kernel's random\n", f);
    fputs("     network: none (WASI preview 1 has no sockets)", f);
    if (w->network_declared || p->network_dropped)
        fprintf(f, "; what the manifests declare for the network (%zu host%s or port%s) is "
                "not allowed by the kernel layer either", p->network_dropped,
                p->network_dropped == 1 ? "" : "s", p->network_dropped == 1 ? "" : "s");
    fputc('\n', f);
    fputs("     timeout: held by the broker (below), whatever the runtime does\n", f);
    fputs("  2. kernel layer: the sandbox below, around the runtime process; Landlock also "
          "confines reads to the runtime's files and the preopens; a module that escapes "
          "node:wasi (it follows a preopen's symlinks out of it) meets it\n", f);
}

/* A WASM module's two layers, from the policy (run --dry-run shows the
 * plan: the kernel sandbox in full, the environment's values' names). */
void sg_plan_print_wasm_policy(FILE *f, const struct sg_policy *p)
{
    fputs("(none: a WASM module, ", f);
    sg_print_safe(f, p->wasm_module);
    fputs(", WASI preview 1)\n  1. WASI layer: ", f);
    cleanup_free char *rt = sg_wasm_find_runtime();
    if (rt) {
        fputs("node:wasi of Node.js ", f);
        sg_print_safe(f, sg_wasm_runtime_version(rt));
        fputs(" (", f);
        sg_print_safe(f, rt);
        fputs(")\n", f);
    } else {
        fputs("node:wasi, but no node is installed (Debian package nodejs, 20 or later)\n", f);
    }
    fputs("     preopen /skill -> the skill's folder, read-only unless a write is granted\n", f);
    fputs("     preopen . -> the skill's folder too (relative paths, as wasmtime's --dir .); "
          "a declared path in it also as ./PATH and /skill/PATH, with its mode\n", f);
    for (size_t i = 0; i < p->nread; i++) {
        if (p->read[i].declared && !strcmp(p->read[i].declared, "."))
            continue; /* the skill's folder: /skill */
        fputs("     preopen ", f);
        sg_print_safe(f, p->read[i].path);
        fputs("  read\n", f);
    }
    for (size_t i = 0; i < p->nwrite; i++) {
        if (p->write[i].declared && !strcmp(p->write[i].declared, "."))
            continue;
        fputs("     preopen ", f);
        sg_print_safe(f, p->write[i].path);
        fputs("  read-write\n", f);
    }
    fputs("     environment: SKILL_ID SKILL_NAME SKILL_INPUT TIMEOUT_MS", f);
    for (size_t i = 0; i < p->nenv; i++) {
        fputc(' ', f);
        sg_print_safe(f, p->env[i].name);
    }
    fputs(" (the declared ones when set)\n", f);
    if (p->limits.memory_mb.value > 0)
        fprintf(f, "     memory: %lld MB for the module, held by the runtime\n",
                p->limits.memory_mb.value);
    if (p->has_random_seed)
        fprintf(f, "     random_seed %lld: honoured (random_get is seeded)\n", p->random_seed);
    fputs(p->wasm_network ? "     network: wasm.network.allow is declared, but WASI preview 1 "
                            "has no sockets: the module reaches no host\n"
                          : "     network: none (WASI preview 1 has no sockets)\n", f);
    fputs("  2. kernel layer: the same sandbox as a native skill around the runtime, reads "
          "confined to the runtime's files and the preopens (run --dry-run shows it)\n", f);
}

void sg_plan_print(FILE *f, const struct sg_plan *p)
{
    fputs("Plan for ", f);
    sg_print_safe(f, p->skill_name);
    fputs(" (dry run: nothing is executed)\n\n", f);
    fprintf(f, "Identity\n  the skill runs as uid %u, gid %u on the host%s, with no capabilities\n"
               "  namespaces: user mount pid net ipc uts cgroup; uid_map: ",
            p->skill_uid, p->skill_gid,
            p->as_root ? (p->skill_uid == 65534 ? " (nobody: never real root)" : " (the sudo user)")
                       : " (you)");
    for (const char *s = p->uid_map; *s; s++)
        fputc(*s == '\n' ? (s[1] ? ';' : ' ') : *s, f);
    fputc('\n', f);

    fputs("\nFilesystem (new root on tmpfs, then pivot_root)\n", f);
    for (size_t i = 0; i < p->nmounts; i++) {
        const struct sg_mount *m = &p->mounts[i];
        fprintf(f, "  %-6s ", mount_word(m->kind));
        sg_print_safe(f, m->dst);
        if (m->kind == SG_MNT_SYMLINK) {
            fputs(" -> ", f);
            sg_print_safe(f, m->src);
        }
        if (m->kind == SG_MNT_TMPFS)
            fprintf(f, " (%lld KiB, %lld inodes, mode %04o)", m->size / 1024, m->inodes,
                    m->mode);
        fprintf(f, "  [%s]\n", m->why);
        print_uid_limit(f, p, m);
    }
    for (size_t i = 0; i < p->nunshown; i++) { /* named on the command line, not shown */
        fputs("  not shown: ", f);
        sg_print_safe(f, p->unshown[i]);
        fputc('\n', f);
    }
    fprintf(f, "\nLandlock ABI %d: %s\n", p->landlock_abi,
            p->degraded ? "NOT USED (--allow-degraded)" : sg_landlock_describe(p->landlock_abi));
    if (!p->degraded) {
        fputs("  writable: /dev/null /dev/zero /dev/full /dev/random /dev/urandom", f);
        for (size_t i = 0; i < p->nrw; i++) {
            fputc(' ', f);
            sg_print_safe(f, p->rw_paths[i]);
        }
        fputc('\n', f);
        if (p->confine_reads) {
            fputs("  readable (nothing else, besides the writable): ", f);
            for (size_t i = 0; i < p->nro; i++) {
                fputs(i ? " " : "", f);
                sg_print_safe(f, p->ro_paths[i]);
            }
            fputc('\n', f);
        }
    }
    if (p->wasm)
        print_wasm(f, p);
    struct sg_seccomp_rule rules[128];
    size_t n = sg_seccomp_rules(p->profile, rules, SG_ARRAY_LEN(rules));
    fprintf(f, "\nSeccomp profile \"%s\" (everything else allowed)\n", sg_seccomp_profile_name(p->profile));
    for (size_t i = 0; i < n && i < SG_ARRAY_LEN(rules); i++)
        fprintf(f, "  %-20s %s%s%s\n", rules[i].syscall, rules[i].action,
                *rules[i].when ? " when " : "", rules[i].when);
    print_network(f, p);
    print_environment(f, p);

    fputs("\nLimits\n", f);
    for (int i = 0; i < SG_PL_COUNT; i++)
        fprintf(f, "  %-10s %lld %-18s %s: %s\n", p->limits[i].name, p->limits[i].value,
                p->limits[i].unit, sg_mechanism_name(p->limits[i].mech), p->limits[i].how);
    fputs("\nCommand (exec ", f);
    sg_print_safe(f, p->exec_path);
    fputs(", the one exec allowed without asking)\n  ", f);
    for (size_t i = 0; i < p->argc; i++) {
        if (i)
            fputc(' ', f);
        if (p->wasm && i == p->argc - 1) /* the runner's source */
            fprintf(f, "<skillgate's WASI runner, %zu bytes>", strlen(p->argv[i]));
        else
            print_word(f, p->argv[i]);
    }
    fputs("\n  cwd ", f);
    sg_print_safe(f, p->cwd);
    fputs(p->cwd_is_work ? " (your working folder, read-only: writes there are asked for)\n"
                         : "\n", f);
    if (p->script) {
        fputs("  script ", f);
        sg_print_safe(f, p->script);
        fprintf(f, " with %zu argument%s, instead of the entrypoint\n", p->script_args,
                p->script_args == 1 ? "" : "s");
    }
    if (p->python) {
        fputs("  python ", f);
        sg_print_safe(f, p->python);
        if (p->python_env) {
            fputs(" (the environment ", f);
            sg_print_safe(f, p->python_env);
            fputs(", read-only, first on PATH as VIRTUAL_ENV", f);
        } else {
            fputs(" (", f);
        }
        fprintf(f, "; from %s)\n", p->python_from);
    }
}

/* NAME:PORT:ADDR[:PORT2], ADDR numeric (IPv6 in brackets). */
