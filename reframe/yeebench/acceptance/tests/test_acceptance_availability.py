"""Availability log parsing, EL maths and verdicts (paper 003: EL >= 97 % over 30 days)."""
import datetime as dt
import os

import pytest

from yeebench.acceptance.availability import AvailabilityError, effectiveness, parse_log

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return parse_log(f.read())


def test_passing_month_gives_el_and_pass():
    result = effectiveness(load("availability_30days_pass.csv"))
    assert result["days"] == 30 and result["days_covered"] == 30
    assert result["el_percent"] == pytest.approx(100 * (2160 - 12) / 2160)
    assert result["verdict"] == "PASS"
    assert result["nodes"][0]["node"] == "n002"  # least available first
    assert "GPU fell off the bus" in result["nodes"][0]["notes"][0]


def test_failing_month_names_the_worst_node():
    result = effectiveness(load("availability_30days_fail.csv"))
    assert result["el_percent"] == pytest.approx(100 * (2160 - 120) / 2160)
    assert result["verdict"] == "FAIL"
    assert "n003" in result["reason"] and "94.44%" in result["reason"]


def test_threshold_boundary_is_inclusive():
    text = "date,node,scheduled_hours,operational_hours\n2024-01-01,a,100,97\n"
    assert effectiveness(parse_log(text), days=1)["verdict"] == "PASS"
    text = "date,node,scheduled_hours,operational_hours\n2024-01-01,a,100,96.99\n"
    assert effectiveness(parse_log(text), days=1)["verdict"] == "FAIL"


def test_window_selects_days_and_short_log_is_insufficient():
    records = load("availability_30days_fail.csv")
    late = effectiveness(records, days=10, end=dt.date(2012, 3, 30))
    assert late["verdict"] == "PASS" and late["el_percent"] == 100.0
    short = effectiveness(records, days=45)
    assert short["verdict"] == "INSUFFICIENT DATA" and "90 of 135 node-days" in short["reason"]


