"""The solver's messages (paper 002 Table 1 and Fig. 4, paper 001's 1/6 finding): halo time per
step against ranks; time per exchange against the exchanged bytes on log axes."""
import re

from yeebench.results.figures import common, lines

CHECKS = ("FdtdMessageStats", "HaloMessageSizes")
KEY = {"FdtdMessageStats": ("halo_over_compute", "halo_ms_per_step"), "HaloMessageSizes": ("halo_us_*",)}


def _bytes(row):
    found = re.fullmatch(r"halo_us_(\d+)B", row["metric"])
    return float(found.group(1)) if found else None


def draw(check, sources, out):
    if check == "HaloMessageSizes":
        return lines.draw(check, sources, out, select=lambda r: _bytes(r) is not None, x_of=_bytes,
                          x_param="bytes", xlabel="bytes per exchange [B]", ylabel="time per exchange [us]",
                          title=f"{check}: halo exchange time against message size", stem="size", log=True)
    return lines.draw(check, sources, out, select=lambda r: r["metric"] == "halo_ms_per_step",
                      x_of=common.parameter_value("ranks"),
                      x_param="ranks", xlabel="ranks (1-D split along x)", ylabel="halo exchange per step [ms]",
                      title=f"{check}: halo exchange time per step against ranks", stem="ranks")
