/* A run's timeline (issue 38, item 12): its output rate, and the questions
 * asked, the refusals and what was allowed, on one time axis. Fixed memory
 * whatever the run's length: buckets of a width that doubles (two merged
 * into one) when the run outgrows them. Filled live by the Run screen and
 * from a trace's events by the trace view; what counts as asked, refused
 * or allowed is attempts.h's one definition. */
#ifndef SG_TUI_TIMELINE_H
#define SG_TUI_TIMELINE_H

#include <jansson.h>
#include <stdint.h>

#define TUI_TL_BUCKETS 512
#define TUI_TL_MAX_CELLS 1000 /* cells drawn at most (wider screens draw this many) */
#define TUI_TL_LABEL 8 /* "output  ", "events  " */

enum tui_tl_lane { TUI_TL_OUT, TUI_TL_ASKED, TUI_TL_REFUSED, TUI_TL_ALLOWED, TUI_TL_LANES };

struct tui_timeline {
    int64_t t0_ms, width_ms, last_ms;
    uint64_t n[TUI_TL_LANES][TUI_TL_BUCKETS]; /* output: bytes; the others: events */
};

void tui_tl_reset(struct tui_timeline *tl, int64_t t0_ms);
void tui_tl_add(struct tui_timeline *tl, int64_t wall_ms, enum tui_tl_lane lane, uint64_t weight);
/* An attempt (attempts.h's sg_att_how) on its lane. */
void tui_tl_add_attempt(struct tui_timeline *tl, int64_t wall_ms, int how, uint64_t times);
/* Every event of a trace document. */
void tui_tl_from_trace(struct tui_timeline *tl, json_t *trace);

/* One cell of a drawn timeline: the output's level 0..8 (of the busiest
 * cell) and the event mark: 'x' a refusal, '?' a question, '+' allowed,
 * ' ' none (a refusal wins the cell, then a question). */
struct tui_tl_cell {
    unsigned char level;
    char mark;
};
/* ncells cells (at most TUI_TL_MAX_CELLS) over [t0, end_ms]. */
void tui_tl_cells(const struct tui_timeline *tl, int64_t end_ms, struct tui_tl_cell *cells,
                  int ncells);
/* A level's bar, " " to "█" (UTF-8). */
const char *tui_tl_bar(unsigned level);
/* The two rows as text ("output  ▁▃█ ...", "events  ··x?+ ...") and the
 * span, for a pager (caller frees). */
char *tui_tl_text(const struct tui_timeline *tl, int64_t end_ms, int ncells);

#endif
