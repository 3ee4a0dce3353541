"""Output per format and strategy, one test case each (IoOutput): time per output step against
N^3, one line per format and strategy (paper 001, Fig. 3, one case per ReFrame test)."""
from yeebench.results.figures import lines

CHECKS = ("IoOutput",)
KEY = ("io_seconds_per_step",)


def _cells(row):
    try:
        return float(row["parameters"]["n_per_rank"]) ** 3
    except (KeyError, TypeError, ValueError):
        return None


def draw(check, sources, out):
    return lines.draw(check, sources, out, select=lambda r: r["metric"] == "io_seconds_per_step", x_of=_cells,
                      x_param="n_per_rank", xlabel="cells per rank, N^3", ylabel="time per output step [s]",
                      title=f"{check}: output time per step against N^3", stem="time", log=True)
