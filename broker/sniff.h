/* Reading the name a client means from its first bytes: the SNI of a TLS
 * ClientHello, or the Host header of an HTTP request. Bounded (it only
 * looks at what it is given, at most SG_SNIFF_MAX) and fuzzed. */
#ifndef SG_SNIFF_H
#define SG_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#define SG_SNIFF_MAX 16384

enum sg_sniff { SG_SNIFF_NEED_MORE, SG_SNIFF_TLS, SG_SNIFF_HTTP, SG_SNIFF_OTHER };

/* Look at buf: TLS with its SNI in name (empty when the hello has none),
 * HTTP with its Host (port stripped), OTHER for anything else, NEED_MORE when
 * a hello or a request head has begun but is not complete. */
enum sg_sniff sg_sniff_name(const uint8_t *buf, size_t len, char *name, size_t namemax);

#endif
