/* The shared toolbox (lib/, at the bottom: it uses nothing of ours):
 * cleanup attributes, ownership transfer, allocation that never returns
 * NULL, bounded buffers, UTF-8, string building, file helpers. */
#ifndef SG_UTIL_H
#define SG_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define SG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static inline void sg_freep(void *p) { free(*(void **)p); }
static inline void sg_closep(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}
static inline void sg_fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}

#define cleanup_free __attribute__((cleanup(sg_freep)))
#define cleanup_fd __attribute__((cleanup(sg_closep)))
#define cleanup_file __attribute__((cleanup(sg_fclosep)))

/* Hand ownership on: returns the value and clears the variable. */
#define steal_pointer(pp) \
    ({ __typeof__(*(pp)) _v = *(pp); *(pp) = NULL; _v; })
#define steal_fd(fdp) \
    ({ int _fd = *(fdp); *(fdp) = -1; _fd; })

/* malloc that never returns NULL: out of memory aborts (we cannot report
 * anything meaningful without memory, and a half-built policy is worse). */
void *sg_xmalloc(size_t n);
void *sg_xcalloc(size_t n, size_t size);
void *sg_xrealloc(void *p, size_t n);
char *sg_xstrdup(const char *s);
char *sg_xstrndup(const char *s, size_t n);
char *sg_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *sg_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Grow *v (element size sz) so that it can hold at least need elements. */
void sg_grow(void *vp, size_t *cap, size_t need, size_t sz);

/* Growable string with a hard cap fixed at init (curl's dynbuf idea): an
 * append past the cap is refused and counted, never silently truncated. */
