/* libFuzzer target for OpenClaw's line-by-line reading of a frontmatter
 * (manifest/fmlines.h): the bytes as a frontmatter block, then as a whole
 * SKILL.md of a skill kept where OpenClaw keeps skills, so a frontmatter
 * YAML cannot parse goes through that reading and the fields skillgate
 * enforces are read again from their text. Inputs over the manifest cap
 * are cut, as the loader would refuse them anyway. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "fmlines.h"
#include "skill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_MANIFEST_MAX)
        size = SG_MANIFEST_MAX;
    const char *buf = (const char *)data;
    struct sg_ynode *m = NULL;
    struct sg_diags d = {0};
    if (sg_fmlines_parse(buf, size, 2, NULL, "fuzz", &d, &m) == 0) {
        /* a mapping of scalars, each key a run of [A-Za-z0-9_-] */
        for (size_t i = 0; i + 1 < m->n; i += 2)
            if (m->kids[i]->type != SG_Y_SCALAR || m->kids[i + 1]->type != SG_Y_SCALAR ||
                !m->kids[i]->len || strspn(m->kids[i]->str, "abcdefghijklmnopqrstuvwxyzABCDEFGH"
                                                            "IJKLMNOPQRSTUVWXYZ0123456789_-") !=
                                        m->kids[i]->len)
                abort();
    }
    sg_ynode_free(m);
    sg_diags_free(&d);
    struct sg_skill *sk = sg_skill_from_buffers_found("/nonexistent/fuzz",
                                                      "found in ~/.openclaw/skills", buf, size);
    for (size_t i = 0; i < sk->diags.n; i++)
        free(sg_diag_format(&sk->diags.v[i]));
    sg_skill_free(sk);
    return 0;
}
