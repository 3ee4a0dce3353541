"""`yeebench results plot`: PNG figures, one per experiment, then generic ones for unknown checks.

The experiments' own figures come first (yeebench.results.figures: one module per experiment,
a registry of checks). For checks no module knows, each generic family below claims the rows
it understands; every row left over appears in a bar chart per (check, metric) when it has
two bars or more, so a run of unknown checks is plotted too. Points are medians of the repeats, error bars span min..max;
a baseline, when given, is drawn dashed (lines) or hatched (bars).
"""
import math
import re
from collections import OrderedDict, defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402

from yeebench import stats  # noqa: E402
from yeebench.results import figures, machine, safe_paths  # noqa: E402
from yeebench.results.store import atomic_write_bytes  # noqa: E402

_SIZE_METRIC = re.compile(r"^(?P<kind>latency|lat|bandwidth|bw)[_-]?(?P<size>\d+(?:\.\d+)?)(?P<unit>B|kB|KB|KiB|MB|MiB)?$",
                          re.I)
# MPI benchmarks say KB/MB for 2^10/2^20 bytes (latency_4KB is 4096 B); SI 'kB' is 10^3
_SIZE_FACTORS = {"b": 1, "kb": 1024, "kib": 1024, "mb": 2**20, "mib": 2**20}
_SIZE_PARAMS = ("size", "message_size", "msg_size", "bytes")
_RANK_PARAMS = ("ranks", "num_procs", "num_tasks", "cores_used", "nodes")
_BINDING_PARAMS = ("binding", "placement", "bind")
_POLICY_PARAMS = ("policy", "mempolicy", "numa", "numa_policy")
_COLLECTIVE = re.compile(r"collective|allreduce|bcast|broadcast|alltoall|allgather|reduce|barrier", re.I)
_COLLECTIVE_NAME = re.compile(r"allreduce|bcast|broadcast|alltoall|allgather|reduce_scatter|reduce|barrier", re.I)
_NUMA_METRIC = re.compile(r"^(triad|copy|scale|add)(_|$)", re.I)


def _median(values):
    return stats.median(values)


def _kind(metric):
    name = metric.lower()
    if name.startswith(("latency", "lat")):
        return "latency"
    if name.startswith(("bandwidth", "bw")):
        return "bandwidth"
    return None


def message_size(row):
    """Message size in bytes from the metric name (latency_1024B) or a size parameter; None if absent."""
    match = _SIZE_METRIC.match(row["metric"])
    if match:
        unit = match.group("unit") or "B"
        factor = 1e3 if unit == "kB" else _SIZE_FACTORS[unit.lower()]
        return float(match.group("size")) * factor
    if _kind(row["metric"]):
        for key in _SIZE_PARAMS:
            try:
                return float(row["parameters"][key])
            except (KeyError, TypeError, ValueError):
                continue
    return None


def _label(params, drop=()):
    parts = [f"{k}={v}" for k, v in sorted(params.items()) if k not in drop]
    return ", ".join(parts) or "default"


def _constant(rows):
    """Parameters with one value across the rows: they label nothing, so labels leave them out."""
    values = defaultdict(set)
    for row in rows:
        for key, value in row["parameters"].items():
            values[key].add(str(value))
    return {key for key, vals in values.items() if len(vals) == 1 and
            all(key in row["parameters"] for row in rows)}


def _first(params, keys):
    for key in keys:
        if key in params and params[key] is not None:
            return key, params[key]
    return None, None


class _Series:
    """Values collected per (series label, x) for one source."""

    def __init__(self):
        self.points = defaultdict(lambda: defaultdict(list))

    def add(self, label, x, value):
        self.points[label][x].append(value)

    def lines(self):
        for label, by_x in self.points.items():
            xs = sorted(by_x)
            yield label, xs, [_median(by_x[x]) for x in xs], [min(by_x[x]) for x in xs], [max(by_x[x]) for x in xs]


