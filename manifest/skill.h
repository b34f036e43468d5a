/* Loading one skill folder: SKILL.md (frontmatter only: Tier 1) and/or
 * skillsandbox.yaml, folded into one validated Policy. */
#ifndef SG_SKILL_H
#define SG_SKILL_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/* Every manifest file a skill controls is capped before it is parsed. */
#define SG_MANIFEST_MAX (256 * 1024)

/* A skill as loaded: what its manifests say, the Policy they fold into,
 * and every problem found. */
struct sg_openclaw;

struct sg_kv {
    char *key, *value;
};

struct sg_skill {
    char *root;     /* absolute, canonical */
    char *display;  /* the folder as the user named it */
    char *dirname;  /* last component of root */
    char *skill_md; /* display path of SKILL.md or NULL */
    char *sandbox_yaml; /* display path of skillsandbox.yaml or NULL */
    char *name, *description, *version, *author, *license, *compatibility;
    char *model, *agent, *argument_hint;
    struct sg_kv *metadata;
    size_t nmetadata;
    struct sg_openclaw *openclaw; /* metadata.openclaw (openclaw.h), or NULL */
    int user_invocable;           /* -1 unset, 0, 1 */
    int disable_model_invocation; /* -1 unset, 0, 1 */
    bool has_hooks;
    /* Judged by the rules OpenClaw's own loader applies (openclaw.h):
     * where it was found or what it carries, in words ("found in
     * ~/.openclaw/skills", "carries metadata.clawdbot"); NULL: the Agent
     * Skills spec's rules. */
    char *openclaw_rules;
    long body_offset; /* byte offset of the Markdown body in SKILL.md */
    int body_line;
    struct sg_policy policy;
    struct sg_diags diags;
};

/* Load the skill in dir (or the folder of a SKILL.md / skillsandbox.yaml
 * path). Returns 0 and *out, whose diags hold every problem found (a skill
 * with errors is still returned, so callers can show them), or -ENODATA when
 * the folder holds neither file, or -errno when it cannot be read. */
int sg_skill_load(const char *path, struct sg_skill **out);
/* The same for a skill found where OpenClaw keeps skills in a way the path
 * alone does not tell (the current folder's ./skills, OpenClaw's
 * workspace): openclaw_place says so in words, and OpenClaw's rules apply.
 * sg_skill_load applies them itself to a skill in the invoking user's
 * OpenClaw folders (sg_openclaw_place). */
int sg_skill_load_found(const char *path, const char *openclaw_place, struct sg_skill **out);

/* The same from memory, for tests and fuzzing: root need not exist.
 * Either buffer may be NULL. */
struct sg_skill *sg_skill_from_buffers(const char *root, const char *skill_md, size_t md_len,
                                       const char *sandbox_yaml, size_t y_len);
/* The same as one found in one of OpenClaw's places (openclaw_place says
 * which, as sg_skill_load_found takes it): its rules, and its line-by-line
 * reading of a frontmatter YAML cannot parse. */
struct sg_skill *sg_skill_from_buffers_found(const char *root, const char *openclaw_place,
                                             const char *skill_md, size_t md_len);

/* Tier 2: the Markdown body of SKILL.md, read on demand (NUL-terminated,
 * capped, UTF-8 checked). */
int sg_skill_read_body(const struct sg_skill *sk, char **body, size_t *len);

bool sg_skill_has_errors(const struct sg_skill *sk);
/* What the manifest grants beyond the skill's own folder, one line a
 * person reads before it runs: environment variables, paths outside it,
 * hosts, host sockets, and (programs) an unscoped Bash. "" when nothing;
 * not sanitized. Caller frees. */
char *sg_skill_grants_beyond(const struct sg_skill *sk, bool programs);
void sg_skill_free(struct sg_skill *sk);

/* Split a SKILL.md buffer into frontmatter and body. Returns 0 with the YAML
 * span and the body's byte offset and line, 1 when the buffer has no closing
 * "---" yet (more input may finish it), or -EINVAL when it does not start
 * with "---". With at_eof, the buffer is the whole file: a last line without
 * a newline counts as a line. */
int sg_frontmatter_split(const char *buf, size_t len, bool at_eof, size_t *yaml_off,
                         size_t *yaml_len, size_t *body_off, int *body_line);

/* The interpreter a script's name asks for (.py python3, .sh bash, .js
 * .mjs .cjs node), or NULL. */
const char *sg_script_interpreter(const char *name);

/* The skill's Markdown text (NUL-terminated, cut into lines in place):
 * the first line naming each of p's scripts without a usage line yet
 * becomes it (the backticked command when the line has one; at most
 * SG_USAGE_MAX bytes). */
#define SG_USAGE_MAX 200
void sg_script_usage_scan(struct sg_policy *p, char *text);

/* A script's first bytes: its #! line's program (absolute) and its one
 * argument ("" when none), as the kernel would take them. 0, or -ENOEXEC
 * when there is no usable #! line. */
#define SG_SHEBANG_MAX 255
int sg_shebang_parse(const char *head, size_t n, char *prog, size_t progmax, char *arg,
                     size_t argmax);

#endif
