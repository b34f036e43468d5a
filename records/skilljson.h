/* The JSON form of a skill, its policy and its problems: one schema for
 * `inspect --json`, `list --json` and the MCP server (documented in
 * docs/json.md). */
#ifndef SG_SKILLJSON_H
#define SG_SKILLJSON_H

#include <jansson.h>

#include "discover.h"
#include "policy.h"

#define SG_INSPECT_SCHEMA "skillgate.inspect/1"
#define SG_LIST_SCHEMA "skillgate.list/1"

json_t *sg_diags_to_json(const struct sg_diags *d);
/* The resolved policy of one skill; digest may be NULL. */
json_t *sg_skill_to_json(const struct sg_skill *sk, const char *digest);
/* Tier 1 summary of a discovery. */
json_t *sg_discovery_to_json(const struct sg_discovery *d);
/* Names of the capability bits, for JSON and for humans. */
const char *sg_cap_name(unsigned bit);
/* The description cut at its first line break. Caller frees. */
char *sg_one_line(const char *s, size_t max);

#endif
