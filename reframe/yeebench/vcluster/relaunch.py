"""Cases of a smoke run whose job failed the way an oversubscribed host fails Open MPI's TCP start-up.

Under srun's direct launch, Open MPI 4.1's TCP transport connects every pair of ranks at start-up; on
virtual nodes sharing a few cores a peer can miss that window, the connecting ranks print "Open MPI
failed to TCP connect to a peer MPI process" and one may crash. That says the host was too busy at
that moment, nothing about the suite, so the smoke run launches such a case once more (and only such
a case: any other failure stands). Both outcomes stay in the outputs: the first report and the
relaunch's.
"""
import json
import os
from typing import Dict, List, Optional, Tuple

#: Open MPI's help text when a rank's TCP connection to a peer fails (btl/tcp, "client connect fail").
TCP_CONNECT_FAILED = "Open MPI failed to TCP connect to a peer MPI process"
#: The job's error output in a failed case's stage directory (ReFrame keeps the stage of a failure), when
#: the report names none.
JOB_ERR = "rfm_job.err"
#: Read at most this much of a job's error output (the message comes within the first lines of a failure).
READ_LIMIT = 1 << 20


def _cases(report_path: str) -> List[dict]:
    with open(report_path) as f:
        report = json.load(f)
    runs = report.get("runs") if isinstance(report, dict) else None
    if not isinstance(runs, list) or not runs or not isinstance(runs[-1], dict):
        return []
    return [c for c in runs[-1].get("testcases") or [] if isinstance(c, dict)]


def selection(case: dict) -> str:
    """ReFrame's -n selection of exactly this case: its display name without the spaces."""
    return str(case.get("display_name") or case.get("name") or "").replace(" ", "")


def _hit_tcp_start_up(case: dict, root: Optional[str]) -> bool:
    stagedir, name = case.get("stagedir"), case.get("job_stderr")
    if not isinstance(stagedir, str) or not stagedir:
        return False
    if root is not None:   # only the stage directories of this run's own output folder are read
        real, top = os.path.realpath(stagedir), os.path.realpath(root)
        if os.path.commonpath([real, top]) != top:
            return False
    if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
        name = JOB_ERR
    path = os.path.join(stagedir, name)
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, errors="replace") as f:
            return TCP_CONNECT_FAILED in f.read(READ_LIMIT)
    except OSError:
        return False


def tcp_start_up_failures(report_path: str, root: Optional[str] = None) -> Dict[str, List[str]]:
    """{"system:partition": [selections]} of the failed cases whose job output shows Open MPI's TCP
    connection failure; {} when there is none or the report cannot be read. `root`: read job output only
    from stage directories under it."""
    found: Dict[str, List[str]] = {}
    for case in _safe_cases(report_path):
        if case.get("result") != "fail" or not _hit_tcp_start_up(case, root):
            continue
        where = f"{case.get('system', '')}:{case.get('partition', '')}"
        found.setdefault(where, []).append(selection(case))
    return found


def failed_cases(report_path: str) -> List[Tuple[str, str]]:
    """(selection, partition) of every failed case of a report."""
    return [(selection(c), str(c.get("partition", ""))) for c in _safe_cases(report_path) if c.get("result") == "fail"]


def cleared(first_report: str, relaunch_reports: List[str]) -> bool:
    """Every failed case of the first report passed when launched again."""
    passed = {(selection(c), str(c.get("partition", ""))) for path in relaunch_reports
              for c in _safe_cases(path) if c.get("result") == "pass"}
    failed = failed_cases(first_report)
    return bool(failed) and all(case in passed for case in failed)


def _safe_cases(path: str) -> List[dict]:
    """The report's test cases, [] when it cannot be read (a missing or broken report relaunches nothing)."""
    try:
        return _cases(path)
    except (OSError, ValueError):
        return []
