/* Reading the name a client means from its bytes: the SNI of a TLS
 * ClientHello, or the Host of every HTTP/1.x request on a plain connection.
 * Bounded (a request head or a chunk line is at most SG_SNIFF_MAX bytes,
 * nothing is allocated) and fuzzed (fuzz/fuzz_sniff.c).
 *
 * Plain HTTP is read strictly, because the upstream may read it otherwise:
 * whatever two servers could disagree on (two Host headers, a space before a
 * colon, a folded line, a bare CR or LF, Content-Length with
 * Transfer-Encoding, an absolute-form target) is refused, never guessed. */
#ifndef SG_SNIFF_H
#define SG_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_SNIFF_MAX 16384

enum sg_sniff {
    SG_SNIFF_NEED_MORE,
    SG_SNIFF_TLS,
    SG_SNIFF_HTTP,
    SG_SNIFF_OTHER,
    SG_SNIFF_TLS_BAD, /* a TLS handshake whose ClientHello cannot be read whole */
};

/* What protocol do the first bytes of a connection speak? TLS (a handshake
 * record), HTTP (a request line, or leading empty lines before one), OTHER,
 * or NEED_MORE while they could still become an HTTP request line. */
enum sg_sniff sg_sniff_kind(const uint8_t *buf, size_t len);

/* Look at buf: TLS with its SNI in name (empty when the hello has none),
 * TLS_BAD for a hello that cannot be read whole within SG_SNIFF_MAX (its
 * records joined) or is malformed, HTTP with the Host of its first request
 * (port stripped; empty when the head is refused or has none), OTHER for
 * anything else, NEED_MORE when a hello or a request head has begun but is
 * not complete. */
enum sg_sniff sg_sniff_name(const uint8_t *buf, size_t len, char *name, size_t namemax);

/* Only the start of a request line (leading CR/LF and one token, no space
 * yet): it cannot name a host, so it may go up before the rest is read. */
bool sg_sniff_nameless_prefix(const uint8_t *buf, size_t len);

/* A plain HTTP/1.x connection, one request after another (keep-alive,
 * pipelining): every head is checked against the name the address was
 * issued for, and bodies are framed (Content-Length, chunked) so the next
 * head is found where the upstream will find it. Zero it to start. */
struct sg_http {
    int state;          /* where in the stream the next byte is */
    uint64_t left;      /* body or chunk bytes still to come */
    unsigned requests;  /* heads seen, for the reason text */
};

enum sg_http_verdict {
    SG_HTTP_MORE,   /* nothing can be cleared until more bytes arrive */
    SG_HTTP_PASS,   /* the first *used bytes (at least one) are cleared */
    SG_HTTP_REFUSE, /* the stream must not go on; why says what was seen */
};

/* buf holds the bytes after the last cleared one. name is what the address
 * was issued for, port the port the client connected to. One step per call:
 * call again with the rest after a PASS. */
enum sg_http_verdict sg_http_check(struct sg_http *h, const uint8_t *buf, size_t len,
                                   const char *name, int port, size_t *used, char *why,
                                   size_t whymax);

#endif
