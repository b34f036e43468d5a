/* A WASM run's WASI-layer reports (sandbox/wasi_runner.mjs writes them on
 * the runtime's fd 3): one JSON object a line, turned into events. The
 * bytes come from inside the sandbox (a module that broke out of its
 * runtime could write them), so every line is capped, every field is
 * checked, and the events say who reported them. */
#ifndef SG_WASIREPORT_H
#define SG_WASIREPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"

#define SG_WASI_LINE_MAX 4096   /* a longer line is dropped (and counted) */
/* reports past this, per layer, are counted, not each shown: a flood of
 * the WASI layer's cannot hide a refusal of the kernel's */
#define SG_WASI_EVENTS_MAX 1000

enum { SG_WASI_LAYER_WASI, SG_WASI_LAYER_KERNEL, SG_WASI_LAYERS };
/* refusals remembered to count their repeats (which then take no budget) */
#define SG_WASI_KEYS 512

struct sg_wasi_report {
    char line[SG_WASI_LINE_MAX];
    size_t len;
    bool overlong;                  /* the line being read is past the cap: skipped */
    size_t shown[SG_WASI_LAYERS];   /* emitted */
    size_t past[SG_WASI_LAYERS];    /* past SG_WASI_EVENTS_MAX */
    size_t bad;                     /* overlong or malformed */
    char *keys[SG_WASI_KEYS];       /* "layer call path" of refusals shown */
    size_t nkeys;
    size_t repeats;                 /* of a refusal already shown: counted only */
};

/* Feed n bytes as read from the pipe. */
void sg_wasi_report_feed(struct sg_wasi_report *w, const char *buf, size_t n,
                         struct sg_event_bus *bus);
/* At the end: a last unterminated line, and what was dropped or repeated;
 * frees what it held. */
void sg_wasi_report_end(struct sg_wasi_report *w, struct sg_event_bus *bus);

#endif
