/* The host and port an http(s) URL reaches, read the way the WHATWG URL
 * standard reads it -- which is how Node's `new URL()` (and so Claude
 * Code's WebFetch) reads it -- or a refusal when this reader cannot be sure
 * of getting the same answer.
 *
 * Why a reader of our own: no Debian package parses URLs by the WHATWG
 * standard (bookworm has no ada, no C binding of rust-url); libcurl's
 * curl_url() and uriparser follow RFC 3986, which disagrees on exactly the
 * inputs an attacker picks ("https://evil.test\@good.test/": RFC 3986 reads
 * the host good.test, WHATWG evil.test). So this file implements the
 * unambiguous subset of the standard exactly and refuses the rest:
 *
 *   done as the standard does: leading/trailing C0-control-or-space trim,
 *   tab/CR/LF removed anywhere, scheme case, any run of '/' and '\' after
 *   "http:" (so "https:a.test" and "https:\\a.test" have a host), '\' ending
 *   the authority, userinfo up to the last '@', percent-decoding of the
 *   host, ASCII lower-casing, numeric IPv4 forms (0x7f.1, 127.1,
 *   2130706433, octal 0177.0.0.1), IPv6 with zero compression, the port
 *   (leading zeros, empty, default by scheme, > 65535 refused);
 *
 *   refused, so the caller asks a person: any scheme but http and https,
 *   relative URLs ("//a.test"), a host with a byte >= 0x80 (raw or
 *   percent-encoded: IDNA mapping depends on Unicode tables this reader
 *   does not carry), a label starting "xn--" (Node re-encodes punycode:
 *   "xn--abc-" and its canonical form need not agree), any host character
 *   outside [a-z0-9._-] (legal to WHATWG, never in a real name), IPv6 zone
 *   ids, a host longer than 253 bytes, a URL longer than SG_URL_MAX.
 *
 * tests/test_url.c checks every answer against Node when node is on PATH:
 * our answer is Node's hostname:port, or a refusal, never another host. */
#ifndef SG_URLHOST_H
#define SG_URLHOST_H

#include <stddef.h>

/* Longer input is refused, never cut: a decision is made on all of it. */
#define SG_URL_MAX 8192

/* url: len bytes, not NUL-terminated, may hold NUL bytes (pass
 * json_string_length(), not strlen: a NUL inside the authority is part of
 * it to Node). 0 and *host_port = "host:port" (malloc'd, lower case, IPv6
 * as "[2001:db8::1]", IPv4 as dotted decimal, the port always present:
 * the scheme's default when none or the default is given, so "a.test:443");
 * a trailing dot stays as Node keeps it ("a.test.:443"). Otherwise -EINVAL
 * (or -E2BIG for a URL longer than SG_URL_MAX), *host_port NULL and *why a
 * static sentence: "cannot tell", to be asked, never matched. */
int sg_url_host(const char *url, size_t len, char **host_port, const char **why);

#endif