def _finish(fig, ax, title, xlabel, ylabel, path, legend=True):
    plain = figures.common.plain  # names from the run: a '$' in one is no formula
    ax.set_title(plain(title), fontsize=10)
    ax.set_xlabel(plain(xlabel))
    ax.set_ylabel(plain(ylabel))
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if legend and handles:
        ax.legend(handles, [plain(label) for label in labels], fontsize=7, loc="best")
    fig.tight_layout()
    atomic_write_bytes(path, figures.common.png_bytes(fig))
    return path


def _safe(text):
    return safe_paths.clean_component(text, fallback="plot", replacement="_", max_len=80)


def _sources(runs, baseline):
    """(label, rows, is baseline) of each source, the rows pooled over the nodes of a distributed run
    (machine.pooled_rows): a chart per experiment, not per partition."""
    items = [(run.label, machine.pooled_rows(run.rows), False) for run in runs]
    if baseline is not None:
        items.append((f"baseline {baseline.label}", machine.pooled_rows(baseline.rows), True))
    return items


def _plot_lines(ax, series_by_source, log=True):
    for source_label, series, is_baseline in series_by_source:
        for label, xs, ys, lo, hi in series.lines():
            name = label if len(series_by_source) == 1 else f"{label} [{source_label}]"
            err = [[y - a for y, a in zip(ys, lo)], [b - y for y, b in zip(ys, hi)]]
            ax.errorbar(xs, ys, yerr=err, marker="o", markersize=3, capsize=2, label=name,
                        linestyle="--" if is_baseline else "-", alpha=0.6 if is_baseline else 1.0)
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")


def _pt2pt_and_collectives(sources, out, used):
    """Latency/bandwidth vs size (pt2pt) and collective latency vs size with the alpha-beta bound."""
    written = []
    groups = OrderedDict()  # (family, check, kind, unit) -> [(source, row)]
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            size = message_size(row)
            if size is None or (src_index, i) in used:
                continue
            is_coll = bool(_COLLECTIVE.search(row["check"])) or "collective" in row["parameters"] \
                or "implementation" in row["parameters"]
            family = "collective" if is_coll else "pt2pt"
            name = collective_name(row) if is_coll else ""
            groups.setdefault((family, row["check"], name, _kind(row["metric"]), row["unit"]), []).append(
                (src_index, row))
            used.add((src_index, i))
    alpha_beta = _alpha_beta(sources[0][1]) if sources else None
    for (family, check, name, kind, unit), members in groups.items():
        if len({message_size(row) for _, row in members}) < 2:
            continue  # a curve of one point: the table says it
        per_source = []
        constant = _constant([r for _, r in members])  # short legend labels: what differs between lines
        for src_index, (src_label, _, is_baseline) in enumerate(sources):
            series = _Series()
            for s, row in members:
                if s == src_index:
                    placement = row["parameters"].get("placement") or row["parameters"].get("nodes") or ""
                    label = _label({k: v for k, v in row["parameters"].items()
                                    if k not in _SIZE_PARAMS and k not in constant})
                    if constant and "placement" in constant:
                        placement = ""
                    if placement and "placement" not in label:
                        label = f"{label}, {placement}"
                    series.add(label, message_size(row), row["value"])
            if series.points:
                per_source.append((src_label, series, is_baseline))
        fig, ax = plt.subplots(figsize=(7, 4.5))
        _plot_lines(ax, per_source)
        title = f"{check}{' ' + name if name else ''}: {kind or 'figure'} vs message size"
        if family == "collective" and kind == "latency" and alpha_beta:
            if _draw_alpha_beta(ax, members, alpha_beta, unit, name):
                title += " (dotted: alpha-beta bound)"
        elif family == "pt2pt":
            title += " (intra- vs inter-node by placement)"
        suffix = f"_{_safe(name)}" if name else ""
        path = Path(out) / f"{family}_{_safe(check)}{suffix}_{kind or 'metric'}.png"
        written.append(_finish(fig, ax, title, "message size [B]", f"{kind or 'value'} [{unit}]", path))
    return written


_US = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}


