"""Collectives (paper 004): OSU latency against message size per collective implementation, with
the alpha-beta lower bound the check measured it against; the solver's rate per implementation
of its every-step Allreduce as bars with the speed over coll/tuned written on them (all nodes), and
that speed against the node count where the profile ran several; OSU's time over coll/tuned (geometric
mean over message sizes) against the node count, a line per collective and implementation."""
import re

from yeebench import stats
from yeebench.results.figures import common, sweep_bars

CHECKS = ("OsuCollective", "FdtdCollectiveProfile", "OsuCollectiveNodeCurve")
KEY = {"OsuCollective": ("latency_8B", "latency_*"),
       "FdtdCollectiveProfile": ("*_over_tuned", "tuned_mcells_per_s"),
       "OsuCollectiveNodeCurve": ("over_tuned", "latency_*")}


def _curves(rows):
    """{(collective, implementation, procs): {size: (latency us, efficiency %)}} from the rows."""
    curves = {}
    for row in rows:
        found = re.fullmatch(r"(latency|efficiency)_(\d+)B", row["metric"])
        if not found:
            continue
        collective, _, impl = str(row["parameters"].get("case", "?:?")).partition(":")
        key = (collective, impl, row["parameters"].get("num_procs"))
        point = curves.setdefault(key, {}).setdefault(int(found.group(2)), {})
        point.setdefault(found.group(1), []).append(row["value"])
    return curves


def _osu(check, sources, out):
    fig, ax = common.new()
    drawn = 0
    for source in sources:
        for index, ((coll, impl, procs), points) in enumerate(sorted(_curves(source.rows).items())):
            sizes = sorted(s for s in points if "latency" in points[s])
            if len(sizes) < 2:
                continue
            lat = [stats.median(points[s]["latency"]) for s in sizes]
            name = common.series_name(f"{coll}, implementation={impl}, ranks={procs}", source, sources)
            ax.plot(sizes, lat, marker="o", markersize=3, color=f"C{index % 10}", label=name,
                    **common.line_style(source))
            bound = [(s, t * stats.median(points[s]["efficiency"]) / 100) for s, t in zip(sizes, lat)
                     if "efficiency" in points[s]]
            if bound and not source.is_baseline:
                ax.plot([s for s, _ in bound], [b for _, b in bound], linestyle=":", color=f"C{index % 10}",
                        label=f"alpha-beta lower bound, ranks={procs}")
            drawn += 1
    if not drawn:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: no latency curve of two or more message sizes in this run"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size [B]")
    ax.set_ylabel("time per call [us]")
    return common.Drawn([common.save(fig, ax, f"{check}: latency against message size per implementation "
                                              "(dotted: lower bound)", out / f"{common.safe(check)}_size.png")])


def _node_ratios(rows):
    """{case: {nodes: [rows]}} of the `over_tuned_<n>_nodes` figures OsuCollectiveNodeCurve records."""
    out = {}
    for found, row in common.matching(rows, r"over_tuned_(\d+)_nodes"):
        out.setdefault(str(row["parameters"].get("case", "?")), {}).setdefault(int(found.group(1)), []).append(row)
    return out


def _osu_node_curve(check, sources, out):
    lines = [(f"{case} over tuned", source, by_count)
             for source in sources for case, by_count in sorted(_node_ratios(source.rows).items())]
    return sweep_bars.node_count_lines(
        check, sources, lines, unity="as fast as coll/tuned",
        xlabel="nodes (a rank per core; each implementation beside tuned in one job)",
        ylabel="time over coll/tuned, geometric mean over sizes [x] (< 1: faster)",
        title=f"{check}: OSU collective time over coll/tuned against node count (paper 004's axis)",
        path=out / f"{common.safe(check)}_nodes.png")


def draw(check, sources, out):
    if check == "OsuCollective":
        return _osu(check, sources, out)
    if check == "OsuCollectiveNodeCurve":
        return _osu_node_curve(check, sources, out)
    impls = sorted(sweep_bars.rates([r for s in sources for r in s.rows]))
    drawn = sweep_bars.draw(
        check, sources, out, baseline=lambda case: "tuned", group_of=lambda case: "", groups=("",),
        series_of=lambda case: case, series=impls,
        where_of=lambda rows: [({}, "Allreduce every step")],
        title=f"{check}: solver rate per collective implementation (on the bars: speed over tuned)",
        xlabel="collective implementation (Open MPI coll component), same job", stem="implementation")
    drawn += sweep_bars.curve(check, sources, out, baseline=lambda case: "tuned",
                              title=f"{check}: solver speed over coll/tuned against node count (paper 004 Fig. 5)",
                              ylabel="speed over coll/tuned [x]", stem="implementation")
    return drawn
