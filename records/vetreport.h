/* TEMP STUB */
#ifndef SG_VETREPORT_H
#define SG_VETREPORT_H
#include <stdio.h>
#include <jansson.h>
enum sg_vetreport_fmt { SG_VETREPORT_HTML, SG_VETREPORT_SARIF };
int sg_vetreport_write(json_t *merged, int fmt, FILE *out);
#endif
