/* The profiles' filters as compiled at build time (seccomp_gen.c), used
 * when the running kernel gives libseccomp the API level they were compiled
 * for; anything else compiles afresh. tests/test_seccomp.c checks both ways
 * give the same instructions. */
#include <seccomp.h>
#include <string.h>

#include "seccomp_filter.h"
#include "util.h"
#ifdef SG_BPF_NONE /* a cross build cannot run the generator */
#define SG_BPF_BUILT 0
#define SG_BPF_API_LEVEL 0U
#define X(id, name, desc) static const struct sock_filter sg_bpf_##id[1];
SG_SECCOMP_PROFILES(X)
#undef X
#else
#include "seccomp_bpf.h"
#endif

int sg_seccomp_prebuilt_level(void)
{
    return SG_BPF_BUILT ? (int)SG_BPF_API_LEVEL : -1;
}

int sg_seccomp_filter(enum sg_seccomp_profile p, unsigned opts, struct sock_filter **insns,
                      size_t *n)
{
    static const struct {
        const struct sock_filter *v;
        size_t n;
    } built[] = {
#define X(id, name, desc) [SG_SECCOMP_##id] = {sg_bpf_##id, SG_ARRAY_LEN(sg_bpf_##id)},
        SG_SECCOMP_PROFILES(X)
#undef X
    };
    if (opts || !SG_BPF_BUILT || (size_t)p >= SG_ARRAY_LEN(built) ||
        seccomp_api_get() != SG_BPF_API_LEVEL)
        return sg_seccomp_export(p, opts, insns, n);
    size_t len = built[p].n * sizeof *built[p].v;
    *insns = sg_xmalloc(len);
    memcpy(*insns, built[p].v, len);
    *n = built[p].n;
    return 0;
}
