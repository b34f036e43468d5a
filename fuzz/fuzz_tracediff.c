/* libFuzzer target for what reads traces back: traces diff (sg_trace_diff
 * and its text) and record (the profile, the minimal manifest, the
 * comparison and the side-by-side). A trace is skillgate's own file, but
 * every path, host and message in it came from a skill: input is two JSON
 * documents split at the first NUL (one document is compared with itself).
 * Never a crash, a leak or undefined behaviour; the manifest record writes
 * goes through the loader too (whether it validates depends on the paths). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "tracediff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char skill_md[] = "---\nname: fuzzed\ndescription: a fuzzed trace's skill\n"
                               "allowed-tools: Read Bash(git status:*)\n---\n";
static const char yaml[] = "skill:\n  name: fuzzed\n  description: d\npermissions:\n"
                           "  network:\n    egress:\n      - domain: \"*.example.test\"\n"
                           "        ports: [443]\n  filesystem:\n    read: [/tmp/in, /srv/unused]\n"
                           "    write: [/tmp/out]\n"
                           "entrypoint:\n  command: python3\n  args: [main.py]\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, '\0', size);
    size_t la = nul ? (size_t)(nul - s) : size;
    json_t *a = json_loadb(s, la, 0, NULL);
    json_t *b = nul ? json_loadb(nul + 1, size - la - 1, 0, NULL) : json_incref(a);
    if (json_is_object(a) && json_is_object(b)) {
        json_t *d = sg_trace_diff(a, b, "a", "b");
        char *text = sg_trace_diff_text(d);
        if (!text || !json_is_string(json_object_get(d, "summary")))
            abort();
        free(text);
        json_decref(d);
        struct sg_skill *sk = sg_skill_from_buffers("/fuzz/fuzzed", skill_md,
                                                     sizeof skill_md - 1, yaml, sizeof yaml - 1);
        json_t *docs[2] = {a, b};
        json_t *p = sg_record_profile(docs, 2);
        json_t *c = sg_record_compare(sk, p);
        char *m = sg_record_manifest(sk, p);
        char *t1 = sg_record_compare_text(c);
        char *t2 = sg_record_side_by_side(sk, p, c);
        if (m) /* what record writes, the loader reads (never half a manifest) */
            sg_skill_free(sg_skill_from_buffers("/fuzz/fuzzed", skill_md, sizeof skill_md - 1,
                                                m, strlen(m)));
        free(m), free(t1), free(t2);
        json_decref(c);
        json_decref(p);
        sg_skill_free(sk);
    }
    json_decref(a);
    json_decref(b);
    return 0;
}
