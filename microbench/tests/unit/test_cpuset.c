/* CPU list parsing and formatting in the kernel's syntax. */
#include "check.h"
#include "cpuset.h"

static const char *roundtrip(const char *in, char *buf, size_t cap)
{
    mb_set s;
    if (mb_set_parse(in, &s)) return "<error>";
    return mb_set_format(&s, buf, cap);
}

int main(void)
{
    char buf[256];
    CHECK_STR(roundtrip("0-3,8,10-11", buf, sizeof buf), "0-3,8,10-11");
    CHECK_STR(roundtrip("3,2,1,0\n", buf, sizeof buf), "0-3");
    CHECK_STR(roundtrip(" 5 , 7 ", buf, sizeof buf), "5,7");
    CHECK_STR(roundtrip("", buf, sizeof buf), "");
    CHECK_STR(roundtrip("\n", buf, sizeof buf), "");
    CHECK_STR(roundtrip("63-65,4095", buf, sizeof buf), "63-65,4095");

    mb_set s;
    CHECK(mb_set_parse("4096", &s) == -1);
    CHECK(mb_set_parse("3-1", &s) == -1);
    CHECK(mb_set_parse("1,,2", &s) == -1);
    CHECK(mb_set_parse("a", &s) == -1);
    CHECK(mb_set_parse("1-", &s) == -1);
    CHECK(mb_set_parse("-1", &s) == -1);

    mb_set a, b, c;
    mb_set_parse("0-7", &a);
    mb_set_parse("2,3", &b);
    mb_set_parse("8-9", &c);
    CHECK(mb_set_count(&a) == 8);
    CHECK(mb_set_subset(&b, &a));
    CHECK(!mb_set_subset(&a, &b));
    CHECK(mb_set_disjoint(&a, &c));
    CHECK(!mb_set_disjoint(&a, &b));
    CHECK(mb_set_first(&c) == 8);
    CHECK(mb_set_next(&c, 8) == 9);
    CHECK(mb_set_next(&c, 9) == -1);
    mb_set_or(&a, &c);
    CHECK_STR(mb_set_format(&a, buf, sizeof buf), "0-9");
    mb_set_and(&a, &b);
    CHECK(mb_set_equal(&a, &b));

    /* A list too long for the buffer is cut at a whole item, never mid-number. */
    mb_set_parse("0,2,4,6,8,10,12,14", &a);
    CHECK_STR(mb_set_format(&a, buf, 8), "0,2,4,6");
    CHECK_DONE();
}
