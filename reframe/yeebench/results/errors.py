"""Errors the results tooling reports as one line with a non-zero exit."""


class ResultsError(Exception):
    """Bad or unusable input (corrupt report, unknown schema, missing run): exit 1."""


class NothingToRecord(ResultsError):
    """A report without a test case or without a figure from a passing one (a --list, a run that failed)."""
