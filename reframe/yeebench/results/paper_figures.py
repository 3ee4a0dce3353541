"""The seed papers' experiments (../shared/seeds/), mapped to the suite's checks: the one place.

Every table and figure of the five papers is an `Experiment`: the check, parameters and figure of
merit that reproduce it, the paper's published values, and a status:

- ``like for like``: measured the way the paper measured it (its scale is the machine's);
- ``instead``: the paper's own subject is out of reach (its code, hardware or site), the row's
  check measures the nearest thing the suite can, and `how` says what differs;
- ``not reproducible``: nothing here measures it; `how` says why;
- ``no measurement``: a drawing or photograph, nothing to measure.

The per-paper pages (reframe/papers/NNN.md) carry this table between their mapping markers
(`python3 -m yeebench.results.paper_figures --write reframe/papers` renders it; a unit test fails
when a page and this data disagree), and `yeebench results report` prints the published values
beside the measured figure, with a link to the page. Their machines are not ours: context, never
a verdict.
"""
import argparse
import fnmatch
import re
import sys
from collections import namedtuple
from pathlib import Path

from yeebench import safe_io
from yeebench.results import paper_conditions

#: One published value: what the paper printed (value, unit), what it measured, and the conditions of
#: this value alone (paper_conditions; a curve's points each have their own node count).
Published = namedtuple("Published", "value unit what when", defaults=((),))

#: `ci`: why no CI stage selects the row's check (empty: one does; a unit test holds both ways).
#: `when`: the conditions (paper_conditions.Condition) a recorded row must meet before the report prints
#: the row's published values beside it; otherwise it says what the figure needs. Declared for every row
#: with a published value (an empty tuple: nothing to hold, said on purpose).
#: `curve`: the metric's node-curve twins `<metric>_<n>_nodes` are the same figure on n nodes.
#: `instead`: for an `instead` row with a published value, what our figure is of, in a few words; the
#: report labels the pair with it, never as like for like.
#: `ours`: a fact (paper_conditions.derived) printed as our figure in place of the row's value.
Experiment = namedtuple("Experiment", "paper item title status check params metric published how ci when curve "
                                      "instead ours")

#: What the report shows beside a measured row (see for_row): the published value, or (value None)
#: what the figure needs and what this run had.
PaperFigure = namedtuple("PaperFigure", "paper item value unit what page anchor status instead needs have ours",
                         defaults=("", "", "", "", None))

STATUSES = ("like for like", "instead", "not reproducible", "no measurement")

TITLES = {
    "000": "Parallel FDTD with processor affinity and NUMA policy (GEMS, 18 nodes, 10 GbE)",
    "001": "Data format selection for an I/O-intensive large-scale FDTD (ASCII, binary, HDF5)",
    "002": "PIC code performance on a DDR InfiniBand cluster",
    "003": "Acceptance of a GPGPU cluster (ARL Thufir): 17 tests, effectiveness, performance issues",
    "004": "MPI collective offload (FCA/Core-Direct, MXM) for LS-DYNA",
}

PAGES_DIR = "reframe/papers"   # relative to the repository root
MBPS = 2 ** 20 / 8 / 1e6       # NetPIPE "Mbps" (2^20 bit/s) in MB/s (10^6 B/s)
# Why a rank count above CI's cores is not in CI: the check itself skips it there, with this reason.
CI_FEW_CORES = ("CI has 2 cores (the virtual cluster: 5 virtual nodes of 2 cores each, sharing them): the check "
                "skips rank counts its nodes cannot hold; CI runs its ranks=2 case, the same job at 2 processes")


def _e(paper, item, title, status, check="", params=None, metric="", published=(), how="", ci="", when=None,
       curve=False, instead="", ours=None):
    return Experiment(paper, item, title, status, check, dict(params or {}), metric, tuple(published), how, ci,
                      None if when is None else tuple(when), curve, instead, ours)


C = paper_conditions
P = Published
#: Paper 000's figures: 18 nodes of 2 sockets (2 NUMA nodes) each; a comparison of placements needs
#: 2 sockets per node to differ at all, one of memory policies 2 NUMA nodes (yeebench.comparisons.NEEDS).
ON_18 = C.exactly("nodes", 18)
TWO_SOCKETS = C.at_least("sockets_per_node", 2)
TWO_NUMA = C.at_least("numa_nodes_per_node", 2)
#: Paper 004's FCA: a hardware offload of collectives between nodes; UCC and HCOLL are its successors.
OFFLOAD = C.one_of("implementation", "ucc", "hcoll")
#: Paper 002's OSU figures: host buffers over the RDMA-capable transport (its MVAPICH over InfiniBand).
OSU_002 = (C.exactly("nodes", 2), C.one_of("buffers", "host"), C.one_of("transport", "ucx"))
#: Paper 002's Table 1: 2 ranks per node (2 of each node's 4 cores).
TABLE_002 = (C.exactly("ranks_per_node", 2),)
#: Paper 003's NUMA costs: the distance table's ratios, each at its own distance.
NUMA_COSTS = (P(60, "%", "remote memory cost at distance 16 (16/10)", (C.exactly("numa_distance", 16),)),
              P(100, "%", "remote memory cost at distance 20 (20/10)", (C.exactly("numa_distance", 20),)))
BYTES_INSTEAD = "one process's field faces (the busiest rank's), without the paper's particles"
LATENCY_INSTEAD = "the slowest rank's fields-only halo exchange time, not the PIC code's messages"
RUN_INSTEAD = "a fields-only run of the check's steps, not the PIC simulation"

