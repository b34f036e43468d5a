/* libFuzzer target for the manifest parsers: the bytes are fed as a SKILL.md
 * and, split at the first NUL, the rest as a skillsandbox.yaml, so both
 * readers and their fold into one Policy are exercised. Inputs over the
 * manifest cap are cut, as the loader would refuse them anyway. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "skill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_MANIFEST_MAX)
        size = SG_MANIFEST_MAX;
    const char *buf = (const char *)data;
    const char *nul = memchr(buf, '\0', size);
    size_t md_len = nul ? (size_t)(nul - buf) : size;
    const char *y = nul ? nul + 1 : NULL;
    size_t y_len = nul ? size - md_len - 1 : 0;

    struct sg_skill *sk = sg_skill_from_buffers("/nonexistent/fuzz", buf, md_len, y, y_len);
    /* Every problem must format into a line. */
    for (size_t i = 0; i < sk->diags.n; i++) {
        char *line = sg_diag_format(&sk->diags.v[i]);
        free(line);
    }
    sg_skill_free(sk);

    /* The same bytes as a skillsandbox.yaml alone. */
    sk = sg_skill_from_buffers("/nonexistent/fuzz", NULL, 0, buf, size);
    sg_skill_free(sk);
    return 0;
}
