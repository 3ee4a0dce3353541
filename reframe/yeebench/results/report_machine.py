"""The report's view of the whole machine: for each experiment measured on several nodes, its key
figure (the summary's) as a distribution per partition with the outlier nodes named; for each
all-pairs network matrix, a node x node heatmap per partition.

Figures measured per pair are also drawn per node: a node's median over its pairs, as the
acceptance check judges it.
"""
from pathlib import Path

from yeebench import outliers
from yeebench.results import machine, pair_matrix, quick_stats
from yeebench.results.figures import common, nodes


def node_points(rows, node_of):
    """[(partition, environ, node, median of the node's repeats)] of rows measured one node each."""
    per_node = {}
    for row in rows:
        node = node_of(row)
        if node is not None:
            per_node.setdefault((row["partition"], row["environ"], node), []).append(row["value"])
    return [(p, e, n, quick_stats.median(v)) for (p, e, n), v in per_node.items()]


def _pair_points(matrix):
    try:
        per_node = outliers.node_figures(matrix.latency)
    except ValueError:
        return []
    return [(matrix.partition or matrix.testcase, "", node, value) for node, value in per_node.items()]


def figures(lines, matrices, node_of, out_dir, several_runs=False):
    """(items [{name, path, caption}], lines for what was not drawn) of the machine's spread."""
    out_dir = Path(out_dir)
    items, notes = [], []
    for index, line in enumerate(lines):
        points = node_points(line.get("rows") or [], node_of)
        if len({n for _, _, n, _ in points}) < 2:
            continue  # measured on one node (or not per node): the experiment's own chart says it all
        label = f" [{line['run']}]" if several_runs else ""
        path, caption, _ = nodes.distribution(line["check"] + label, line["metric"], line.get("unit"),
                                              line.get("direction"), points,
                                              out_dir / f"nodes_{index:03d}_{common.safe(line['check'])}.png",
                                              case=line.get("case") or "")
        items.append({"name": f"{line['check']}{label}: {line['metric']} per node", "path": path, "caption": caption})
    by_check = {}
    for matrix in matrices:
        by_check.setdefault(matrix.check, []).append(matrix)
    for index, (check, found) in enumerate(by_check.items()):
        path, caption, lines_out = nodes.heatmaps(check, found, out_dir / f"pairs_{index:03d}_{common.safe(check)}.png")
        notes += lines_out
        if path is not None:
            items.append({"name": f"{check}: every node pair", "path": path, "caption": caption, "wide": True})
        points = [p for m in found for p in _pair_points(m)]
        if len({n for _, _, n, _ in points}) >= 2:
            rules = {m.tolerance for m in found}   # the check's own rule where every partition ran with one
            path, caption, _ = nodes.distribution(check, "latency, median over the node's pairs", "us", "lower",
                                                  points, out_dir / f"pairs_{index:03d}_{common.safe(check)}_nodes.png",
                                                  tolerance=rules.pop() if len(rules) == 1 else nodes.TOLERANCE)
            items.append({"name": f"{check}: latency per node", "path": path, "caption": caption})
    return items, notes


def pair_matrices(runs):
    """Every pair matrix the runs recorded, named by the partition of its test case."""
    found = []
    for run in runs:
        partition_of_case = {r.get("testcase"): r["partition"] for r in run.rows}
        found += pair_matrix.matrices(run.provenances, lambda case, known=partition_of_case:
                                      case.get("partition") or known.get(case.get("testcase")))
    return found


def node_lookup(runs):
    """row -> its one node (machine.node_of over every run's provenance)."""
    return machine.node_of(machine.nodelists([p for run in runs for p in run.provenances]))
