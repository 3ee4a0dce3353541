"""What the smoke run's multi-node comparisons must have measured on a cluster of N nodes.

The link-rate and locality properties (verify.py) hold for any node count; these say that the papers'
node axes really reached every count: FdtdNodeScaling's efficiency against paper 000's baseline of
4 nodes (measured from 5 nodes up, else against 1 node), OsuCollectiveNodeCurve's ratio to coll/tuned
on each count of its curve (1, 2, 4 ... and N, so 3, 5, 6 ... are counts that are not a power of two),
FdtdBindingSweep's placement ratios on the same counts. A case may skip where its program or CPU binding
is missing (its reason is printed); a case that ran must hold every figure of its node curve. No value
is judged here: the figures exist or they do not, whatever the noise made them.
"""
import json
from typing import Dict, List, Tuple, Union

PAPER_BASELINE_NODES = 4


def node_counts(nodes: int) -> List[int]:
    """1, 2, 4 ... below `nodes`, and `nodes`: the counts the checks plan (yeebench.sweeps, imported here
    only: it loads ReFrame, which the cluster's other commands do not need)."""
    from yeebench.sweeps import node_counts as planned
    return planned(nodes)


def expected_figures(nodes: int) -> Dict[str, List[str]]:
    """{check: figures one passing case must record} on a partition of `nodes` nodes."""
    counts = node_counts(nodes)
    base = PAPER_BASELINE_NODES if nodes > PAPER_BASELINE_NODES else 1
    expected = {"OsuCollectiveNodeCurve": [f"over_tuned_{n}_nodes" for n in counts] + ["over_tuned"],
                "FdtdBindingSweep": [f"per_node_over_per_core_{n}_nodes" for n in counts]}
    if nodes >= 2:
        expected["FdtdNodeScaling"] = [f"efficiency_vs_{base}_nodes", f"efficiency_{nodes}_nodes"]
    return expected


def _cases(report_path: str) -> List[dict]:
    with open(report_path) as f:
        report = json.load(f)
    return [case for run in report.get("runs", [])[-1:] for case in run.get("testcases", [])]


def check(report_paths: Union[str, List[str]], nodes: int) -> Tuple[bool, List[str]]:
    """(ok, lines): one line per check and partition. Several reports (a run, then cases of it launched
    again): a case of a later report stands for the same case of an earlier one."""
    if nodes < 2:
        return True, [f"skip node curves: {nodes} node has none"]
    latest = {}
    for report_path in [report_paths] if isinstance(report_paths, str) else report_paths:
        try:
            for c in _cases(report_path):
                if isinstance(c, dict):
                    latest[(str(c.get("name", "")), str(c.get("partition", "")))] = c
        except (OSError, ValueError, TypeError, AttributeError) as err:
            return False, [f"FAIL cannot read {report_path}: {err}"]
    cases = list(latest.values())
    ok, lines = True, []
    for check_name, figures in expected_figures(nodes).items():
        mine = [c for c in cases if isinstance(c, dict) and str(c.get("name", "")).split(" ")[0] == check_name]
        if not mine:
            ok = False
            lines.append(f"FAIL {check_name}: no case in the report")
            continue
        for case in mine:
            where = f"{check_name}@{case.get('partition', '?')}"
            result = case.get("result")
            if result == "skip":
                seen = case.get("observations") if isinstance(case.get("observations"), dict) else {}
                lines.append(f"skip {where}: {seen.get('skip_reason') or case.get('fail_reason') or 'no reason given'}")
                continue
            have = {key.rsplit(":", 1)[-1] for key, value in (case.get("perfvalues") or {}).items()
                    if value and value[0] is not None}
            missing = [name for name in figures if name not in have]
            good = result == "pass" and not missing
            ok = ok and good
            if good:
                lines.append(f"ok   {where}: {', '.join(figures)} on {nodes} nodes")
            else:
                lines.append(f"FAIL {where}: {result}; " + (f"missing {', '.join(missing)}" if missing
                                                             else str(case.get("fail_reason") or "")))
    return ok, lines
