#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mb_parse_long(const char *text, long min, long max, long *out)
{
    if (!text || !*text || isspace((unsigned char)*text)) return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end != '\0' || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int mb_parse_bytes(const char *text, size_t min, size_t max, size_t *out)
{
    if (!text || !isdigit((unsigned char)*text)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno) return -1;
    unsigned long long mult = 1;
    const char *s = end;
    if (*s) {
        int binary = s[1] == 'i';
        unsigned long long base = binary ? 1024ULL : 1000ULL;
        switch (*s) {
        case 'k': case 'K': mult = base; break;
        case 'M': mult = base * base; break;
        case 'G': mult = base * base * base; break;
        case 'T': mult = base * base * base * base; break;
        case 'B': mult = 1; s--; break; /* bare "B" suffix */
        default: return -1;
        }
        s += binary ? 2 : 1;
        if (*s == 'B') s++;
        if (*s) return -1;
    }
    if (v > (unsigned long long)max / mult) return -1;
    v *= mult;
    if (v < min || v > max) return -1;
    *out = (size_t)v;
    return 0;
}

int mb_parse_long_list(const char *text, long min, long max, long *out, int cap)
{
    if (!text || !*text) return -1;
    char *copy = strdup(text);
    if (!copy) return -1;
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n >= cap || mb_parse_long(tok, min, max, &out[n])) { free(copy); return -1; }
        n++;
    }
    free(copy);
    /* "1,,2" and trailing commas are rejected: strtok_r would silently skip empty fields. */
    if (strstr(text, ",,") || text[0] == ',' || text[strlen(text) - 1] == ',') return -1;
    return n > 0 ? n : -1;
}