def test_column_order_extra_columns_and_comments():
    text = "# comment\nnote,operational_hours,node,date,scheduled_hours,site\nx,10,a,2024-01-02,10,hq\n"
    rec = parse_log(text)
    assert rec[0]["node"] == "a" and rec[0]["scheduled"] == 10 and rec[0]["note"] == "x"


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("# only a comment\n", "empty"),
    ("date,node,scheduled_hours\n2024-01-01,a,1\n", "lacks column(s) operational_hours"),
    ("date,node,scheduled_hours,operational_hours\n", "no rows"),
    ("date,node,scheduled_hours,operational_hours\n2024-13-01,a,1,1\n", "line 2: date '2024-13-01'"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,x,1\n", "line 2: scheduled_hours 'x' is not a number"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,1,-1\n", "negative"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,1,nan\n", "not a finite number"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,1,2\n", "exceeds scheduled_hours"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,,1,1\n", "node is empty"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,1\n", "3 field(s), header has 4"),
    ("date,node,scheduled_hours,operational_hours,note\n2024-01-01,a,1,1,ok\n2024-01-02,a,1,1,PSU, fan\n",
     "line 3: 6 fields, header has 5 (a field containing a comma must be in double quotes)"),
    ("# c\n\ndate,node,scheduled_hours,operational_hours\n2024-01-01,a,1,x\n", "line 4: operational_hours"),
    ("date,node,scheduled_hours,operational_hours\n2024-01-01,a,1,1\n2024-01-01,a,1,1\n",
     "line 3: second row for node a"),
])
def test_bad_logs_are_rejected_with_the_line(text, message):
    with pytest.raises(AvailabilityError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_log(text)


def test_bad_windows_are_rejected():
    records = parse_log("date,node,scheduled_hours,operational_hours\n2024-01-01,a,0,0\n")
    with pytest.raises(AvailabilityError, match="EL is undefined"):
        effectiveness(records, days=1)
    with pytest.raises(AvailabilityError, match="no rows between"):
        effectiveness(records, days=1, end=dt.date(2025, 1, 1))
    with pytest.raises(AvailabilityError, match="after its end"):
        effectiveness(records, start=dt.date(2024, 2, 1), end=dt.date(2024, 1, 1))
    with pytest.raises(AvailabilityError, match="at least 1"):
        effectiveness(records, days=0)
    with pytest.raises(AvailabilityError, match="give at most two"):
        effectiveness(records, days=5, start=dt.date(2024, 1, 1), end=dt.date(2024, 1, 5))
    with pytest.raises(AvailabilityError, match="outside"):
        effectiveness(records, days=1, threshold=120)


def test_spreadsheet_export_with_bom_and_crlf():
    text = "\ufeffdate,node,scheduled_hours,operational_hours\r\n2024-01-01,a,24,23.5\r\n"
    result = effectiveness(parse_log(text), days=1)
    assert result["el_percent"] == pytest.approx(100 * 23.5 / 24)


def _month(nodes, days=30, skip=(), down=()):
    """CSV of `nodes` x `days` (2024-04-01 ..), 24 h each; skip: (node, day) without a row;
    down: (node, day) with 0 operational hours."""
    lines = ["date,node,scheduled_hours,operational_hours,note"]
    for d in range(days):
        day = dt.date(2024, 4, 1) + dt.timedelta(days=d)
        for n in nodes:
            if (n, d) not in skip:
                lines.append(f"{day},{n},24,{0 if (n, d) in down else 24},")
    return "\n".join(lines) + "\n"


def test_node_missing_for_10_days_is_insufficient_data_not_pass():
    # n3 has no rows for the first 10 days: 80 of 90 node-days, whatever the EL of the rest
    text = _month(["n1", "n2", "n3"], skip={("n3", d) for d in range(10)})
    result = effectiveness(parse_log(text))
    assert result["node_days_expected"] == 90 and result["node_days_unknown"] == 10
    assert result["coverage_percent"] == pytest.approx(100 * 80 / 90)
    assert result["verdict"] == "INSUFFICIENT DATA"
    assert "80 of 90 node-days" in result["reason"] and "n3 10 day(s)" in result["reason"]
    n3 = next(n for n in result["nodes"] if n["node"] == "n3")
    assert n3["days_logged"] == 20 and n3["days_unknown"] == 10


def test_unknown_node_days_pass_only_when_they_cannot_change_the_verdict():
    nodes = [f"n{i}" for i in range(10)]
    one_gap = _month(nodes, skip={("n0", 3)})  # 299 of 300 node-days, all up
    result = effectiveness(parse_log(one_gap))
    assert result["verdict"] == "PASS" and result["el_low_percent"] == pytest.approx(100 * 299 / 300)
    # 8 logged days down: 97.3% over the logged days, but 12 unknown ones could take it below 97%
    gaps = {("n0", d) for d in range(12)}
    text = _month(nodes, skip=gaps, down={("n1", d) for d in range(8)})
    result = effectiveness(parse_log(text))
    assert result["coverage_percent"] >= 95 and result["el_percent"] > 97
    assert result["verdict"] == "INSUFFICIENT DATA" and "decide it" in result["reason"]
    # the coverage threshold is the caller's
    assert effectiveness(parse_log(text), min_coverage=100)["verdict"] == "INSUFFICIENT DATA"
    down = _month(nodes, skip={("n0", 0)}, down={("n1", d) for d in range(30)})
    assert effectiveness(parse_log(down))["verdict"] == "FAIL"


def test_start_with_days_sets_the_end():
    records = parse_log(_month(["a"], days=20))
    result = effectiveness(records, start=dt.date(2024, 4, 3), days=5)
    assert (result["start"], result["end"], result["days"]) == ("2024-04-03", "2024-04-07", 5)
    assert effectiveness(records, start=dt.date(2024, 4, 1), end=dt.date(2024, 4, 20))["days"] == 20


def test_quoted_comma_and_multiline_note_are_kept_whole():
    text = ('date,node,scheduled_hours,operational_hours,note\n'
            '2024-01-01,a,24,20,"PSU replaced, fan too"\n'
            '2024-01-02,a,24,24,"two\nlines"\n2024-01-03,a,24,x,\n')
    with pytest.raises(AvailabilityError, match="line 5: operational_hours 'x'"):
        parse_log(text)
    rec = parse_log(text.rsplit("2024-01-03", 1)[0])
    assert rec[0]["note"] == "PSU replaced, fan too" and rec[1]["note"] == "two\nlines"
