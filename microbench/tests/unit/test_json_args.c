/* The JSON writer (nesting, commas, escaping, non-finite numbers) and the command-line value parsers. */
#include <math.h>

#include "args.h"
#include "check.h"
#include "json.h"

int main(void)
{
    mb_json j;
    mb_json_init(&j);
    mb_json_begin_object(&j);
    mb_json_kstring(&j, "s", "a\"b\\c\nd\x01");
    mb_json_key(&j, "list");
    mb_json_begin_array(&j);
    mb_json_int(&j, 1);
    mb_json_double(&j, 0.5);
    mb_json_double(&j, NAN);
    mb_json_begin_object(&j);
    mb_json_end_object(&j);
    mb_json_end_array(&j);
    mb_json_kbool(&j, "ok", 1);
    mb_json_end_object(&j);
    CHECK_STR(j.buf, "{\"s\": \"a\\\"b\\\\c\\nd\\u0001\", \"list\": [1, 0.5, null, {}], \"ok\": true}");
    mb_json_free(&j);

    size_t bytes;
    CHECK(mb_parse_bytes("4096", 1, 1UL << 40, &bytes) == 0 && bytes == 4096);
    CHECK(mb_parse_bytes("16Mi", 1, 1UL << 40, &bytes) == 0 && bytes == 16UL << 20);
    CHECK(mb_parse_bytes("16MiB", 1, 1UL << 40, &bytes) == 0 && bytes == 16UL << 20);
    CHECK(mb_parse_bytes("2G", 1, 1UL << 40, &bytes) == 0 && bytes == 2000000000UL);
    CHECK(mb_parse_bytes("3k", 1, 1UL << 40, &bytes) == 0 && bytes == 3000);
    CHECK(mb_parse_bytes("1Ti", 1, 1UL << 40, &bytes) == 0 && bytes == 1UL << 40);
    CHECK(mb_parse_bytes("2Ti", 1, 1UL << 40, &bytes) == -1);
    CHECK(mb_parse_bytes("100B", 1, 1UL << 40, &bytes) == 0 && bytes == 100);
    CHECK(mb_parse_bytes("12x", 1, 1UL << 40, &bytes) == -1);
    CHECK(mb_parse_bytes("-5", 1, 1UL << 40, &bytes) == -1);
    CHECK(mb_parse_bytes("", 1, 1UL << 40, &bytes) == -1);
    CHECK(mb_parse_bytes("1Ki", 4096, 1UL << 40, &bytes) == -1);         /* below minimum */
    CHECK(mb_parse_bytes("99999999Gi", 1, 1UL << 40, &bytes) == -1);     /* above maximum, no overflow */

    long v, list[8];
    CHECK(mb_parse_long("42", 0, 100, &v) == 0 && v == 42);
    CHECK(mb_parse_long("101", 0, 100, &v) == -1);
    CHECK(mb_parse_long("4x", 0, 100, &v) == -1);
    CHECK(mb_parse_long(" 4", 0, 100, &v) == -1);
    CHECK(mb_parse_long_list("8,16,32", 1, 64, list, 8) == 3 && list[2] == 32);
    CHECK(mb_parse_long_list("8,,16", 1, 64, list, 8) == -1);
    CHECK(mb_parse_long_list("8,", 1, 64, list, 8) == -1);
    CHECK(mb_parse_long_list("0", 1, 64, list, 8) == -1);
    CHECK(mb_parse_long_list("1,2,3", 1, 64, list, 2) == -1);
    CHECK_DONE();
}
