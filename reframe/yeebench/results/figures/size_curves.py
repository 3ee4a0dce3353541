"""Measured curves against the baseline's, size by size: what the gate judged (results/curve_gate.py).

One panel per figure family a check recorded at every size (yeebench.curve_foms.SIZE_FAMILIES:
point-to-point latency and bandwidth, a collective's latency and efficiency), one line per case and
source (the baseline dashed), on log axes; each point is the best repeat, the value the gate compares. Against a baseline, each size is judged as the gate judges it
(compare.compare_rows: its own noise, the per-size threshold, the curve's count of regressed sizes):
a size of a failing curve is marked with a red cross and its change, a regression the count tolerated
with an orange ring. Drawn after the check's own figure (figures.ALSO); where that one already shows
the measured curve (a collective's), only against a baseline.
"""
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
    return {k: v for k, v in curves.items() if len(v) >= curve_gate.MIN_CURVE_SIZES}, kept


def _judged(run_rows, base_rows):
    """{(family, case text, size): (mark, change)} for the run's per-size figures that moved the worse
    way: mark 'regressed' (the curve fails), 'tolerated' (within the allowed count) or 'unjudged' (beyond
    the per-size threshold, but the noise is unknown or the run's repeats disagree: see the table)."""
    out = {}
    for entry in compare.compare_rows(base_rows, run_rows):
        parsed = curve_gate.parse(entry["metric"])
        if not parsed or not entry.get("curve"):
            continue
        if entry.get("tolerated"):
            mark = "tolerated"
        elif entry["verdict"] == "regressed":
            mark = "regressed"
        elif entry["verdict"] == "insufficient" and (entry.get("change") or 0) > 0:
            mark = "unjudged"
        else:
            continue
        out[(parsed[0], entry["parameters"], parsed[1])] = (mark, entry.get("change"))
    return out


#: How each mark is drawn and what it says in the legend.
MARKS = {
    "regressed": (dict(marker="x", color="red", markersize=10, markeredgewidth=2, linestyle="none"),
                  "regressed size (the curve fails)"),
    "tolerated": (dict(marker="o", markersize=9, markerfacecolor="none", markeredgecolor="orange",
                       markeredgewidth=1.6, linestyle="none"), "regressed size within the allowed count"),
    "unjudged": (dict(marker="D", markersize=7, markerfacecolor="none", markeredgecolor="grey",
                      markeredgewidth=1.2, linestyle="none"),
                 "worse beyond the threshold, not judged (noise unknown or repeats disagree)"),
}


def draw(check, sources, out):
    per_source = [(source, *_size_rows(source.rows)) for source in sources]
    families = [f for f in FAMILIES if any(f == fam for _, curves, _ in per_source for fam, _ in curves)]
    baseline = next(((s, rows) for s, _, rows in per_source if s.is_baseline), None)
    if not families or (baseline is None and check in ALREADY_DRAWN):
        return common.Drawn()   # nothing per size (a run recorded before them): the check's own figure stands
    fig, axes = common.new(common.WIDE if len(families) > 1 else common.SIZE, panels=len(families))
    axes = list(axes) if len(families) > 1 else [axes]
    names = common.varying([r for _, _, rows in per_source for r in rows])   # what tells the cases apart
    colours, counts = {}, dict.fromkeys(MARKS, 0)
    for source, curves, rows in per_source:
        judged = _judged(rows, baseline[1]) if baseline and not source.is_baseline else {}
        params = {compare.parameter_text(r["parameters"]): r["parameters"] for r in rows}
        for (family, case), points in sorted(curves.items()):
            ax = axes[families.index(family)]
            colour = colours.setdefault(case, f"C{len(colours) % 10}")
            sizes = sorted(points)
            direction = SIZE_FAMILIES[family][1]
            values = [compare.location(points[s], direction) for s in sizes]   # the value the gate compares
            name = common.label(params[case], names) if names else "measured"
            ax.plot(sizes, values, marker="o", markersize=2.5, color=colour, **common.line_style(source),
                    label=common.series_name(name, source, sources) if ax is axes[0] else "_nolegend_")
            labelled = 0
            for size, value in zip(sizes, values):
                mark, change = judged.get((family, case, size), (None, None))
                if mark is None:
                    continue
                counts[mark] += 1
                ax.plot([size], [value], **MARKS[mark][0])
                if mark == "regressed" and change is not None and labelled < _MAX_LABELLED:
                    ax.annotate(f"{size} B {change * 100:+.0f}%", (size, value), textcoords="offset points",
                                xytext=(4, 6), fontsize=7, color="red")
                    labelled += 1
    for family, ax in zip(families, axes):
        unit, direction, _ = SIZE_FAMILIES[family]
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
        ax.set_ylabel(f"{family} [{unit}] ({direction} is better)")
    for mark, count in counts.items():   # what the marks mean, once, in the first panel's legend
        if count:
            axes[0].plot([], [], **MARKS[mark][0], label=f"{MARKS[mark][1]}: {count}")
    what = "against the baseline (dashed)" if baseline else "measured at every size"
    what += ", best repeat per size"
    path = common.save(fig, axes, f"{check}: measured curves {what}", out / f"{common.safe(check)}_curves.png")
    return common.Drawn([path])
