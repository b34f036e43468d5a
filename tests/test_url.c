/* lib/urlhost.c: the host a WebFetch URL reaches, as Node's `new URL()`
 * reads it (issue 35, item 4), or a refusal. The table below is checked
 * twice: against what we expect, and (node_agrees) against Node itself,
 * together with a few thousand URLs built from the same tricky pieces. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sanitize.h"
#include "urlhost.h"
#include "util.h"

/* want NULL: refused. The URLs are C strings: "\\" is one backslash. */
static const struct url_case {
    const char *url, *want;
} cases[] = {
    /* the attack of issue 35: '\' ends the authority in a special scheme */
    {"https://evil.test\\@good.test/", "evil.test:443"},
    {"https://good.test@evil.test/", "evil.test:443"},
    {"https://good.test:pw@evil.test/", "evil.test:443"},
    {"https://a@b@evil.test/", "evil.test:443"},
    {"https://@evil.test/", "evil.test:443"},
    {"https://good.test@/", NULL},
    {"https://evil.test%2f@good.test", "good.test:443"},
    {"https://evil.test%2f.good.test", NULL},
    {"https://good.test#@evil.test", "good.test:443"},
    {"https://good.test?@evil.test", "good.test:443"},
    {"https://good.test/@evil.test", "good.test:443"},
    /* tab, LF, CR vanish anywhere; C0 and space are trimmed at the ends */
    {"http://good.test\t.evil.test", "good.test.evil.test:80"},
    {"http://good.test\n.evil.test/", "good.test.evil.test:80"},
    {"ht\ttps://a.test", "a.test:443"},
    {" https://a.test", "a.test:443"},
    {"\x01\x1f https://a.test/ \x02", "a.test:443"},
    {"https://a .test/", NULL},
    {"https://a\x01.test/", NULL},
    /* case, ports */
    {"HTTPS://A.TEST:443/", "a.test:443"},
    {"HtTp://A.Test", "a.test:80"},
    {"http://a.test:443/", "a.test:443"},
    {"https://a.test:80/", "a.test:80"},
    {"https://a.test:99999/", NULL},
    {"https://a.test:65536/", NULL},
    {"https://a.test:65535/", "a.test:65535"},
    {"https://a.test:0443/", "a.test:443"},
    {"https://a.test:000000000000000000008080/", "a.test:8080"},
    {"https://a.test:/", "a.test:443"},
    {"https://a.test:8x/", NULL},
    {"https://a.test:-1/", NULL},
    {"https://a.test: 80/", NULL},
    /* slashes after the scheme: any run of '/' and '\', even none */
    {"https:a.test", "a.test:443"},
    {"https:\\\\evil.test", "evil.test:443"},
    {"https:/\\evil.test/", "evil.test:443"},
    {"https:////evil.test/", "evil.test:443"},
    {"https:", NULL},
    {"https://", NULL},
    {"https:///", NULL},
    {"https://?x", NULL},
    /* IPv6 */
    {"https://[2001:db8::1]:8443/", "[2001:db8::1]:8443"},
    {"https://[2001:DB8:0:0:0:0:0:1]/", "[2001:db8::1]:443"},
    {"http://[::1]/", "[::1]:80"},
    {"http://[::]/", "[::]:80"},
    {"http://[::ffff:1.2.3.4]/", "[::ffff:102:304]:80"},
    {"http://[1:2:3:4:5:6:7::]/", "[1:2:3:4:5:6:7:0]:80"},
    {"http://[1:0:0:2:0:0:0:3]/", "[1:0:0:2::3]:80"},
    {"http://[0:0::1:0:0:0]/", "[::1:0:0:0]:80"},
    {"http://[::1%25eth0]/", NULL},
    {"http://[::1]x/", NULL},
    {"http://[1::2::3]/", NULL},
    {"http://[::1/", NULL},
    {"http://a[::1]/", NULL},
    {"http://%5b::1%5d/", NULL},
    /* IPv4, every form the standard reads as a number */
    {"http://0x7f.1/", "127.0.0.1:80"},
    {"http://2130706433/", "127.0.0.1:80"},
    {"http://127.1/", "127.0.0.1:80"},
    {"http://0177.0.0.1/", "127.0.0.1:80"},
    {"http://0x7F000001/", "127.0.0.1:80"},
    {"http://127.0.0.1./", "127.0.0.1:80"},
    {"http://0x.0x.0/", "0.0.0.0:80"},
    {"http://4294967295/", "255.255.255.255:80"},
    {"http://4294967296/", NULL},
    {"http://1.2.3.256/", NULL},
    {"http://1.2.65536/", NULL},
    {"http://1.2.3.09/", NULL},
    {"http://1.2.3.4.5/", NULL},
    {"http://.1/", NULL},
    {"http://1..1/", NULL},
    {"http://a.0x/", NULL},
    {"http://evil.test.1/", NULL},
    {"http://127.0.0.1.good.test/", "127.0.0.1.good.test:80"},
    {"http://1.2.3.4x/", "1.2.3.4x:80"},
    {"http://%31%32%37.1/", "127.0.0.1:80"},
    /* percent-decoding of the host */
    {"http://good%2etest/", "good.test:80"},
    {"http://%41.test/", "a.test:80"},
    {"http://%00.test/", NULL},
    {"http://a%zz.test/", NULL},
    {"http://a%/", NULL},
    /* IDNA: refused, raw or punycode */
    {"https://xn--nxasmq6b.test/", NULL},
    {"https://a.XN--nxasmq6b/", NULL},
    {"https://xn--abc-/", NULL},
    {"https://\xc3\xa9.test/", NULL},
    {"https://%c3%a9.test/", NULL},
    {"https://good.test\xe3\x80\x82" "evil.test/", NULL},
    {"https://user\xc3\xa9@a.test/\xc3\xa9", "a.test:443"},
    /* names */
    {"https://a.test./", "a.test.:443"},
    {"https://a..test/", "a..test:443"},
    {"https://a_b-c.test/", "a_b-c.test:443"},
    {"https://a!b.test/", NULL},
    {"https://a^b.test/", NULL},
    {"https://a|b.test/", NULL},
    {"https://a<b.test/", NULL},
    /* not http(s), or no scheme at all */
    {"//a.test", NULL},
    {"a.test", NULL},
    {"/a.test", NULL},
    {"data:text/plain,hi", NULL},
    {"file:///etc/passwd", NULL},
    {"javascript:alert(1)", NULL},
    {"ftp://a.test/", NULL},
    {"wss://a.test/", NULL},
    {"httpx://a.test/", NULL},
    {"http+unix://a.test/", NULL},
    {"1http://a.test/", NULL},
    {"", NULL},
    {"   ", NULL},
};

