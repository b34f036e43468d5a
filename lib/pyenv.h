/* A Python program as skillgate run execs it, and the environment Python
 * then takes: one reading for run (sandbox/plan.c, what is mounted) and
 * the agent hook (agent/hookvenv.c, what is digested and pinned), so what
 * a person vets is what runs. */
#ifndef SG_PYENV_H
#define SG_PYENV_H

#include <stdbool.h>

struct sg_pyenv {
    char *prog;      /* what run execs: realpath(dirname(py))/basename(py), Python's
                      * sys.executable (its links not followed) */
    char *env;       /* site.py's prefix, the folder above prog's, when a pyvenv.cfg is
                      * next to prog or there (site.py's two places); else NULL */
    bool cfg_in_bin; /* a pyvenv.cfg next to prog, which site.py reads first */
    bool link_out;   /* prog's folder is not env/bin as named (bin/ a link), or a link on
                      * the way from prog to the interpreter leads out of env to a file
                      * not root's alone: a digest of env does not cover what runs */
};

/* Read py (an absolute path to a program, or to an environment's folder:
 * its bin/python3, else bin/python). 0, or -errno when there is no such
 * program (e->prog NULL). */
int sg_pyenv_read(const char *py, struct sg_pyenv *e);
void sg_pyenv_free(struct sg_pyenv *e);

#endif
