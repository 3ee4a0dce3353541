"""A run at the size of a machine: its figures pooled over partitions, environments and nodes for the
charts and the summary, each row's node, and the short lists the report prints instead of one line
per test case.

`reframe --distribute` runs a check once per node of each partition and names the variant with the
`.part` and `.nid` parameters; ingest drops `.nid` (the node is the case's node list, in the
provenance) and keeps `.part`, which only repeats the row's own system:partition. Pooled, a check's
rows from 16 partitions and 100 nodes read as one experiment (its charts, one line of the summary,
one row of its table per figure); the complete table, partition by partition, is the CSV and JSON
beside the report.
"""
from collections import OrderedDict

#: The parameter `reframe --distribute` adds (`.part=<system>:<partition>`), as ingest names it.
DISTRIBUTED_PARTITION = "part"


def pooled_parameters(row):
    """The row's parameters without the --distribute partition marker (it repeats the partition)."""
    params = row["parameters"]
    where = params.get(DISTRIBUTED_PARTITION)
    if where is not None and str(where) == f"{row['system']}:{row['partition']}":
        params = dict(params)
        del params[DISTRIBUTED_PARTITION]
    return params


def pooled_rows(rows):
    """The rows with pooled parameters (the same row objects where nothing is dropped)."""
    out = []
    for row in rows:
        params = pooled_parameters(row)
        out.append(row if params is row["parameters"] else dict(row, parameters=params))
    return out


def nodelists(provenances):
    """{testcase: its node list} of the runs' test cases (the provenance's jobs)."""
    out = {}
    for prov in provenances:
        for case in (prov.get("jobs") or {}).get("cases", []):
            if isinstance(case, dict) and isinstance(case.get("nodelist"), list):
                out[case.get("testcase")] = case["nodelist"]
    return out


def node_of(rows_nodelists):
    """row -> the one node its test case ran on, or None (several nodes, or not recorded)."""
    single = {case: str(names[0]) for case, names in rows_nodelists.items() if len(names) == 1}

    def node(row):
        return single.get(row.get("testcase"))
    return node


def abbreviate(names, shown=6):
    """'a, b, c and 97 more': a list a reader can take in."""
    names = list(names)
    if len(names) <= shown:
        return ", ".join(str(n) for n in names)
    return ", ".join(str(n) for n in names[:shown]) + f" and {len(names) - shown} more"


def grouped(items, key, shown=6, name=lambda item: None):
    """[(first item, count, abbreviated names)] of items that share key(item), in first-seen order."""
    groups = OrderedDict()
    for item in items:
        groups.setdefault(key(item), []).append(item)
    out = []
    for members in groups.values():
        names = list(OrderedDict.fromkeys(n for n in (name(m) for m in members) if n))
        out.append((members[0], len(members), abbreviate(names, shown)))
    return out
