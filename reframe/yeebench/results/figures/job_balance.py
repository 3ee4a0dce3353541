"""Job balancing (paper 000 Fig. 5): Mcells/s on one node against processes per core."""
from yeebench.results.figures import common, lines

CHECKS = ("FdtdJobBalance",)
KEY = ("mcells_per_s",)


def draw(check, sources, out):
    return lines.draw(check, sources, out, select=lambda r: r["metric"] == "mcells_per_s",
                      x_of=common.parameter_value("load"),
                      x_param="load", xlabel="processes per core (one node, single-threaded ranks)",
                      ylabel="solver rate [Mcells/s]", title=f"{check}: solver rate against processes per core",
                      stem="load")
