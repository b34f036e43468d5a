/* `skillgate serve`: an MCP server over stdio (newline-delimited JSON-RPC
 * 2.0, jansson). Tools: list_skills, validate_skill, inspect_skill,
 * run_skill (full enforcement; no argument weakens it) and
 * check_tool_permission. Runs and permission checks happen in worker
 * processes, so several go on at once and none blocks the protocol (past
 * SG_MCP_MAX_WORKERS, calls wait their turn in order); their
 * prompts go to an attached TUI (attach.h), else to /dev/tty when there is
 * one, else they are denied. stdout carries only protocol messages. */
#ifndef SG_MCP_H
#define SG_MCP_H

#define SG_MCP_MESSAGE_MAX (4u << 20) /* a longer line is refused whole */
#define SG_MCP_MAX_WORKERS 16         /* runs and checks at once */
#define SG_MCP_MAX_QUEUED 256         /* calls waiting for a worker; more are refused */

/* Serve on fds in and out until in reaches EOF; returns 0. */
int sg_mcp_serve(int in, int out);

#endif