def _alpha_beta(rows):
    """alpha (us) and beta (us per byte) of the fastest point-to-point path in the rows.

    Fitted Hockney figures (hockney_alpha in us, hockney_beta in ns/B) when the
    run has them, else the smallest-message latency and 1 / peak bandwidth.
    """
    fitted = defaultdict(dict)
    for row in rows:
        if row["metric"] == "hockney_alpha" and row["unit"] in _US:
            fitted[_label(row["parameters"])].setdefault("alpha", []).append(row["value"] * _US[row["unit"]])
        elif row["metric"] == "hockney_beta" and row["unit"] == "ns/B":
            fitted[_label(row["parameters"])].setdefault("beta", []).append(row["value"] * 1e-3)
    pairs = [(_median(f["alpha"]), _median(f["beta"])) for f in fitted.values() if "alpha" in f and "beta" in f]
    if pairs:
        return min(pairs)
    latencies, bandwidths = [], []
    for row in rows:
        if _COLLECTIVE.search(row["check"]) or "implementation" in row["parameters"]:
            continue
        kind = _kind(row["metric"])
        size = message_size(row)
        if kind == "latency" and size is not None and row["unit"] in _US:
            latencies.append((size, row["value"] * _US[row["unit"]]))
        elif kind == "bandwidth" and row["unit"] in ("MB/s", "GB/s"):
            bandwidths.append(row["value"] * (1e6 if row["unit"] == "MB/s" else 1e9))
    if not latencies or not bandwidths:
        return None
    smallest = min(s for s, _ in latencies)
    alpha = min(v for s, v in latencies if s == smallest)
    beta = 1e6 / max(bandwidths)  # us per byte
    return alpha, beta


def collective_name(row):
    """allreduce/bcast/... from a 'collective' or 'case' parameter, else from the check name; '' if none."""
    for text in (row["parameters"].get("collective"), row["parameters"].get("case"), row["check"]):
        match = _COLLECTIVE_NAME.search(str(text or ""))
        if match:
            return match.group(0).lower().replace("broadcast", "bcast")
    return ""


# Lower bounds in the alpha-beta (Hockney) model for p ranks and m bytes: latency term
# from a binomial tree, bandwidth term from the data each rank must send or receive.
_BOUNDS = {
    "allreduce": lambda p, m, a, b: math.ceil(math.log2(p)) * a + 2 * (p - 1) / p * m * b,
    "reduce_scatter": lambda p, m, a, b: math.ceil(math.log2(p)) * a + (p - 1) / p * m * b,
    "allgather": lambda p, m, a, b: math.ceil(math.log2(p)) * a + (p - 1) / p * m * b,
    "bcast": lambda p, m, a, b: math.ceil(math.log2(p)) * a + m * b,
    "reduce": lambda p, m, a, b: math.ceil(math.log2(p)) * a + m * b,
    "alltoall": lambda p, m, a, b: math.ceil(math.log2(p)) * a + (p - 1) / p * m * b,
    "barrier": lambda p, m, a, b: math.ceil(math.log2(p)) * a,
}


def _draw_alpha_beta(ax, members, alpha_beta, unit, name):
    """Dotted lower bound per rank count for the named collective (allreduce when unnamed)."""
    alpha, beta = alpha_beta
    bound_of = _BOUNDS.get(name or "allreduce")
    if bound_of is None or unit not in _US:
        return False
    scale = 1.0 / _US[unit]
    ranks = set()
    for _, row in members:
        _, p = _first(row["parameters"], _RANK_PARAMS)
        try:
            ranks.add(int(p))
        except (TypeError, ValueError):
            continue
    sizes = sorted({message_size(row) for _, row in members})
    drawn = False
    for p in sorted(ranks) or [2]:
        if p < 2:
            continue
        ax.plot(sizes, [bound_of(p, m, alpha, beta) * scale for m in sizes], linestyle=":", color="black",
                label=f"alpha-beta bound {name or 'allreduce'}, p={p}")
        drawn = True
    return drawn


