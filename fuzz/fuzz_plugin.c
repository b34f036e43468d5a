/* libFuzzer target for what skillgate reads of a Claude Code plugin's own
 * manifest (sg_plugin_manifest_skills): the bytes as a plugin.json, and as
 * a marketplace.json searched for one plugin's entry. Every path it returns
 * must stay inside the plugin: relative, no ".." component. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *buf, size_t len, const char *name)
{
    struct sg_diags d = {0};
    char **paths, *pname;
    size_t n;
    sg_plugin_manifest_skills(buf, len, name, "plugin.json", &paths, &n, &pname, &d);
    if (n > SG_PLUGIN_PATHS_MAX)
        abort();
    for (size_t i = 0; i < n; i++) {
        const char *p = paths[i];
        if (!*p || *p == '/')
            abort();
        for (const char *c = p; *c;) {
            size_t k = strcspn(c, "/");
            if (k == 2 && c[0] == '.' && c[1] == '.')
                abort();
            c += k + (c[k] == '/');
        }
        free(paths[i]);
    }
    free(paths);
    free(pname);
    sg_diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SG_PLUGIN_FILE_MAX)
        size = SG_PLUGIN_FILE_MAX;
    check((const char *)data, size, NULL);
    check((const char *)data, size, "docs");
    return 0;
}
