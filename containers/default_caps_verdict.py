"""Verdict on the ReFrame report of `make run` in the default-capability container (containers/default-caps-run.sh).

Prints one line per case (passed, or skipped with its reason) and each single-copy decision with its
reason; exits 1 when a case failed, a skip gives no reason, a case that probes single-copy decided nothing
(or recorded no decision), or nothing ran.
"""
import json
import sys


def probes_single_copy(name):
    """Whether the case is one that decides single-copy in its job (reframe/README.md)."""
    intra_pair = "%locality=intra" in name and any(f"%transport={t}" in name for t in ("ob1-vader", "ucx"))
    return intra_pair or name.startswith("OsuCollective")


def verdict(report):
    lines, problems = [], []
    cases = [c for run in report.get("runs", []) for c in run.get("testcases", [])]
    for case in cases:
        name = case.get("display_name") or case.get("name") or "?"
        observed = case.get("observations") or {}
        result = case.get("result")
        if result == "pass":
            lines.append(f"passed  {name}")
        elif result == "skip":
            reason = (observed.get("skip_reason") or case.get("fail_reason") or "").strip()
            lines.append(f"skipped {name}: {reason or 'NO REASON'}")
            if not reason:
                problems.append(f"{name} skipped without a reason")
        else:
            problems.append(f"{name}: {result}: {case.get('fail_reason')}")
        decided = observed.get("single_copy")
        if result == "pass" and decided is None and probes_single_copy(name):
            problems.append(f"{name} ran without a single-copy decision")
        if isinstance(decided, dict):
            lines.append(f"single-copy {decided.get('mechanism')} for {name} ({decided.get('reason')})")
            if decided.get("mechanism") not in ("cma", "none"):
                problems.append(f"{name}: single-copy undecided")
    if not any(c.get("result") == "pass" for c in cases):
        problems.append("no case passed")
    return lines, problems


def main(argv):
    if len(argv) != 2:
        print("usage: default_caps_verdict.py REPORT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as fh:
            report = json.load(fh)
    except (OSError, ValueError) as err:
        print(f"default-caps: error: cannot read the ReFrame report {argv[1]}: {err}", file=sys.stderr)
        return 1
    lines, problems = verdict(report)
    for line in lines:
        print(f"default-caps: {line}")
    for problem in problems:
        print(f"default-caps: error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
