/* The input a skill's instructions document, for the TUI's input line.
 *
 * SKILL.md says in prose what a skill takes: "Input: `{"dir": "."}`", "run
 * it with input `{"city": "Oslo"}`", a table whose header names the input,
 * or a ```json block. The first ```json block is often the example of
 * what it prints, and a person who is offered that as the input runs the
 * skill with its own output (issue 54, item 6). This reader takes only
 * what the text presents as the input. It reads skill-controlled bytes:
 * capped at SG_DOCINPUT_MAX (beyond it, none), any bytes (a NUL ends the
 * text), fuzzed by fuzz/fuzz_docinput.c. */
#ifndef SG_DOCINPUT_H
#define SG_DOCINPUT_H

#include <stddef.h>

#define SG_DOCINPUT_MAX (1u << 20) /* the body of a SKILL.md, more than its cap */
#define SG_DOCINPUT_JSON_MAX 1000  /* an input longer than this is not offered (not cut) */

/* The input the instructions (SKILL.md's Markdown body) document, or NULL:
 * the first JSON object written as code in a paragraph that speaks of the
 * input, after that word (a code span, kept as written), or in a ```json
 * block unless the line before it says what comes out ("prints:",
 * "Output"; the block's object compact). The caller frees it. */
char *sg_documented_input(const char *text, size_t len);

#endif