struct sg_buf {
    char *data;
    size_t len, cap, max;
    size_t dropped;
};
void sg_buf_init(struct sg_buf *b, size_t max);
int sg_buf_append(struct sg_buf *b, const void *p, size_t n);
/* A whole line and its newline, or (past the cap) none of it, counted. */
int sg_buf_append_line(struct sg_buf *b, const char *line, size_t n);
int sg_buf_printf(struct sg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sg_buf_free(struct sg_buf *b);
char *sg_buf_steal(struct sg_buf *b);

/* A NULL-terminated array of strings: a copy (NULL for NULL), and its free. */
char **sg_strv_dup(char *const *v);
void sg_strv_free(char **v);

bool sg_str_has_prefix(const char *s, const char *prefix);
bool sg_str_has_suffix(const char *s, const char *suffix);

/* Where a skill's PATH (/usr/local/bin, /usr/bin, /bin, the host's, shown
 * read-only) finds a bare program name: the first executable regular file,
 * or NULL. */
char *sg_run_path_find(const char *name);

/* Damerau-Levenshtein distance (the optimal-string-alignment kind: insert,
 * delete, substitute, swap two neighbours) between a and b, in bytes.
 * SIZE_MAX when either is longer than SG_EDIT_MAX bytes: it is for names
 * and keys a person typed, and its table stays on the stack. */
#define SG_EDIT_MAX 128
size_t sg_edit_distance(const char *a, const char *b);

/* "did you mean": the candidate nearest a word that matched nothing, offered
 * one by one. Close enough to suggest means within a third of the word's
 * length in edits, and at least one ("wether" -> "weather", "jsno" ->
 * "json", "max_runtime_secs" -> "max_runtime_seconds"; "tools" is not
 * "hooks"). best is NULL when none was. */
struct sg_nearest {
    const char *word;
    const char *best;
    size_t dist; /* best's distance, or the most that may be suggested + 1 */
};
void sg_nearest_init(struct sg_nearest *n, const char *word);
/* true when cand is close and nearer than every earlier one (ties: the
 * first offered stays), for a caller that keeps more than the string. */
bool sg_nearest_offer(struct sg_nearest *n, const char *cand);

/* Parse a whole base-10 integer; -EINVAL on junk, -ERANGE outside [min,max]. */
int sg_parse_ll(const char *s, long long min, long long max, long long *out);

/* Decode one UTF-8 sequence at s (n bytes available): its length, with the
 * code point in *cp, or 0 when it is not valid (overlong, surrogate, cut). */
size_t sg_utf8_decode(const unsigned char *s, size_t n, unsigned *cp);

/* Characters as a person counts them: code points (a byte that is not
 * valid UTF-8 counts as one). "é" is 1, not 2; "漢字" is 2, not 6. */
size_t sg_utf8_chars(const char *s);

/* Valid UTF-8 check; on failure *bad_off is the offset of the first bad byte. */
bool sg_utf8_valid(const char *s, size_t n, size_t *bad_off);



/* List the entries of the directory open at fd (which is taken over and
 * closed), sorted bytewise, without dot-entries; at most max of them.
 * SG_LIST_DIRS keeps only what may be a directory (or a link to one);
 * SG_LIST_HIDDEN (or-ed in) keeps names starting with '.' too (never "."
 * and ".."), for a reader that must see every file a skill ships.
 * Returns 0 or -errno. */
enum { SG_LIST_ALL = 0, SG_LIST_DIRS = 1, SG_LIST_HIDDEN = 2 };
int sg_list_dir_fd(int fd, int what, size_t max, char ***names, size_t *n);

/* Lexically normalize an absolute path in place ("/a/./b/../c" -> "/a/c",
 * "/.." -> "/"). -EINVAL, with path untouched, when it does not start with
 * '/': the output is never longer than the input, so it never overruns. */
int sg_path_normalize(char *path);

/* mkdir -p: every missing component is made with mode (and, unless uid is
 * (uid_t)-1, handed to uid:gid); components that exist, even on read-only
 * mounts, are fine. Returns 0 or -errno. */
int sg_mkdir_p(const char *path, mode_t mode, uid_t uid, gid_t gid);
/* Is path (a file, or a link: not followed) root's, in a folder root's,
 * neither writable by anyone else? */
bool sg_path_roots_alone(const char *path);
/* sg_mkdir_p of the folder that holds path. */
int sg_mkdir_parent(const char *path, mode_t mode);
/* A regular file's bytes (NUL-terminated), the last component never
 * followed: 0 with *buf, or with *buf NULL when there is no such file;
 * -EFBIG over max bytes, -EINVAL when not a regular file, else -errno. */
int sg_read_file_capped(const char *path, size_t max, char **buf, size_t *len);
/* The same where path's links are followed (as a program that reads its
 * settings follows them), still only a regular file, never blocking on a
 * FIFO: 0 with *buf NULL when nothing is there. */
int sg_read_file_follow_capped(const char *path, size_t max, char **buf, size_t *len);
/* A small /proc file (stat, status, cmdline) into buf (NUL-terminated):
 * the bytes read by one read(), or -1 when it cannot be opened or is empty. */
ssize_t sg_read_proc(const char *path, char *buf, size_t size);
/* The same from an open descriptor (a regular file, read from where it is). */
int sg_read_fd_capped(int fd, size_t max, char **buf, size_t *len);
/* All n bytes to fd (EINTR retried): 0 or -errno. */
int sg_write_all(int fd, const void *p, size_t n);
/* fsync of the folder dfd names, its entries (dfd may be O_PATH, which
 * fsync refuses): 0 or -errno. */
int sg_fsync_dir(int dfd);
/* name in dfd opened with flags (O_CREAT, mode 0600, O_CLOEXEC and
 * O_NOFOLLOW added) and locked LOCK_EX, as the file that is there now: a
 * writer that waited for the lock while another replaced the file (a
 * rotation, a rewrite) opens the new one. fd or -errno. */
int sg_open_locked_current(int dfd, const char *name, int flags);
/* Write text to an existing file (procfs, cgroupfs). Returns 0 or -errno. */
int sg_write_file(const char *path, const char *text);
/* Replace (or make) path with text, whole or not at all: written beside it
 * as PATH.skillgate-tmp with mode, synced, renamed. 0 or -errno. */
int sg_write_file_atomic(const char *path, const char *text, mode_t mode);
/* Close every descriptor except those in keep (in any order, n <= 16). */
void sg_close_all_but(const int *keep, size_t n);

/* Home directory of the user who invoked skillgate: $HOME when it is an
 * absolute folder that user owns, else the password database's; under sudo,
 * always the sudo user's from the database. Cached. */
const char *sg_invoking_home(void);
/* The person's uid: the sudo user's under sudo (SUDO_UID), else getuid(). */
uid_t sg_invoking_uid(void);
/* A dotted ASCII Python module name, as `python -m` takes it
 * (scripts.package_skill), at most 256 bytes: what run -m takes, and so
 * what the agent hook rewrites into it. */
bool sg_python_module_ok(const char *m);

/* s with home (a folder, no trailing slash needed) said as "~" wherever it
 * stands as a whole path's start (/home/me/x -> ~/x; /home/meg and
 * /x/home/me are left alone): a report or a message is read by someone
 * who needs neither the user name nor the layout of the disk. NULL or "/"
 * as home: s as it is. Caller frees. */
char *sg_home_short(const char *s, const char *home);

#endif
