#include "plantext.h"

#include <sys/sysmacros.h>

#include <string.h>
#include <sys/stat.h>

#include "landlock.h"
#include "netns.h"
#include "sanitize.h"
#include "util.h"

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

/* A declared folder the skill's uid may not write by its mode, said. */
static void print_uid_limit(FILE *f, const struct sg_plan *p, const struct sg_mount *m)
{
    if (m->kind != SG_MNT_BIND_RW)
        return;
    struct sg_run_identity id = {.as_root = p->as_root, .via_sudo = p->via_sudo,
                                 .uid = p->skill_uid, .gid = p->skill_gid};
    cleanup_free char *note = sg_write_folder_note(m->src, &id);
    if (!note)
        return;
    fputs("           ", f);
    sg_print_safe(f, note);
    fputc('\n', f);
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
    fputs("  published on this machine's 127.0.0.1 only (permissions.network.listen; an\n"
          "  undeclared listening port is asked as Fetch 127.0.0.1:PORT):\n", f);
    for (size_t i = 0; i < p->nlisten; i++)
        fprintf(f, "    127.0.0.1:%u -> the skill's port %u\n", p->listen[i], p->listen[i]);
    if (!p->nlisten)
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
    fprintf(f, "\nLandlock ABI %d: %s\n", p->landlock_abi,
            p->degraded ? "NOT USED (--allow-degraded)" : sg_landlock_describe(p->landlock_abi));
    if (!p->degraded) {
        fputs("  writable: /dev/null /dev/zero /dev/full /dev/random /dev/urandom", f);
        for (size_t i = 0; i < p->nrw; i++) {
            fputc(' ', f);
            sg_print_safe(f, p->rw_paths[i]);
        }
        fputc('\n', f);
    }
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
