/* Page-placement aggregation and memory-policy naming: the multi-node logic, tested without a multi-node machine. */
#include <errno.h>
#include <math.h>

#include "check.h"
#include "numa_query.h"

static int close_to(double a, double b) { return fabs(a - b) < 1e-12; }

int main(void)
{
    /* What move_pages reports for interleaved pages on 4 nodes, two untouched pages and one bad address. */
    const int status[] = {0, 1, 2, 3, 0, 1, 2, 3, -ENOENT, -ENOENT, -EFAULT, 1};
    mb_page_stats s;
    mb_page_stats_init(&s);
    mb_page_stats_add(&s, status, 6);
    mb_page_stats_add(&s, status + 6, 6); /* batches accumulate */
    CHECK(s.sampled == 12);
    CHECK(s.located == 9);
    CHECK(s.not_present == 2);
    CHECK(s.errors == 1);
    CHECK(s.per_node[1] == 3);
    CHECK(close_to(mb_page_stats_fraction(&s, 0), 2.0 / 9.0));
    CHECK(close_to(mb_page_stats_fraction(&s, 1), 3.0 / 9.0));
    CHECK(close_to(mb_page_stats_fraction(&s, 7), 0.0));
    CHECK(close_to(mb_page_stats_fraction(&s, -1), 0.0));
    mb_set nodes;
    mb_set_parse("0-1", &nodes);
    CHECK(close_to(mb_page_stats_fraction_in(&s, &nodes), 5.0 / 9.0));
    mb_set_parse("0-3", &nodes);
    CHECK(close_to(mb_page_stats_fraction_in(&s, &nodes), 1.0));

    /* A membind that silently did nothing: every page on node 0 while node 1 was asked for. */
    const int all_zero[] = {0, 0, 0, 0};
    mb_page_stats_init(&s);
    mb_page_stats_add(&s, all_zero, 4);
    mb_set_parse("1", &nodes);
    CHECK(close_to(mb_page_stats_fraction_in(&s, &nodes), 0.0));

    /* Nothing located: fractions are 0, never a division by zero. */
    const int untouched[] = {-ENOENT, -ENOENT};
    mb_page_stats_init(&s);
    mb_page_stats_add(&s, untouched, 2);
    CHECK(s.located == 0 && close_to(mb_page_stats_fraction(&s, 0), 0.0));

    /* MPOL_* values as get_mempolicy returns them, with mode flags set. */
    CHECK_STR(mb_mempolicy_name(0, 0), "default");
    CHECK_STR(mb_mempolicy_name(1, 1), "preferred");
    CHECK_STR(mb_mempolicy_name(1, 0), "local");
    CHECK_STR(mb_mempolicy_name(2, 2), "bind");
    CHECK_STR(mb_mempolicy_name(3 | (1 << 15), 2), "interleave");
    CHECK_STR(mb_mempolicy_name(4, 0), "local");
    CHECK_STR(mb_mempolicy_name(5, 2), "preferred_many");
    CHECK_STR(mb_mempolicy_name(6, 2), "weighted_interleave");
    CHECK_STR(mb_mempolicy_name(99, 0), "unknown");

    char text[64];
    mb_set_parse("0-1", &nodes);
    mb_mempolicy_describe("interleave", &nodes, text, sizeof text);
    CHECK_STR(text, "interleave:0-1");
    mb_set_clear(&nodes);
    mb_mempolicy_describe("default", &nodes, text, sizeof text);
    CHECK_STR(text, "default");

    /* The live query works on this machine and agrees with itself. */
    char mode[32];
    CHECK(mb_mempolicy_query(mode, sizeof mode, &nodes) == 0);
    int cpu = -1;
    CHECK(mb_current_node(&cpu) >= 0 && cpu >= 0);
    CHECK_DONE();
}
