#include "skill.h"

#include <dirent.h>
#include <fcntl.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "fmlines.h"
#include "openclaw.h"
#include "parse.h"
#include "util.h"
#include "ynode.h"

static struct sg_skill *skill_new(const char *root, const char *display)
{
    struct sg_skill *sk = sg_xcalloc(1, sizeof *sk);
    sk->root = sg_xstrdup(root);
    sk->display = sg_xstrdup(display);
    const char *slash = strrchr(root, '/');
    sk->dirname = sg_xstrdup(slash && slash[1] ? slash + 1 : root);
    sk->user_invocable = -1;
    sk->disable_model_invocation = -1;
    sk->body_offset = -1;
    sg_policy_init(&sk->policy);
    return sk;
}

void sg_skill_free(struct sg_skill *sk)
{
    if (!sk)
        return;
    char **strs[] = {&sk->root,    &sk->display,  &sk->dirname,      &sk->skill_md,
                     &sk->sandbox_yaml, &sk->name, &sk->description, &sk->version,
                     &sk->author,  &sk->license,  &sk->compatibility, &sk->model,
                     &sk->agent,   &sk->argument_hint, &sk->openclaw_rules};
    for (size_t i = 0; i < SG_ARRAY_LEN(strs); i++)
        free(*strs[i]);
    for (size_t i = 0; i < sk->nmetadata; i++) {
        free(sk->metadata[i].key);
        free(sk->metadata[i].value);
    }
    free(sk->metadata);
    sg_openclaw_free(sk->openclaw);
    sg_policy_free(&sk->policy);
    sg_diags_free(&sk->diags);
    free(sk);
}

bool sg_skill_has_errors(const struct sg_skill *sk)
{
    return sg_diags_blocking(&sk->diags) > 0;
}

/* ---- reading files a skill controls ---- */

/* Open name in dirfd for reading: never follows a symlink, never blocks on a
 * FIFO, only regular files. */
static int open_manifest(int dirfd, const char *name, struct stat *st)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -errno;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -EINVAL;
    }
    return fd;
}

static ssize_t read_some(int fd, char *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return r < 0 ? -errno : r;
    }
}

/* Read at most max bytes; -EFBIG when the file has more. When done is given,
 * stop as soon as it says the bytes so far are enough. */
static int read_capped(int fd, size_t max, bool (*done)(const char *, size_t), char **out,
                       size_t *outlen)
{
    struct sg_buf b;
    sg_buf_init(&b, max);
    char chunk[4096];
    for (;;) {
        ssize_t r = read_some(fd, chunk, sizeof chunk);
        if (r < 0) {
            sg_buf_free(&b);
            return (int)r;
        }
        if (r == 0)
            break;
        if (sg_buf_append(&b, chunk, (size_t)r) < 0) {
            sg_buf_free(&b);
            return -EFBIG;
        }
        if (done && done(b.data, b.len))
            break;
    }
    *outlen = b.len;
    *out = sg_buf_steal(&b);
    return 0;
}

static bool is_delim(const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    return len == 3 && memcmp(line, "---", 3) == 0;
}

int sg_frontmatter_split(const char *buf, size_t len, bool at_eof, size_t *yaml_off,
                         size_t *yaml_len, size_t *body_off, int *body_line)
{
    size_t pos = 0;
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        pos = 3; /* UTF-8 byte order mark */
    const char *nl = memchr(buf + pos, '\n', len - pos);
    if (!nl) {
        if (!at_eof && len - pos < 4 && memcmp(buf + pos, "---", len - pos) == 0)
            return 1;
        return is_delim(buf + pos, len - pos) ? 1 : -EINVAL;
    }
    if (!is_delim(buf + pos, (size_t)(nl - (buf + pos))))
        return -EINVAL;
    *yaml_off = (size_t)(nl - buf) + 1;
    int line = 2;
    for (size_t p = *yaml_off; p < len;) {
        const char *e = memchr(buf + p, '\n', len - p);
        if (!e && !at_eof)
            return 1; /* the line is not complete yet */
        size_t l = e ? (size_t)(e - (buf + p)) : len - p;
        if (is_delim(buf + p, l)) {
            *yaml_len = p - *yaml_off;
            *body_off = e ? (size_t)(e - buf) + 1 : len;
            *body_line = line + 1;
            return 0;
        }
        if (!e)
            return 1;
        p += l + 1;
        line++;
    }
    return 1;
}

