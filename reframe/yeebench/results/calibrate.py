"""`yeebench results calibrate`: ReFrame references of a system from its recorded runs.

Each figure (partition, environ, check, parameters, metric) of the newest runs of one yeebench
version gets the reference tuple ReFrame judges every repeat against (yeebench.references):

  value      the median of all its repeats over the runs;
  tolerance  max(min_tolerance, sigmas x 1.4826 x MAD / median): MAD scaled to a standard deviation,
             robust to the odd disturbed repeat that a standard deviation would let widen the band;
  bounds     on the worse side only (a faster run is no failure): lower = -tolerance for a
             higher-is-better figure (at most -1: ReFrame's floor for a positive reference), upper =
             +tolerance for a lower-is-better one, both for a figure of unknown direction.

A reference is keyed by the test case's display name (an fnmatch pattern with its special characters
escaped), which ReFrame matches in YeebenchCheck._apply_references; the value is in the unit the
check reports (rows hold SI units: a converted figure is converted back). Figures whose median is
not positive are left out (a relative tolerance of 0 is none).
"""
import datetime
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

from yeebench import metrics, references
from yeebench.results import safe_paths, store
from yeebench.results.errors import ResultsError

MAD_TO_SIGMA = 1.4826


def glob_escape(text):
    """text as an fnmatch pattern matching only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _display_names(run):
    """{unique name: display name} of the run's ReFrame report (empty when it has none readable)."""
    path = run.path / store.REPORT_FILE
    try:
        report = store.read_json(path, "report")
    except ResultsError:
        return {}
    names = {}
    for run_entry in report.get("runs", []) if isinstance(report, dict) else []:
        for case in run_entry.get("testcases", []) if isinstance(run_entry, dict) else []:
            if isinstance(case, dict) and isinstance(case.get("unique_name"), str) \
                    and isinstance(case.get("display_name"), str):
                names[case["unique_name"]] = case["display_name"]
    return names


def _runs_of(system, results_dir, history_runs):
    safe_paths.check_component(system, "--system")
    folder = Path(results_dir) / system
    paths = store.find_runs(folder) if folder.is_dir() else []
    if not paths:
        raise ResultsError(f"no recorded runs of system {system} in {results_dir}")
    runs = sorted((store.load_run(p) for p in paths), key=lambda r: r.run_id or "", reverse=True)
    version = (runs[0].provenance or {}).get("suite_version")
    same = [r for r in runs if (r.provenance or {}).get("suite_version") == version]
    notes = []
    if len(same) < len(runs):
        notes.append(f"{len(runs) - len(same)} run(s) of other yeebench versions left out (using {version})")
    return same[:history_runs], notes


class _Figure:
    def __init__(self, row, pattern):
        self.partition = row.get("partition") or "*"
        self.pattern = pattern
        self.metric = row["metric"]
        self.unit = row.get("unit", "")
        self.original_unit = row.get("original_unit")
        self.direction = row.get("direction", "unknown")
        self.values = defaultdict(list)       # run id -> repeats

    @property
    def name(self):
        return f"{self.pattern} {self.metric}" + (f" on {self.partition}" if self.partition != "*" else "")


def _collect(runs):
    """Figures by key, newest run first (its display name and unit win)."""
    figures = {}
    for run in runs:
        names = _display_names(run)
        for row in run.rows:
            params = tuple(sorted((k, json.dumps(v)) for k, v in (row.get("parameters") or {}).items()))
            key = (row.get("partition"), row.get("environ"), row["check"], params, row["metric"])
            if key not in figures:
                pattern = glob_escape(names.get(row.get("testcase"), row.get("testcase") or row["check"]))
                figures[key] = _Figure(row, pattern)
            figures[key].values[run.run_id].append(float(row["value"]))
    return figures


