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
    assert short["verdict"] == "INSUFFICIENT" and "30 of the 45 days" in short["reason"]


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
    with pytest.raises(AvailabilityError, match="outside"):
        effectiveness(records, days=1, threshold=120)


def test_spreadsheet_export_with_bom_and_crlf():
    text = "\ufeffdate,node,scheduled_hours,operational_hours\r\n2024-01-01,a,24,23.5\r\n"
    result = effectiveness(parse_log(text), days=1)
    assert result["el_percent"] == pytest.approx(100 * 23.5 / 24)
