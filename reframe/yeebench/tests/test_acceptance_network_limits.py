"""A site's network requirements on AcceptanceNetwork (paper 003: > 1 Gbit/s, < 3 us between nodes; its
switches 282-546 ns port to port): off unless set, and when set every pair past a limit is named."""
from yeebench.checks.pt2pt import acceptance_network as net

LAT = {("n1", "n2"): 2.1, ("n1", "n3"): 3.4, ("n2", "n3"): 2.3}          # us, half round trip
BW = {("n1", "n2"): 1180.0, ("n1", "n3"): 96.0, ("n2", "n3"): 1175.0}    # MB/s (10^6 B/s)


def test_no_limit_is_applied_unless_a_site_sets_one():
    assert net.limit_problems(LAT, BW) == ([], [])
    variables = net.AcceptanceNetwork._rfm_var_space
    assert all(variables[name].default_value == 0.0
               for name in ("max_latency_us", "min_bandwidth_gbits", "max_latency_spread_us"))


def test_the_papers_limits_name_the_pairs_past_them():
    problems, held = net.limit_problems(LAT, BW, **net.PAPER_003_LIMITS)
    assert problems == [
        "latency above the required 3 us: n1 - n3 3.40 us",
        "bandwidth below the required 1 Gbit/s: n1 - n3 0.77 Gbit/s",
        "latency above the fastest pair's (2.10 us) by more than 1.092 us: n1 - n3 1.30 us",
    ]
    assert held == []


def test_limits_that_hold_are_said_to_hold():
    problems, held = net.limit_problems(LAT, BW, max_latency_us=5, min_bandwidth_gbits=0.5,
                                        max_latency_spread_us=1.5)
    assert problems == []
    assert held == ["latency <= 5 us", "bandwidth >= 0.5 Gbit/s", "latency spread <= 1.5 us"]


def test_one_gbit_is_125_megabytes_per_second():
    assert net.limit_problems({}, {("a", "b"): 124.9}, min_bandwidth_gbits=1)[0]
    assert not net.limit_problems({}, {("a", "b"): 125.0}, min_bandwidth_gbits=1)[0]