static void the_table_holds(void **st)
{
    (void)st;
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++) {
        char *got = NULL;
        const char *why = NULL;
        int r = sg_url_host(cases[i].url, strlen(cases[i].url), &got, &why);
        if (cases[i].want && (r != 0 || !got || strcmp(got, cases[i].want)))
            fail_msg("%s: want %s, got %s (%s)", cases[i].url, cases[i].want,
                     got ? got : "refusal", why ? why : "");
        if (!cases[i].want && (r >= 0 || got || !why))
            fail_msg("%s: want a refusal, got %s", cases[i].url, got ? got : "no reason");
        free(got);
    }
}

/* A NUL is a byte like any other: in the authority it is userinfo here as
 * it is to Node, so strlen() of the URL would have said good.test. */
static void a_nul_is_not_the_end(void **st)
{
    (void)st;
    static const char u[] = "https://good.test\0@evil.test/";
    char *got = NULL;
    const char *why = NULL;
    assert_int_equal(sg_url_host(u, sizeof u - 1, &got, &why), 0);
    assert_string_equal(got, "evil.test:443");
    free(got);
    static const char v[] = "https://good.test/\0";
    assert_int_equal(sg_url_host(v, sizeof v - 1, &got, &why), 0);
    assert_string_equal(got, "good.test:443");
    free(got);
}

/* Longer than the cap is refused, never cut to the cap and read. */
static void a_long_url_is_refused_not_cut(void **st)
{
    (void)st;
    char *u = sg_xmalloc(SG_URL_MAX + 64);
    memset(u, 'a', SG_URL_MAX + 64);
    memcpy(u, "https://good.test/", 18);
    char *got = NULL;
    const char *why = NULL;
    assert_int_equal(sg_url_host(u, SG_URL_MAX, &got, &why), 0);
    assert_string_equal(got, "good.test:443");
    free(got);
    assert_int_equal(sg_url_host(u, SG_URL_MAX + 1, &got, &why), -E2BIG);
    assert_null(got);
    assert_non_null(why);
    free(u);
}

/* ---- the cross-check against Node ---- */

/* Reads hex-encoded URLs, one a line after an 'x', and answers each with
 * "protocol hostname port" or "FAIL". */
