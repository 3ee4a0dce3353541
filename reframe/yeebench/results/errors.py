"""Errors the results tooling reports as one line with a non-zero exit."""


class ResultsError(Exception):
    """Bad or unusable input (corrupt report, unknown schema, missing run): exit 1."""