EXPERIMENTS = (
    # ---------------------------------------------------------------- 000
    _e("000", "Fig. 1", "Yee cell: E and H near a subdomain interface", "no measurement",
       how="drawing; the solver's halo exchange sends exactly these tangential components (solver/README.md)"),
    _e("000", "Fig. 2", "UMA architecture", "no measurement", how="drawing"),
    _e("000", "Fig. 3", "NUMA architecture", "no measurement",
       how="drawing; every result records this machine's NUMA layout (`numactl --hardware`, hwloc) in its provenance"),
    _e("000", "Table 1", "the cluster: 21 nodes, 2x Xeon E5520, 12 GB, 10 GbE", "no measurement",
       how="hardware description; the suite records the topology of the machine it ran on with every result"),
    _e("000", "Table 2", "NetPIPE bandwidth inside a node vs between nodes (about 4x)", "like for like",
       "NetPIPEPt2Pt", {"locality": "intra"}, "peak_bw",
       (P(33462.93 * MBPS, "MB/s", "NetPIPE inside a node, 33462.93 Mbps"),),
       how="`locality=intra` and `inter` (the inter case needs 2 nodes: the virtual cluster in CI); "
           "8822.02 Mbps = 1156 MB/s between nodes; inside a node the paper's Open MPI used shared memory, "
           "so ob1-tcp's loopback is not the same figure",
       when=(C.one_of("transport", "ob1-vader", "ucx"),)),
    _e("000", "Table 2 (between nodes)", "NetPIPE bandwidth between nodes", "like for like",
       "NetPIPEPt2Pt", {"locality": "inter"}, "peak_bw",
       (P(8822.02 * MBPS, "MB/s", "NetPIPE between nodes, 8822.02 Mbps"),),
       how="2 nodes; on the virtual cluster the link is a veth pair, not a 10 GbE NIC",
       when=(C.exactly("nodes", 2),)),
    _e("000", "Fig. 4", "NetPIPE latency inside vs between nodes (> 3x)", "like for like",
       "NetPIPEPt2Pt", {"locality": "*"}, "latency_1B", (),
       how="no value printed, only the ratio; compare `latency_1B` of `locality=inter` and `intra`"),
    _e("000", "Fig. 5", "job balancing: Mcells/s on one node vs number of processes", "like for like",
       "FdtdJobBalance", {"load": "*"}, "mcells_per_s", (),
       how="processes per core 0.25 ... 2 on one node; no values printed"),
    _e("000", "Fig. 6", "binding: rank per socket / per node / per core on 18 nodes", "like for like",
       "FdtdBindingSweep", {}, "per_socket_mcells_per_s",
       (P(5300, "Mcells/s", "18 nodes, one rank per socket"),),
       how="one job: the three placements on the same nodes (all of the partition's), the same grid, steps "
           "and ranks x threads (threads fill each rank's socket or node), interleaved over rounds; each "
           "placement checked from the solver's report; every placement twice, by the launcher's --map-by and "
           "by an Open MPI rankfile as the paper placed them (per_socket_rankfile_mcells_per_s, ...); the plain "
           "names on all the partition's nodes (-S nodes=N for fewer), and every case again on 1, 2, 4 ... nodes "
           "in the same job, the paper's axis: <figure>_<n>_nodes (Fig. 6 (node curve)); "
           "with one socket per node (this machine, every virtual node) per socket and per node are the same run; "
           "the paper's value stands beside the figure on 18 nodes only (the plain name on a partition of 18, or "
           "<figure>_18_nodes of a larger one)",
       when=(ON_18, C.one_of("placement", "per-socket"), TWO_SOCKETS), curve=True),
    _e("000", "Fig. 6 (per node)", "binding: one rank per node", "like for like",
       "FdtdBindingSweep", {}, "per_node_mcells_per_s", (P(4900, "Mcells/s", "18 nodes, one rank per node"),),
       when=(ON_18, C.one_of("placement", "per-node"), TWO_SOCKETS), curve=True),
    _e("000", "Fig. 6 (per core)", "binding: one rank per core", "like for like",
       "FdtdBindingSweep", {}, "per_core_mcells_per_s", (P(2700, "Mcells/s", "18 nodes, one rank per core"),),
       when=(ON_18, C.one_of("placement", "per-core")), curve=True),
    _e("000", "Fig. 6 (ratio)", "binding: per socket over per core", "like for like",
       "FdtdBindingSweep", {}, "per_socket_over_per_core",
       (P(5300 / 2700, "x", "per socket / per core, 18 nodes (5300/2700)"),),
       how="per_node_over_per_core likewise (paper: 4900/2700 = 1.81)", when=(ON_18, TWO_SOCKETS), curve=True),
    _e("000", "Fig. 6 (node curve)", "binding over node counts: per socket over per core on 1, 2, 4 ... nodes",
       "like for like", "FdtdBindingSweep", {}, "per_socket_over_per_core_*_nodes",
       how="the paper plots Mcells/s of each binding against 1-18 nodes and prints the 18-node values only; "
           "here every placement runs on each count of 1, 2, 4 ... the partition's nodes in the one job and the "
           "ratios of a count are between its own cases: <case>_mcells_per_s_<n>_nodes, <p>_over_per_core_<n>_nodes "
           "(rankfile twins likewise), per_socket_over_per_node_<n>_nodes (NOT MEASURED on every count with one "
           "socket per node); the report draws the ratios against the node count; the paper's 18-node values "
           "stand beside <figure>_18_nodes (Fig. 6 and its ratio rows)"),
    _e("000", "Fig. 6 (socket over node)", "binding: per socket over per node", "like for like",
       "FdtdBindingSweep", {}, "per_socket_over_per_node",
       (P(5300 / 4900, "x", "per socket / per node, 18 nodes (5300/4900)"),),
       how="emitted only with 2 sockets per node or more; with one socket the two cases are the same run and the "
           "check records per_socket_over_per_node (and its rankfile twin) NOT MEASURED with that reason",
       when=(ON_18, TWO_SOCKETS), curve=True),
    _e("000", "Fig. 6 (rankfile ratio)", "binding by rankfile: per socket over per core", "like for like",
       "FdtdBindingSweep", {}, "per_socket_rankfile_over_per_core_rankfile",
       (P(5300 / 2700, "x", "per socket / per core, 18 nodes (5300/2700)"),),
       how="the paper's method: both placements from rankfiles (Open MPI mpirun only; left out with the reason "
           "where the launcher takes no rankfile); <p>_rankfile_over_<p> compares each with its --map-by twin",
       when=(ON_18, TWO_SOCKETS), curve=True),
    _e("000", "Fig. 7", "NUMA policy vs none: Mcells/s (3400 -> 5400 on 18 nodes, about 1.5x)", "like for like",
       "FdtdNumaSweep", {"placement": "per-socket"}, "localalloc_over_unpinned",
       (P(5400 / 3400, "x", "local memory policy over no policy, 18 nodes (5400/3400)"),),
       how="one job: `unpinned` (no binding, no policy: threads and their first-touch pages land where the "
           "scheduler puts them, the paper's baseline) against the same ranks x threads bound per socket under "
           "numactl --localalloc and --interleave=all; same grid, steps and nodes; with one NUMA node (this "
           "machine, every virtual node) a policy moves no memory: the check records <policy>_over_unpinned "
           "NOT MEASURED with that reason and emits the cases' rates only; every case again on 1, 2, 4 ... nodes "
           "in the same job (Fig. 7 (node curve)); the paper's value stands beside the figure on 18 nodes only",
       when=(ON_18, TWO_NUMA), curve=True),
    _e("000", "Fig. 7 (node curve)", "NUMA policy over node counts: local memory over none on 1, 2, 4 ... nodes",
       "like for like", "FdtdNumaSweep", {"placement": "per-socket"}, "localalloc_over_unpinned_*_nodes",
       how="the paper's curve of Mcells/s with and without the policy against 1-18 nodes (values printed for 18 "
           "only): the three cases on each count of 1, 2, 4 ... the partition's nodes in the one job, "
           "<policy>_over_unpinned_<n>_nodes and <policy>_mcells_per_s_<n>_nodes; with one NUMA node per node "
           "every count's ratios are NOT MEASURED with the reason; the paper's 18-node values stand beside "
           "<figure>_18_nodes (Fig. 7 and its rows), its 4-node ratio beside <figure>_4_nodes (Fig. 11)"),
    _e("000", "Fig. 7 (with NUMA)", "NUMA policy: Mcells/s with local memory", "like for like",
       "FdtdNumaSweep", {"placement": "per-socket"}, "localalloc_mcells_per_s",
       (P(5400, "Mcells/s", "18 nodes, numactl local memory"),), when=(ON_18, TWO_NUMA), curve=True),
    _e("000", "Fig. 7 (without)", "NUMA policy: Mcells/s without a policy", "like for like",
       "FdtdNumaSweep", {"placement": "per-socket"}, "unpinned_mcells_per_s",
       (P(3400, "Mcells/s", "18 nodes, no NUMA policy"),), when=(ON_18, TWO_NUMA), curve=True),
    _e("000", "Figs. 8-10", "reflector antenna fed by a dual-mode horn: geometry, return loss, directivity",
       "not reproducible",
       how="GEMS's antenna model (non-uniform 569x569x1144 mesh, TE11 horn excitation, far field) is not "
           "public and yee has neither; the suite times the paper's other case, the hollow PEC box"),
    _e("000", "Fig. 11", "binding x NUMA policy on 4 nodes (antenna model)", "instead",
       "FdtdNumaSweep", {"placement": "*"}, "localalloc_over_unpinned", (P(1.5, "x", "with NUMA over without, 4 nodes"),),
       how="the hollow PEC box instead of the antenna: every placement (per node, socket, core) as a parameter, "
           "each comparing the memory policies in one job on all nodes; the paper's ratio is of 4 nodes: it stands "
           "beside localalloc_over_unpinned on a partition of 4 nodes or beside localalloc_over_unpinned_4_nodes",
       when=(C.exactly("nodes", 4), TWO_NUMA), curve=True, instead="the hollow PEC box for the antenna model"),
    _e("000", "Fig. 12", "18 vs 4 nodes: parallel efficiency about 90 % (2 h -> 23 min)", "instead",
       "FdtdNodeScaling", {}, "efficiency_vs_4_nodes",
       (P(90, "%", "18 nodes against 4 nodes, antenna model"),),
       how="the PEC box, rank per socket, on 1, 2, 4 ... all nodes in one job; efficiency_<n>_nodes against the "
           "paper's baseline, 4 nodes (its rounded times, 2 h and 23 min, would give 116 %); a partition of 4 nodes "
           "or fewer takes the smallest count the grid fits as baseline (efficiency_vs_<b>_nodes, no published "
           "figure beside it) and records efficiency_vs_4_nodes NOT MEASURED; one node: its case only, efficiency "
           "NOT MEASURED; grid: the paper's cells per node at its baseline (569 x 569 x 1144 / 4 = 9.26e7) on the "
           "baseline's nodes, capped at a quarter of a node's available memory at 96 B per cell (the check records "
           "the grid used; CI's smoke run takes 80^3); the paper's 90 % is 18 nodes against 4: it stands beside "
           "efficiency_vs_4_nodes of a run on 18 nodes only; CI's 5-node virtual cluster (make test-vcluster) "
           "measures efficiency_vs_4_nodes on 5 nodes, with no published figure beside it",
       when=(ON_18,), instead="the hollow PEC box for the antenna model"),
    # ---------------------------------------------------------------- 001
    _e("001", "Fig. 1", "HDF5 write time vs N^3 for 1, 2, 4, 8 PEs, fitted (8 % fit error)", "instead",
       "IoOutputPaper", {}, "hdf5_zlib_fit_rms_error",
       (P(8, "%", "RMS relative error of the fit against the Bezier-smoothed curve"),),
       how="one job: every format x rank count (1, 2, 4 ... the partition's cores; 2 a core only with "
           "-S oversubscribe=true) x size (-S sizes=paper: the paper's 17 sizes 30 ... 190); the paper's "
           "configuration: one I/O server writing one file per PE (root-per-rank: gathered to rank 0, which "
           "writes each rank's block to its own file, every step), hdf5-zlib = one 3-D "
           "dataset of 6-component records, chunked, shuffle + zlib (--hdf5-layout records), a point source at the "
           "centre of the first rank's block, every file fsync'ed inside the output time; the fit is "
           "yeebench.io_fits (least squares of t = a + b N^3 per rank count) and its error is against the "
           "measured points, where the paper first smoothed them with a Bezier curve (of unstated order and "
           "control points) and gives the fit's error against that curve: smoothing takes the noise out of the "
           "error, so the two are not the same figure; extra cases: <format>-per-rank, hdf5-zlib-components and "
           "hdf5-zlib-one-file; the paper fitted 1, 2, 4 and 8 processes: its 8 % stands beside a run of 8 ranks "
           "or more",
       when=(C.at_least("ranks", 8),), instead="the fit's error against the raw points, not a Bezier-smoothed curve"),
    _e("001", "Fig. 2", "HDF5 write time extrapolated to 16 and 256 PEs", "like for like",
       "IoOutputPaper", {}, "hdf5_zlib_seconds_256_ranks", (),
       how="the per-rank-count fits at the largest N, carried over rank counts as a power law (our "
           "assumption; the paper does not say how); hdf5_zlib_seconds_16_ranks likewise; recorded only when "
           "the fit's error is within -S max_fit_error (25 %)"),
    _e("001", "Fig. 3", "ASCII and binary write time vs N^3", "like for like",
       "IoOutputPaper", {}, "*_io_s", (),
       how="<format>_p<P>_n<N>_io_s per case (one writer, a file per PE, fsync'ed); ASCII rows as the paper's: "
           "the cell's Cartesian coordinates and the 6 fields (--ascii-layout coordinates); the report plots them "
           "against N^3 with the fit (IoOutputPaper_time.png)"),
    _e("001", "Fig. 3 (compute)", "compute time of 10 steps, the reference in Fig. 3", "like for like",
       "IoOutputPaper", {}, "compute_s_10_steps", (),
       how="the updates' time of the 10 steps, slowest rank (as the paper), at the largest rank count and N; "
           "p<P>_n<N>_compute_s_10_steps per rank count and size; from a run of the same 10 steps without "
           "output beside the output cases"),
    _e("001", "Fig. 4", "file size per format", "like for like",
       "IoOutputPaper", {}, "*_bytes_per_step", (),
       how="bytes written per output step at the largest case; the fields grow from a point source, as the "
           "paper's, so the compressed HDF5 size is comparable in kind; ASCII holds what the paper's held (x y z "
           "and the 6 fields a grid point); the paper names no number format, so ours is fixed-width exponent "
           "notation with round-trip digits (15 characters a float32), the size set by the grid as the paper's "
           "'data file size in ASCII' reads (shortest decimals, the solver's default, write a zero field as one "
           "character and made ASCII smaller than binary)"),
    _e("001", "Fig. 5", "write time relative to ASCII (binary and HDF5)", "like for like",
       "IoOutputPaper", {}, "*_over_ascii", (),
       how="at the largest rank count and N, paper configuration only (one writer, a file per PE, ASCII rows of "
           "coordinates and fields); every case in the report's plot IoOutputPaper_ratio.png"),
    _e("001", "finding", "HDF5 beats binary only with >= 16 PEs and > 1 GB (ASCII-equivalent)", "like for like",
       "IoOutputPaper", {}, "hdf5_zlib_over_binary",
       (P(1.0, "x", "HDF5/binary time crosses 1 at >= 16 PEs and > 1 GB"),),
       how="below 1 HDF5 is faster; the paper found it above 1 with fewer than 16 processes; the crossing "
           "also needs > 1 GB of ASCII per step (-S sizes=paper); the figure at fewer ranks is recorded, "
           "without the paper's value beside it",
       when=(C.at_least("ranks", 16),)),
    _e("001", "text", "communication about 1/6 of computation, independent of the size", "like for like",
       "IoOutputPaper", {}, "halo_over_compute",
       (P(1 / 6, "x", "interface exchange time / computation time"),),
       how="the paper's geometry: N^3 per rank stacked along one axis (interface N x N), the solver's own "
           "timers (halo exchange / updates, slowest rank) in the runs without output (with one writer the "
           "other ranks wait for it in the next exchange); "
           "p<P>_n<N>_halo_over_compute for every rank count >= 2 and size (the paper: independent of N); "
           "the paper's ranks talked over Gigabit Ethernet, so its figure stands only beside ranks on 2 "
           "nodes or more",
       when=(C.at_least("nodes", 2),)),
    _e("001", "text (spread)", "spread of the PEs' computation time: standard deviation under 10 % of the mean",
       "like for like", "IoOutputPaper", {}, "compute_spread",
       (P(10, "%", "standard deviation of the PEs' computation times over their mean: under 10 %"),),
       how="the solver's update_spread (each rank's update time: the fastest and the standard deviation over "
           "ranks, one reduction at the end of the run) over seconds_mean.update, in the runs of the 10 steps "
           "without output; p<P>_n<N>_compute_spread for every rank count >= 2 and size, compute_spread at the "
           "largest; the paper's figure is a bound (under 10 %): ours below it agrees",
       when=(C.at_least("ranks", 2),)),
    _e("001", "text (files)", "HDF5: many small files faster above 1 MB of data, as few files as possible below",
       "instead", "IoOutputPaper", {}, "hdf5_zlib_per_pe_over_one_file",
       how="the paper read this off Fig. 2's extrapolation (more than 150 files of under 6 KB); here one writer "
           "writes the same compressed HDF5 records as one file per PE (hdf5-zlib) and as one file of the "
           "whole grid (hdf5-zlib-one-file), and hdf5_zlib_per_pe_over_one_file is the first's time over the "
           "second's at the largest rank count and N (< 1: the files per PE were faster), beside "
           "hdf5_zlib_bytes_per_step (the data a step); at this machine's rank counts, not 150 files"),
    # ---------------------------------------------------------------- 002
    _e("002", "Fig. 1", "OSU latency vs message size between two nodes", "like for like",
       "OsuPt2Pt", {"benchmark": "osu_latency", "locality": "inter"}, "latency_1B",
       (P(3.19, "us", "1 byte, DDR InfiniBand"),),
       how="blocking send/recv ping-pong (osu_latency); 4 KB: next row; the paper's buffers were host memory "
           "(OsuPt2Pt buffers=device is another figure) over its MPI's InfiniBand path: its values stand beside "
           "host buffers over UCX only",
       when=OSU_002),
    _e("002", "Fig. 1 (4 KB)", "OSU latency at 4 KB between two nodes", "like for like",
       "OsuPt2Pt", {"benchmark": "osu_latency", "locality": "inter"}, "latency_4KB",
       (P(11.75, "us", "4 KB, DDR InfiniBand"),), when=OSU_002),
    _e("002", "Fig. 2", "OSU uni-directional bandwidth vs message size", "like for like",
       "OsuPt2Pt", {"benchmark": "osu_bw", "locality": "inter"}, "peak_bw",
       (P(1019, "MB/s", "max bandwidth, DDR InfiniBand"),), when=OSU_002),
    _e("002", "Fig. 3", "speedup with 2 vs 4 cores per node (4 per node 1.3x slower at 64)", "like for like",
       "FdtdPackingSweep", {"ranks": "64"}, "full_over_half_seconds",
       (P(1.3, "x", "time with 4 cores per node / 2 cores per node, 64 processes"),),
       how="one job per rank count (2 ... 64): the ranks on all cores of as few nodes as hold them and on half "
           "of each node's cores, the same flat grid split one way (ranks x 1 x 1, the paper's 4000 x 2000 x 1 "
           "scaled to 800 x 400 x 4); the PEC box instead of the PIC code; other rank counts: ranks=*; the "
           "paper's full packing spread 64 ranks over 16 nodes of 4 cores: its 1.3 stands beside a run whose full "
           "packing spans 2 nodes or more (nodes of 32 cores or fewer), not one node against two",
       ci=CI_FEW_CORES, when=(C.at_least("full_packing_nodes", 2),)),
    _e("002", "Fig. 3 (speedup)", "speedup against one process, 4 and 2 cores per node", "like for like",
       "FdtdPackingSweep", {"ranks": "*"}, "full_speedup",
       how="each rank count's job also runs one rank alone on the same grid: full_speedup (all cores of a node) "
           "and half_speedup (half of them) are that time over the case's; over the ranks=2 ... 64 jobs they "
           "are the paper's two curves"),
    _e("002", "Table 1 (8 bytes)", "bytes per step, 8 processes", "instead",
       "FdtdMessageStats", {"ranks": "8"}, "halo_bytes_per_rank_per_step_max", (P(196244, "B", "bytes per step, 8 processes"),),
       how="the solver split along x (ranks x 1 x 1, the paper's 1-D decomposition) of a flat grid (the paper's "
           "4000 x 2000 x 1 scaled to 800 x 400 x 4), half of each node's cores in use; fields only, no particles, "
           "so fewer bytes; the paper counts bytes per process: halo_bytes_per_rank_per_step_max is the most "
           "any rank sent a step (an inner rank of the split, two neighbours), _mean the mean over ranks, and "
           "halo_bytes_per_step the sum over ranks (it grows with the ranks, the paper's does not)",
       ci=CI_FEW_CORES, when=(), instead=BYTES_INSTEAD),
    _e("002", "Table 1 (8 latency)", "total message latency per step, 8 processes", "instead",
       "FdtdMessageStats", {"ranks": "8"}, "halo_ms_per_step", (P(7.4, "ms", "8 processes"),),
       how="time in halo exchange per step on the slowest rank (pack, send, wait, unpack); also "
           "halo_messages_per_step, halo_us_per_message, run_seconds; the paper's is at 2 ranks per node (one "
           "neighbour in another node): its values stand beside a run of 2 ranks per node only",
       ci=CI_FEW_CORES, when=TABLE_002, instead=LATENCY_INSTEAD),
    _e("002", "Table 1 (8 run time)", "run time, 8 processes", "instead",
       "FdtdMessageStats", {"ranks": "8"}, "run_seconds", (P(3660, "s", "61 min, 8 processes, PIC code"),),
       how="the solver's whole run (timers' total) on the same job as the bytes and latency; a fields-only PEC box "
           "of 800 x 400 x 4 cells and the check's 50 steps for the paper's 4000 x 2000 x 1 grid with particles "
           "over its whole simulation: the times are not comparable (the report never prints them beside "
           "run_seconds), their trend over processes is",
       ci=CI_FEW_CORES, when=(C.one_of("code", "pic"),), instead=RUN_INSTEAD),
    _e("002", "Table 1 (16 bytes)", "bytes per step, 16 processes", "instead",
       "FdtdMessageStats", {"ranks": "16"}, "halo_bytes_per_rank_per_step_max", (P(194136, "B", "bytes per step, 16 processes"),),
       ci=CI_FEW_CORES, when=(), instead=BYTES_INSTEAD),
    _e("002", "Table 1 (16 latency)", "total message latency per step, 16 processes", "instead",
       "FdtdMessageStats", {"ranks": "16"}, "halo_ms_per_step", (P(6.4, "ms", "16 processes"),),
       ci=CI_FEW_CORES, when=TABLE_002, instead=LATENCY_INSTEAD),
    _e("002", "Table 1 (16 run time)", "run time, 16 processes", "instead",
       "FdtdMessageStats", {"ranks": "16"}, "run_seconds", (P(1980, "s", "33 min, 16 processes, PIC code"),),
       how="the solver's whole run (timers' total) on the same job as the bytes and latency; a fields-only PEC box "
           "of 800 x 400 x 4 cells and the check's 50 steps for the paper's 4000 x 2000 x 1 grid with particles "
           "over its whole simulation: the times are not comparable (the report never prints them beside "
           "run_seconds), their trend over processes is",
       ci=CI_FEW_CORES, when=(C.one_of("code", "pic"),), instead=RUN_INSTEAD),
    _e("002", "Table 1 (64 bytes)", "bytes per step, 64 processes", "instead",
       "FdtdMessageStats", {"ranks": "64"}, "halo_bytes_per_rank_per_step_max", (P(192436, "B", "bytes per step, 64 processes"),),
       ci=CI_FEW_CORES, when=(), instead=BYTES_INSTEAD),
    _e("002", "Table 1 (64 latency)", "total message latency per step, 64 processes", "instead",
       "FdtdMessageStats", {"ranks": "64"}, "halo_ms_per_step", (P(4.5, "ms", "64 processes"),),
       ci=CI_FEW_CORES, when=TABLE_002, instead=LATENCY_INSTEAD),
    _e("002", "Table 1 (64 run time)", "run time, 64 processes", "instead",
       "FdtdMessageStats", {"ranks": "64"}, "run_seconds", (P(600, "s", "10 min, 64 processes, PIC code"),),
       how="the solver's whole run (timers' total) on the same job as the bytes and latency; a fields-only PEC box "
           "of 800 x 400 x 4 cells and the check's 50 steps for the paper's 4000 x 2000 x 1 grid with particles "
           "over its whole simulation: the times are not comparable (the report never prints them beside "
           "run_seconds), their trend over processes is",
       ci=CI_FEW_CORES, when=(C.one_of("code", "pic"),), instead=RUN_INSTEAD),
    _e("002", "text (MPI calls)", "about 7 MPI_Send, 1 MPI_Sendrecv and 1 MPI_Allreduce per time step", "instead",
       "FdtdMessageStats", {"ranks": "*"}, "halo_messages_per_rank_per_step_max",
       (P(8, "messages", "7 MPI_Send + 1 MPI_Sendrecv per process and step (and 1 MPI_Allreduce)"),),
       how="the most halo messages any rank sent a step: one per neighbour along the split (2 for an inner rank "
           "of the 1-D split), fields only; the paper's 7 sends carry fields and particles; its Allreduce has "
           "no counterpart here (FdtdCollectiveProfile runs one every step: paper 004's rows); the paper's runs "
           "had 8 processes or more, so every rank but two had two neighbours",
       when=(C.at_least("ranks", 8),),
       instead="the solver's halo messages of one process (fields only), not the PIC code's sends"),
    _e("002", "Fig. 4", "bytes exchanged per step over the simulated time", "not reproducible",
       how="the curve's variation (192 to 188 kB) comes from macro-particles crossing sub-domains; yee has no "
           "particles, so its bytes per step are the fixed field faces, one number per run (FdtdMessageStats "
           "halo_bytes_per_step, Table 1's rows): there is no curve over time to draw. HaloMessageSizes measures "
           "something else (exchange time against face size), not this figure"),
    _e("002", "PIC particles", "macro-particle push and particle messages", "not reproducible",
       how="yee solves the fields only; there is no particle code in the suite"),
    # ---------------------------------------------------------------- 003
    _e("003", "test 1", "redundant power supplies keep nodes up", "not reproducible",
       how="pulling a power supply is hands-on hardware work, not something software can test"),
    _e("003", "test 2", "orderly halt preserving the file systems", "not reproducible",
       how="halting the system is an operator action a benchmark must never take"),
    _e("003", "test 3", "restart after a full stop, file systems reconnect", "not reproducible",
       how="as test 2: needs a full stop of the system"),
    _e("003", "test 4", "file exchange with another HPC system", "not reproducible",
       how="needs a second site and its credentials; AcceptanceStorage measures the local file system instead"),
    _e("003", "test 5", "C, C++, Fortran with the PGI compilers", "instead",
       "AcceptanceToolchain", {"lang": "*"}, "",
       how="the partition's own compilers (GNU here): build and compute the right sum"),
    _e("003", "test 6", "batch scheduler operational", "like for like",
       "AcceptanceLaunch", {"width": "*"}, "launch_time",
       how="one job over every node, each host answers once per slot; needs a batch scheduler: NOT MEASURED "
           "(no launch time) under the `local` scheduler (Slurm on the virtual cluster)"),
    _e("003", "test 7", "C, C++, Fortran with the Intel compilers", "instead",
       "AcceptanceToolchain", {"lang": "*"}, "", how="as test 5, with whatever compilers the partition has"),
    _e("003", "test 8", "OpenCL", "like for like",
       "AcceptanceOpenCL", {}, "opencl_devices",
       how="a probe built in the job lists every OpenCL platform and device and adds two vectors on each; "
           "where the partition declares GPUs one device must be a GPU (a CPU-only platform FAILs), elsewhere "
           "CPU devices pass and the reason says so; needs an OpenCL platform (CL/cl.h, libOpenCL and a "
           "registered ICD): skipped with the reason where there is none, as in the suite's environments; "
           "CUDA is test 9"),
    _e("003", "test 9", "CUDA", "like for like",
       "AcceptanceGPU", {"kernel": "*"}, "",
       how="device query, bandwidth and N-body on every GPU of every node of the partition (one task per node "
           "runs each_gpu.sh); needs the partition's `gpu` feature: NOT MEASURED without a GPU"),
    _e("003", "test 10", "MPI C and Fortran bindings over the network", "like for like",
       "AcceptanceMPIBindings", {"binding": "*"}, "",
       how="C, C++, Fortran mpi_f08 and mpi, all cores of all nodes; on one node the program still builds and "
           "runs, but the messages never cross the network", when=(C.at_least("nodes", 2),)),
    _e("003", "test 11", "network latency node to node (and VM to VM)", "like for like",
       "AcceptanceNetwork", {}, "latency_median",
       how="pair matrix over all nodes; VM to VM is out of reach (no VMs), the virtual cluster's "
           "namespaced nodes are the nearest"),
    _e("003", "test 12", "network bandwidth", "like for like",
       "AcceptanceNetwork", {}, "bandwidth_median", how="pair matrix; OsuPt2Pt osu_bw for the curve"),
    _e("003", "test 13", "network multicast scalability", "like for like",
       "AcceptanceMulticast", {}, "multicast_delivered",
       how="IP multicast from one node to all others (the `mcast` probe): delivery and rate per receiver count; "
           "skipped with the reason where the network or kernel refuses multicast"),
    _e("003", "test 14", "IPv4 and IPv6 dual stack", "like for like",
       "AcceptanceIPStack", {}, "ipv6_available",
       how="IPv4 and IPv6 TCP over every interface a job uses, on each node and from each node to every address "
           "of the next node (the probes meet in the stage directory), so the round trip crosses the network; "
           "needs a global IPv6 address on them: NOT MEASURED without (a site that offers no IPv6 waives it on the "
           "sign-off page, which records the waiver); on one node NOT MEASURED, 'same node': a round trip to the "
           "node's own address never leaves it", when=(C.at_least("nodes", 2),)),
    _e("003", "test 15", "storage (Panasas) bandwidth, also from a VM", "instead",
       "AcceptanceStorage", {"tool": "*"}, "write_bandwidth",
       how="fio/dd/the solver's output into the job's file system; no Panasas, no VM"),
    _e("003", "test 16", "GPU performance (N-body)", "like for like",
       "AcceptanceGPU", {"kernel": "nbody"}, "nbody_gflops",
       how="every GPU of every node, validated against a CPU sum; the weakest GPU's GFLOP/s judged against the "
           "GPU model's reference (gpu/src/gpu_references.json; a system's reference file wins); NOT MEASURED "
           "without a GPU"),
    _e("003", "test 17", "EMANE runs on the cluster", "not reproducible",
       how="EMANE (5000 emulated radios in VMs) needs VMs and promiscuous interfaces; not part of the suite"),
    _e("003", "EL", "effectiveness level >= 97 % over 30 days", "like for like",
       "yeebench acceptance availability", {}, "el", (P(97, "%", "required availability over 30 days"),),
       how="a command, not a check: EL from the site's availability log, also on the sign-off page; a "
           "requirement the site's own log is held to, beside no recorded row", when=(),
       ci="a command over a site's 30-day log, not a ReFrame check: make test-python runs it on sample logs "
          "that pass and fail 97 % (reframe/yeebench/acceptance/tests/test_acceptance_cli.py)"),
    _e("003", "3.1", "system specification: 2 x 12-core Opteron, 4 NUMA nodes, 64 GB, 4 GPUs per GPU node",
       "like for like", "AcceptanceTopology", {}, "",
       how="the per-node part of the specification as an expected-topology file (sockets, cores, PUs, NUMA "
           "nodes and distances; reframe/config/topology/) that every node is held to, all nodes alike; GPUs per "
           "node are AcceptanceGPU's device query, the interconnect the network rows (requirement, switch "
           "latency), storage test 15"),
    _e("003", "3.4 (all GPUs at once)", "every GPU of a node loaded together: Xid 48 double bit errors, a GPU "
       "off the bus", "like for like", "AcceptanceGPUStress", {}, "gpus_stressed",
       how="N-body on every GPU of each node at once for stress_seconds (30), nvidia-smi -q -d ECC counters and "
           "the kernel log's Xid and 'fallen off the bus' lines read before and after: FAIL naming node, GPU "
           "index and bus id of a counter that rose, a new Xid, a failed or hung load, a GPU nvidia-smi lost; "
           "the Xid scan only where dmesg or journalctl -k is readable (a note otherwise); the paper's load was "
           "its OpenCL/MPI N-body (3.4 (N-body)); NOT MEASURED without a GPU"),
    _e("003", "3.4 (N-body)", "multi-GPU OpenCL/MPI N-body across all GPUs in effectiveness testing",
       "not reproducible",
       how="needs the paper's OpenCL/MPI N-body code (not published) or another one MPI job driving every GPU of "
           "several nodes through OpenCL, and an OpenCL GPU platform on each node (test 8 checks for one); the "
           "suite's N-body is CUDA, one process per GPU: AcceptanceGPUStress runs it on all GPUs of each node at "
           "once, the load under which the paper's GPUs failed, but not as one MPI job"),
    _e("003", "requirement (bandwidth)", "MANET emulation needs > 1 Gbit/s between nodes", "like for like",
       "AcceptanceNetwork", {}, "bandwidth_min",
       (P(125, "MB/s", "required: over 1 Gbit/s between nodes"),),
       how="a site's requirement on every node pair (1 MiB messages, N/2 pairs at once), off unless set: "
           "-S AcceptanceNetwork.min_bandwidth_gbits=1 fails naming each pair below it (or bandwidth_min "
           "[125, 0, null, 'MB/s'] in the system's reference file)",
       when=(C.at_least("nodes", 2),)),
    _e("003", "requirement (latency)", "MANET emulation needs < 3 us between nodes", "like for like",
       "AcceptanceNetwork", {}, "latency_max",
       (P(3, "us", "required: under 3 us between nodes"),),
       how="a site's requirement on every node pair (half round trip), off unless set: "
           "-S AcceptanceNetwork.max_latency_us=3 fails naming each pair above it (or latency_max "
           "[3, null, 0, 'us'] in the system's reference file); TCP over the virtual cluster's veth pairs is far "
           "above it",
       when=(C.at_least("nodes", 2),)),
    _e("003", "switch latency", "Gnodal switch port to port ~282 ns min, ~546 ns max (2-stage fat tree)", "instead",
       "AcceptanceNetwork", {}, "latency_spread",
       (P(0.546, "us", "switch port to port, maximum (minimum ~0.282 us)"),),
       how="one switch's port-to-port time is not measurable from the nodes: latency_spread is how much the "
           "slowest pair's latency exceeds the fastest pair's, the switch hops a longer path adds (a 2-stage fat "
           "tree adds at most 2: 2 x 0.546 = 1.09 us); -S AcceptanceNetwork.max_latency_spread_us=1.09 fails "
           "naming each pair beyond it, off unless set",
       when=(C.at_least("nodes", 2),),
       instead="the spread of pair latencies across the network (extra switch hops), not one switch's time"),
    _e("003", "Fig. 1", "power backplane trace (photograph)", "no measurement", how="photograph"),
    _e("003", "Fig. 2", "cache misses vs threads per node, ASLR on/off", "instead",
       "AcceptanceScaling", {"program": "*"}, "aslr_cost",
       how="no hardware counters are read: the full node of processes runs 5 times with ASLR on and 5 with it "
           "off for its processes, in turn (`setarch -R`; the node's kernel.randomize_va_space is never changed) "
           "and the throughput ASLR costs is the figure, FAIL above 20 % when the Mann-Whitney p that noise "
           "alone ranked the runs so is at most 0.01 (NOT MEASURED above it); needs ASLR on and setarch -R "
           "allowed: NOT MEASURED otherwise; "
           "AcceptanceKernelSettings flags ASLR on AMD family 15h with an old kernel"),
    _e("003", "Figs. 3-4", "speedup vs threads: pthreads, fork, MPI; before/after the kernel fix", "instead",
       "AcceptanceScaling", {"program": "*"}, "threads_over_processes",
       how="1, 2, 4 ... all cores, threads (OpenMP) vs processes (MPI); no fork mode, and Fig. 4's three kernel "
           "configurations (RHEL 6.1 with ASLR, 6.1 with it off by sysctl, 6.2's patched kernel) become one on/off "
           "point: the full node of processes with and without `setarch -R` on the node's own kernel "
           "(processes_N_aslr_on, processes_N_aslr_off); a benchmark cannot install kernels, and the fix the "
           "kernels differ by (AMD family 15h's shared instruction cache) is AcceptanceKernelSettings's warning",
       instead="one ASLR on/off point on the node's kernel and threads vs MPI processes, not fork nor three "
               "kernels"),
    _e("003", "3.5 (kernel settings)", "ASLR (kernel.randomize_va_space) on family 15h Opterons before kernel 3.2",
       "like for like", "AcceptanceKernelSettings", {}, "",
       how="every node's kernel.randomize_va_space, kernel version, CPU vendor and family read (with THP, "
           "governor, zone_reclaim_mode): a warning with the reason where ASLR is on with an AMD family 15h CPU "
           "and a kernel before 3.2 (the paper's case), notes otherwise; FAIL where nodes disagree"),
    _e("003", "NUMA distances", "numactl distances 10/16/20: remote 60-100 % more costly", "like for like",
       "AcceptanceNUMACosts", {}, "remote_cost_max", NUMA_COSTS,
       how="the paper read its costs off the distance table (16/10: 60 %, 20/10: 100 %): the report prints the "
           "same reading of the table the run recorded (numactl --hardware) beside the value of the table's "
           "largest remote distance; NOT MEASURED with one NUMA node",
       when=(), ours="distance_cost"),
    _e("003", "NUMA distances (measured)", "remote memory cost measured: triad bandwidth, remote over local",
       "instead", "AcceptanceNUMACosts", {}, "remote_cost_max", NUMA_COSTS,
       how="remote_cost_max is a measured triad bandwidth cost (each NUMA node's cores to every node's memory), "
           "a quantity the paper did not measure: beside it the paper's table reading stands as another quantity, "
           "at the run's own largest distance only",
       when=(), instead="a measured triad-bandwidth cost; the paper's figure is the distance table's ratio"),
    _e("003", "RDMA", "RoCE failing beyond two nodes", "not reproducible",
       how="no RDMA-capable Ethernet adapter; MPI over TCP is what the pair matrix measures"),
    # ---------------------------------------------------------------- 004
    _e("004", "Figs. 1-3", "co-design, FCA/MXM software layers", "no measurement", how="drawings"),
    _e("004", "Fig. 4", "LS-DYNA MPI profile: Allreduce and Bcast dominate MPI time", "instead",
       "FdtdCollectiveProfile", {}, "tuned_allreduce_share_of_mpi",
       how="LS-DYNA is licensed; the solver's own MPI time (halo, Allreduce every step, compute) "
           "per collective implementation instead"),
    _e("004", "Fig. 5", "LS-DYNA with vs without FCA: +5 % at 8 nodes, +15 % at 16 nodes", "instead",
       "FdtdCollectiveProfile", {}, "*_over_tuned",
       (P(1.0, "x", "with FCA over without, up to 4 nodes", (C.between("nodes", 2, 4),)),
        P(1.05, "x", "with FCA over without, 8 nodes", (C.exactly("nodes", 8),)),
        P(1.15, "x", "with FCA over without, 16 nodes / 192 cores", (C.exactly("nodes", 16),))),
       how="FCA, Core-Direct and switch multicast are Mellanox hardware offloads that no longer ship; "
           "the solver with `--energy-every 1` under Open MPI's coll components (tuned, han, basic, ucc "
           "where built; hcoll skipped where absent), speed over tuned on all the partition's nodes; "
           "the curve over node counts is Fig. 5 (node curve); FCA offloads the collectives between nodes: "
           "the paper's values stand beside its successors' figures (ucc, hcoll; han and basic are software "
           "algorithms) on the node count of each (2 to 4, 8, 16), on all nodes or <impl>_over_tuned_<n>_nodes",
       when=(OFFLOAD,), curve=True, instead="Open MPI's UCC or HCOLL in place of FCA, the PEC box for LS-DYNA"),
    _e("004", "text (32 nodes)", "the gain with FCA expected to exceed 20 % at 32 nodes", "instead",
       "FdtdCollectiveProfile", {}, "*_over_tuned",
       (P(1.2, "x", "with FCA over without, 32 nodes: the paper's expectation ('over 20 %'), not a measurement",
          (C.exactly("nodes", 32),)),),
       how="the paper extrapolates its Fig. 5 (\"it is expected to see over 20% at 32 nodes\"); the same figure as "
           "Fig. 5's row (speed over tuned, ucc or hcoll), standing beside a run on 32 nodes or <impl>_over_tuned_32_nodes",
       when=(OFFLOAD,), curve=True, instead="Open MPI's UCC or HCOLL in place of FCA, the PEC box for LS-DYNA"),
    _e("004", "Fig. 5 (node curve)", "with vs without FCA against node count: none to 4 nodes, +5 % at 8, +15 % at 16",
       "instead", "FdtdCollectiveProfile", {}, "*_over_tuned_*_nodes",
       how="every implementation on each count of 1, 2, 4 ... the partition's nodes in the one job, a rank per "
           "core: <impl>_over_tuned_<n>_nodes (speed over tuned on n nodes) and the MPI profile per count "
           "(<impl>_allreduce_share_<n>_nodes, ...); the report draws the ratios against the node count; the "
           "paper's values stand beside the points of their node counts (Fig. 5's row)"),
    _e("004", "Fig. 6", "Allreduce and Bcast time with vs without FCA (> 10 % less)", "instead",
       "OsuCollective", {"case": "allreduce:*"}, "latency_*",
       how="OSU allreduce/bcast over sizes and process counts per coll implementation (tuned, its forced "
           "algorithms, han, basic, ucc and hcoll: the last two skipped with the reason where ompi_info on the node "
           "lists no such component); each but tuned also runs under tuned in the same job: "
           "latency_<size>B_over_tuned; over process counts (2 ... 64, each its own job), packed a rank per core onto "
           "as few nodes as hold them, so a count spans ceil(procs / cores per node) nodes (recorded as "
           "observations['nodes']); the curve over node counts, paper 004's axis, is OsuCollectiveNodeCurve's "
           "(Fig. 6 (node curve)) for the collectives alone and FdtdCollectiveProfile's (Fig. 5 (node curve)) "
           "for the solver"),
    _e("004", "Fig. 6 (Allreduce)", "Allreduce time with vs without FCA on 16 nodes: more than 10 % less", "instead",
       "OsuCollectiveNodeCurve", {"case": "allreduce:*"}, "over_tuned",
       (P(0.9, "x", "MPI_Allreduce time with FCA over without, 16 nodes / 192 cores: under 0.9 (> 10 % less)",
          (C.exactly("nodes", 16),)),),
       how="the paper's figure is LS-DYNA's time in MPI_Allreduce; here OSU osu_allreduce under the offloading "
           "implementation over coll/tuned, geometric mean over the sizes (Fig. 6 (node curve)); ucc or hcoll "
           "only, on 16 nodes (the plain name on a partition of 16 or over_tuned_16_nodes); below 0.9 agrees",
       when=(OFFLOAD,), curve=True, instead="OSU's Allreduce under UCC or HCOLL over coll/tuned, not LS-DYNA's"),
    _e("004", "Fig. 6 (Bcast)", "Bcast time with vs without FCA on 16 nodes: more than 10 % less", "instead",
       "OsuCollectiveNodeCurve", {"case": "bcast:*"}, "over_tuned",
       (P(0.9, "x", "MPI_Bcast time with FCA over without, 16 nodes / 192 cores: under 0.9 (> 10 % less)",
          (C.exactly("nodes", 16),)),),
       how="the paper's figure is LS-DYNA's time in MPI_Bcast; here OSU osu_bcast under the offloading "
           "implementation over coll/tuned, the same job and ranks, geometric mean over the sizes "
           "(over_tuned_<n>_nodes on each count, latency_<size>B_over_tuned_<n>_nodes at the smallest and largest "
           "size; OsuCollective's bcast cases over process counts likewise, without the node count); ucc or hcoll "
           "only, on 16 nodes (the plain name on a partition of 16 or over_tuned_16_nodes); below 0.9 agrees",
       when=(OFFLOAD,), curve=True, instead="OSU's Bcast under UCC or HCOLL over coll/tuned, not LS-DYNA's",
       ci="CI's smoke run takes one case of the node curve, allreduce:han beside tuned (the ratio's machinery); "
          "bcast runs the same code path with osu_bcast, and its ucc or hcoll cases need those components"),
    _e("004", "Fig. 6 (node curve)", "Allreduce time with vs without FCA against node count", "instead",
       "OsuCollectiveNodeCurve", {"case": "allreduce:*"}, "over_tuned_*_nodes",
       how="one job on every node of the partition: on each count of 1, 2, 4 ... its nodes (-S node_counts=... "
           "to choose), a rank per core, the implementation's OSU allreduce and the same benchmark under coll/tuned, "
           "interleaved over rounds, each size keeping its lowest latency; over_tuned_<n>_nodes is the geometric "
           "mean over the sizes of the implementation's time over tuned's (< 1: faster), "
           "latency_<size>B_over_tuned_<n>_nodes at the smallest and largest size; ucc and hcoll skipped with the "
           "reason where ompi_info on the node lists no such component; one node: a curve of one count, the plain "
           "names only"),
    _e("004", "Fig. 6 (over tuned)", "Allreduce time of an implementation over coll/tuned's", "instead",
       "OsuCollective", {"case": "allreduce:*"}, "latency_*B_over_tuned",
       how="time over tuned's at each size, same job and ranks (< 1: faster than tuned); the paper's FCA is "
           "out of reach, UCC and HCOLL are its successors where the MPI has them"),
    _e("004", "MXM", "MXM point-to-point acceleration", "not reproducible",
       how="MXM was replaced by UCX; OsuPt2Pt's `transport=ucx` vs ob1 is the nearest comparison"),
)


