/* Strict parsing of command-line values. Each returns 0 on success, -1 when the text is not a valid value. */
#ifndef MB_ARGS_H
#define MB_ARGS_H

#include <stddef.h>

int mb_parse_long(const char *text, long min, long max, long *out);
/* Byte counts with optional SI (k, M, G, T = 10^3..) or binary (Ki, Mi, Gi, Ti = 2^10..) suffix and optional "B". */
int mb_parse_bytes(const char *text, size_t min, size_t max, size_t *out);
/* Comma-separated list of integers in [min, max]; at most cap values. Returns count or -1. */
int mb_parse_long_list(const char *text, long min, long max, long *out, int cap);

#endif