def _solver(sources, out, used):
    """Mcells/s per binding x NUMA policy (lines vs ranks when ranks vary) and scaling efficiency."""
    written = []
    groups = OrderedDict()
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            if (src_index, i) in used or "mcells" not in row["metric"].lower():
                continue
            groups.setdefault((row["check"], row["metric"], row["unit"]), []).append((src_index, row))
            used.add((src_index, i))
    for (check, metric, unit), members in groups.items():
        rank_values = {_first(r["parameters"], _RANK_PARAMS)[1] for _, r in members}
        vary_ranks = len(rank_values - {None}) >= 2
        fig, ax = plt.subplots(figsize=(7, 4.5))
        if vary_ranks:
            drop = set(_RANK_PARAMS) | _covarying(members) | _constant([r for _, r in members])
            per_source = []
            for src_index, (src_label, _, is_baseline) in enumerate(sources):
                series = _Series()
                for s, row in members:
                    key, p = _first(row["parameters"], _RANK_PARAMS)
                    if s == src_index and p is not None:
                        series.add(_label(row["parameters"], drop=drop), float(p), row["value"])
                if series.points:
                    per_source.append((src_label, series, is_baseline))
            _plot_lines(ax, per_source, log=False)
            path = Path(out) / f"solver_{_safe(check)}_{_safe(metric)}_vs_ranks.png"
            written.append(_finish(fig, ax, f"{check}: {metric} against ranks",
                                   "ranks / cores", f"{metric} [{unit}]", path))
            efficiency = _efficiency_rows(sources, check, used)
            if efficiency:
                written.append(_plot_efficiency(sources, efficiency, check, out))
            else:
                written.append(_scaling_efficiency(per_source, check, metric, out))
        elif len({(s, _label(r["parameters"])) for s, r in members}) < 2:
            plt.close(fig)  # one bar says less than the table's row does
        else:
            _grouped_bars(ax, sources, members, _BINDING_PARAMS, _POLICY_PARAMS)
            path = Path(out) / f"solver_{_safe(check)}_{_safe(metric)}_binding_policy.png"
            written.append(_finish(fig, ax, f"{check}: {metric} per case",
                                   "binding / placement", f"{metric} [{unit}]", path))
    return written


def _covarying(members):
    """Parameters that change together with the rank count (a weak-scaling grid, tasks per node):
    they describe the x axis, not a separate line."""
    by_key = defaultdict(lambda: defaultdict(set))
    for _, row in members:
        _, x = _first(row["parameters"], _RANK_PARAMS)
        for key, value in row["parameters"].items():
            by_key[key][x].add(str(value))
    return {key for key, per_x in by_key.items()
            if all(len(v) == 1 for v in per_x.values()) and len(set().union(*per_x.values())) > 1}


def _efficiency_rows(sources, check, used):
    """The check's own parallel_efficiency rows (claimed): the plot shows exactly what the table shows."""
    members = []
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            if row["check"] == check and row["metric"] == "parallel_efficiency" and (src_index, i) not in used:
                members.append((src_index, row))
                used.add((src_index, i))
    return members


def _plot_efficiency(sources, members, check, out):
    """Parallel efficiency as the check defines it (speed-up over its 1-core run / cores) vs cores."""
    drop = set(_RANK_PARAMS) | _covarying(members) | _constant([r for _, r in members])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    per_source = []
    for src_index, (src_label, _, is_baseline) in enumerate(sources):
        series = _Series()
        for s, row in members:
            _, p = _first(row["parameters"], _RANK_PARAMS)
            if s == src_index and p is not None:
                series.add(_label(row["parameters"], drop=drop), float(p), row["value"])
        if series.points:
            per_source.append((src_label, series, is_baseline))
    _plot_lines(ax, per_source, log=False)
    ax.axhline(100.0, color="grey", linewidth=0.8)
    ax.set_ylim(bottom=0)
    path = Path(out) / f"scaling_{_safe(check)}_parallel_efficiency.png"
    return _finish(fig, ax, f"{check}: parallel efficiency (as in the table)", "cores",
                   "parallel efficiency [%]", path)


