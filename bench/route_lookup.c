/* What the proxy's question "is this upstream an address of this
 * machine?" costs per connection (egress/route.c: one RTM_GETROUTE on a
 * netlink socket kept open), for bench/bench.py. Not part of skillgate:
 * built by the bench with cc against egress/route.c.
 *
 *   route_lookup N ADDR...   (prints "ADDR TYPE MEDIAN_US MIN_US MAX_US"
 *                             per address: N lookups, in batches of 100) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "route.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "usage: route_lookup N ADDR...\n"), 2;
    long n = strtol(argv[1], NULL, 10);
    if (n < 100 || n > 10000000)
        return fprintf(stderr, "N: 100 to 10000000\n"), 2;
    struct sg_route r;
    if (sg_route_open(&r) < 0)
        return perror("route socket"), 1;
    size_t batches = (size_t)n / 100;
    double *per = calloc(batches, sizeof *per);
    if (!per)
        return 1;
    for (int a = 2; a < argc; a++) {
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        if (inet_pton(AF_INET, argv[a], &s4->sin_addr) == 1)
            s4->sin_family = AF_INET;
        else if (inet_pton(AF_INET6, argv[a], &s6->sin6_addr) == 1)
            s6->sin6_family = AF_INET6;
        else
            return fprintf(stderr, "%s: not a numeric address\n", argv[a]), 2;
        int type = sg_route_type(&r, (struct sockaddr *)&ss);
        for (size_t b = 0; b < batches; b++) {
            double t = now_us();
            for (int i = 0; i < 100; i++)
                sg_route_type(&r, (struct sockaddr *)&ss);
            per[b] = (now_us() - t) / 100;
        }
        qsort(per, batches, sizeof *per, cmp);
        printf("%s %s %.2f %.2f %.2f\n", argv[a],
               type < 0 ? strerror(-type) : sg_route_type_name(type), per[batches / 2], per[0],
               per[batches - 1]);
    }
    free(per);
    sg_route_close(&r);
    return 0;
}
