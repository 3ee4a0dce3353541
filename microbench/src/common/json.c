#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb_json_init(mb_json *j) { memset(j, 0, sizeof *j); }

void mb_json_free(mb_json *j)
{
    free(j->buf);
    mb_json_init(j);
}

static void put(mb_json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        while (j->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) { fprintf(stderr, "out of memory while writing JSON\n"); exit(1); }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(mb_json *j, const char *s) { put(j, s, strlen(s)); }

/* Called before every value or key: separator handling. */
static void before_item(mb_json *j)
{
    if (j->after_key) { j->after_key = 0; return; }
    if (j->count[j->depth]++ > 0) puts_(j, ", ");
}

static void open_(mb_json *j, const char *c)
{
    before_item(j);
    puts_(j, c);
    if (j->depth + 1 < MB_JSON_MAX_DEPTH) j->depth++;
    j->count[j->depth] = 0;
}

static void close_(mb_json *j, const char *c)
{
    puts_(j, c);
    if (j->depth > 0) j->depth--;
}

void mb_json_begin_object(mb_json *j) { open_(j, "{"); }
void mb_json_end_object(mb_json *j) { close_(j, "}"); }
void mb_json_begin_array(mb_json *j) { open_(j, "["); }
void mb_json_end_array(mb_json *j) { close_(j, "]"); }

static void quoted(mb_json *j, const char *s)
{
    puts_(j, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\t': puts_(j, "\\t"); break;
        case '\r': puts_(j, "\\r"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    puts_(j, "\"");
}

void mb_json_key(mb_json *j, const char *key)
{
    before_item(j);
    quoted(j, key);
    puts_(j, ": ");
    j->after_key = 1;
}

void mb_json_string(mb_json *j, const char *s) { before_item(j); quoted(j, s ? s : ""); }

void mb_json_int(mb_json *j, long long v)
{
    char b[32];
    before_item(j);
    snprintf(b, sizeof b, "%lld", v);
    puts_(j, b);
}

void mb_json_double(mb_json *j, double v)
{
    char b[40];
    before_item(j);
    if (!isfinite(v)) { puts_(j, "null"); return; }
    snprintf(b, sizeof b, "%.9g", v);
    puts_(j, b);
}

void mb_json_bool(mb_json *j, int v) { before_item(j); puts_(j, v ? "true" : "false"); }
void mb_json_null(mb_json *j) { before_item(j); puts_(j, "null"); }

void mb_json_kstring(mb_json *j, const char *k, const char *s) { mb_json_key(j, k); mb_json_string(j, s); }
void mb_json_kint(mb_json *j, const char *k, long long v) { mb_json_key(j, k); mb_json_int(j, v); }
void mb_json_kdouble(mb_json *j, const char *k, double v) { mb_json_key(j, k); mb_json_double(j, v); }
void mb_json_kbool(mb_json *j, const char *k, int v) { mb_json_key(j, k); mb_json_bool(j, v); }
