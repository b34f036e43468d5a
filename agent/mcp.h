/* `skillgate serve`: an MCP server over stdio (newline-delimited JSON-RPC
 * 2.0, jansson). Tools: list_skills, validate_skill, inspect_skill,
 * run_skill (full enforcement; no argument weakens it) and
 * check_tool_permission. Runs and permission checks happen in worker
 * processes, so several go on at once and none blocks the protocol (past
 * SG_MCP_MAX_WORKERS, calls wait their turn in order); their
 * prompts go to an attached TUI (attach.h), else to /dev/tty when there is
 * one, else they are denied. stdout carries only protocol messages.
 *
 * run_skill's cwd is shown to the skill (read-only). One inside the
 * agent's project (the client's roots when it has the roots capability
 * and answered roots/list, else the folder the server was started in;
 * compared by real path) is used as given; any other is the agent's Read
 * of that folder, decided as the hook decides one (its policy file's
 * rules, grants, a person, else refused), and an audit record. */
#ifndef SG_MCP_H
#define SG_MCP_H

#define SG_MCP_MESSAGE_MAX (4u << 20) /* a longer line is refused whole */
#define SG_MCP_MAX_WORKERS 16         /* runs and checks at once */
#define SG_MCP_MAX_QUEUED 256         /* calls waiting for a worker; more are refused */
/* The client's roots (MCP roots/list), the agent's project for run_skill's
 * cwd: at most this many are kept (a cwd under one past them is asked, as
 * any outside the project), and a run_skill with a cwd waits at most this
 * long for the answer (then the server's own folder is the project). */
#define SG_MCP_MAX_ROOTS 64
#define SG_MCP_ROOTS_WAIT_MS 10000

/* Serve on fds in and out until in reaches EOF; returns 0. */
int sg_mcp_serve(int in, int out);

#endif
