"""Helpers for the results tests: recorded fixture reports and synthetic runs built from them."""
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from yeebench.results import store
from yeebench.results.ingest import ingest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPORT_A = FIXTURES / "reports" / "fixture_run_a.json"
REPORT_B = FIXTURES / "reports" / "fixture_run_b.json"
YEEBENCH = [sys.executable, "-m", "yeebench"]


def run_cli(*args, cwd=None):
    """Run the real CLI in a subprocess (by default in an empty folder, so that no `results/` history
    of the checkout is used or written); returns CompletedProcess (text)."""
    if cwd is None:
        with tempfile.TemporaryDirectory(prefix="yeebench-cli-") as empty:
            return run_cli(*args, cwd=empty)
    return subprocess.run(YEEBENCH + [str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def ingested(tmp_path, report=REPORT_A):
    return ingest(report, tmp_path / "results")


def synthetic_run(tmp_path, name, values_by_metric, system="synth", check="SynthCheck", params=None,
                  directions=None, units=None, provenance_from=None, hardware=None):
    """Write a run directory whose rows hold the given repeats per metric; returns its path.
    hardware: the facts the check recorded (observations['hardware']) for its one test case."""
    rows = []
    for metric, values in values_by_metric.items():
        for repeat, value in enumerate(values):
            rows.append({
                "schema": "yeebench-row", "schema_version": 1, "run_id": name,
                "timestamp": "2026-01-01T00:00:00Z", "system": system, "partition": "default",
                "environ": "builtin", "check": check, "parameters": dict(params or {"threads": 1}),
                "metric": metric, "value": float(value), "unit": (units or {}).get(metric, "s"),
                "direction": (directions or {}).get(metric, "lower"), "direction_source": "declared",
                "repeat": repeat, "status": "pass", **({"testcase": check} if hardware else {}),
            })
    prov = copy.deepcopy(provenance_from) if provenance_from else minimal_provenance(name, system, len(rows))
    prov["run_id"] = name
    if hardware:
        prov["observations"] = {"source": "report", "cases": [{"testcase": check, "facts": {"hardware": hardware}}]}
    return store.write_run(tmp_path / "results" / system / name, rows, prov, json.dumps({"synthetic": True}))


def minimal_provenance(run_id, system, nrows):
    absent = {"source": "absent"}
    return {
        "schema": "yeebench-provenance", "schema_version": 1, "run_id": run_id, "system": system,
        "suite_version": "0.0.test", "ingested_at": "2026-01-01T00:00:00Z", "ingest_host": "test",
        "reframe": {"source": "report", "version": "4.10.4"}, "git": dict(absent, sha=None, dirty=None),
        "build": dict(absent, programs={}), "software": dict(absent), "topology": dict(absent),
        "bindings": dict(absent, observed=[]), "jobs": {"source": "report", "cases": []},
        "environment_image": dict(absent), "counts": {"testcases": 0, "passed": 0, "skipped": 0, "failed": 0, "rows": nrows},
    }


def import_scale_report():
    """results/scale_report.py, the machine-size report generator of the checkout (skips in an installed
    package, which does not ship results/)."""
    import pytest
    folder = Path(__file__).resolve().parents[4] / "results"
    if not (folder / "scale_report.py").is_file():
        pytest.skip("results/scale_report.py is not in this tree (an installed package)")
    sys.path.insert(0, str(folder))
    try:
        import scale_report
    finally:
        sys.path.remove(str(folder))
    return scale_report