def papers():
    return sorted(TITLES)


def anchor(item):
    """Markdown heading-style anchor of an experiment's item: 'Fig. 6 (per node)' -> 'fig-6-per-node'."""
    return re.sub(r"[^a-z0-9]+", "-", item.lower()).strip("-")


def page_path(paper):
    return f"{PAGES_DIR}/{paper}.md"


def declaration_problems(experiments):
    """One line per row that cannot be held to its figure: published values without declared conditions,
    a condition naming a fact paper_conditions does not know, an `instead` pair without its reason."""
    out = []
    for exp in experiments:
        name = f"{exp.paper} {exp.item}"
        if exp.published and exp.when is None:
            out.append(f"{name}: published values without declared conditions (when=)")
        conditions = tuple(exp.when or ()) + tuple(c for pub in exp.published for c in pub.when)
        for fact in paper_conditions.unknown_facts(conditions):
            out.append(f"{name}: a condition names the unknown fact {fact!r} "
                       f"(known: {', '.join(paper_conditions.FACTS)})")
        if exp.status == "instead" and exp.published and not exp.instead:
            out.append(f"{name}: an instead row with a published value says what its figure is of (instead=)")
        if exp.ours and not callable(getattr(paper_conditions, exp.ours, None)):
            out.append(f"{name}: ours={exp.ours!r} is no figure paper_conditions derives")
    return out


