"""NUMA policy (paper 000 Fig. 7, paper 003's NUMA distances): Mcells/s per memory policy as
grouped bars with each policy's speed over no policy written on it (all nodes) and against the node
count where the sweep ran several; memory bandwidth per policy."""
from yeebench.results.figures import case_bars, common, sweep_bars

CHECKS = ("FdtdNumaSweep", "NumaSolver", "NumaBandwidth")
KEY = {"FdtdNumaSweep": ("localalloc_over_unpinned", "*_over_unpinned"),
       "NumaSolver": ("mcells_per_s",), "NumaBandwidth": ("triad_bw", "copy_bw")}

_POLICIES = ("unpinned", "localalloc", "interleave")


def _by_placement(rows):
    placements = sorted({str(r["parameters"].get("placement")) for r in rows})
    return [({"placement": p}, f"placement={p}") for p in placements]


def _bandwidth(check, sources, out):
    fig, ax = common.new()
    policies = sorted({str(r["parameters"].get("policy")) for s in sources for r in s.rows})
    kernels = sorted({r["metric"] for s in sources for r in s.rows if r["unit"].endswith("B/s")})
    unit = next((r["unit"] for s in sources for r in s.rows if r["unit"].endswith("B/s")), "GB/s")
    if not kernels or len(policies) < 2 and len(sources) < 2:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: one memory policy measured ({', '.join(policies)}): "
                                   "its bandwidths are in the table"])
    series, texts = [], {}
    for s in sources:
        for k in kernels:
            values = [common.median_of(s.rows, k, {"policy": p}) for p in policies]
            base = values[policies.index("none")] if "none" in policies else None
            for g, value in enumerate(values):
                if base and value is not None:   # each policy's bandwidth over no policy, same kernel
                    texts[(len(series), g)] = "base" if policies[g] == "none" else f"x{value / base:.2f}"
            series.append((common.series_name(k.rsplit("_", 1)[0] + " kernel", s, sources), values,
                           common.bar_style(s, len(series))))
    common.bars(ax, [f"policy={p}" for p in policies], series, lambda s, g: texts.get((s, g)))
    ax.set_xlabel("memory policy (numactl)")
    ax.set_ylabel(f"memory bandwidth [{unit}]")
    return common.Drawn([common.save(fig, ax, f"{check}: memory bandwidth per NUMA policy (on the bars: over no policy)",
                                     out / f"{common.safe(check)}_policy.png")])


def draw(check, sources, out):
    if check == "NumaBandwidth":
        return _bandwidth(check, sources, out)
    if check == "NumaSolver":
        return case_bars.draw(check, sources, out, metric="mcells_per_s", group="policy",
                              title=f"{check}: solver rate per memory policy", xlabel="memory policy (numactl)",
                              ylabel="solver rate [Mcells/s]", stem="policy")
    drawn = sweep_bars.draw(
        check, sources, out, baseline=lambda case: "unpinned", group_of=lambda case: "",
        groups=("",), series_of=lambda case: case, series=_POLICIES, where_of=_by_placement,
        title=f"{check}: solver rate per memory policy (on the bars: speed over unpinned)",
        xlabel="rank placement; bars: memory policy (same nodes, grid, steps and ranks x threads)", stem="policy")
    drawn += sweep_bars.curve(check, sources, out, baseline=lambda case: "unpinned", where_of=_by_placement,
                              title=f"{check}: speed over unpinned against node count",
                              ylabel="speed over unpinned [x]", stem="policy")
    return drawn
