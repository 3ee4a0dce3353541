"""Measured curves against the baseline's, size by size: what the gate judged (results/curve_gate.py).

One panel per figure family a check recorded at every size (yeebench.curve_foms.SIZE_FAMILIES:
point-to-point latency and bandwidth, a collective's latency and efficiency), one line per case and
source (the baseline dashed), on log axes. Against a baseline, each size is judged as the gate judges it
(compare.compare_rows: its own noise, the per-size threshold, the curve's count of regressed sizes):
a size of a failing curve is marked with a red cross and its change, a regression the count tolerated
with an orange ring. Drawn after the check's own figure (figures.ALSO); where that one already shows
the measured curve (a collective's), only against a baseline.
"""
from yeebench import stats
from yeebench.curve_foms import SIZE_FAMILIES
from yeebench.results import compare, curve_gate
from yeebench.results.figures import common

CHECKS = ("NetPIPEPt2Pt", "OsuPt2Pt", "OsuCollective")
#: Families in panel order; a check draws those it recorded at two or more sizes.
FAMILIES = tuple(SIZE_FAMILIES)
#: Checks whose own figure already draws the measured curve: drawn here only against a baseline.
ALREADY_DRAWN = ("OsuCollective",)
_MAX_LABELLED = 6   # sizes whose change is written beside the mark, per panel: more would hide the curve


def _size_rows(rows):
    """{(family, case parameters text): {size: [values]}} and the rows that are per-size figures."""
    curves, kept = {}, []
    for row in rows:
        parsed = curve_gate.parse(row["metric"])
        if parsed is None:
            continue
        kept.append(row)
        case = compare.parameter_text(row["parameters"])
        curves.setdefault((parsed[0], case), {}).setdefault(parsed[1], []).append(row["value"])
    return {k: v for k, v in curves.items() if len(v) >= 2}, kept


def _judged(run_rows, base_rows):
    """{(family, case text, size): (verdict, change, tolerated)} for the run's per-size figures."""
    out = {}
    for entry in compare.compare_rows(base_rows, run_rows):
        parsed = curve_gate.parse(entry["metric"])
        if parsed and entry.get("curve") and entry["verdict"] in ("regressed", "changed"):
            out[(parsed[0], entry["parameters"], parsed[1])] = (entry["verdict"], entry.get("change"),
                                                               bool(entry.get("tolerated")))
    return out


def draw(check, sources, out):
    per_source = [(source, *_size_rows(source.rows)) for source in sources]
    families = [f for f in FAMILIES if any(f == fam for _, curves, _ in per_source for fam, _ in curves)]
    baseline = next(((s, rows) for s, _, rows in per_source if s.is_baseline), None)
    if not families or (baseline is None and check in ALREADY_DRAWN):
        return common.Drawn()   # nothing per size (a run recorded before them): the check's own figure stands
    fig, axes = common.new(common.WIDE if len(families) > 1 else common.SIZE, panels=len(families))
    axes = list(axes) if len(families) > 1 else [axes]
    colours, failing, tolerated = {}, 0, 0
    for source, curves, rows in per_source:
        judged = _judged(rows, baseline[1]) if baseline and not source.is_baseline else {}
        for (family, case), points in sorted(curves.items()):
            ax = axes[families.index(family)]
            colour = colours.setdefault(case, f"C{len(colours) % 10}")
            sizes = sorted(points)
            values = [stats.median(points[s]) for s in sizes]
            ax.plot(sizes, values, marker="o", markersize=2.5, color=colour,
                    label=common.series_name(case, source, sources), **common.line_style(source))
            labelled = 0
            for size, value in zip(sizes, values):
                verdict = judged.get((family, case, size))
                if verdict is None:
                    continue
                _, change, was_tolerated = verdict
                if was_tolerated:
                    tolerated += 1
                    ax.plot([size], [value], "o", markersize=9, markerfacecolor="none", markeredgecolor="orange",
                            markeredgewidth=1.6)
                    continue
                failing += 1
                ax.plot([size], [value], "x", markersize=10, color="red", markeredgewidth=2)
                if change is not None and labelled < _MAX_LABELLED:
                    ax.annotate(f"{size} B {change * 100:+.0f}%", (size, value), textcoords="offset points",
                                xytext=(4, 6), fontsize=7, color="red")
                    labelled += 1
    for family, ax in zip(families, axes):
        unit, direction, meaning = SIZE_FAMILIES[family]
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
        ax.set_ylabel(f"{family} [{unit}] ({direction} is better)")
        ax.set_title(meaning, fontsize=8)
    # what the marks mean, once, in the first panel's legend
    if failing:
        axes[0].plot([], [], "x", color="red", markeredgewidth=2, label=f"regressed size ({failing}; the curve fails)")
    if tolerated:
        axes[0].plot([], [], "o", markerfacecolor="none", markeredgecolor="orange",
                     label=f"regressed size within the allowed count ({tolerated})")
    what = "against the baseline (dashed)" if baseline else "measured at every size"
    path = common.save(fig, axes, f"{check}: measured curves {what}", out / f"{common.safe(check)}_curves.png")
    return common.Drawn([path])