def _metric_matches(exp, metric):
    if fnmatch.fnmatchcase(metric, exp.metric):
        return True
    # a node-curve twin: the same name with _<n>_nodes after it
    return exp.curve and bool(re.fullmatch(re.escape(exp.metric).replace(r"\*", ".*") + r"_\d+_nodes", metric))


def _selects(exp, row):
    """Whether the row is the experiment's figure (its check, metric and parameters), whatever the run."""
    if not exp.check or not exp.metric or not exp.published:
        return False
    if not fnmatch.fnmatchcase(row["check"], exp.check) or not _metric_matches(exp, row["metric"]):
        return False
    return all(fnmatch.fnmatchcase(str(row["parameters"].get(k, "")), v) for k, v in exp.params.items())


_BY_CHECK = [None, {}, ()]   # [the EXPERIMENTS it indexes, {check name: [positions]}, positions of patterns]


def _candidates(check):
    """The experiments that may select a row of `check`, in EXPERIMENTS order: those naming the check,
    and any whose check is a pattern.  The index is built once per EXPERIMENTS table (a report asks
    for every (case, figure) group; fnmatch over all ~90 rows each time cost ~80 us a group)."""
    if _BY_CHECK[0] is not EXPERIMENTS:
        named, patterns = {}, []
        for i, exp in enumerate(EXPERIMENTS):
            if not exp.check or not exp.metric or not exp.published:
                continue   # never selects a row (_selects)
            if any(ch in exp.check for ch in "*?["):
                patterns.append(i)
            else:
                named.setdefault(exp.check, []).append(i)
        _BY_CHECK[:] = [EXPERIMENTS, named, tuple(patterns)]
    _, named, patterns = _BY_CHECK
    own = named.get(check, [])
    return [EXPERIMENTS[i] for i in (sorted(own + list(patterns)) if patterns else own)]


