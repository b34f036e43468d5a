/* The line prompt: a front end of the permission engine on the person's
 * terminal (/dev/tty), for `skillgate run` and an MCP server with no TUI
 * attached. Like the TUI's prompt it is shown the head of the queue
 * (sg_perm_show_fn) and answers it by id; its terminal is polled in the
 * run's loop through the engine (sg_perm_set_frontend_fds). */
#ifndef SG_LINEPROMPT_H
#define SG_LINEPROMPT_H

#include <poll.h>
#include <stddef.h>

#include "perm.h"

struct sg_lineprompt;
/* NULL when there is no terminal to ask on. */
struct sg_lineprompt *sg_lineprompt_open(void);
void sg_lineprompt_close(struct sg_lineprompt *lp);
/* Attach it to the engine as its front end. */
void sg_lineprompt_attach(struct sg_lineprompt *lp, struct sg_perm *perm);

#endif
