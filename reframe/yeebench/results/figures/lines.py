"""A figure of merit against a numeric parameter (ranks, nodes, processes per core), one line per
value of the other parameters that vary: the shape most scaling figures of the papers share."""
from yeebench import stats
from yeebench.results.figures import common


def _series_params(rows, x_of, x_param):
    """Parameters that differ between rows at the same x: they make separate lines. Those that only
    change with x (a weak-scaling grid, the task count) describe the axis, not a line."""
    by_x = {}
    for row in rows:
        by_x.setdefault(x_of(row), []).append(row)
    return sorted({k for group in by_x.values() for k in common.varying(group)} - {x_param})


def draw(check, sources, out, *, select, x_of, x_param, xlabel, ylabel, title, stem, ideal=None, log=False):
    """select(row) -> bool picks the rows; x_param: the parameter (or name) on the x axis, left out of
    the series labels; ideal: y of a grey reference line (100 % efficiency)."""
    fig, ax = common.new()
    xs_seen = {}
    for source in sources:
        rows = [r for r in source.rows if select(r)]
        series = {}
        others = _series_params(rows, x_of, x_param)
        for row in rows:
            x = x_of(row)
            if x is None:
                continue
            key = common.label(row["parameters"], others) if others else ""
            series.setdefault(key, {}).setdefault(x, []).append(row["value"])
            xs_seen.setdefault(x, common.label(row["parameters"], [x_param]) if x_param in row["parameters"]
                               else f"{x_param}={common.fmt(x)}")
        for index, (key, by_x) in enumerate(sorted(series.items())):
            xs = sorted(by_x)
            name = common.series_name(key or ylabel.split(" [")[0], source, sources)
            ax.plot(xs, [stats.median(by_x[x]) for x in xs], marker="o", color=f"C{index % 10}", label=name,
                    **common.line_style(source))
    if len(xs_seen) < 2:
        common.close(fig)
        shown = ", ".join(xs_seen.values()) or "none"
        return common.Drawn(notes=[f"{check}: one point measured ({shown}); the figure needs two or more: "
                                   "see the table"])
    if ideal is not None:
        ax.axhline(ideal, color="grey", linewidth=0.9, linestyle="--", label="ideal")
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
        ax.set_xticks(sorted(xs_seen))  # the counts measured (1, 2, 4 cores), not 1.2 or 1.4 cores
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return common.Drawn([common.save(fig, ax, title, out / f"{common.safe(check)}_{stem}.png")])
