"""One figure per experiment, designed for the question the experiment asks (the seed papers'
figures where there is one). Each module here draws the checks it names in CHECKS and says in KEY
which figure stands for the experiment in the report's summary (its comparison ratio, or its
headline figure). REGISTRY maps a check to its module, ALSO to the modules drawn after it (the
per-size curves the gate judges); a check not in REGISTRY is drawn by the generic families of
yeebench.results.plots.

A figure whose parameters do not vary is not drawn: the module returns a line saying why, and
the number stays in the table.
"""
import fnmatch
from collections import OrderedDict
from pathlib import Path

from yeebench.results.figures import (acceptance, binding, collectives, common, io_cases, io_paper, job_balance, messages, numa,
                                      pt2pt, scaling, size_curves)

MODULES = (pt2pt, collectives, binding, numa, scaling, job_balance, io_paper, io_cases, messages)
REGISTRY = {check: module for module in MODULES for check in module.CHECKS}
#: Figures drawn after a check's own one: the measured curves against the baseline's, size by size.
ALSO = {check: (module,) for module in (size_curves,) for check in module.CHECKS}


def key_patterns(check):
    """fnmatch patterns, most telling first, of the figure that stands for the check; () if unknown."""
    module = REGISTRY.get(check)
    if module is None:
        return ()
    return module.KEY.get(check, ()) if isinstance(module.KEY, dict) else module.KEY


def key_metric(check, metrics_present):
    """The metric the experiment chose for the summary among those measured; None if none matches."""
    for pattern in key_patterns(check):
        for metric in metrics_present:
            if fnmatch.fnmatchcase(metric, pattern):
                return metric
    return None


def key_scale(check):
    """The parameter whose largest value picks the summary's case (efficiency at the most cores: the
    best case of an efficiency is the trivial 100 % of the smallest run); None: the best case."""
    module = REGISTRY.get(check)
    return getattr(module, "KEY_AT_LARGEST", {}).get(check)


def draw(sources, out_dir):
    """Every registered experiment's figure for the sources (common.Source: runs, then the baseline).

    Returns (Drawn, the checks drawn here): the caller leaves those checks' rows out of the
    generic families.
    """
    out_dir = Path(out_dir)
    by_check = OrderedDict()
    acceptance_checks = set()
    for source in sources:
        for row in source.rows:
            if row["check"] in REGISTRY:
                by_check.setdefault(row["check"], None)
            elif acceptance.is_acceptance(row["check"]):
                acceptance_checks.add(row["check"])  # the report's sign-off table, not a chart
    per_source = []  # {check: its rows} of each source, in one pass over the rows
    for source in sources:
        rows_of = {}
        for row in source.rows:
            if row["check"] in by_check:
                rows_of.setdefault(row["check"], []).append(row)
        per_source.append(rows_of)
    drawn = common.Drawn()
    for check in by_check:
        mine = [common.Source(s.label, rows_of.get(check, []), s.is_baseline) for s, rows_of in zip(sources, per_source)]
        for module in (REGISTRY[check], *ALSO.get(check, ())):
            drawn += module.draw(check, [s for s in mine if s.rows], out_dir)
    return drawn, set(by_check) | acceptance_checks
