/* The user's config file, $XDG_CONFIG_HOME/skillgate/config.yaml. */
#ifndef SG_CONFIG_H
#define SG_CONFIG_H

#include "diag.h"

/* One "action: keys" line of the keys: section, checked by the TUI. */
struct sg_config_key {
    char *action, *keys;
    int line, col;
};

struct sg_config {
    char *path;        /* the file read, or NULL when there was none */
    char **skill_dirs; /* absolute */
    size_t nskill_dirs;
    char *theme;       /* theme: NAME (or NULL) */
    int theme_line;
    struct sg_config_key *keys; /* keys: {action: "k Down"} */
    size_t nkeys;
};

/* The default location: $XDG_CONFIG_HOME/skillgate/config.yaml, or
 * ~/.config/skillgate/config.yaml. Caller frees. */
char *sg_config_default_path(void);
/* Read path (a missing file is an empty config, not an error). Problems go to
 * d. Returns 0, or -EINVAL when the file has errors. */
int sg_config_load(const char *path, struct sg_config *cfg, struct sg_diags *d);
void sg_config_free(struct sg_config *cfg);

#endif