def _unmet(conditions, facts):
    return [c for c in conditions if not paper_conditions.met(c, facts)]


def for_row(row, hardware=None):
    """The papers' figures a result row measures, each with its page: the published value where the row
    meets its conditions (exp.when and the value's own), else one figure with value None saying what the
    figure needs (`needs`) and what this run had (`have`). `hardware`: the case's recorded facts
    (observations['hardware']: AcceptanceNUMACosts records the node's NUMA distance table, numa_distances)."""
    facts, out = paper_conditions.facts_of(row, hardware), []
    for exp in (e for e in _candidates(row["check"]) if _selects(e, row)):
        page = dict(paper=exp.paper, item=exp.item, page=page_path(exp.paper), anchor=anchor(exp.item),
                    status=exp.status, instead=exp.instead)
        ours = getattr(paper_conditions, exp.ours)(hardware) if exp.ours else None
        shown = [pub for pub in exp.published if not _unmet(tuple(exp.when or ()) + pub.when, facts)]
        if exp.ours and ours is None:
            shown = []
        for pub in shown:
            out.append(PaperFigure(value=pub.value, unit=pub.unit, what=pub.what, ours=ours, **page))
        if shown:
            continue
        needs, have = _needs_words(exp, facts, ours_missing=bool(exp.ours) and ours is None)
        out.append(PaperFigure(value=None, unit="", what="", needs=needs, have=have, **page))
    return out


