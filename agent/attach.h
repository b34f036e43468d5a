/* The attach socket: a TUI started with `skillgate tui --attach` listens on
 * $XDG_RUNTIME_DIR/skillgate/attach.sock (folder 0700, socket 0600), and the
 * MCP server's runs connect to it, stream their events and hand it their
 * permission prompts. Each side checks the other's uid (SO_PEERCRED): only
 * the same user (or root serving that user) is ever talked to.
 *
 * Messages are JSON objects, one per line, each at most SG_ATTACH_LINE_MAX:
 *   run -> TUI  {"type":"hello","skill","run_id"}  {"type":"event","kind",
 *               "message","severity","wall_ms"}  {"type":"prompt", request
 *               fields, "why","rule" (one rule a line),"queued","timeout_ms",
 *               "rows" (a command's rows, [label, text] each: lineprompt.h),
 *               "cut" (not all of it is there: the TUI offers no allow)}
 *               {"type":"prompt_closed"}  {"type":"end","outcome"}
 *   TUI -> run  {"type":"answer","decision":"allow_once|allow_run|
 *               allow_always|deny|deny_always"} */
#ifndef SG_ATTACH_H
#define SG_ATTACH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perm.h"

#define SG_ATTACH_LINE_MAX (64 * 1024)

/* The socket's path (caller frees), or NULL when no runtime folder can be
 * named. mkdir creates the folder (0700) and refuses one another user owns. */
char *sg_attach_path(bool mkdir);
/* Connect to an attached TUI; -errno when there is none. */
int sg_attach_connect(void);
/* Listen (the TUI side). */
int sg_attach_listen(char **path_out);
/* Accept one connection whose peer is this user; -errno otherwise. */
int sg_attach_accept(int lfd);
/* Send one message (consumes msg); -errno on failure, -ETIMEDOUT when the
 * peer has read nothing for 5 s while the socket was full. */
int sg_attach_send(int fd, json_t *msg);

/* A line reader with a cap: feed what read() gave, take whole messages. */
struct sg_attach_reader {
    char buf[SG_ATTACH_LINE_MAX];
    size_t len;
    bool discarding; /* a line over the cap is dropped whole */
};
/* Read what the fd has; returns 0, or -1 at EOF/error. Calls fn for each
 * whole JSON object. */
int sg_attach_read(int fd, struct sg_attach_reader *r, void (*fn)(void *ctx, json_t *msg),
                   void *ctx);

/* A run's (or a check's) side of an attached TUI: its prompts go to the
 * TUI, the TUI's answers to the engine. */
struct sg_attach_fe {
    int fd;                     /* the attached TUI, or -1 */
    struct sg_attach_reader rd;
    struct sg_perm *perm;       /* whose prompt is shown */
    bool cut;                   /* request cut_id was sent as not all there: */
    uint64_t cut_id;            /* no allow of it is taken */
};
/* An sg_perm_show_fn (ctx: the sg_attach_fe): the prompt, sanitized, or
 * prompt_closed. */
void sg_attach_fe_show(void *ctx, const struct sg_perm_prompt *pr);
/* Read the TUI's answers and hand each to the engine (an answer that names
 * no request answers none). At EOF or error the fd is closed and set to -1:
 * what it held is denied by the engine's deadline. */
void sg_attach_fe_read(struct sg_attach_fe *fe);
/* The fe as a source of a loop (ctx: the sg_attach_fe): its answers read. */
size_t sg_attach_fe_pollfds(void *ctx, struct pollfd *out, size_t max);
void sg_attach_fe_dispatch(void *ctx, const struct pollfd *p, size_t n);
/* An event sink (ctx: the sg_attach_fe): each event to the TUI, sanitized.
 * A TUI that went away is dropped (fd -1). */
void sg_attach_fe_event(void *ctx, const struct sg_event *ev);

const char *sg_decision_wire(enum sg_decision d);
int sg_decision_from_wire(const char *s, enum sg_decision *d);

#endif