def _scaling_efficiency(per_source, check, metric, out):
    """Parallel efficiency E(p) = (X(p) / p) / (X(p0) / p0) of a throughput X, p0 the smallest rank count."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for source_label, series, is_baseline in per_source:
        for label, xs, ys, _, _ in series.lines():
            if len(xs) < 2 or ys[0] == 0:
                continue
            eff = [(y / x) / (ys[0] / xs[0]) for x, y in zip(xs, ys)]
            name = label if len(per_source) == 1 else f"{label} [{source_label}]"
            ax.plot(xs, eff, marker="o", linestyle="--" if is_baseline else "-", label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_ylim(bottom=0)
    path = Path(out) / f"scaling_{_safe(check)}_{_safe(metric)}_efficiency.png"
    return _finish(fig, ax, f"{check}: scaling efficiency of {metric} (relative to fewest ranks)",
                   "ranks / cores", "parallel efficiency [1]", path)


def _grouped_bars(ax, sources, members, outer_keys, inner_keys):
    """Bars grouped by the outer parameter (e.g. binding), one bar per inner value (e.g. policy) and source."""
    def outer_of(row):
        key, value = _first(row["parameters"], outer_keys)
        return f"{key}={value}" if key else _label(row["parameters"])
    inner_of = lambda row: str(_first(row["parameters"], inner_keys)[1] or "")  # noqa: E731
    outers = list(OrderedDict.fromkeys(outer_of(r) for _, r in members))
    bars = list(OrderedDict.fromkeys((s, inner_of(r)) for s, r in members))
    width = 0.8 / max(len(bars), 1)
    for b, (src_index, inner) in enumerate(bars):
        src_label, _, is_baseline = sources[src_index]
        heights, lo, hi = [], [], []
        for outer in outers:
            values = [r["value"] for s, r in members if s == src_index and inner_of(r) == inner and outer_of(r) == outer]
            med = _median(values) if values else 0.0
            heights.append(med)
            lo.append(med - min(values) if values else 0)
            hi.append(max(values) - med if values else 0)
        name = (inner or "default") if len(sources) == 1 else f"{inner or 'default'} [{src_label}]"
        positions = [i + (b - (len(bars) - 1) / 2) * width for i in range(len(outers))]
        ax.bar(positions, heights, width, yerr=[lo, hi], capsize=2, label=name,
               hatch="//" if is_baseline else None, alpha=0.6 if is_baseline else 1.0)
    ax.set_xticks(range(len(outers)))
    # names with their values ('ranks=2, threads=1'): a bare '2, 1' reads as nothing
    ax.set_xticklabels([figures.common.plain(o) for o in outers], fontsize=8)
    ax.set_xlabel("case")


def _numa(sources, out, used):
    """NUMA bandwidth bars: kernel bandwidth per memory policy."""
    written = []
    groups = OrderedDict()
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            if (src_index, i) in used:
                continue
            if _NUMA_METRIC.match(row["metric"]) or ("numa" in row["check"].lower() and row["unit"].endswith("B/s")):
                groups.setdefault((row["check"], row["unit"]), []).append((src_index, row))
                used.add((src_index, i))
    for (check, unit), members in groups.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        # outer: policy; inner: metric (kernel) so copy/triad sit side by side per policy
        relabelled = [(s, dict(r, parameters=dict(r["parameters"], kernel=r["metric"]))) for s, r in members]
        _grouped_bars(ax, sources, relabelled, _POLICY_PARAMS, ("kernel",))
        path = Path(out) / f"numa_{_safe(check)}_bandwidth.png"
        written.append(_finish(fig, ax, f"{check}: memory bandwidth per NUMA policy", "memory policy",
                               f"bandwidth [{unit}]", path))
    return written


_IO_CASE = re.compile(r"^(?P<fmt>[a-z0-9_]+)_p(?P<p>\d+)_n(?P<n>\d+)_io_s$")


def _io_formats(sources, out, used):
    """Paper 001 Figs. 1-3 and 5 from an output sweep's per-case rows (<format>_p<P>_n<N>_io_s):
    seconds per output step against cells per rank, and the time relative to ASCII."""
    written = []
    groups = OrderedDict()   # (source, check) -> {(fmt, p, n): median seconds}
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            m = _IO_CASE.match(row["metric"])
            if m and (src_index, i) not in used:
                cell = groups.setdefault((src_index, row["check"]), defaultdict(list))
                cell[(m["fmt"], int(m["p"]), int(m["n"]))].append(row["value"])
                used.add((src_index, i))
    for (src_index, check), cells in groups.items():
        times = {k: _median(v) for k, v in cells.items()}
        label = "" if len(sources) == 1 else f" [{sources[src_index][0]}]"
        lines = defaultdict(list)
        for (fmt, p, n), t in sorted(times.items()):
            lines[(fmt, p)].append((n ** 3, t, times.get(("ascii", p, n))))
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for (fmt, p), pts in lines.items():
            ax.plot([x for x, _, _ in pts], [t for _, t, _ in pts], marker="o", markersize=3,
                    label=f"{fmt}, {p} rank(s)")
        ax.set(xscale="log", yscale="log")
        stem = f"{_safe(check)}{'_' + str(src_index) if len(sources) > 1 else ''}"
        written.append(_finish(fig, ax, f"{check}: output time per step{label}", "cells per rank (N^3)",
                               "seconds per output step", Path(out) / f"io_time_{stem}.png"))
        ratio_lines = {k: [(x, t / a) for x, t, a in pts if a] for k, pts in lines.items() if k[0] != "ascii"}
        if any(ratio_lines.values()):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for (fmt, p), pts in ratio_lines.items():
                if pts:
                    ax.plot([x * p for x, _ in pts], [r for _, r in pts], marker="o", markersize=3,
                            label=f"{fmt}, {p} rank(s)")
            ax.axhline(1.0, color="k", linewidth=0.8, linestyle=":")
            ax.set_xscale("log")
            written.append(_finish(fig, ax, f"{check}: output time relative to ASCII (paper 001 Fig. 5){label}",
                                   "cells (all ranks)", "time / ASCII time (< 1: faster)",
                                   Path(out) / f"io_ratio_{stem}.png"))
    return written


def _generic(sources, out, used):
    """One bar chart per (check, metric) for every row no other figure claimed."""
    written = []
    groups = OrderedDict()
    for src_index, (_, rows, _) in enumerate(sources):
        for i, row in enumerate(rows):
            if (src_index, i) not in used:
                groups.setdefault((row["check"], row["metric"], row["unit"]), []).append((src_index, row))
    for (check, metric, unit), members in groups.items():
        if len({(s, _label(r["parameters"])) for s, r in members}) < 2:
            continue  # a single bar says less than the table's row does
        constant = _constant([r for _, r in members])
        members = [(s, dict(r, parameters={k: v for k, v in r["parameters"].items() if k not in constant}))
                   for s, r in members]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        _grouped_bars(ax, sources, members, ("__all__",), ("__none__",))
        direction = members[0][1]["direction"]
        note = {"higher": " (higher is better)", "lower": " (lower is better)"}.get(direction, "")
        path = Path(out) / f"metric_{_safe(check)}_{_safe(metric)}.png"
        written.append(_finish(fig, ax, f"{check}: {metric}{note}", ax.get_xlabel(), f"{metric} [{unit or '-'}]",
                               path, legend=len(sources) > 1))
    return written


def write_figures(runs, out_dir, baseline=None):
    """Every figure for the runs (RowSource list) in out_dir: the experiments' own figures
    (yeebench.results.figures), then the generic families for checks no experiment module knows.

    Returns (paths written, lines for the figures not drawn, each saying why)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = _sources(runs, baseline)
    drawn, claimed = figures.draw([figures.common.Source(*s) for s in sources], out_dir)
    used = {(s, i) for s, (_, rows, _) in enumerate(sources) for i, row in enumerate(rows) if row["check"] in claimed}
    written = list(drawn.paths)
    written += _pt2pt_and_collectives(sources, out_dir, used)
    written += _solver(sources, out_dir, used)
    written += _numa(sources, out_dir, used)
    written += _io_formats(sources, out_dir, used)
    written += _generic(sources, out_dir, used)
    return [p for p in written if p is not None], drawn.notes


def write_plots(runs, out_dir, baseline=None):
    """Write every applicable figure for the runs (RowSource list) into out_dir; returns the paths."""
    return write_figures(runs, out_dir, baseline)[0]
