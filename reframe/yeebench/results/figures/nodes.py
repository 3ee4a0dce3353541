"""A machine's spread: an experiment's figure measured on every node, as a distribution per partition
with the outlier nodes named; an all-pairs network matrix as a node x node heatmap per partition with
the outlier rows and columns named and the pairs not measured marked as such.

Outlier: as the acceptance checks judge a node (yeebench.outliers), worse than the
median node of its partition by more than TOLERANCE; with fewer than MIN_NODES nodes in a partition
nothing is called an outlier. Names come from the run (a node list is data from outside): drawn as
plain text, never parsed as mathtext.
"""
import math
from collections import OrderedDict

import numpy as np

from yeebench.outliers import MIN_NODES
from yeebench.results import pair_matrix, quick_stats
from yeebench.results.figures import common

TOLERANCE = pair_matrix.TOLERANCE
NAMED_PER_PARTITION = 4       # outliers written on the chart; every one is in the caption
MAX_PARTITIONS_DRAWN = 48     # beyond this the boxes are too thin to read: the worst ones are drawn
MAX_HEATMAP_NODES = 400       # a heatmap of more nodes than pixels per panel shows nothing
MAX_HEATMAP_PANELS = 16
ALL_LABELS_UP_TO = 24         # a smaller matrix names every row and column


def deviation(value, reference, direction):
    """How much worse than the reference, as a fraction (> 0: worse); None without a direction."""
    if direction == "lower":
        return value / reference - 1 if reference > 0 else None
    if direction == "higher":
        return reference / value - 1 if value > 0 else None
    return None


def outlier_nodes(points, direction, tolerance=TOLERANCE):
    """{partition: [(node, value, median, deviation)]}: nodes worse than their partition's median node."""
    by_part = OrderedDict()
    for part, _, node, value in points:
        by_part.setdefault(part, []).append((node, value))
    found = OrderedDict()
    for part, members in by_part.items():
        if len(members) < MIN_NODES:
            continue
        median = quick_stats.median([v for _, v in members])
        worse = [(n, v, median, d) for n, v in members
                 if (d := deviation(v, median, direction)) is not None and d > tolerance]
        if worse:
            found[part] = sorted(worse, key=lambda item: -item[3])
    return found


def _x_labels(ax, names, rotate):
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=7, rotation=90 if rotate else 0, parse_math=False)


def distribution(check, what, unit, direction, points, path, case="", tolerance=TOLERANCE):
    """points: [(partition, environ, node, value)] of the figure `what` (at `case`, the parameters the
    summary chose) -> (path, caption, outliers); `tolerance`: the outlier rule's (a check's own)."""
    found = outlier_nodes(points, direction, tolerance)
    partitions = list(OrderedDict.fromkeys(p for p, _, _, _ in points))
    left_out = []
    if len(partitions) > MAX_PARTITIONS_DRAWN:  # the partitions with outliers first, then in order
        keep = list(found)[:MAX_PARTITIONS_DRAWN]
        keep += [p for p in partitions if p not in keep][:MAX_PARTITIONS_DRAWN - len(keep)]
        left_out = [p for p in partitions if p not in keep]
        partitions = [p for p in partitions if p in keep]
    environs = list(OrderedDict.fromkeys(e for _, e, _, _ in points))
    fig, ax = common.new(common.WIDE if len(partitions) > 8 else common.SIZE)
    column = {p: i for i, p in enumerate(partitions)}
    values = [[v for p, _, _, v in points if p == part] for part in partitions]
    ax.boxplot(values, positions=range(len(partitions)), widths=0.6, showfliers=False,
               medianprops={"color": "black"})
    for index, environ in enumerate(environs):
        mine = [(column[p], v) for p, e, _, v in points if e == environ and p in column]
        # a node's point a little aside from the box's centre, by its rank: a column of 100 stays readable
        xs = [x + 0.25 * ((rank * 0.618) % 1 - 0.5) for rank, (x, _) in enumerate(mine)]
        ax.scatter(xs, [v for _, v in mine], s=9, color=f"C{index % 10}",
                   label=f"environment {environ}" if len(environs) > 1 else None,
                   zorder=3, alpha=0.8)
    for part, worse in found.items():
        if part not in column:
            continue
        right = column[part] > (len(partitions) - 1) / 2   # the name on the side with room for it
        for node, value, _, dev in worse[:NAMED_PER_PARTITION]:
            ax.annotate(f"{node} ({dev:+.0%})", (column[part], value), xytext=(-6 if right else 6, 0),
                        textcoords="offset points", fontsize=7, color="firebrick", parse_math=False,
                        va="center", ha="right" if right else "left")
    _x_labels(ax, partitions, len(partitions) > 8)
    ax.set_xlabel("partition (one point per node; box: quartiles, whiskers: 1.5 IQR)")
    ax.set_ylabel(f"{what} [{unit or '-'}]", parse_math=False)
    nodes = len({n for _, _, n, _ in points})
    title = f"{check}: {what}{f' ({case})' if case else ''} on {nodes} nodes of {len(column) + len(left_out)} partition(s)"
    width = fig.get_size_inches()[0]
    longest = max((len(str(p)) for p in partitions), default=4)
    bottom = min(0.55, 0.14 + (0.012 * longest if len(partitions) > 8 else 0.0))  # rotated names hang down
    path = common.save(fig, ax, title, path, marks=len(points),
                       margins={"left": 0.75 / width, "right": 1 - 0.2 / width, "top": 0.9, "bottom": bottom})
    return path, _caption(check, what + (f" ({case})" if case else ""), nodes, found, left_out, tolerance), found


