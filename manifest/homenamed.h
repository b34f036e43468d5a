/* The files in the person's home a skill's own words name (issue 52,
 * item 8): a skill whose script looks for ~/.clawdbot/clawdbot.json finds
 * nothing (the sandbox's HOME is private) and says "config not found", and
 * skillgate said nothing. Its SKILL.md says where it looks ("reads your
 * token from ~/.clawdbot/clawdbot.json"), as does OpenClaw's
 * requires.config; the end of a failed run names those that are in the
 * real home and were not shown, and how to show them (or that nothing
 * may). Read from text the skill wrote: at most SG_HOMENAMED_MAX paths,
 * each at most SG_HOMENAMED_LEN bytes past "~/" (a longer one is skipped,
 * never cut), only what a path may hold; the text is Tier 2 (SKILL.md's
 * body, capped where it is read). */
#ifndef SG_HOMENAMED_H
#define SG_HOMENAMED_H

#include <stddef.h>

#define SG_HOMENAMED_MAX 8
#define SG_HOMENAMED_LEN 255

/* The paths "~/REL" and "$HOME/REL" (also "${HOME}/REL") in text, as REL,
 * each once, in order: a REL is letters, digits and "._-/+@", ends
 * before a trailing '.', and has no ".." part. out[] gets at most max
 * (<= SG_HOMENAMED_MAX) new strings; returns how many. A REL that starts
 * with '/' is skipped. */
size_t sg_home_named(const char *text, size_t len, char **out, size_t max);

#endif
