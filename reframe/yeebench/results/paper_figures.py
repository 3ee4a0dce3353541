"""The seed papers' published figures (../shared/seeds/README.md), kept as data in this one place.

Each entry says which of our figures measures the same thing: a check-name pattern, a metric
pattern and optional parameter values (shell patterns). The report prints the paper's figure
beside ours; their machines are not ours, so it is context, never a verdict.
"""
import fnmatch
from collections import namedtuple

PaperFigure = namedtuple("PaperFigure", "paper check metric params value unit what")

PAPER_FIGURES = (
    # 000: parallel FDTD (GEMS) on 18 nodes of 2x Xeon X5550/E5520, binding and NUMA policy
    PaperFigure("000", "*Solver*", "mcells_per_s", {"binding": "*socket*"}, 5300, "Mcells/s",
                "18 nodes, one rank per socket"),
    PaperFigure("000", "*Solver*", "mcells_per_s", {"binding": "*node*"}, 4900, "Mcells/s",
                "18 nodes, one rank per node"),
    PaperFigure("000", "*Solver*", "mcells_per_s", {"binding": "*core*"}, 2700, "Mcells/s",
                "18 nodes, one rank per core"),
    PaperFigure("000", "NumaSolver", "mcells_per_s", {}, 1.5, "x",
                "local memory policy vs default: 3400 -> 5400 Mcells/s on 18 nodes"),
    PaperFigure("000", "NetPIPE*", "peak_bw", {}, 33462.93 * 2**20 / 8 / 1e6, "MB/s",
                "NetPIPE inside a node (33462.93 Mbps)"),
    # 002: OSU on DDR InfiniBand, blocking send/recv between nodes
    PaperFigure("002", "Osu*Pt2Pt*", "latency_1B", {}, 3.19, "us", "OSU 1-byte latency, DDR InfiniBand"),
    PaperFigure("002", "Osu*Pt2Pt*", "latency_4KB", {}, 11.75, "us", "OSU 4 KB latency, DDR InfiniBand"),
    PaperFigure("002", "Osu*Pt2Pt*", "peak_bw", {}, 1019, "MB/s", "OSU max bandwidth, DDR InfiniBand"),
)


def _matches(fig, row):
    if not fnmatch.fnmatchcase(row["check"], fig.check) or not fnmatch.fnmatchcase(row["metric"], fig.metric):
        return False
    return all(fnmatch.fnmatchcase(str(row["parameters"].get(k, "")), v) for k, v in fig.params.items())


def for_row(row):
    """The paper figures that published the measurement this row holds."""
    return [fig for fig in PAPER_FIGURES if _matches(fig, row)]
