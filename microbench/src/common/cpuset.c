#include "cpuset.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb_set_clear(mb_set *s) { memset(s, 0, sizeof *s); }

void mb_set_add(mb_set *s, int i)
{
    if (i >= 0 && i < MB_MAX_CPUS) s->bits[i / 64] |= UINT64_C(1) << (i % 64);
}

int mb_set_has(const mb_set *s, int i)
{
    return i >= 0 && i < MB_MAX_CPUS && (s->bits[i / 64] >> (i % 64)) & 1u;
}

int mb_set_count(const mb_set *s)
{
    int n = 0;
    for (int w = 0; w < MB_SET_WORDS; w++) n += __builtin_popcountll(s->bits[w]);
    return n;
}

int mb_set_next(const mb_set *s, int after)
{
    for (int i = after + 1; i < MB_MAX_CPUS; i++) {
        uint64_t word = s->bits[i / 64] >> (i % 64);
        if (word == 0) { i = (i / 64) * 64 + 63; continue; }
        return i + __builtin_ctzll(word);
    }
    return -1;
}

int mb_set_first(const mb_set *s) { return mb_set_next(s, -1); }

int mb_set_equal(const mb_set *a, const mb_set *b) { return memcmp(a, b, sizeof *a) == 0; }

int mb_set_subset(const mb_set *a, const mb_set *b)
{
    for (int w = 0; w < MB_SET_WORDS; w++)
        if (a->bits[w] & ~b->bits[w]) return 0;
    return 1;
}

int mb_set_disjoint(const mb_set *a, const mb_set *b)
{
    for (int w = 0; w < MB_SET_WORDS; w++)
        if (a->bits[w] & b->bits[w]) return 0;
    return 1;
}

void mb_set_or(mb_set *dst, const mb_set *src)
{
    for (int w = 0; w < MB_SET_WORDS; w++) dst->bits[w] |= src->bits[w];
}

void mb_set_and(mb_set *dst, const mb_set *src)
{
    for (int w = 0; w < MB_SET_WORDS; w++) dst->bits[w] &= src->bits[w];
}

static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

static int parse_index(const char **p, long *out)
{
    if (!isdigit((unsigned char)**p)) return -1;
    char *end;
    long v = strtol(*p, &end, 10);
    if (v < 0 || v >= MB_MAX_CPUS) return -1;
    *p = end;
    *out = v;
    return 0;
}

int mb_set_parse(const char *text, mb_set *out)
{
    mb_set_clear(out);
    const char *p = skip_space(text);
    if (*p == '\0') return 0;
    for (;;) {
        long lo, hi;
        if (parse_index(&p, &lo)) return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            if (parse_index(&p, &hi) || hi < lo) return -1;
        }
        for (long i = lo; i <= hi; i++) mb_set_add(out, (int)i);
        p = skip_space(p);
        if (*p == '\0') return 0;
        if (*p != ',') return -1;
        p = skip_space(p + 1);
    }
}

char *mb_set_format(const mb_set *s, char *out, size_t cap)
{
    size_t len = 0;
    if (cap) out[0] = '\0';
    for (int i = mb_set_first(s); i >= 0;) {
        int j = i;
        while (mb_set_has(s, j + 1)) j++;
        char piece[32];
        if (j == i) snprintf(piece, sizeof piece, "%s%d", len ? "," : "", i);
        else snprintf(piece, sizeof piece, "%s%d-%d", len ? "," : "", i, j);
        size_t pl = strlen(piece);
        if (len + pl + 1 > cap) break;
        memcpy(out + len, piece, pl + 1);
        len += pl;
        i = mb_set_next(s, j);
    }
    return out;
}
