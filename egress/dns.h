/* The DNS stub's wire format: a bounded parser for queries and a builder
 * for its few kinds of answer. The bytes come from the skill: every length
 * is checked, compression pointers in a query are refused, and the whole
 * thing is fuzzed. */
#ifndef SG_DNS_H
#define SG_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_DNS_MAX 512         /* what the stub reads and writes over UDP */
#define SG_DNS_TCP_MAX 4096    /* over TCP (two-byte length prefix) */
#define SG_DNS_NAME_MAX 255

enum { SG_DNS_A = 1, SG_DNS_PTR = 12, SG_DNS_AAAA = 28 };
enum { SG_RCODE_NOERROR = 0, SG_RCODE_FORMERR = 1, SG_RCODE_NXDOMAIN = 3, SG_RCODE_REFUSED = 5 };

struct sg_dns_query {
    uint16_t id;
    uint16_t flags;
    char name[SG_DNS_NAME_MAX + 1]; /* lower case, no trailing dot */
    uint16_t qtype, qclass;
    size_t question_len;            /* bytes of the question section */
    size_t longest_label;
};

/* Parse a query: 0, or -EINVAL when it is not one well-formed question. */
int sg_dns_parse_query(const uint8_t *buf, size_t len, struct sg_dns_query *q);
/* Build an answer into out (at most outmax bytes): rcode, and when addr is
 * given, one A (alen 4) or AAAA (alen 16) record with ttl. Returns its
 * length, or -ENOBUFS. */
int sg_dns_build_answer(const uint8_t *query, const struct sg_dns_query *q, int rcode,
                        const uint8_t *addr, size_t alen, uint32_t ttl, uint8_t *out,
                        size_t outmax);
/* The same with one PTR record naming target (a dotted name of at most
 * SG_DNS_NAME_MAX bytes, labels of 1-63). Returns the length, -EINVAL for a
 * target that is no name, or -ENOBUFS. */
int sg_dns_build_ptr(const uint8_t *query, const struct sg_dns_query *q, const char *target,
                     uint32_t ttl, uint8_t *out, size_t outmax);
/* Is name the reverse name of a loopback address (N.N.N.127.in-addr.arpa,
 * or ::1's 1.0.0. ... .ip6.arpa)? */
bool sg_dns_loopback_reverse(const char *name);
/* Shannon entropy of a label in bits per character (for exfiltration). */
double sg_dns_label_entropy(const char *label, size_t len);
/* Does name look like data smuggled in labels? (long or high-entropy labels) */
int sg_dns_looks_like_exfil(const char *name);

#endif
