"""Bars for a check whose cases are ReFrame parameters (one test case per binding, per policy):
one metric, grouped by one parameter, one bar per value of another, each bar's ratio over a
baseline value written on it. Fewer than two cases: no chart, a line saying so."""
from yeebench.results.figures import common


def draw(check, sources, out, *, metric, group, series=None, baseline=None, title, xlabel, ylabel, stem):
    """baseline: (parameter, value) the ratios divide by, within the same group; None: no ratios."""
    fig, ax = common.new()
    groups, names = [], []
    for source in sources:
        for row in source.rows:
            if row["metric"] != metric:
                continue
            g = str(row["parameters"].get(group, "-"))
            n = str(row["parameters"].get(series, "")) if series else ""
            groups += [g] if g not in groups else []
            names += [n] if n not in names else []
    cases = len(groups) * len(names)
    if cases < 2:
        common.close(fig)
        what = ", ".join(f"{group}={g}" for g in groups) or "none"
        return common.Drawn(notes=[f"{check}: one case measured ({what}): its {metric} is in the table"])
    bar_series, texts = [], {}
    for source in sources:
        for n in names:
            values = []
            for g in groups:
                where = {group: g, **({series: n} if series else {})}
                values.append(common.median_of(source.rows, metric, where))
                if baseline and values[-1] is not None:
                    key = (group if baseline[0] == group else series)
                    base_where = dict(where, **{key: baseline[1]})
                    base = common.median_of(source.rows, metric, base_where)
                    if base and base_where != where:
                        texts[(len(bar_series), len(values) - 1)] = f"x{values[-1] / base:.2f}"
            legend = f"{series}={n}" if series else metric
            bar_series.append((common.series_name(legend, source, sources), values,
                               common.bar_style(source, len(bar_series))))
    common.bars(ax, [f"{group}={g}" for g in groups], bar_series, lambda s, g: texts.get((s, g)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return common.Drawn([common.save(fig, ax, title, out / f"{common.safe(check)}_{stem}.png")])
