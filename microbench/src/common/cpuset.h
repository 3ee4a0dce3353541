/* Fixed-size CPU / NUMA-node sets and the kernel's list syntax ("0-3,8,10-11"). */
#ifndef MB_CPUSET_H
#define MB_CPUSET_H

#include <stddef.h>
#include <stdint.h>

#define MB_MAX_CPUS 4096 /* bits per set; machines with more CPUs are truncated with a warning */
#define MB_SET_WORDS (MB_MAX_CPUS / 64)

typedef struct {
    uint64_t bits[MB_SET_WORDS];
} mb_set;

void mb_set_clear(mb_set *s);
void mb_set_add(mb_set *s, int i);
int mb_set_has(const mb_set *s, int i);
int mb_set_count(const mb_set *s);
int mb_set_first(const mb_set *s);            /* -1 when empty */
int mb_set_next(const mb_set *s, int after);  /* -1 when none */
int mb_set_equal(const mb_set *a, const mb_set *b);
int mb_set_subset(const mb_set *a, const mb_set *b); /* a within b */
int mb_set_disjoint(const mb_set *a, const mb_set *b);
void mb_set_or(mb_set *dst, const mb_set *src);
void mb_set_and(mb_set *dst, const mb_set *src);

/* Parse "0-3,8,10-11" (whitespace/newline tolerated, empty string = empty set).
 * Returns 0 on success, -1 on syntax error or an index >= MB_MAX_CPUS. */
int mb_set_parse(const char *text, mb_set *out);

/* Format as a compact list ("0-3,8"); returns out. */
char *mb_set_format(const mb_set *s, char *out, size_t cap);

#endif
