"""Operator waivers: checks a site accepts although they measured nothing.

A NOT MEASURED verdict keeps the sign-off page from saying ACCEPTABLE unless
the operator waives it in a file given to `yeebench acceptance report
--waivers FILE`; the page then lists every waiver with who gave it and why.
A waiver never turns a FAIL into anything else.
"""
import fnmatch

from yeebench import safe_io

WAIVER_FORMAT = """\
YAML file:
  waived_by: J. Admin <admin@example.org>     # who signs for the waivers (required)
  waivers:
    - check: "AcceptanceGPU*"                   # check name as on the page; shell wildcards allowed
      reason: "this system has no GPUs"         # why it need not be measured (required)"""


class WaiverError(ValueError):
    """The waiver file cannot be used; the message names the problem."""


def load(path):
    """{'path', 'waived_by', 'waivers': [{'check', 'reason', 'by'}]} from a waiver file."""
    try:
        doc = safe_io.read_yaml(path, "waiver file", safe_io.MIB)
    except safe_io.FileRefused as err:
        raise WaiverError(str(err)) from None
    if not isinstance(doc, dict):
        raise WaiverError(f"waiver file {path}: expected a mapping with waived_by and waivers")
    by = doc.get("waived_by")
    if not isinstance(by, str) or not by.strip():
        raise WaiverError(f"waiver file {path}: waived_by (who signs for the waivers) is missing")
    entries = doc.get("waivers")
    if not isinstance(entries, list) or not entries:
        raise WaiverError(f"waiver file {path}: waivers must be a non-empty list")
    out = []
    for i, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise WaiverError(f"waiver file {path}: waiver {i} is not a mapping with check and reason")
        check, reason = entry.get("check"), entry.get("reason")
        if not isinstance(check, str) or not check.strip():
            raise WaiverError(f"waiver file {path}: waiver {i} has no check")
        if not isinstance(reason, str) or not reason.strip():
            raise WaiverError(f"waiver file {path}: waiver {i} ({check}) has no reason")
        out.append({"check": check.strip(), "reason": reason.strip(), "by": by.strip()})
    return {"path": path, "waived_by": by.strip(), "waivers": out}


def _matches(pattern, case):
    return any(fnmatch.fnmatchcase(name, pattern) for name in (case["name"], case["check"]))


def apply(summary, waivers):
    """Mark the NOT MEASURED cases a waiver matches; note unused waivers and refused ones (FAIL)."""
    notes = []
    for waiver in waivers["waivers"]:
        used = False
        for case in summary["cases"]:
            if not _matches(waiver["check"], case):
                continue
            if case["verdict"] == "NOT MEASURED":
                case["waiver"] = waiver
                used = True
            elif case["verdict"] == "FAIL":
                notes.append(f"waiver {waiver['check']!r} does not apply to {case['name']}: "
                             "a FAIL cannot be waived")
                used = True
        if not used:
            notes.append(f"waiver {waiver['check']!r} matches no check that was not measured")
    summary["waivers"] = waivers
    summary["waiver_notes"] = notes
    return summary
