/* Tiny assertion helpers for the C unit tests: count failures, report them, exit non-zero at the end. */
#ifndef MB_CHECK_H
#define MB_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures = 0;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_STR(got, want)                                                                              \
    do {                                                                                                  \
        const char *g_ = (got), *w_ = (want);                                                             \
        if (strcmp(g_, w_) != 0) {                                                                        \
            fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, g_, w_);              \
            check_failures++;                                                                             \
        }                                                                                                 \
    } while (0)

#define CHECK_DONE()                                                                  \
    do {                                                                              \
        if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures); \
        else printf("all checks passed\n");                                           \
        return check_failures ? 1 : 0;                                                \
    } while (0)

#endif
