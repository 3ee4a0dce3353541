"""Scaling (paper 000 Fig. 12, paper 002 Fig. 3): parallel efficiency against cores or nodes,
with the ideal 100 % line; packing as the full-over-half time ratio against ranks."""
import re

from yeebench.results.figures import common, lines

CHECKS = ("FdtdStrongScaling", "FdtdWeakScaling", "FdtdNodeScaling", "FdtdPackingSweep")
KEY = {"FdtdStrongScaling": ("parallel_efficiency",), "FdtdWeakScaling": ("parallel_efficiency",),
       "FdtdNodeScaling": ("efficiency_vs_fewest_nodes",), "FdtdPackingSweep": ("full_over_half_seconds",)}

KEY_AT_LARGEST = {"FdtdStrongScaling": "cores_used", "FdtdWeakScaling": "cores_used", "FdtdPackingSweep": "ranks"}


def _nodes(row):
    found = re.fullmatch(r"efficiency_(\d+)_nodes", row["metric"])
    return float(found.group(1)) if found else None


def draw(check, sources, out):
    if check == "FdtdNodeScaling":
        return lines.draw(check, sources, out, select=lambda r: _nodes(r) is not None, x_of=_nodes,
                          x_param="nodes", xlabel="nodes (rank per socket)",
                          ylabel="parallel efficiency vs the fewest nodes [%]", ideal=100.0,
                          title=f"{check}: parallel efficiency against nodes", stem="efficiency")
    if check == "FdtdPackingSweep":
        return lines.draw(check, sources, out, select=lambda r: r["metric"] == "full_over_half_seconds",
                          x_of=common.parameter_value("ranks"),
                          x_param="ranks", xlabel="ranks",
                          ylabel="time fully packed / half packed [x]", ideal=1.0,
                          title=f"{check}: cost of packing every core (above 1: full nodes are slower)",
                          stem="packing")
    return lines.draw(check, sources, out, select=lambda r: r["metric"] == "parallel_efficiency",
                      x_of=common.parameter_value("cores_used"),
                      x_param="cores_used", xlabel="cores used", ylabel="parallel efficiency [%]", ideal=100.0,
                      title=f"{check}: parallel efficiency against cores", stem="efficiency")
