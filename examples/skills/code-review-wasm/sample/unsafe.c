/* Deliberately unsafe code for the review to find. Not built, never run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a fake key in the shape of an AWS access key id (it unlocks nothing) */
static const char *key = "AKIAEXAMPLEEXAMPLE12";

void greet(const char *name)
{
    char buf[16];
    strcpy(buf, name);
    sprintf(buf + 5, "%s!", name);   
    puts(buf);
}

int run(const char *arg)
{
    char cmd[64];
    int n = atoi(arg); /* TODO: check the range */
    snprintf(cmd, sizeof cmd, "ls -l %d", n);
    return system(cmd) + (key[0] == 0);
}

/* my_strcpy( and "strcpy(" below are not calls of strcpy: no finding */
void my_strcpy(char *d, const char *s, size_t n) { snprintf(d, n, "%s", s); puts("strcpy("); }

void report(const char *a, const char *b, const char *c) { printf("report: a=%s b=%s c=%s\n", a, b, c); }
