"""Binding (paper 000 Fig. 6): Mcells/s per placement of the ranks (one per node, socket, core),
as grouped bars with each placement's speed over rank-per-core written on it, on all nodes; and each
placement's speed over rank-per-core against the node count where the sweep ran several."""
from yeebench.results.figures import case_bars, sweep_bars

CHECKS = ("FdtdBindingSweep", "SolverPlacement")
KEY = {"FdtdBindingSweep": ("per_socket_over_per_core", "per_node_over_per_core", "*_over_per_core*"),
       "SolverPlacement": ("mcells_per_s",)}

_PLACEMENTS = ("per_node", "per_socket", "per_core")


def _placement(case):
    return case[:-len("_rankfile")] if case.endswith("_rankfile") else case


def draw(check, sources, out):
    if check == "SolverPlacement":
        return case_bars.draw(check, sources, out, metric="mcells_per_s", group="layout", series="method",
                              title=f"{check}: solver rate per rank layout and placement method",
                              xlabel="rank layout (nodes:sockets:cores)", ylabel="solver rate [Mcells/s]",
                              stem="layout")
    baseline = lambda case: "per_core_rankfile" if case.endswith("_rankfile") else "per_core"  # noqa: E731
    drawn = sweep_bars.draw(
        check, sources, out,
        baseline=baseline,
        group_of=_placement, groups=_PLACEMENTS,
        series_of=lambda case: "rankfile" if case.endswith("_rankfile") else "--map-by",
        series=("--map-by", "rankfile"),
        title=f"{check}: solver rate per rank placement (on the bars: speed over rank per core)",
        xlabel="rank placement (same nodes, grid, steps and ranks x threads)", stem="placement")
    drawn += sweep_bars.curve(check, sources, out, baseline=baseline,
                              title=f"{check}: speed over rank per core against node count",
                              ylabel="speed over rank per core [x]", stem="placement")
    return drawn