def _caption(check, what, nodes, found, left_out, tolerance=TOLERANCE):
    named = [f"{node} ({part}, {dev:+.0%})" for part, worse in found.items() for node, _, _, dev in worse]
    text = f"{check}: {what}, one point per node ({nodes} nodes)"
    if named:
        text += (f"; {len(named)} outlier node(s), worse than their partition's median node by more than "
                 f"{tolerance:.0%}: " + ", ".join(named[:12]) + (f" and {len(named) - 12} more" if len(named) > 12 else ""))
    else:
        text += f"; no node worse than its partition's median by more than {tolerance:.0%}"
    if left_out:
        text += f"; {len(left_out)} partition(s) without outliers not drawn: " + ", ".join(left_out[:6]) + (
            " ..." if len(left_out) > 6 else "")
    return text


def heatmaps(check, matrices, path):
    """One panel per partition's latency matrix -> (path or None, caption, lines for what is not drawn)."""
    drawable = [m for m in matrices if 2 <= len(m.nodes) <= MAX_HEATMAP_NODES]
    not_drawn = [f"{check} {m.partition or m.testcase}: {len(m.nodes)} nodes, more than the {MAX_HEATMAP_NODES} "
                 f"a heatmap shows; {pair_matrix.missing_text(m) or 'every pair measured'}; its outlier nodes: "
                 f"{', '.join(m.outliers) or 'none'}" for m in matrices if len(m.nodes) > MAX_HEATMAP_NODES]
    if len(drawable) > MAX_HEATMAP_PANELS:  # the matrices with outliers or holes first
        drawable.sort(key=lambda m: (not m.outliers and not m.missing,))
        not_drawn += [f"{check} {m.partition or m.testcase}: not drawn (only {MAX_HEATMAP_PANELS} partitions fit); "
                      f"outliers: {', '.join(m.outliers) or 'none'}" for m in drawable[MAX_HEATMAP_PANELS:]]
        drawable = drawable[:MAX_HEATMAP_PANELS]
    notes = [f"{check} {m.partition or m.testcase}: {pair_matrix.missing_text(m)}" for m in drawable
             if pair_matrix.missing_text(m)] + [f"{check} {m.partition or m.testcase}: {n}" for m in matrices
                                                for n in m.notes]
    if not drawable:
        return None, "", not_drawn + notes
    columns = math.ceil(math.sqrt(len(drawable)))
    rows = math.ceil(len(drawable) / columns)
    fig, axes = _grid(rows, columns)
    values = [v for m in drawable for v in m.latency.values()]
    scale = {"vmin": min(values), "vmax": max(values)} if values else {}  # one colour scale: partitions compare
    cells, image = 0, None
    for ax, m in zip(axes, drawable):
        image = _panel(ax, m, scale) or image
        cells += len(m.latency)
    for ax in axes[len(drawable):]:
        ax.axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes, fraction=0.03, pad=0.02, label="latency [us]")
    title = f"{check}: latency of every node pair [us], per partition (grey x: pair not measured)"
    saved = common.save(fig, list(axes), title, path, marks=cells, grid=False,
                        margins={"left": 0.08, "right": 0.88, "top": 0.93, "bottom": 0.08, "hspace": 0.55,
                                 "wspace": 0.45})
    return saved, _heatmap_caption(check, drawable), not_drawn + notes


def _grid(rows, columns):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(rows, columns, figsize=(min(10.5, 3.2 * columns + 1), 3.0 * rows + 0.6), squeeze=False)
    return fig, list(axes.flat)


def _panel(ax, m, scale):
    """One partition's matrix on `ax`; returns its image (for the shared colour bar)."""
    index = {n: i for i, n in enumerate(m.nodes)}
    n = len(m.nodes)
    grid = np.full((n, n), np.nan)
    for (a, b), value in m.latency.items():
        if a in index and b in index:
            grid[index[a], index[b]] = grid[index[b], index[a]] = value
    image = ax.imshow(grid, cmap="viridis", interpolation="nearest", **scale)
    holes = m.missing if isinstance(m.missing, list) else []
    if holes and len(holes) <= 5000:
        xs = [index[b] for a, b in holes] + [index[a] for a, b in holes]
        ys = [index[a] for a, b in holes] + [index[b] for a, b in holes]
        ax.scatter(xs, ys, marker="x", s=max(4, 400 / n), color="grey", linewidths=0.8)
    named = list(m.nodes) if n <= ALL_LABELS_UP_TO else [node for node in m.nodes if node in m.outliers]
    ticks = [index[node] for node in named]
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels(named, fontsize=6, rotation=90, parse_math=False)
    ax.set_yticklabels(named, fontsize=6, parse_math=False)
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        if label.get_text() in m.outliers:
            label.set_color("firebrick")
    missing = pair_matrix.missing_text(m)
    ax.set_title(f"{m.partition or m.testcase}: {n} nodes, {len(m.latency)} pairs" + (" (holes)" if missing else ""),
                 fontsize=8, parse_math=False)
    return image


def _heatmap_caption(check, drawn):
    rules = sorted({m.tolerance for m in drawn})
    one_rule = len(rules) == 1
    parts = [f"{m.partition or m.testcase}{'' if one_rule else f' (tolerance {m.tolerance:.0%})'}: "
             + "; ".join(f"{node} {why}" for node, why in m.outliers.items()) for m in drawn if m.outliers]
    clean = len(drawn) - len(parts)
    rule = f"{rules[0]:.0%}" if one_rule else "the tolerance its check ran with"
    return (f"{check}: every node pair's latency (red names: outlier nodes, worse than the median node by more than "
            f"{rule} in latency or bandwidth). " + ". ".join(parts)
            + (f"{'; ' if parts else ''}no outlier in {'the other ' if parts else ''}{clean} partition(s)" if clean else ""))
