/* A small, careful copy: every buffer has a bound and every result is checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses a port number; returns -1 unless s is all digits in 1..65535. */
int parse_port(const char *s)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 65535)
        return -1;
    return (int)v;
}

/* Writes "name:port" into out (size n); returns 0, or -1 if it did not fit. */
int format_addr(char *out, size_t n, const char *name, int port)
{
    int k = snprintf(out, n, "%s:%d", name, port);
    return (k < 0 || (size_t)k >= n) ? -1 : 0;
}
