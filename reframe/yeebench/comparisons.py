"""The ratio each of the papers' comparisons reports, as pure functions.

A comparison runs several cases like for like (same grid, steps, ranks x threads, nodes) and
states its finding as one case over another: rank per socket over rank per core (paper 000,
Fig. 6), a NUMA policy over no policy (Fig. 7), HDF5 over binary or ASCII time (paper 001,
Fig. 5), full over half packing time (paper 002, Fig. 3), a collective implementation over
coll/tuned (paper 004). Each ratio is recorded as a figure with a direction, so that a reader
sees the paper's finding (or its absence) without dividing two rows by hand. (Node scaling's
efficiencies are scaling arithmetic: yeebench.scaling.)

Rates (Mcells/s) give speed ratios: > 1 means the case is faster than the baseline, and
higher is better. Times give time ratios: < 1 means the case is faster, lower is better.
"""
import math

from yeebench.metrics import HIGHER, LOWER


class ComparisonError(ValueError):
    """A ratio that cannot be formed (missing or non-positive baseline)."""


def _positive(value, what):
    if value is None or not math.isfinite(value) or value <= 0:
        raise ComparisonError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def speed_ratio(rate, baseline_rate):
    """rate / baseline_rate for rates such as Mcells/s: (value, direction HIGHER)."""
    return _positive(rate, "the case's rate") / _positive(baseline_rate, "the baseline's rate"), HIGHER


def time_ratio(seconds, baseline_seconds):
    """seconds / baseline_seconds: (value, direction LOWER); < 1 means the case is faster."""
    return _positive(seconds, "the case's time") / _positive(baseline_seconds, "the baseline's time"), LOWER


def ratio_foms(values, baseline, kind, prefix="over_"):
    """[(name, value, 'x', direction)] of every case over `baseline` in {case: value}.

    kind: 'rate' or 'time'. The baseline itself is left out (it would be 1 by construction).
    """
    if kind not in ("rate", "time"):
        raise ComparisonError(f"kind must be 'rate' or 'time', not {kind!r}")
    if baseline not in values:
        raise ComparisonError(f"the baseline case {baseline!r} was not measured (cases: {', '.join(values)})")
    ratio = speed_ratio if kind == "rate" else time_ratio
    out = []
    for case, value in values.items():
        if case == baseline:
            continue
        r, direction = ratio(value, values[baseline])
        out.append((f"{safe_name(case)}_{prefix}{safe_name(baseline)}", r, "x", direction))
    return out


def safe_name(case):
    """A FOM-name-safe spelling of a case: 'per-socket' -> 'per_socket', 'tuned:ring' -> 'tuned_ring'."""
    return "".join(c if c.isalnum() else "_" for c in str(case)).strip("_")


#: What each of paper 000's comparisons needs to be able to differ at all (per node, or in all).
NEEDS = {
    "binding": ("sockets_per_node", 2, "one rank per socket and one rank per node are the same run"),
    "numa": ("numa_nodes_per_node", 2, "a memory policy has no other NUMA node to place memory on"),
    "nodes": ("nodes", 2, "a node count has nothing to scale against"),
}
#: How NEEDS' facts read in a reason.
FACT_WORDS = {"sockets_per_node": "sockets per node", "numa_nodes_per_node": "NUMA nodes per node", "nodes": "nodes"}


def hardware(topology, nodes):
    """The facts NEEDS reads: {sockets_per_node, numa_nodes_per_node, nodes}."""
    return {"sockets_per_node": topology.num_sockets, "numa_nodes_per_node": topology.num_numa_nodes,
            "nodes": nodes}


def cannot_differ(comparison, facts):
    """Why `comparison` ('binding', 'numa', 'nodes') cannot differ with these hardware facts, or None."""
    key, least, why = NEEDS[comparison]
    have = facts.get(key)
    if have is not None and have >= least:
        return None
    return f"NOT MEASURED: needs {least} {FACT_WORDS[key]} or more, this partition has {have}: {why}"


def not_measured(observations, figures, reason):
    """Record figures a check does not emit, each with the reason (`observations['not_measured']`,
    kept by results ingest and listed by the report beside the skipped cases)."""
    observations.setdefault("not_measured", {}).update({name: reason for name in figures})
