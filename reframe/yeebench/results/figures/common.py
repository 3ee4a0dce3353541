"""What the experiments' figures share: the cases a set of rows holds, labels people read, the
bar and line styles, and the PNG written atomically.

A figure module draws one check's rows (several sources: the runs, then the baseline) and
returns a `Drawn`: the PNGs it wrote, and a line for each figure it did not draw saying why
(the report prints those lines where the chart would have been).
"""
import fnmatch
import io
import re
from collections import OrderedDict, defaultdict, namedtuple
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

from yeebench import stats  # noqa: E402
from yeebench.results import safe_paths  # noqa: E402
from yeebench.results.store import atomic_write_bytes  # noqa: E402

#: One run's (or the baseline's) rows of one check.
Source = namedtuple("Source", "label rows is_baseline")


class Drawn:
    """The PNGs one experiment's module wrote and the figures it could not draw, each with why."""

    def __init__(self, paths=(), notes=()):
        self.paths = list(paths)
        self.notes = list(notes)

    def __iadd__(self, other):
        self.paths += other.paths
        self.notes += other.notes
        return self


SIZE = (7.2, 4.4)
WIDE = (10.5, 4.4)


def safe(text):
    """A file-name part made from a check name (data from a report): one plain path component."""
    return safe_paths.clean_component(text, fallback="figure", replacement="_", max_len=80)


def parameter_value(name):
    """row -> the number of its parameter `name`, None where the row has none (an x axis of lines.draw)."""
    def value(row):
        try:
            return float(row["parameters"][name])
        except (KeyError, TypeError, ValueError):
            return None
    return value


def median_of(rows, metric, where=None):
    """Median of one metric over the rows (repeats) whose parameters match `where`; None if absent."""
    values = [r["value"] for r in rows if r["metric"] == metric
              and all(str(r["parameters"].get(k)) == str(v) for k, v in (where or {}).items())]
    return stats.median(values) if values else None


def matching(rows, pattern):
    """Rows whose metric matches a regular expression (full match); the match object rides along."""
    out = []
    for row in rows:
        found = re.fullmatch(pattern, row["metric"])
        if found:
            out.append((found, row))
    return out


def metric_present(rows, *patterns):
    """The first metric (fnmatch patterns in order of preference) the rows hold; None if none."""
    names = list(OrderedDict.fromkeys(r["metric"] for r in rows))
    for pattern in patterns:
        for name in names:
            if fnmatch.fnmatchcase(name, pattern):
                return name
    return None


def varying(rows):
    """Parameter names whose value differs between the rows, in a stable order."""
    values = defaultdict(set)
    for row in rows:
        for key, value in row["parameters"].items():
            values[key].add(str(value))
    keys = {k for k in values if len(values[k]) > 1 or not all(k in r["parameters"] for r in rows)}
    return sorted(keys)


def label(params, names=None):
    """'ranks=2, threads=1': names and values, never a bare tuple of values."""
    keys = sorted(params) if names is None else [k for k in names if k in params]
    return ", ".join(f"{k}={params[k]}" for k in keys) or "one case"


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}g}"


def series_name(name, source, sources):
    """A series' legend text; the source is named only when several are drawn."""
    return name if len(sources) == 1 else f"{name} [{source.label}]"


def line_style(source):
    return dict(linestyle="--", alpha=0.6) if source.is_baseline else dict(linestyle="-")


def bars(ax, groups, series, ratio_text=None):
    """Grouped bars: one group per `groups` entry, one bar per series in each group.

    series: [(legend name, [value or None per group], style dict)]; ratio_text(series index,
    group index) -> text written on the bar (a comparison's ratio), or None.
    """
    count = max(len(series), 1)
    width = 0.8 / count
    tallest = max((v for _, values, _ in series for v in values if v is not None), default=0)
    for s, (name, values, style) in enumerate(series):
        positions = [g + (s - (count - 1) / 2) * width for g in range(len(groups))]
        heights = [v or 0 for v in values]
        drawn = ax.bar(positions, heights, width * 0.92, label=name, **style)
        if ratio_text is not None:
            for g, rect in enumerate(drawn):
                text = ratio_text(s, g)
                if text and values[g] is not None:
                    ax.text(rect.get_x() + rect.get_width() / 2, rect.get_height() + tallest * 0.01, text,
                            ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([plain(g) for g in groups], fontsize=8)
    ax.set_ylim(0, tallest * 1.22 if tallest > 0 else 1)  # room for the ratios and the legend


def bar_style(source, index):
    color = plt.rcParams["axes.prop_cycle"].by_key()["color"][index % 10]
    if source.is_baseline:
        return dict(color=color, alpha=0.45, hatch="//", edgecolor="black")
    return dict(color=color)


def new(size=SIZE, panels=1):
    fig, axes = plt.subplots(1, panels, figsize=size)
    return fig, axes


def marks(fig):
    """What a reader can compare in the figure: bars drawn, or distinct x positions of the data
    lines (reference lines such as axhline are not data). A chart of 1 says less than the table."""
    bars_drawn, xs = 0, set()
    for ax in fig.axes:
        bars_drawn += sum(1 for c in ax.containers if isinstance(c, BarContainer) for rect in c
                          if rect.get_height() != 0)
        for line in ax.lines:
            if line.get_transform() == ax.transData:
                xs.update((id(ax), float(x)) for x in line.get_xdata())
    return max(bars_drawn, len(xs))


def png_bytes(fig, count=None):
    """The PNG, with the count of marks in its text chunk (read back by the report's layout checks);
    `count`: what the figure shows where marks() cannot see it (points of a scatter, cells of a heatmap)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110,
                metadata={"yeebench-marks": str(marks(fig) if count is None else count)})
    plt.close(fig)
    return buffer.getvalue()


def plain(text):
    """Text from a run (a check, node or parameter name) drawn as it is: a '$' is a dollar sign, not
    the start of a formula (mathtext would fail on an odd one)."""
    return str(text).replace("$", r"\$")


def save(fig, axes, title, path, marks=None, grid=True, margins=None):
    """Title, legends inside their frames, a light grid (not over a heatmap); the PNG written atomically.
    margins: subplots_adjust's arguments, for a figure whose text sizes are known (tight_layout draws the
    whole figure once more to measure them: a third of a chart's cost)."""
    fig.suptitle(plain(title), fontsize=10)
    for ax in (axes if isinstance(axes, (list, tuple)) else getattr(axes, "flat", [axes])):
        if grid:
            ax.grid(True, which="major", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles, [plain(label) for label in labels], fontsize=7, loc="best", framealpha=0.85)
    if margins:
        fig.subplots_adjust(**margins)
    else:
        fig.tight_layout()
    path = Path(path)
    atomic_write_bytes(path, png_bytes(fig, marks))
    return path


def close(fig):
    plt.close(fig)
