"""The complete table beside the report, as CSV: names from a run never become spreadsheet formulas."""
import csv
import io

from yeebench.results import report_tables


def row(**changes):
    base = {c: None for c in report_tables.FULL_COLUMNS}
    base.update(changes)
    return base


def test_a_name_that_starts_like_a_formula_is_text_and_numbers_stay_numbers():
    first, second = report_tables.FULL_COLUMNS[:2]
    rows = [row(**{first: '=HYPERLINK("http://x")', second: -3.5}), row(**{first: "@SUM(A1)", second: 2}),
            row(**{first: "plain", second: None})]
    table = list(csv.reader(io.StringIO(report_tables.as_csv(rows))))
    assert table[0] == list(report_tables.FULL_COLUMNS)
    assert [r[:2] for r in table[1:]] == [["'=HYPERLINK(\"http://x\")", "-3.5"], ["'@SUM(A1)", "2"], ["plain", ""]]
