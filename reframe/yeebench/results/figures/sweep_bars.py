"""Bars for a one-job comparison of the solver (yeebench.sweep_check): Mcells/s of each case,
grouped, with the check's own ratio against the baseline case written on each bar.

The sweeps record `<case>_mcells_per_s` per case and `<case>_over_<baseline>` per ratio
(yeebench.comparisons); the number on a bar is that recorded ratio, so the chart and the table
never disagree.
"""
from yeebench.results.figures import common


def rates(rows):
    """{case: [rows]} of the per-case rates, the case as the check named it (per_socket_rankfile)."""
    out = {}
    for found, row in common.matching(rows, r"(?P<case>.+)_mcells_per_s"):
        out.setdefault(found.group("case"), []).append(row)
    return out


def draw(check, sources, out, *, baseline, group_of, series_of, groups, series, title, xlabel, stem,
         where_of=None):
    """One grouped bar chart; group_of/series_of map a case name to its group and series (None: leave out).

    where_of(source rows) -> [(parameter filter, group prefix)] splits the rows by a parameter
    (e.g. FdtdNumaSweep's placement) into more groups; default: all rows, no prefix.
    """
    fig, ax = common.new()
    bar_series, ratio_texts = [], {}
    blocks = []
    for source in sources:
        for where, prefix in (where_of(source.rows) if where_of else [({}, "")]):
            blocks.append((source, where, prefix))
    group_names = []
    for _, _, prefix in blocks:
        for g in groups:
            name = f"{prefix}{g}" if prefix else g
            if name not in group_names:
                group_names.append(name)
    measured = 0
    for s_index, source in enumerate(sources):
        for name in series:
            values = [None] * len(group_names)
            for src, where, prefix in blocks:
                if src is not source:
                    continue
                rows = [r for r in source.rows if all(str(r["parameters"].get(k)) == str(v) for k, v in where.items())]
                for case, case_rows in rates(rows).items():
                    if series_of(case) != name or group_of(case) not in groups:
                        continue
                    g = group_names.index(f"{prefix}{group_of(case)}" if prefix else group_of(case))
                    values[g] = common.median_of(case_rows, f"{case}_mcells_per_s")
                    ratio = common.median_of(rows, f"{case}_over_{baseline(case)}") if baseline(case) else None
                    if ratio is not None:
                        ratio_texts[(len(bar_series), g)] = f"x{ratio:.2f}"
                    elif baseline(case) == case:
                        ratio_texts[(len(bar_series), g)] = "base"
                    measured += 1
            if any(v is not None for v in values):
                bar_series.append((common.series_name(name, source, sources), values,
                                   common.bar_style(source, len(bar_series))))
    if measured < 2:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: {measured} case(s) measured, nothing to compare: see the table"])
    common.bars(ax, group_names, bar_series, lambda s, g: ratio_texts.get((s, g)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("solver rate [Mcells/s]")
    return common.Drawn([common.save(fig, ax, title, out / f"{common.safe(check)}_{stem}.png")])


def _count_ratios(rows, baseline):
    """{case: {nodes: [ratio rows]}} of the `<case>_over_<baseline>_<n>_nodes` figures a node curve records."""
    out = {}
    for found, row in common.matching(rows, r"(?P<case>.+)_over_(?P<base>.+)_(?P<n>\d+)_nodes"):
        case = found.group("case")
        if found.group("base") == baseline(case):
            out.setdefault(case, {}).setdefault(int(found.group("n")), []).append(row)
    return out


def curve(check, sources, out, *, baseline, title, ylabel, stem, where_of=None, include=lambda case: True):
    """Each case's recorded ratio to its baseline against the node count (the `_<n>_nodes` figures of a
    sweep with a node curve), a line per case, 1 (as fast as the baseline) drawn grey; a note instead
    where fewer than two counts were measured; nothing at all where the sweep ran on one count (its
    figures carry no count)."""
    if not any(_count_ratios(s.rows, baseline) for s in sources):
        return common.Drawn()
    lines = []
    for source in sources:
        for where, prefix in (where_of(source.rows) if where_of else [({}, "")]):
            rows = [r for r in source.rows if all(str(r["parameters"].get(k)) == str(v) for k, v in where.items())]
            for case, by_count in sorted(_count_ratios(rows, baseline).items()):
                if include(case):
                    name = f"{prefix}: {case} over {baseline(case)}" if prefix else f"{case} over {baseline(case)}"
                    lines.append((name, source, by_count))
    return node_count_lines(check, sources, lines, unity="as fast as the baseline",
                            xlabel="nodes (every case on each count, one job)", ylabel=ylabel, title=title,
                            path=out / f"{common.safe(check)}_{stem}_nodes.png")


def node_count_lines(check, sources, lines, *, unity, xlabel, ylabel, title, path):
    """A ratio against the node count per (name, source, {nodes: [rows of one figure]}) of `lines` that has
    two counts or more, 1 drawn grey (`unity`); a note instead where fewer than two counts were measured."""
    fig, ax = common.new()
    counts = set()
    for index, (name, source, by_count) in enumerate((n, s, c) for n, s, c in lines if len(c) >= 2):
        xs = sorted(by_count)
        ys = [common.median_of(by_count[n], by_count[n][0]["metric"]) for n in xs]
        ax.plot(xs, ys, marker="o", color=f"C{index % 10}", label=common.series_name(name, source, sources),
                **common.line_style(source))
        counts.update(xs)
    if len(counts) < 2:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: one node count measured, no curve over node counts: see the table"])
    ax.axhline(1.0, color="grey", linewidth=0.9, linestyle="--", label=unity)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(counts))
    ax.set_xticklabels([str(n) for n in sorted(counts)])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return common.Drawn([common.save(fig, ax, title, path)])
