"""NUMA policy (paper 000 Fig. 7, paper 003's NUMA distances): Mcells/s per memory policy as
grouped bars with each policy's speed over no policy written on it; memory bandwidth per policy."""
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
    series = [(common.series_name(k.rsplit("_", 1)[0] + " kernel", s, sources),
               [common.median_of(s.rows, k, {"policy": p}) for p in policies], common.bar_style(s, i))
              for i, (s, k) in enumerate((s, k) for s in sources for k in kernels)]
    common.bars(ax, [f"policy={p}" for p in policies], series)
    ax.set_xlabel("memory policy (numactl)")
    ax.set_ylabel(f"memory bandwidth [{unit}]")
    return common.Drawn([common.save(fig, ax, f"{check}: memory bandwidth per NUMA policy",
                                     out / f"{common.safe(check)}_policy.png")])


def draw(check, sources, out):
    if check == "NumaBandwidth":
        return _bandwidth(check, sources, out)
    if check == "NumaSolver":
        return case_bars.draw(check, sources, out, metric="mcells_per_s", group="policy",
                              title=f"{check}: solver rate per memory policy", xlabel="memory policy (numactl)",
                              ylabel="solver rate [Mcells/s]", stem="policy")
    return sweep_bars.draw(
        check, sources, out, baseline=lambda case: "unpinned", group_of=lambda case: "",
        groups=("",), series_of=lambda case: case, series=_POLICIES, where_of=_by_placement,
        title=f"{check}: solver rate per memory policy (on the bars: speed over unpinned)",
        xlabel="rank placement; bars: memory policy (same nodes, grid, steps and ranks x threads)", stem="policy")