static void report_utf8(struct sg_diags *d, const char *file, const char *buf, size_t len,
                        size_t bad, int first_line)
{
    int line = first_line, col = 1;
    for (size_t i = 0; i < bad && i < len; i++) {
        if (buf[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    sg_diag_add(d, SG_ERROR, file, line, col, NULL, "not valid UTF-8 (byte 0x%02x)",
                (unsigned char)buf[bad]);
}

/* How the agents' own loaders stand to a SKILL.md skillgate refuses, said
 * in the refusal: OpenClaw's (src/markdown/frontmatter.ts) skips a file
 * without frontmatter and reads a frontmatter YAML cannot parse line by
 * line; Claude Code loads such a file with every field dropped,
 * allowed-tools too (anthropics/claude-code issues, `claude plugin
 * validate`: "At runtime this skill loads with empty metadata"). */
static const char oc_no_fm[] =
    "OpenClaw would refuse it too (its loader skips a SKILL.md whose frontmatter has no "
    "description)";

static void note_yaml_error(struct sg_skill *sk, size_t first)
{
    const char *why =
        sk->openclaw_rules
            ? "OpenClaw's loader would read it line by line instead and may load it; skillgate "
              "does not guess at what a manifest declares, so fix the YAML"
            : "Claude Code would load it with every field dropped, allowed-tools too; skillgate "
              "does not run a skill whose declarations it cannot read, so fix the YAML";
    for (size_t i = first; i < sk->diags.n; i++) {
        struct sg_diag *g = &sk->diags.v[i];
        if (g->sev != SG_ERROR)
            continue;
        if (sg_str_has_prefix(g->msg, SG_YAML_CHARS))
            return; /* says what to remove; no reader takes it another way */
        /* a tab's message says the fix already; quoting is the usual one */
        char *m = sg_xasprintf("%s; %s%s", g->msg, why,
                               strstr(g->msg, SG_YAML_TAB) ? "" : " (quote a value holding \": \")");
        free(g->msg);
        g->msg = m;
        return;
    }
}

/* Where OpenClaw's rules apply, a frontmatter whose YAML syntax fails is
 * read as OpenClaw's loader reads it, line by line (fmlines.h): the YAML
 * error (at first) becomes a warning that says so. False, the error
 * standing, for what skillgate's YAML reading refuses on purpose (a key
 * said twice, an alias, a tag, depth, size: ynode.h) and past the line
 * reading's own cap. */
static bool read_lines(struct sg_skill *sk, const char *file, const char *yaml, size_t len,
                       size_t first, struct sg_ynode **root)
{
    struct sg_diag *g = first < sk->diags.n ? &sk->diags.v[first] : NULL;
    if (!g || !sg_str_has_prefix(g->msg, "YAML syntax: "))
        return false;
    struct sg_diags lines = {0};
    if (sg_fmlines_parse(yaml, len, 2, sg_skillmd_enforced, file, &lines, root) < 0) {
        sg_diags_free(&lines);
        return false;
    }
    cleanup_free char *why = sg_xstrdup(g->msg);
    int line = g->line, col = g->col;
    for (size_t i = first; i < sk->diags.n; i++)
        free(sk->diags.v[i].file), free(sk->diags.v[i].field), free(sk->diags.v[i].msg);
    sk->diags.n = first;
    sg_diag_add(&sk->diags, SG_WARNING, file, line, col, NULL,
                "%s; OpenClaw's loader reads such a frontmatter line by line (\"key: value\", "
                "the rest of the line as written), and skillgate reads it the same way for a "
                "skill OpenClaw keeps (%s); quote the value so every reader agrees", why,
                sk->openclaw_rules);
    sg_diags_move(&sk->diags, &lines);
    sg_diags_free(&lines);
    return true;
}

static void apply_skill_md(struct sg_skill *sk, const char *file, const char *buf, size_t len)
{
    size_t yo, yl, bo;
    int bl;
    int r = sg_frontmatter_split(buf, len, true, &yo, &yl, &bo, &bl);
    if (r != 0) {
        sg_diag_add(&sk->diags, SG_ERROR, file, 1, 1, NULL, "%s; %s",
                    r < 0 ? "SKILL.md must start with a YAML frontmatter block between \"---\" "
                            "lines"
                          : "the frontmatter is not closed: no \"---\" line after it",
                    oc_no_fm);
        return;
    }
    sk->body_offset = (long)bo;
    sk->body_line = bl;
    size_t bad;
    if (!sg_utf8_valid(buf + yo, yl, &bad)) {
        report_utf8(&sk->diags, file, buf + yo, yl, bad, 2);
        return;
    }
    struct sg_ynode *root = NULL;
    size_t before = sk->diags.n;
    struct sg_pctx c = {.sk = sk, .file = file, .origin = "SKILL.md", .d = &sk->diags};
    if (sg_yaml_parse(buf + yo, yl, 1, file, &sk->diags, &root) < 0) {
        if (!sk->openclaw_rules || !read_lines(sk, file, buf + yo, yl, before, &root)) {
            note_yaml_error(sk, before);
            return;
        }
        c.lines = true;
    }
    if (!sk->openclaw_rules)
        sk->openclaw_rules = sg_openclaw_carried(root);
    sg_skillmd_apply(&c, root);
    sg_ynode_free(root);
}

static void apply_sandbox_yaml(struct sg_skill *sk, const char *file, const char *buf, size_t len)
{
    size_t bad;
    if (!sg_utf8_valid(buf, len, &bad)) {
        report_utf8(&sk->diags, file, buf, len, bad, 1);
        return;
    }
    struct sg_ynode *root = NULL;
    if (sg_yaml_parse(buf, len, 0, file, &sk->diags, &root) < 0)
        return;
    struct sg_pctx c = {.sk = sk, .file = file, .origin = "skillsandbox.yaml", .d = &sk->diags};
    sg_sandbox_yaml_apply(&c, root);
    sg_ynode_free(root);
}

/* SKILL.md is read up to the closing "---" only (Tier 1): the body stays on disk. */
static bool frontmatter_complete(const char *buf, size_t len)
{
    size_t a, c, d;
    int e;
    return sg_frontmatter_split(buf, len, false, &a, &c, &d, &e) != 1;
}

static void load_file(struct sg_skill *sk, int dirfd, const char *name, bool is_md)
{
    cleanup_free char *file = sg_xasprintf("%s/%s", sk->display, name);
    struct stat st;
    cleanup_fd int fd = open_manifest(dirfd, name, &st);
    if (fd == -ENOENT)
        return;
    if (is_md)
        sk->skill_md = sg_xstrdup(file);
    else
        sk->sandbox_yaml = sg_xstrdup(file);
    if (fd == -ELOOP) {
        sg_diag_add(&sk->diags, SG_ERROR, file, 0, 0, NULL, "is a symlink; refused");
        return;
    }
    if (fd < 0) {
        sg_diag_add(&sk->diags, SG_ERROR, file, 0, 0, NULL, "cannot be read: %s",
                    fd == -EINVAL ? "not a regular file" : strerror(-fd));
        return;
    }
    if (st.st_size > SG_MANIFEST_MAX) {
        sg_diag_add(&sk->diags, SG_ERROR, file, 0, 0, NULL,
                    "is %lld bytes; manifests are capped at %d", (long long)st.st_size,
                    SG_MANIFEST_MAX);
        return;
    }
    cleanup_free char *buf = NULL;
    size_t len = 0;
    int r = read_capped(fd, SG_MANIFEST_MAX, is_md ? frontmatter_complete : NULL, &buf, &len);
    if (r < 0) {
        sg_diag_add(&sk->diags, SG_ERROR, file, 0, 0, NULL, "%s",
                    r == -EFBIG ? "grew past the manifest size cap while being read"
                                : strerror(-r));
        return;
    }
    if (is_md)
        apply_skill_md(sk, file, buf, len);
    else
        apply_sandbox_yaml(sk, file, buf, len);
}

/* ---- entrypoint detection ---- */

static bool has_ext(const char *n, const char *ext)
{
    return sg_str_has_suffix(n, ext) && strlen(n) > strlen(ext);
}

/* Names in sub of dirfd, sorted, dot-files left out; never reads contents. */
static size_t list_dir(int dirfd, const char *sub, char ***out)
{
    *out = NULL;
    int fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    size_t n = 0;
    sg_list_dir_fd(fd, SG_LIST_ALL, 4096, out, &n);
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

const char *sg_script_interpreter(const char *name)
{
    return has_ext(name, ".py")                                                     ? "python3"
           : has_ext(name, ".sh")                                                   ? "bash"
           : has_ext(name, ".js") || has_ext(name, ".mjs") || has_ext(name, ".cjs") ? "node"
                                                                                    : NULL;
}

static void set_detected(struct sg_skill *sk, const char *rel)
{
    struct sg_entrypoint *e = &sk->policy.entry;
    e->command = sg_xstrdup(sg_script_interpreter(rel)); /* rel is a .py or .sh */
    e->args = sg_xmalloc(sizeof *e->args);
    e->args[0] = sg_xstrdup(rel);
    e->nargs = 1;
    e->detected = true;
    sg_origin_set(&e->origin, "detected", 0, 0, rel);
}

/* A file under scripts/ a person would run, by its name: not a package's
 * __init__.py, nor a library's data. */
static bool runnable_name(const char *n)
{
    return sg_script_interpreter(n) && strcmp(n, "__init__.py") != 0;
}

static void add_script(struct sg_policy *p, char *rel)
{
    if (p->nscripts == SG_SCRIPTS_MAX) {
        free(rel);
        return;
    }
    p->scripts = sg_xrealloc(p->scripts, (p->nscripts + 1) * sizeof *p->scripts);
    p->script_usage = sg_xrealloc(p->script_usage, (p->nscripts + 1) * sizeof *p->script_usage);
    p->scripts[p->nscripts] = rel;
    p->script_usage[p->nscripts++] = NULL;
}

/* A file with no interpreter in its name that runs as it is: executable,
 * regular (never followed), with a #! line. */
static bool runs_by_shebang(int dirfd, const char *rel, const char *name)
{
    struct stat st;
    if (sg_script_interpreter(name) ||
        fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        !(st.st_mode & 0111))
        return false;
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    char head[SG_SHEBANG_MAX], prog[PATH_MAX], arg[SG_SHEBANG_MAX + 1];
    ssize_t r = read(fd, head, sizeof head);
    close(fd);
    return r > 0 && sg_shebang_parse(head, (size_t)r, prog, sizeof prog, arg, sizeof arg) == 0;
}

/* scripts/ and its folders one level down (scripts/office/unpack.py); the
 * count of those directly in scripts/ with an interpreter in their name is
 * *ntop, for OpenSkills' one-script rule. Executables that name theirs in
 * a #! line come after. */
static void collect_scripts(struct sg_policy *p, int dirfd, char **top, size_t ntop_all,
                            size_t *ntop)
{
    *ntop = 0;
    for (size_t i = 0; i < ntop_all; i++)
        if (runnable_name(top[i]))
            add_script(p, sg_xasprintf("scripts/%s", top[i])), (*ntop)++;
    for (size_t i = 0; i < ntop_all; i++) {
        cleanup_free char *sub = sg_xasprintf("scripts/%s", top[i]);
        if (runs_by_shebang(dirfd, sub, top[i]))
            add_script(p, steal_pointer(&sub));
    }
    for (size_t i = 0; i < ntop_all; i++) {
        if (!strcmp(top[i], "__pycache__") || !strcmp(top[i], "node_modules"))
            continue;
        cleanup_free char *sub = sg_xasprintf("scripts/%s", top[i]);
        char **in = NULL;
        size_t nin = list_dir(dirfd, sub, &in);
        for (size_t k = 0; k < nin; k++) {
            cleanup_free char *rel = sg_xasprintf("%s/%s", sub, in[k]);
            if (runnable_name(in[k]) || runs_by_shebang(dirfd, rel, in[k]))
                add_script(p, steal_pointer(&rel));
        }
        free_list(in, nin);
    }
}

/* Does line name the script's first n bytes (as a path: nothing of a
 * longer name around it)? */
static bool names_prefix(const char *line, const char *script, size_t n)
{
    size_t len = strlen(line);
    for (const char *at = memmem(line, len, script, n); at;
         at = memmem(at + 1, len - (size_t)(at + 1 - line), script, n)) {
        char before = at == line ? ' ' : at[-1], after = at[n];
        if ((isalnum((unsigned char)before) || before == '_' || before == '-') ||
            (isalnum((unsigned char)after) || after == '_' || after == '.' || after == '-'))
            continue;
        return true;
    }
    return false;
}

/* How much of a script's name a line must hold: all of it, or (the second
 * pass: Markdown often drops the ".py") its name without the extension. */
static size_t name_len(const char *script, bool stem)
{
    const char *slash = strrchr(script, '/'), *dot = strrchr(script, '.');
    if (stem && dot && (!slash || dot > slash + 1))
        return (size_t)(dot - script);
    return stem ? 0 : strlen(script);
}

/* The first line naming each script becomes its usage line. */
static void usage_in_line(struct sg_policy *p, const char *line, bool stem)
{
    for (size_t i = 0; i < p->nscripts; i++) {
        size_t n = name_len(p->scripts[i], stem);
        if (p->script_usage[i] || !n || !names_prefix(line, p->scripts[i], n))
            continue;
        /* the `code` that names it, when the line has one; else the line */
        const char *t = line, *end = NULL;
        for (const char *a = strchr(line, '`'), *b; a && (b = strchr(a + 1, '`'));
             a = strchr(b + 1, '`')) {
            cleanup_free char *span = sg_xstrndup(a + 1, (size_t)(b - a - 1));
            if (names_prefix(span, p->scripts[i], n)) {
                t = a + 1, end = b;
                break;
            }
        }
        t += strspn(t, " \t>-*$`");
        size_t l = end ? (size_t)(end - t) : strlen(t);
        while (l && strchr(" \t\r`", t[l - 1]))
            l--;
        p->script_usage[i] = sg_xstrndup(t, l > SG_USAGE_MAX ? SG_USAGE_MAX : l);
    }
}

void sg_script_usage_scan(struct sg_policy *p, char *text)
{
    size_t len = strlen(text);
    for (char *c = text; (c = strchr(c, '\n')); c++)
        *c = '\0';
    for (int stem = 0; stem < 2; stem++)
        for (char *line = text; line < text + len + (len == 0); line += strlen(line) + 1)
            usage_in_line(p, line, stem);
}

/* One Markdown file of the skill, scanned for usage lines. */
static void usage_from(struct sg_policy *p, int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int r = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                ? read_capped(fd, SG_MANIFEST_MAX, NULL, &buf, &len)
                : -EINVAL;
    close(fd);
    if (r < 0)
        return;
    sg_script_usage_scan(p, buf);
    free(buf);
}

int sg_shebang_parse(const char *head, size_t n, char *prog, size_t progmax, char *arg,
                     size_t argmax)
{
    char line[SG_SHEBANG_MAX + 1];
    if (n < 2 || head[0] != '#' || head[1] != '!')
        return -ENOEXEC;
    if (n > SG_SHEBANG_MAX)
        n = SG_SHEBANG_MAX;
    memcpy(line, head, n);
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    char *p = line + 2 + strspn(line + 2, " \t");
    char *a = p + strcspn(p, " \t");
    if (*a)
        *a++ = '\0';
    a += strspn(a, " \t");
    a[strcspn(a, " \t\r")] = '\0'; /* one argument, as the kernel takes it */
    p[strcspn(p, "\r")] = '\0';
    if (p[0] != '/' || snprintf(prog, progmax, "%s", p) >= (int)progmax ||
        snprintf(arg, argmax, "%s", a) >= (int)argmax)
        return -ENOEXEC;
    return 0;
}

/* Where the skill says how to run its scripts: SKILL.md, the other .md
 * files beside it and in references/ (at most 32 files). */
static void find_usage(struct sg_policy *p, int dirfd, char **root, size_t nroot)
{
    if (!p->nscripts)
        return;
    size_t files = 0;
    usage_from(p, dirfd, "SKILL.md");
    for (size_t i = 0; i < nroot && files < 32; i++)
        if (has_ext(root[i], ".md") && strcmp(root[i], "SKILL.md") != 0)
            usage_from(p, dirfd, root[i]), files++;
    char **refs = NULL;
    size_t nrefs = list_dir(dirfd, "references", &refs);
    for (size_t i = 0; i < nrefs && files < 32; i++)
        if (has_ext(refs[i], ".md")) {
            cleanup_free char *rel = sg_xasprintf("references/%s", refs[i]);
            usage_from(p, dirfd, rel), files++;
        }
    free_list(refs, nrefs);
}

/* A WASM skill's module: a core module is run (WASI preview 1); a
 * component (the component model: WASI 0.2 and later) is refused here, in
 * validate, with why. Only the 8-byte header is read: the runtime checks
 * the rest when it compiles the module. */
static void check_wasm(struct sg_skill *sk, int dirfd)
{
    const struct sg_policy *p = &sk->policy;
    cleanup_free char *f = sg_xasprintf("%s/%s", sk->display, p->wasm_module);
    unsigned char h[8];
    cleanup_fd int fd = dirfd >= 0 ? openat(dirfd, p->wasm_module,
                                            O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                                   : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        sg_diag_add(&sk->diags, SG_ERROR, f, 0, 0, NULL, "the WebAssembly module cannot be read");
        return;
    }
    if (st.st_size > SG_WASM_MODULE_MAX) {
        sg_diag_add(&sk->diags, SG_ERROR, f, 0, 0, NULL,
                    "the WebAssembly module is %lld bytes, over the %d MiB a skill's module "
                    "may be", (long long)st.st_size, SG_WASM_MODULE_MAX >> 20);
        return;
    }
    ssize_t n = pread(fd, h, sizeof h, 0);
    if (n != (ssize_t)sizeof h || memcmp(h, "\0asm", 4)) {
        sg_diag_add(&sk->diags, SG_ERROR, f, 0, 0, NULL, "not a WebAssembly module (no \\0asm "
                    "header)");
        return;
    }
    if (h[4] == 1 && !h[5] && !h[6] && !h[7]) { /* a core module, version 1 */
        const struct sg_origin *o = &p->wasm_network_origin;
        if (p->wasm_network)
            sg_diag_add(&sk->diags, SG_WARNING, o->file, o->line, o->col, o->field,
                        "WASI preview 1 has no sockets: the runtime (node:wasi) gives the module "
                        "none, and a WASM run lets no connection out, so these hosts are never "
                        "reached");
        return;
    }
    if (h[6] == 1 && !h[7])
        sg_diag_add(&sk->diags, SG_ERROR, f, 0, 0, NULL,
                    "a WebAssembly component (the component model: WASI 0.2 or later) is not "
                    "run: skillgate runs core WASI preview-1 modules under Node.js's node:wasi, "
                    "and Debian packages no component runtime; build the skill for "
                    "wasm32-wasi (preview 1) instead");
    else
        sg_diag_add(&sk->diags, SG_ERROR, f, 0, 0, NULL,
                    "WebAssembly binary version %u is not one this runtime knows",
                    (unsigned)h[4] | (unsigned)h[5] << 8);
}

/* SKILL.md's wasm: block says the skill is a WebAssembly module, and none
 * is where a module is looked for: an error, not an instructions-only skill
 * that validates and then runs nothing. */
static void wasm_absent(struct sg_skill *sk)
{
    const struct sg_origin *o = &sk->policy.wasm_origin;
    sg_diag_add(&sk->diags, SG_ERROR, o->file, o->line, o->col, o->field,
                "a WebAssembly skill, but its module is absent: %s/wasm/skill.wasm does not "
                "exist (nor a .wasm file in scripts/ or the skill's folder); build the module "
                "there, or remove the wasm: block",
                sk->display);
}

static void detect_entrypoint(struct sg_skill *sk, int dirfd)
{
    static const char *const conventional[] = {"main.py",  "main.sh",   "index.py",
                                               "index.sh", "script.py", "script.sh"};
    struct sg_policy *p = &sk->policy;
    const char *yfile = sk->sandbox_yaml ? sk->sandbox_yaml : "skillsandbox.yaml";
    char **root = NULL, **scripts = NULL;
    size_t nroot = dirfd >= 0 ? list_dir(dirfd, ".", &root) : 0;
    size_t nscripts = dirfd >= 0 ? list_dir(dirfd, "scripts", &scripts) : 0;
    const char *wasm = NULL;
    bool wasm_in_scripts = false;

    size_t ntop = 0;
    if (dirfd >= 0) {
        collect_scripts(p, dirfd, scripts, nscripts, &ntop);
        find_usage(p, dirfd, root, nroot);
    }
    struct stat wst;
    if (dirfd >= 0 && fstatat(dirfd, "wasm/skill.wasm", &wst, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(wst.st_mode))
        wasm = "wasm/skill.wasm"; /* OpenSkills' place for it */
    for (size_t i = 0; i < nscripts; i++)
        if (!wasm && has_ext(scripts[i], ".wasm"))
            wasm = scripts[i], wasm_in_scripts = true;
    for (size_t i = 0; i < nroot && !wasm; i++)
        if (has_ext(root[i], ".wasm"))
            wasm = root[i];

    if (!wasm && p->wasm_declared && dirfd >= 0) /* looked, and found none */
        wasm_absent(sk);
    if (p->entry.command) {
        /* Declared: a relative path must name a file inside the skill. */
        const char *cmd = p->entry.command;
        if (strchr(cmd, '/') && cmd[0] != '/') {
            cleanup_free char *abs = NULL;
            const char *why = NULL;
            struct stat st;
            if (sg_path_resolve(sk->root, cmd, &abs, &why) < 0)
                sg_diag_add(&sk->diags, SG_ERROR, yfile, p->entry.origin.line,
                            p->entry.origin.col, "entrypoint.command", "\"%s\" %s", cmd, why);
            else if (dirfd >= 0 && stat(abs, &st) < 0)
                sg_diag_add(&sk->diags, SG_ERROR, yfile, p->entry.origin.line,
                            p->entry.origin.col, "entrypoint.command", "\"%s\" does not exist",
                            cmd);
        }
        p->mode = SG_MODE_NATIVE;
        goto out;
    }
    for (size_t k = 0; k < SG_ARRAY_LEN(conventional); k++) {
        for (size_t i = 0; i < nroot; i++) {
            if (!strcmp(root[i], conventional[k])) {
                set_detected(sk, conventional[k]);
                p->mode = SG_MODE_NATIVE;
                goto out;
            }
        }
    }
    if (ntop == 1 && (has_ext(p->scripts[0], ".py") || has_ext(p->scripts[0], ".sh"))) {
        set_detected(sk, p->scripts[0]);
        p->mode = SG_MODE_NATIVE;
        goto out;
    }
    if (wasm) {
        p->mode = SG_MODE_WASM;
        p->wasm_module = sg_xasprintf("%s%s", wasm_in_scripts ? "scripts/" : "", wasm);
        check_wasm(sk, dirfd);
        goto out;
    }
    /* several scripts and no entrypoint: the person picks one (--script) */
    p->mode = p->nscripts ? SG_MODE_SCRIPTS : SG_MODE_INSTRUCTIONS;
out:
    free_list(root, nroot);
    free_list(scripts, nscripts);
}

/* ---- folding ---- */

static void add_root_path(struct sg_skill *sk, bool write, const struct sg_tool *t)
{
    struct sg_policy *p = &sk->policy;
    struct sg_path **v = write ? &p->write : &p->read;
    size_t *nv = write ? &p->nwrite : &p->nread;
    for (size_t i = 0; i < *nv; i++)
        if (!strcmp((*v)[i].path, sk->root))
            return;
    *v = sg_xrealloc(*v, (*nv + 1) * sizeof **v);
    /* The root goes first: it is the path every reader looks for. */
    memmove(*v + 1, *v, *nv * sizeof **v);
    struct sg_path *e = &(*v)[0];
    (*nv)++;
    e->path = sg_xstrdup(sk->root);
    e->declared = sg_xstrdup(".");
    if (t)
        sg_origin_copy(&e->origin, &t->origin);
    else
        sg_origin_set(&e->origin, "default", 0, 0, "the skill's own files");
}

/* Under OpenClaw's rules every refusal says how OpenClaw stands: the
 * ones OpenClaw shares say so where they are made; the rest are
 * skillgate's own (a declaration it will not grant, a type it cannot
 * read), which OpenClaw's loader, checking only for a description, would
 * take. */
static void note_openclaw_takes(struct sg_skill *sk)
{
    /* OpenClaw reads SKILL.md only: without one, or with one it skips, it
     * takes nothing */
    if (!sk->openclaw_rules || !sk->skill_md)
        return;
    for (size_t i = 0; i < sk->diags.n; i++)
        if (strstr(sk->diags.v[i].msg, "OpenClaw would refuse"))
            return;
    for (size_t i = 0; i < sk->diags.n; i++) {
        struct sg_diag *g = &sk->diags.v[i];
        if (g->sev != SG_ERROR || strstr(g->msg, "OpenClaw"))
            continue;
        char *m = sg_xasprintf("%s (skillgate's own rule; OpenClaw's loader would take it)",
                               g->msg);
        free(g->msg);
        g->msg = m;
    }
}

static void finish(struct sg_skill *sk, int dirfd)
{
    struct sg_policy *p = &sk->policy;
    const struct sg_tool *reader = NULL;
    for (size_t i = 0; i < p->ntools && !reader; i++)
        if (p->tools[i].caps & SG_CAP_READ_ROOT)
            reader = &p->tools[i];
    /* A tool that writes (Write, Bash) no longer makes the skill's own folder
     * writable: its manifests and code are what a person vetted, and a run
     * that rewrote them widened the next one. What it writes there asks
     * (Write), unless a folder inside it is declared writable. */
    /* The skill's own files are always readable: it has to run them. */
    add_root_path(sk, false, reader);

    if (!sk->skill_md && sk->sandbox_yaml && !sk->description)
        sg_diag_add(&sk->diags, SG_ERROR, sk->sandbox_yaml, 0, 0, "skill.description",
                    "missing (required when there is no SKILL.md)");
    detect_entrypoint(sk, dirfd);
    note_openclaw_takes(sk);
}

static struct sg_skill *from_buffers(const char *root, const char *openclaw_place,
                                     const char *skill_md, size_t md_len,
                                     const char *sandbox_yaml, size_t y_len)
{
    struct sg_skill *sk = skill_new(root, root);
    sk->openclaw_rules = openclaw_place ? sg_xstrdup(openclaw_place) : NULL;
    if (skill_md) {
        sk->skill_md = sg_xasprintf("%s/SKILL.md", root);
        if (md_len > SG_MANIFEST_MAX)
            sg_diag_add(&sk->diags, SG_ERROR, sk->skill_md, 0, 0, NULL, "over the size cap");
        else
            apply_skill_md(sk, sk->skill_md, skill_md, md_len);
    }
    if (sandbox_yaml) {
        sk->sandbox_yaml = sg_xasprintf("%s/skillsandbox.yaml", root);
        if (y_len > SG_MANIFEST_MAX)
            sg_diag_add(&sk->diags, SG_ERROR, sk->sandbox_yaml, 0, 0, NULL, "over the size cap");
        else
            apply_sandbox_yaml(sk, sk->sandbox_yaml, sandbox_yaml, y_len);
    }
    finish(sk, -1);
    return sk;
}

struct sg_skill *sg_skill_from_buffers(const char *root, const char *skill_md, size_t md_len,
                                       const char *sandbox_yaml, size_t y_len)
{
    return from_buffers(root, NULL, skill_md, md_len, sandbox_yaml, y_len);
}

struct sg_skill *sg_skill_from_buffers_found(const char *root, const char *openclaw_place,
                                             const char *skill_md, size_t md_len)
{
    return from_buffers(root, openclaw_place, skill_md, md_len, NULL, 0);
}

int sg_skill_load(const char *path, struct sg_skill **out)
{
    return sg_skill_load_found(path, NULL, out);
}

int sg_skill_load_found(const char *path, const char *openclaw_place, struct sg_skill **out)
{
    *out = NULL;
    cleanup_free char *dir = sg_xstrdup(path);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = '\0';
    struct stat st;
    if (stat(dir, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(dir, '/');
        base = base ? base + 1 : dir;
        if (strcmp(base, "SKILL.md") != 0 && strcmp(base, "skillsandbox.yaml") != 0)
            return -ENOTDIR;
        if (base == dir)
            snprintf(dir, len + 1, ".");
        else
            dir[base - dir - (base - dir > 1 ? 1 : 0)] = '\0';
    }
    char rp[PATH_MAX];
    if (!realpath(dir, rp))
        return -errno;
    cleanup_fd int dfd = open(rp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    struct sg_skill *sk = skill_new(rp, dir);
    sk->openclaw_rules = openclaw_place ? sg_xstrdup(openclaw_place)
                                        : sg_openclaw_place(sg_invoking_home(), rp);
    load_file(sk, dfd, "SKILL.md", true);
    load_file(sk, dfd, "skillsandbox.yaml", false);
    if (!sk->skill_md && !sk->sandbox_yaml) {
        sg_skill_free(sk);
        return -ENODATA;
    }
    finish(sk, dfd);
    *out = sk;
    return 0;
}

int sg_skill_read_body(const struct sg_skill *sk, char **body, size_t *len)
{
    *body = NULL;
    *len = 0;
    if (!sk->skill_md || sk->body_offset < 0)
        return -ENOENT;
    cleanup_fd int dfd = open(sk->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    struct stat st;
    cleanup_fd int fd = open_manifest(dfd, "SKILL.md", &st);
    if (fd < 0)
        return fd;
    if (lseek(fd, sk->body_offset, SEEK_SET) < 0)
        return -errno;
    cleanup_free char *buf = NULL;
    size_t n = 0;
    int r = read_capped(fd, SG_MANIFEST_MAX, NULL, &buf, &n);
    if (r < 0)
        return r;
    if (!sg_utf8_valid(buf, n, NULL))
        return -EILSEQ;
    *body = steal_pointer(&buf);
    *len = n;
    return 0;
}

char *sg_skill_grants_beyond(const struct sg_skill *sk, bool programs)
{
    const struct sg_policy *pol = &sk->policy;
    struct sg_buf b;
    sg_buf_init(&b, 4096);
    size_t rl = strlen(sk->root);
    for (size_t i = 0; i < pol->nenv; i++)
        sg_buf_printf(&b, "%senv %s", b.len ? "; " : "", pol->env[i].name);
    for (size_t i = 0; i < pol->nread; i++)
        if (strncmp(pol->read[i].path, sk->root, rl) ||
            (pol->read[i].path[rl] && pol->read[i].path[rl] != '/'))
            sg_buf_printf(&b, "%sreads %s", b.len ? "; " : "", pol->read[i].path);
    for (size_t i = 0; i < pol->nwrite; i++)
        sg_buf_printf(&b, "%swrites %s", b.len ? "; " : "", pol->write[i].path);
    for (size_t i = 0; i < pol->negress; i++)
        sg_buf_printf(&b, "%sreaches %s", b.len ? "; " : "", pol->egress[i].domain);
    for (size_t i = 0; i < pol->nsockets; i++)
        sg_buf_printf(&b, "%sconnects to %s", b.len ? "; " : "", pol->sockets[i].path);
    for (size_t i = 0; programs && i < pol->ntools; i++)
        if ((pol->tools[i].id == SG_TOOL_BASH || pol->tools[i].id == SG_TOOL_TERMINAL) &&
            !pol->tools[i].scope)
            sg_buf_printf(&b, "%sruns any program (Bash)", b.len ? "; " : "");
    if (b.dropped)
        sg_buf_printf(&b, " … (skillgate inspect %s shows all)", sk->root);
    char *out = b.data ? sg_buf_steal(&b) : sg_xstrdup("");
    sg_buf_free(&b);
    return out;
}
