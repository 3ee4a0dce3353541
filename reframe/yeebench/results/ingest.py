"""`yeebench results ingest`: a ReFrame run report -> results/<system>/<run-id>/.

Rows come only from test cases whose sanity passed (a missed ReFrame reference
still records the figure, marked 'perf-fail'); failed cases are listed in the
provenance. Every row and the provenance are schema-validated before anything
is written, and the run directory appears atomically or not at all.
"""
import datetime
import os
import platform
import socket
from collections import defaultdict
from pathlib import Path

from yeebench import metrics, topology
from yeebench.results import host_info, output_files, pair_matrix, plausibility, report_reader, safe_paths, store
from yeebench.results.errors import NothingToRecord, ResultsError
from yeebench.results.schema import PROVENANCE_SCHEMA_VERSION, ROW_SCHEMA_VERSION

#: Memory ingest takes per byte of report at its peak (measured: 985 MiB for a 116 MB report of 27,016
#: test cases, the parsed report, its rows and the text kept for the run's copy).
PARSE_MEMORY_FACTOR = 9
#: Detail lines kept per test case: a pair matrix of about 630 nodes (a larger one is cut, and says so).
MAX_DETAILS = 200_000


def _moment(unix_time, what):
    """The UTC datetime of a report's Unix time; ResultsError for one no calendar holds (1e20, NaN, text)."""
    try:
        return datetime.datetime.fromtimestamp(float(unix_time), datetime.timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        raise ResultsError(f"{what} {unix_time!r} is not a Unix time between the years 1 and 9999") from None


def _iso(unix_time, what="time"):
    if unix_time is None:
        return None
    return _moment(unix_time, what).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id_for(report):
    """Start time plus the session uuid's first block: sortable and unique per session."""
    info = report["session_info"]
    if info.get("time_start_unix") is None:
        raise ResultsError("the report's session_info has no time_start_unix")
    stamp = _moment(info["time_start_unix"], "session_info.time_start_unix")
    return f"{stamp.strftime('%Y%m%dT%H%M%SZ')}-{safe_paths.clean_component(str(info.get('uuid', 'x')))[:8]}"


def _system_of(cases, report):
    systems = sorted({c.get("system") or "" for _, c in cases} - {""})
    if not systems:
        return safe_paths.clean_component(report["session_info"].get("hostname", "unknown"))
    return safe_paths.clean_component("+".join(systems))


def suite_version():
    """The installed yeebench's version: runs of different versions are not compared."""
    try:
        from importlib.metadata import version
        return version("yeebench")
    except Exception:  # running from a source tree that was never installed
        return None


def _unmeasured(case):
    """Why a case or part of it measured nothing, as the check said it: ReFrame 4 leaves a skip's
    reason out of fail_reason; the checks keep it (and each sweep case left out) in `observations`."""
    seen = case.get("observations") if isinstance(case.get("observations"), dict) else {}
    parts = {}
    for key, what in (("skipped_cases", "case {}"), ("not_extrapolated", "extrapolation {} ranks"),
                      ("not_measured", "figure {}")):
        if isinstance(seen.get(key), dict):
            parts.update({what.format(k): str(v) for k, v in seen[key].items()})
    reason = seen.get("skip_reason") or case.get("acceptance_reason")
    verdict = case.get("acceptance_verdict")  # an acceptance check that passed without measuring
    return {"skip_reason": None if reason is None else str(reason), "not_measured": parts,
            "acceptance_verdict": None if verdict is None else str(verdict)}


def _details(case):
    """An acceptance check's supporting lines (per node and per pair figures: AcceptanceNetwork's pair
    matrix), kept up to MAX_DETAILS; {} for a case without them."""
    lines = case.get("acceptance_details")
    if not isinstance(lines, list) or not lines:
        return {}
    kept = [line for line in lines[:MAX_DETAILS] if isinstance(line, str)]
    tolerance = pair_matrix.usable_tolerance(case.get("tolerance"))   # the rule the check judged its pairs by
    return {"details": kept, **({"details_left_out": len(lines) - MAX_DETAILS} if len(lines) > MAX_DETAILS else {}),
            **({"tolerance": tolerance} if tolerance is not None else {})}


def build_rows(report, run_id):
    """Rows (validated later) and the list of cases for the provenance."""
    rows, cases = [], []
    repeat_counter = defaultdict(int)
    fallback_time = report["session_info"].get("time_end_unix")
    for _, case in report_reader.iter_testcases(report):
        check = report_reader.check_name(case)
        result = case.get("result") or "unknown"
        cases.append({
            "testcase": case.get("unique_name") or check, "check": check, "result": result,
            "jobid": None if case.get("jobid") is None else str(case.get("jobid")),
            "nodelist": case.get("job_nodelist"), "fail_phase": case.get("fail_phase"),
            "fail_reason": case.get("fail_reason"),
            "partition": case.get("partition"), "environ": case.get("environ"),
            **_unmeasured(case), **_details(case),
        })
        if result == "pass":
            status = "pass"
        elif result == "fail" and case.get("fail_phase") == "performance":
            status = "perf-fail"
        else:
            continue
        params = report_reader.parameters(case)
        case_key = (case.get("system"), case.get("partition"), case.get("environ"), check,
                    tuple(sorted((k, str(v)) for k, v in params.items())))
        declared = case.get("perf_directions")
        timestamp = _iso(case.get("job_completion_time_unix") or fallback_time, "job_completion_time_unix")
        for metric, value, unit, reference, _ in report_reader.perf_figures(case):
            direction, source = metrics.resolve_direction(metric, unit, declared)
            si_value, si_unit = metrics.to_si(value, unit)
            if si_value < 0 and metrics.non_negative(metric, si_unit):
                raise ResultsError(f"test case {case.get('unique_name') or check}: {metric} = {value:g} {unit} "
                                   f"is negative, which this figure cannot be; refusing the report")
            key = case_key + (metric,)
            row = {
                "schema": "yeebench-row", "schema_version": ROW_SCHEMA_VERSION, "run_id": run_id,
                "timestamp": timestamp, "system": case.get("system") or "unknown",
                "partition": case.get("partition") or "", "environ": case.get("environ") or "",
                "check": check, "parameters": params, "metric": metric, "value": si_value,
                "unit": si_unit, "direction": direction, "direction_source": source,
                "repeat": repeat_counter[key], "status": status,
                "reference": reference, "testcase": case.get("unique_name") or check,
            }
            if si_unit != unit:
                row["original_unit"] = unit
            repeat_counter[key] += 1
            rows.append(row)
    return rows, cases


def _suite_checkout():
    """The checkout this yeebench runs from (its package's own location), never a path from the report:
    running git in a directory a report names runs that repository's hooks and fsmonitor command."""
    return Path(__file__).resolve().parents[3]


def _program_outputs(report):
    """{id(case): [(program, object)]} of every test case: each case's output folder read once."""
    return {id(case): list(output_files.program_outputs(case)) for _, case in report_reader.iter_testcases(report)}


def build_provenance(report, run_id, system, rows, cases, outputs=None):
    info = report["session_info"]
    outputs = _program_outputs(report) if outputs is None else outputs
    programs, observed, observations = {}, [], []
    for _, case in report_reader.iter_testcases(report):
        if isinstance(case.get("observations"), dict) and case["observations"]:
            # facts a check recorded about the machine (loggable `observations`, e.g. NUMA distances)
            observations.append({"testcase": case.get("unique_name") or "", "facts": case["observations"]})
        for program, obj in outputs[id(case)]:
            if isinstance(obj.get("build"), dict):
                programs.setdefault(program, obj["build"])
            if isinstance(obj.get("placement"), list):
                observed.append({"testcase": case.get("unique_name") or "", "program": program,
                                 "placement": obj["placement"]})
    git = {"source": "absent", "sha": None, "dirty": None}
    yee_build = programs.get("yee")
    if yee_build and yee_build.get("git_sha"):
        git = {"source": "output-files", "sha": yee_build.get("git_sha"), "dirty": yee_build.get("dirty")}
    else:
        sha, dirty = host_info.git_state(_suite_checkout())
        if sha:
            git = {"source": "ingest-host", "sha": sha, "dirty": dirty}

    software = {"source": "ingest-host", "compiler": host_info.compiler_version(),
                "mpi": host_info.mpi_version(), "ucx": host_info.ucx_version(),
                "python": platform.python_version()}
    if yee_build and yee_build.get("compiler"):
        software["compiler"] = yee_build["compiler"]
        software["compiler_source"] = "output-files"

    topo = dict(host_info.topology(), source="ingest-host")

    spack_lock = None
    repo_dir = _suite_checkout()
    # only a run that used the Spack environment's binaries (ReFrame's `spack` environment) has a lock
    used_spack = any(c.get("environ") == "spack" for _, c in report_reader.iter_testcases(report))
    for candidate in (Path.cwd() / "spack.lock", repo_dir / "spack.lock") if used_spack else ():
        if candidate.is_file():
            spack_lock = host_info.file_sha256(candidate)
            break
    digest = os.environ.get("YEEBENCH_IMAGE_DIGEST") or None
    image_source = "ingest-host" if (digest or spack_lock) else "absent"

    passed = sum(1 for c in cases if c["result"] == "pass")
    skipped = sum(1 for c in cases if c["result"] == "skip")  # a stated skip is not a failure
    return {
        "schema": "yeebench-provenance", "schema_version": PROVENANCE_SCHEMA_VERSION,
        "run_id": run_id, "system": system, "suite_version": suite_version(),
        "ingested_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ingest_host": socket.gethostname(),
        "reframe": {"source": "report", "version": info.get("version"), "cmdline": info.get("cmdline"),
                    "hostname": info.get("hostname"), "session_uuid": info.get("uuid"),
                    "time_start": _iso(info.get("time_start_unix"), "time_start_unix"),
                    "time_end": _iso(info.get("time_end_unix"), "time_end_unix"),
                    "data_version": info.get("data_version")},
        "git": git,
        "build": {"source": "output-files" if programs else "absent", "programs": programs},
        "software": software,
        "topology": topo,
        "bindings": {"source": "output-files" if observed else "absent", "observed": observed},
        "observations": {"source": "report" if observations else "absent", "cases": observations},
        "jobs": {"source": "report", "cases": cases},
        "environment_image": {"source": image_source, "container_image_digest": digest,
                              "spack_lock_sha256": spack_lock},
        "counts": {"testcases": len(cases), "passed": passed, "skipped": skipped,
                   "failed": len(cases) - passed - skipped, "rows": len(rows)},
    }


def _check_memory(report_path):
    """Refuse, on one line, a report this machine has not the memory to read (a whole site's year of
    runs in one file): better said before reading than found out by the kernel's OOM killer."""
    try:
        size = os.stat(report_path).st_size
        room = topology.available_memory_bytes()
    except (OSError, ValueError):
        return  # not a plain file (load_report says what it is), or nothing known about the memory
    if room and size * PARSE_MEMORY_FACTOR > room:
        raise ResultsError(
            f"report {report_path} is {_bytes(size)}: reading it takes about {_bytes(size * PARSE_MEMORY_FACTOR)} "
            f"of memory and {_bytes(room)} is available here; ingest it where more memory is free, or split the "
            f"run (a --report-file per partition)")


def _bytes(count):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def ingest(report_path, results_dir="results"):
    """Ingest one report file; returns the new run directory. ResultsError on any problem."""
    _check_memory(report_path)
    try:
        report, text = report_reader.load_report(report_path)
        return write_prepared(prepare(report, text, f"report {report_path}", results_dir), results_dir)
    except MemoryError:
        raise ResultsError(f"report {report_path} does not fit in the memory available here; ingest it where "
                           f"more memory is free, or split the run (a --report-file per partition)") from None


def prepare(report, text, what, results_dir, without_figures=False):
    """Everything to be written for one report, checked: (run_dir, rows, provenance, text).
    `without_figures`: a report whose cases all failed is accepted with no rows, for a page that shows
    the evidence its cases kept (an acceptance check's pair matrix); never recorded (store refuses it)."""
    cases = list(report_reader.iter_testcases(report))
    if not cases:
        raise NothingToRecord(f"{what} has no test cases; nothing to record")
    run_id = run_id_for(report)
    system = _system_of(cases, report)
    rows, case_list = build_rows(report, run_id)
    if not rows and not without_figures:
        skipped = sum(1 for c in case_list if c["result"] == "skip")
        failed = sum(1 for c in case_list if c["result"] not in ("pass", "skip"))
        raise NothingToRecord(f"{what} has no performance figures from passing test cases "
                           f"({len(case_list)} cases: {len(case_list) - skipped - failed} passed, "
                           f"{skipped} skipped, {failed} failed); nothing to record")
    outputs = _program_outputs(report)
    provenance = build_provenance(report, run_id, system, rows, case_list, outputs)
    provenance["plausibility"] = check_plausibility(report, rows, outputs)
    return Path(results_dir) / system / run_id, rows, provenance, text


def _working_sets(report, outputs):
    """{testcase: bytes} a numa-bw run touched: its three arrays, from its JSON output or --size."""
    sets = {}
    for _, case in report_reader.iter_testcases(report):
        name = case.get("unique_name") or report_reader.check_name(case)
        arrays = [obj.get("array_bytes") for program, obj in outputs[id(case)]
                  if program == "numa-bw" and isinstance(obj.get("array_bytes"), int)]
        if arrays:
            sets[name] = 3 * arrays[0]
        elif case.get("array_size") is not None and plausibility.parse_size(case["array_size"]):
            sets[name] = 3 * plausibility.parse_size(case["array_size"])
    return sets


def _link_rates(report):
    """{testcase: bits/s} of the link each inter-node case crossed (the check's link_rate_bps)."""
    return {case.get("unique_name") or report_reader.check_name(case): case["link_rate_bps"]
            for _, case in report_reader.iter_testcases(report)
            if isinstance(case.get("link_rate_bps"), (int, float)) and case["link_rate_bps"] > 0}


def check_plausibility(report, rows, outputs=None):
    """The run's plausibility warnings (flags, not failures), with what they were judged against."""
    llc = host_info.llc_bytes()
    outputs = _program_outputs(report) if outputs is None else outputs
    warnings = plausibility.evaluate(rows, _working_sets(report, outputs), llc, _link_rates(report))
    return {"source": "ingest-host", "llc_bytes": llc, "warnings": warnings}


def write_prepared(prepared, results_dir):
    run_dir, rows, provenance, text = prepared
    for system_dir in Path(results_dir).glob("*/"):
        store.clean_stale_temporaries(system_dir)   # left by an ingest that was killed
    return store.write_run(run_dir, rows, provenance, text)


def ingest_reframe_db(db_path, results_dir="results", session_ids=None):
    """Record the sessions of ReFrame's results database not recorded yet (or the named ones).

    Every session is read and checked before anything is written. Returns (new run dirs, already
    recorded run dirs, sessions without figures)."""
    from yeebench.results import reframe_db
    prepared, known, empty = [], [], []
    for uuid, text in reframe_db.sessions(db_path, session_ids):
        what = f"session {uuid} of {db_path}"
        report = report_reader.parse_report(text, what)
        try:
            item = prepare(report, text, what, results_dir)
        except NothingToRecord:
            empty.append(uuid)      # e.g. a --list or a session of only failures
            continue
        (known if item[0].exists() else prepared).append(item)
    return [write_prepared(item, results_dir) for item in prepared], [k[0] for k in known], empty
