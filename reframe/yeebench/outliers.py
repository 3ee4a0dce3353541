"""Name the node whose network figures are out of line with its peers.

Input: one figure per node pair (latency or bandwidth).  Each node's figure is
the median over the pairs it takes part in; a node is an outlier when its
figure is worse than the median of all nodes' figures by more than the
tolerance (relative).  Medians keep one bad node from hiding itself by
dragging the reference with it, which a mean would allow.
"""
import statistics

MIN_NODES = 3  # with two nodes a bad link cannot be blamed on either end


def node_figures(pairs):
    """{node: median of the figures of the pairs it belongs to}."""
    per_node = {}
    for (a, b), value in pairs.items():
        if a == b:
            raise ValueError(f"pair ({a}, {b}) joins a node to itself")
        if value is None or value != value or value <= 0:
            raise ValueError(f"pair ({a}, {b}) has no positive figure: {value!r}")
        per_node.setdefault(a, []).append(value)
        per_node.setdefault(b, []).append(value)
    return {node: statistics.median(values) for node, values in per_node.items()}


def find_outliers(pairs, direction, tolerance=0.5):
    """Outlier nodes of a pair matrix.

    direction: "lower" (latency: larger is worse) or "higher" (bandwidth).
    Returns (outliers, note): outliers is a list of dicts {node, value, median,
    deviation}; note explains when detection is not possible.
    """
    if direction not in ("lower", "higher"):
        raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive, got {tolerance!r}")
    figures = node_figures(pairs)
    if len(figures) < MIN_NODES:
        return [], f"outlier detection needs >= {MIN_NODES} nodes, {len(figures)} took part"
    reference = statistics.median(figures.values())
    outliers = []
    for node, value in sorted(figures.items()):
        # deviation > 0 means worse than the reference, in either direction
        deviation = (value / reference - 1) if direction == "lower" else (reference / value - 1)
        if deviation > tolerance:
            outliers.append({"node": node, "value": value, "median": reference,
                             "deviation": deviation})
    return outliers, None


def describe(outliers, metric, unit):
    """One line per outlier node, for the check's output."""
    return [f"{o['node']}: {metric} {o['value']:.3g} {unit} vs median {o['median']:.3g} {unit} "
            f"({100 * o['deviation']:.0f}% worse)" for o in outliers]
