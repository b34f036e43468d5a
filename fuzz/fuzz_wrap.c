/* libFuzzer target for skillgate wrap's settings reader (run/wrap.c): srt's
 * settings file and Claude Code's `sandbox` object, any bytes up to the
 * cap (a repository's .claude/settings.json is the repository's). Either
 * it reads, or it fails with a message; nothing it gathers outlives
 * sg_wrap_free. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "wrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_wrap w = {.cwd = sg_xstrdup("/nonexistent-wrap/proj")};
    char *why = NULL;
    int e = sg_wrap_settings_text(&w, "fuzz.json", (const char *)data, size,
                                  "/nonexistent-wrap", &why);
    if (e < 0 && !why)
        abort();
    if (e == 0 && why)
        abort();
    free(why);
    sg_wrap_free(&w);
    return 0;
}