static const char node_script[] =
    "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>{"
    "const o=[];for(const l of d.split('\\n')){if(!l)continue;"
    "const s=Buffer.from(l.slice(1),'hex').toString('utf8');"
    "try{const u=new URL(s);o.push(u.protocol+' '+u.hostname+' '+u.port);}"
    "catch(e){o.push('FAIL');}}process.stdout.write(o.join('\\n')+'\\n');});";

static char *find_on_path(const char *name)
{
    const char *path = secure_getenv("PATH");
    if (!path)
        return NULL;
    cleanup_free char *copy = sg_xstrdup(path);
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *f = sg_xasprintf("%s/%s", *d ? d : ".", name);
        if (access(f, X_OK) == 0)
            return f;
        free(f);
    }
    return NULL;
}

/* Node's answers to n URLs, one line each; the lines are in *out. */
static int run_node(const char *node, char **urls, size_t n, char **out)
{
    struct sg_buf in;
    sg_buf_init(&in, SIZE_MAX / 2);
    for (size_t i = 0; i < n; i++) {
        sg_buf_append(&in, "x", 1); /* an empty URL is still a line */
        for (const unsigned char *p = (const unsigned char *)urls[i]; *p; p++)
            sg_buf_printf(&in, "%02x", *p);
        sg_buf_append(&in, "\n", 1);
    }
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        execl(node, node, "-e", node_script, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    /* node reads everything before it writes: no deadlock */
    signal(SIGPIPE, SIG_IGN);
    int w = sg_write_all(to[1], in.data, in.len);
    close(to[1]);
    sg_buf_free(&in);
    struct sg_buf o;
    sg_buf_init(&o, 64u << 20);
    int r = 0;
    for (;;) {
        char chunk[65536];
        ssize_t k = read(from[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            r = k < 0 ? -errno : 0;
            break;
        }
        if (sg_buf_append(&o, chunk, (size_t)k) < 0) {
            r = -EFBIG;
            break;
        }
    }
    close(from[0]);
    *out = o.data ? sg_buf_steal(&o) : sg_xstrdup("");
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (w < 0 || r < 0)
        return w < 0 ? w : r;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* URLs built from the pieces attackers combine, by a fixed generator. */
static const char *const gen_lead[] = {"", " ", "\t", "\x01"};
static const char *const gen_scheme[] = {"http", "https", "HTTPS", "hTtP", "ftp", "ws", "https+x"};
static const char *const gen_slash[] = {"://", ":", ":/", ":\\\\", ":/\\", ":\\/", ":///", ":\t//"};
static const char *const gen_user[] = {"", "u@", "u:p@", "good.test@", "good.test\\@", "a@b@",
                                       "%40@", "good.test:443@", "@", "a\t@", "a\n:b@", "[::1]@",
                                       "%5c@", "a/b@", "a?b@"};
static const char *const gen_host[] = {
    "good.test", "GOOD.Test", "good%2etest", "good%2Etest", "127.1", "0x7f.1", "2130706433",
    "0177.1", "0x7f.0x0.0.1", "1.2.3.4.", "1.2.3.09", "4294967296", "0x", ".1", "1..2",
    "[::1]", "[2001:DB8::1]", "[::ffff:1.2.3.4]", "[1::2::3]", "[::1%25lo]", "[0:0:0:0:0:0:0:0]",
    "[1:0:0:0:1:0:0:0]", "evil.test\\", "a.test.", "xn--nxasmq6b", "xn--abc-", "\xc3\xa9.test",
    "%c3%a9", "%41", "a b", "a%2fb", "%2e", "a..b", "a_b", "a!b", "a%", "a%4", "good.test%00",
    "good.test\t.evil", "good.test\r\n", "1.2.3.4x", "evil.1", "0.0.0.0", "00000000000001",
    "0X7F.1", "%30x7f.1", "09.1", "a.1.", "1.2.3.4.5.", "0x100000000", "1.0x1000000",
    "[::1.2.3.4]", "[1:2:3:4:5:6:7:8:9]", "[::01234]", "[::1.2.3.04]", "[1:2:3:4:5:6:1.2.3.4]",
    "[::ffff:127.1]", "[a::B:c]", "a\x7f", "%5c", "a%0ab", "a%09b",
};
static const char *const gen_port[] = {"", ":", ":0443", ":99999", ":65536", ":8080", ":80",
                                       ":443", ":x", ":0", ":00000000000000000080", ": 1"};
static const char *const gen_tail[] = {"", "/", "/p?q#f", "?@evil.test", "#@evil.test",
                                       "\\@evil.test", "@evil.test", ":@evil.test", "/\\@x"};

#define PICK(a, r) (a)[(r) % SG_ARRAY_LEN(a)]

static char *generated(unsigned long long *seed)
{
    unsigned long long r[7];
    for (int i = 0; i < 7; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        r[i] = *seed >> 33;
    }
    return sg_xasprintf("%s%s%s%s%s%s%s", PICK(gen_lead, r[0]), PICK(gen_scheme, r[1]),
                        PICK(gen_slash, r[2]), PICK(gen_user, r[3]), PICK(gen_host, r[4]),
                        PICK(gen_port, r[5]), PICK(gen_tail, r[6]));
}

/* Hosts of random bytes from the alphabet of numbers and addresses, to
 * reach the corners of the IPv4 and IPv6 readers. */
static char *generated_number(unsigned long long *seed)
{
    static const char alpha[] = "0123456789abcdefxX.:%";
    char host[24];
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned long long r = *seed >> 20;
    size_t n = 1 + r % 20;
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        host[i] = alpha[(*seed >> 33) % (sizeof alpha - 1)];
    }
    host[n] = '\0';
    bool v6 = (r >> 8) & 1;
    return sg_xasprintf("http://%s%s%s/", v6 ? "[" : "", host, v6 ? "]" : "");
}

static void node_agrees(void **st)
{
    (void)st;
    cleanup_free char *node = find_on_path("node");
    if (!node) {
        if (secure_getenv("CI"))
            fail_msg("node is not on PATH, and CI is set: the cross-check must run in CI");
        print_message("# skipped: node is not on PATH, so nothing to cross-check against\n");
        skip();
    }
    enum { GENERATED = 20000, NUMBERS = 20000 };
    size_t n = SG_ARRAY_LEN(cases) + GENERATED + NUMBERS;
    char **urls = sg_xcalloc(n, sizeof *urls);
    for (size_t i = 0; i < SG_ARRAY_LEN(cases); i++)
        urls[i] = sg_xstrdup(cases[i].url);
    unsigned long long seed = 35;
    for (size_t i = SG_ARRAY_LEN(cases); i < n; i++)
        urls[i] = i < SG_ARRAY_LEN(cases) + GENERATED ? generated(&seed) : generated_number(&seed);

    cleanup_free char *out = NULL;
    assert_int_equal(run_node(node, urls, n, &out), 0);
    size_t agree = 0, refused = 0, overcautious = 0, bad = 0;
    char *save = NULL, *line = strtok_r(out, "\n", &save);
    for (size_t i = 0; i < n; i++, line = strtok_r(NULL, "\n", &save)) {
        if (!line)
            fail_msg("node answered %zu of %zu URLs", i, n);
        /* Node's reading as "host:port", or NULL when it is no http(s) URL */
        cleanup_free char *theirs = NULL;
        char proto[32], host[512], port[16] = "";
        if (strcmp(line, "FAIL") && sscanf(line, "%31s %511s %15s", proto, host, port) >= 2) {
            if (!strcmp(proto, "http:") || !strcmp(proto, "https:"))
                theirs = sg_xasprintf("%s:%s", host,
                                      *port ? port : !strcmp(proto, "http:") ? "80" : "443");
        }
        char *ours = NULL;
        const char *why = NULL;
        sg_url_host(urls[i], strlen(urls[i]), &ours, &why);
        cleanup_free char *sane = sg_sanitize(urls[i], strlen(urls[i]), 0);
        if (ours && (!theirs || strcmp(ours, theirs))) {
            print_error("DIFFERENT HOST: %s: ours %s, node %s\n", sane, ours,
                        theirs ? theirs : "fails");
            bad++;
        } else if (ours) {
            agree++;
        } else {
            refused++;
        }
        /* refusals of what Node reads: the table's are listed, to review,
         * and the generated ones too with URL_DIAG=1 in the environment */
        overcautious += !ours && theirs;
        if (!ours && theirs && (i < SG_ARRAY_LEN(cases) || secure_getenv("URL_DIAG")))
            print_message("# refused (node reads %s): %s: %s\n", theirs, sane, why);
        free(ours);
    }
    print_message("# %zu URLs: %zu read as node does, %zu refused (%zu of them read by node), "
                  "%zu read differently\n", n, agree, refused, overcautious, bad);
    for (size_t i = 0; i < n; i++)
        free(urls[i]);
    free(urls);
    assert_int_equal(bad, 0);
    assert_true(agree > 1000); /* the generator reaches the readable part */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_table_holds),
        cmocka_unit_test(a_nul_is_not_the_end),
        cmocka_unit_test(a_long_url_is_refused_not_cut),
        cmocka_unit_test(node_agrees),
    };
    return cmocka_run_group_tests_name("url", tests, NULL, NULL);
}
