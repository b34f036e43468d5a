/* The risk badge of a skill: what it declares and what it ships (issue 52,
 * item 8). With allowed-tools, the riskiest tool it lists (and a declared
 * host socket, high), as the seed table says. Without, every tool may be
 * asked for, and the badge was [HIGH] for every ClawHub skill, which told
 * a person nothing; it now rates what the skill brings: programs of its
 * own that run (an entrypoint, scripts) or a host socket, high; a WASM
 * module (its preopens only), or declared hosts, writable paths,
 * variables, or programs and variables OpenClaw's metadata asks of the
 * agent, medium; instructions with nothing declared, low. The reason goes
 * with it in inspect. The badge is a summary for a person, never an input
 * to a decision: the sandbox and the prompts decide each request. */
#ifndef SG_RATING_H
#define SG_RATING_H

#include <stddef.h>

#include "policy.h"
#include "skill.h"

/* The skill's risk; why (when not NULL) says on what, in words (at most
 * n bytes, cut there). */
enum sg_risk sg_skill_risk(const struct sg_skill *sk, char *why, size_t n);

#endif
