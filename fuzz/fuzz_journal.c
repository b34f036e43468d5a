/* libFuzzer target for the reader of a run's journal (sg_journal_parse),
 * which the next start of skillgate runs over whatever a killed broker, a
 * power cut or a full disk left: torn lines, garbage, a head missing or
 * twice. The events it replays go through the trace's own sink, as in a
 * recovery; no read past the cap, no event before a head. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "journal.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_trace t;
    sg_trace_init(&t);
    struct sg_journal_read r;
    sg_journal_parse((const char *)data, size, sg_trace_sink, &t, &r);
    if (!r.head && r.events)
        abort(); /* events count only after a head */
    if (r.events && json_array_size(t.events) == 0 && t.dropped_events == 0)
        abort(); /* every replayed event reached the trace (kept, merged or counted) */
    sg_journal_read_free(&r);
    sg_trace_free(&t);
    return 0;
}