def _needs_words(exp, facts, ours_missing=False):
    """('18 nodes, one rank per core', '1 node'): what the figure needs and what of it this run lacked."""
    common = list(exp.when or ())
    alternatives = [pub.when for pub in exp.published if pub.when]
    words = [paper_conditions.describe(c) for c in common]
    if alternatives:
        words.append(" or ".join(", ".join(paper_conditions.describe(c) for c in alt) for alt in alternatives))
    lacking = {c.fact for c in _unmet(common, facts)}
    if alternatives:   # a fact lacks where no value's own conditions hold of it (16 nodes meets 1.15's)
        lacking |= set.intersection(*({c.fact for c in _unmet(alt, facts)} for alt in alternatives))
    if ours_missing:
        lacking.add("numa_distance")
        words = words or ["the distance table"]
    have = ", ".join(paper_conditions.have_words(f, facts) for f in sorted(lacking, key=list(paper_conditions.FACTS).index))
    return ", ".join(words), have


def _fmt(value):
    return f"{value:.4g}"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _conditions(exp):
    """The published values' conditions in words, for the page."""
    if not exp.published:
        return ""
    if exp.when is None:
        return "no conditions declared"
    if " " in exp.check:
        return "a requirement, printed beside no recorded row"
    never = [c for c in exp.when if c.fact == "code" and "yee" not in (c.value if c.op == "in" else (c.value,))]
    if never:
        return "published values beside no run of this suite: they need " + paper_conditions.describe(never[0])
    words = [paper_conditions.describe(c) for c in exp.when]
    for pub in exp.published:
        if pub.when:
            words.append(f"{_fmt(pub.value)} {pub.unit} on " + ", ".join(paper_conditions.describe(c) for c in pub.when))
    return ("published values beside a run with " + "; ".join(words)) if words else "published values beside any run"


