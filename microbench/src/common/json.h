/* Minimal streaming JSON writer into a growable buffer (no dependencies). Commas are inserted automatically. */
#ifndef MB_JSON_H
#define MB_JSON_H

#include <stddef.h>

#define MB_JSON_MAX_DEPTH 32

typedef struct {
    char *buf;
    size_t len, cap;
    int depth;
    int count[MB_JSON_MAX_DEPTH]; /* items already written at each nesting level */
    int after_key;
} mb_json;

void mb_json_init(mb_json *j);
void mb_json_free(mb_json *j);
void mb_json_begin_object(mb_json *j);
void mb_json_end_object(mb_json *j);
void mb_json_begin_array(mb_json *j);
void mb_json_end_array(mb_json *j);
void mb_json_key(mb_json *j, const char *key);
void mb_json_string(mb_json *j, const char *s);
void mb_json_int(mb_json *j, long long v);
void mb_json_double(mb_json *j, double v); /* non-finite values become null */
void mb_json_bool(mb_json *j, int v);
void mb_json_null(mb_json *j);

/* Shorthands for "key": value inside objects. */
void mb_json_kstring(mb_json *j, const char *key, const char *s);
void mb_json_kint(mb_json *j, const char *key, long long v);
void mb_json_kdouble(mb_json *j, const char *key, double v);
void mb_json_kbool(mb_json *j, const char *key, int v);

#endif
