"""Resolve a RUN_OR_DIR argument into rows: a run directory, a folder of runs
(rows pooled, so their spread includes run-to-run variation) or a baseline file."""
from pathlib import Path

from yeebench.results import store
from yeebench.results.errors import ResultsError
from yeebench.results.schema import validate_row

BASELINE_SCHEMA = "yeebench-baseline"
BASELINE_SCHEMA_VERSION = 1


class RowSource:
    """Rows from one or more runs, with a label and the provenance of each run."""

    def __init__(self, label, rows, provenances, versions=None):
        self.label = label
        self.rows = rows
        self.provenances = provenances
        # (run, suite_version or None) of every run, those without provenance included
        self.versions = versions if versions is not None else [
            (p.get("run_id") or label, p.get("suite_version")) for p in provenances]


def load_baseline_file(path):
    path = Path(path)
    doc = store.read_json(path, "baseline")
    if not isinstance(doc, dict) or doc.get("schema") != BASELINE_SCHEMA:
        raise ResultsError(f"{path} is not a yeebench baseline file (schema {BASELINE_SCHEMA!r} expected)")
    if doc.get("schema_version") != BASELINE_SCHEMA_VERSION:
        raise ResultsError(f"baseline {path}: unknown schema_version {doc.get('schema_version')!r} "
                           f"(this yeebench reads version {BASELINE_SCHEMA_VERSION})")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ResultsError(f"baseline {path} holds no rows")
    for i, row in enumerate(rows):
        validate_row(row, f"baseline {path} row {i}")
    provenances = [p for p in doc.get("provenances", []) if isinstance(p, dict)]
    source_runs = [str(r) for r in doc.get("source_runs", [])] if isinstance(doc.get("source_runs"), list) else []
    versions = [(p.get("run_id") or path.name, p.get("suite_version")) for p in provenances]
    recorded = {p.get("run_id") for p in provenances}
    versions += [(run, None) for run in source_runs if run not in recorded]   # promoted without provenance
    return RowSource(f"baseline {Path(path).name} ({', '.join(source_runs)})", rows, provenances, versions)


def load_source(arg):
    path = Path(arg)
    if not path.exists():
        raise ResultsError(f"no such run, folder or baseline file: {arg}")
    if path.is_file():
        if path.name == store.ROWS_FILE:
            path = path.parent
        else:
            return load_baseline_file(path)
    runs = [store.load_run(p) for p in store.find_runs(path)]
    if not runs:
        raise ResultsError(f"{arg} holds no recorded runs (no {store.ROWS_FILE} below it)")
    rows = [row for run in runs for row in run.rows]
    if not rows:
        raise ResultsError(f"{arg}: the recorded runs hold no rows")
    label = runs[0].label if len(runs) == 1 else f"{path} ({len(runs)} runs)"
    return RowSource(label, rows, [r.provenance for r in runs if r.provenance],
                     [(r.label, (r.provenance or {}).get("suite_version")) for r in runs])


def load_sources(args):
    """Several RUN_OR_DIR arguments pooled into one source."""
    sources = [load_source(a) for a in args]
    if len(sources) == 1:
        return sources[0]
    return RowSource(" + ".join(s.label for s in sources), [r for s in sources for r in s.rows],
                     [p for s in sources for p in s.provenances], [v for s in sources for v in s.versions])


def systems_of(source):
    return sorted({row["system"] for row in source.rows})


def suite_versions_of(source):
    return sorted({v for _, v in source.versions if v})


def unrecorded_versions(source):
    """The runs of source whose yeebench version is not recorded (no provenance, or a null version)."""
    return [run for run, version in source.versions if not version]


def check_comparable(named_sources, ignore=()):
    """Refuse runs of different systems (unless 'system' is ignored) or of different suite versions."""
    if "system" not in ignore:
        systems = {name: systems_of(src) for name, src in named_sources}
        if len({tuple(v) for v in systems.values()}) > 1:
            where = "; ".join(f"{name} is {', '.join(v)}" for name, v in systems.items())
            raise ResultsError(f"runs of different systems ({where}); compare one system's runs "
                               f"(or --ignore system to compare two machines on purpose)")
    # a run whose version is unknown cannot be shown to measure the same thing: the guard holds for it too
    unknown = [f"{name} run {run}" for name, src in named_sources for run in unrecorded_versions(src)]
    if unknown:
        raise ResultsError(f"no yeebench suite version recorded for {', '.join(unknown[:3])}"
                           f"{f' and {len(unknown) - 3} more' if len(unknown) > 3 else ''}: runs are "
                           f"compared only when both sides record the same version")
    versions = {name: suite_versions_of(src) for name, src in named_sources}
    known = {v for vs in versions.values() for v in vs}
    if len(known) > 1:
        where = "; ".join(f"{name} {', '.join(v) or 'unrecorded'}" for name, v in versions.items())
        raise ResultsError(f"runs of different yeebench suite versions ({where}): their figures may not "
                           f"measure the same thing")


def recorded_version(source, name):
    """The one yeebench version every run of source records; ResultsError when a run records none or
    the runs record several (a history is then read for that version only)."""
    unknown = unrecorded_versions(source)
    if unknown:
        raise ResultsError(f"no yeebench suite version recorded for {name} run {unknown[0]}: its figures "
                           f"are compared only with runs of the same recorded version")
    versions = suite_versions_of(source)
    if len(versions) != 1:
        raise ResultsError(f"{name} mixes yeebench suite versions {', '.join(versions)}")
    return versions[0]