def _how(exp):
    ci = f"not in CI: {exp.ci}" if exp.ci else ""
    instead = f"instead: {exp.instead}" if exp.instead else ""
    return "; ".join(t for t in (exp.how, instead, _conditions(exp), ci) if t) or "-"


def _metric_cell(exp):
    if not exp.metric:
        return "-"
    return f"`{exp.metric}`" + (f" and `{exp.metric}_<n>_nodes`" if exp.curve else "")


def render_table(paper):
    """The mapping table of one paper's page (Markdown)."""
    lines = ["| item | what | status | check | parameters | figure | published | how |",
             "|---|---|---|---|---|---|---|---|"]
    for exp in (e for e in EXPERIMENTS if e.paper == paper):
        params = ", ".join(f"{k}={v}" for k, v in exp.params.items())
        published = "; ".join(f"{_fmt(p.value)} {p.unit} ({p.what})" for p in exp.published)
        lines.append("| " + " | ".join(_cell(c) for c in (
            exp.item, exp.title, exp.status, f"`{exp.check}`" if exp.check else "-",
            params or "-", _metric_cell(exp), published or "-", _how(exp))) + " |")
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- mapping: generated from yeebench/results/paper_figures.py -->", "<!-- mapping: end -->"


def page_block(text):
    """The generated table inside a page's markers, or None when the page has no markers."""
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def with_table(text, paper):
    head, rest = text.split(BEGIN, 1)
    return head + BEGIN + "\n" + render_table(paper) + END + rest.split(END, 1)[1]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m yeebench.results.paper_figures",
                                 description="Render or check the mapping tables of the per-paper pages.")
    ap.add_argument("pages_dir", help="the directory of the pages (reframe/papers)")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when a page's table differs from the data")
    mode.add_argument("--write", action="store_true", help="rewrite each page's table from the data")
    args = ap.parse_args(argv)
    problems = declaration_problems(EXPERIMENTS)
    if problems:
        print("paper_figures: error: " + "; ".join(problems), file=sys.stderr)
        return 2
    stale = []
    for paper in papers():
        path = Path(args.pages_dir) / f"{paper}.md"
        try:
            text = path.read_text()
        except OSError as err:
            print(f"paper_figures: error: {path}: {err.strerror}", file=sys.stderr)
            return 2
        if page_block(text) is None:
            print(f"paper_figures: error: {path} has no mapping markers ({BEGIN} ... {END})", file=sys.stderr)
            return 2
        if page_block(text) != render_table(paper):
            stale.append(str(path))
            if args.write:
                safe_io.write_text(path, with_table(text, paper))   # a page, never a link, replaced
    if args.check and stale:
        print("paper_figures: out of date: " + ", ".join(stale) + " (run with --write)", file=sys.stderr)
        return 1
    for path in stale if args.write else []:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
