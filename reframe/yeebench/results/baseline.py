"""`yeebench results baseline`: promote one or more runs to results/baselines/<system>.json."""
import datetime
import json
from pathlib import Path

from yeebench.results import safe_paths, sources, store
from yeebench.results.errors import ResultsError


def promote(run_args, baselines_dir, system=None):
    """Write the baseline file atomically; returns (path, previous source runs or None)."""
    runs = []
    for arg in run_args:
        found = store.find_runs(arg) if Path(arg).is_dir() else []
        if not found:
            raise ResultsError(f"{arg} is not a recorded run directory (or a folder of runs)")
        runs.extend(store.load_run(p) for p in found)
    systems = sorted({row["system"] for run in runs for row in run.rows})
    if system is None:
        if len(systems) != 1:
            raise ResultsError(f"runs cover systems {systems}; name the baseline with --system")
        system = systems[0]
    rows = [row for run in runs for row in run.rows]
    if not rows:
        raise ResultsError("the runs hold no rows; nothing to promote")
    path = safe_paths.child(baselines_dir, system, "system name", suffix=".json")
    previous = None
    if path.exists():
        try:
            previous = sources.load_baseline_file(path)
        except ResultsError:
            previous = None  # a broken baseline is simply replaced
    doc = {
        "schema": sources.BASELINE_SCHEMA, "schema_version": sources.BASELINE_SCHEMA_VERSION,
        "system": system,
        "promoted_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source_runs": [run.label for run in runs],
        "provenances": [run.provenance for run in runs if run.provenance],
        "rows": rows,
    }
    store.atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path, (previous.label if previous else None)
