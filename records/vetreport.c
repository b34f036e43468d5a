#include "vetreport.h"
int sg_vetreport_write(json_t *merged, int fmt, FILE *out) { (void)fmt; return json_dumpf(merged, out, 0) ? -5 : 0; }
