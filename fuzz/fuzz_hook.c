/* libFuzzer target for what Claude Code (or whatever runs `skillgate hook`)
 * hands the hook (agent/hook.c): the event on stdin, a URL in it, and the
 * settings.json text install edits. An event either parses or fails with a
 * reason; a URL's host never holds a control byte; on a settings object
 * holding no skillgate entry, install then uninstall gives the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_HOOK_INPUT_MAX)
        size = SG_HOOK_INPUT_MAX;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';

    struct sg_hook_call c;
    const char *why = NULL;
    if (sg_hook_parse(s, size, &c, &why) < 0 && !why)
        abort();
    json_decref(sg_hook_answer(c.event, "ask", why ? why : "", NULL));
    sg_hook_call_free(&c);

    char *host = sg_hook_url_host(s, size);
    for (const char *p = host; p && *p; p++)
        if ((unsigned char)*p < 0x21 || *p == '/')
            abort();
    free(host);

    bool changed;
    const char *w = NULL;
    const char *cmd = "/usr/bin/skillgate hook";
    if (!strstr(s, "skillgate")) {
        char *in = sg_hook_settings_edit(s, size, cmd, false, &changed, &w);
        if (in) {
            if (!changed)
                abort(); /* there was no entry of ours: install adds one */
            char *out = sg_hook_settings_edit(in, strlen(in), cmd, true, &changed, &w);
            if (!out || !changed)
                abort();
            /* an empty file gets a new one: nothing to give back there */
            size_t lead = strspn(s, " \t\r\n");
            if (lead < size && (strlen(out) != size || memcmp(out, s, size)))
                abort();
            free(out);
            free(in);
        } else if (!w) {
            abort();
        }
    }
    free(s);
    return 0;
}