def reference_tuple(fig, min_tolerance, sigmas):
    """[value, lower, upper, unit] of one figure, or None when its median is not positive."""
    values = [v for repeats in fig.values.values() for v in repeats]
    middle = statistics.median(values)
    if not middle > 0:
        return None
    sigma = MAD_TO_SIGMA * statistics.median(abs(v - middle) for v in values)
    tolerance = max(min_tolerance, sigmas * sigma / middle)
    tolerance = float(f"{tolerance:.4g}")
    lower = None if fig.direction == "lower" else -min(tolerance, 1.0)
    upper = None if fig.direction == "higher" else tolerance
    unit = fig.unit
    if fig.original_unit:
        factor = metrics.to_si(1.0, fig.original_unit)[0]
        middle, unit = middle / factor, fig.original_unit
    return [float(f"{middle:.6g}"), lower, upper, unit]


def _slots(figures, notes):
    """One figure per (partition, pattern, metric): what a reference file can tell apart. Two figures
    that meet there (two environments, or a case run with other settings) keep the one with most runs."""
    slots = {}
    for fig in figures.values():
        slot = (fig.partition, fig.pattern, fig.metric)
        other = slots.get(slot)
        if other is None or len(fig.values) > len(other.values):
            slots[slot] = fig
        if other is not None:
            notes.append(f"{fig.name}: measured under two environments or settings; the reference file "
                         f"cannot tell them apart, so it holds the one with more runs")
    return slots


def calibrate(system, results_dir, output=None, min_runs=5, min_tolerance=0.05, sigmas=3.0,
              history_runs=20, partial=False):
    """Write the reference file; (its path, summary lines)."""
    runs, notes = _runs_of(system, results_dir, history_runs)
    slots = _slots(_collect(runs), notes)
    short = sorted((f for f in slots.values() if len(f.values) < min_runs), key=lambda f: f.name)
    if short and not partial:
        shown = "; ".join(f"{f.name} ({len(f.values)} run{'s' if len(f.values) != 1 else ''})" for f in short[:3])
        raise ResultsError(f"{len(short)} figure(s) of {system} have fewer than --min-runs {min_runs} recorded "
                           f"runs: {shown}{f' and {len(short) - 3} more' if len(short) > 3 else ''}; record more "
                           f"runs or pass --partial to calibrate the others")
    entries, not_positive = {}, []
    for slot, fig in sorted(slots.items()):
        if len(fig.values) < min_runs:
            continue
        ref = reference_tuple(fig, min_tolerance, sigmas)
        if ref is None:
            not_positive.append(fig.name)
        else:
            entries[slot] = ref
    if not entries:
        raise ResultsError(f"no figure of {system} could be calibrated (figures with >= {min_runs} runs and a "
                           f"positive median: none)")
    path = Path(output) if output else references.references_dir() / f"{system}.json"
    data = _existing(path)
    for (partition, pattern, metric), ref in entries.items():
        data.setdefault("partitions", {}).setdefault(partition, {}).setdefault(pattern, {})[metric] = ref
    data["_calibrated"] = {
        "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "by": "yeebench results calibrate", "runs": sorted(r.run_id for r in runs),
        "min_runs": min_runs, "min_tolerance": min_tolerance, "sigmas": sigmas, "figures": len(entries)}
    store.atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    summary = [f"{len(entries)} figure(s) of {system} from {len(runs)} run(s) "
               f"({runs[-1].run_id} .. {runs[0].run_id}): tolerance max({min_tolerance * 100:g}%, "
               f"{sigmas:g} x 1.4826 x MAD)"] + notes
    if short:
        summary.append(f"{len(short)} figure(s) with fewer than {min_runs} runs left out: "
                       + "; ".join(f.name for f in short))
    if not_positive:
        summary.append(f"{len(not_positive)} figure(s) with a median <= 0 left out (no relative tolerance): "
                       + "; ".join(not_positive))
    return path, summary


def _existing(path):
    """The reference file's current content (kept but for the calibrated entries), {} when none."""
    if not path.exists():
        return {}
    try:
        data = store.read_json(path, "reference file")
    except ResultsError as err:
        raise ResultsError(f"{path}: cannot read the reference file to update it: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("partitions", {}), dict):
        raise ResultsError(f"{path} is not a reference file (an object with \"partitions\")")
    return data
