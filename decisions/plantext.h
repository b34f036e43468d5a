/* The dry run's plan as text, and the small printers it shares with the
 * CLI: every string that came from a skill passes the sanitizer. */
#ifndef SG_PLANTEXT_H
#define SG_PLANTEXT_H

#include <stdint.h>
#include <stdio.h>

struct sg_plan;
struct sg_policy;

/* Everything a run of the plan would get; nothing is executed. */
void sg_plan_print(FILE *f, const struct sg_plan *p);
/* For inspect: a WASM skill's two layers, from its policy alone. */
void sg_plan_print_wasm_policy(FILE *f, const struct sg_policy *p);
/* s, sanitized. */
void sg_print_safe(FILE *f, const char *s);
/* "domain:443,8443" */
void sg_print_dest(FILE *f, const char *domain, const uint16_t *ports, size_t nports);

#endif
