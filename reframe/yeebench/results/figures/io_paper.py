"""Output formats (paper 001, Figs. 1-3): time per output step against N^3 (the cells of each
rank's block), one colour per format and a line style per rank count, the fitted t = a + b N^3
(yeebench.io_fits, the check's own fit) through the measured markers; beside it the time at
the largest N against ranks, measured and extrapolated to 16 and 256 ranks (Fig. 2)."""

from yeebench import io_fits
from yeebench.fits import FitError
from yeebench import stats
from yeebench.results.figures import common

CHECKS = ("IoOutputPaper",)
KEY = ("hdf5_zlib_over_binary", "hdf5_over_binary", "binary_over_ascii", "*_fit_rms_error")

_CASE = r"(?P<fmt>[a-z0-9_]+)_p(?P<p>\d+)_n(?P<n>\d+)_io_s"
_STYLES = ("-", "--", "-.", ":")


def _times(rows):
    """{format: {ranks: {N: median seconds per output step}}}."""
    raw = {}
    for found, row in common.matching(rows, _CASE):
        cell = raw.setdefault(found["fmt"], {}).setdefault(int(found["p"]), {})
        cell.setdefault(int(found["n"]), []).append(row["value"])
    return {f: {p: {n: stats.median(v) for n, v in by_n.items()} for p, by_n in by_p.items()}
            for f, by_p in raw.items()}


def _time_panel(ax, times, source, sources):
    for f_index, (fmt, by_p) in enumerate(sorted(times.items())):
        color = f"C{f_index % 10}"
        for p_index, (p, by_n) in enumerate(sorted(by_p.items())):
            ns = sorted(by_n)
            ax.plot([n ** 3 for n in ns], [by_n[n] for n in ns], "o", color=color, markersize=4,
                    alpha=0.6 if source.is_baseline else 1.0)
            name = common.series_name(f"{fmt}, ranks={p}", source, sources)
            try:
                fit = io_fits.fit_cube(ns, [by_n[n] for n in ns])
            except FitError:
                continue
            xs = [ns[0] ** 3 + (ns[-1] ** 3 - ns[0] ** 3) * i / 40 for i in range(41)]
            ax.plot(xs, [fit.a + fit.b * x for x in xs], color=color, linestyle=_STYLES[p_index % 4],
                    label=f"{name}: fit, {100 * fit.rms_error:.0f} % rms error")


def _ranks_panel(ax, times, source, sources):
    """Fig. 2: seconds at the largest N per rank count, measured, then the check's own extrapolations
    to 16 and 256 ranks (recorded only where its fit is good enough: the chart shows what the table has)."""
    drawn = False
    for f_index, (fmt, by_p) in enumerate(sorted(times.items())):
        n_max = max(n for by_n in by_p.values() for n in by_n)
        measured = sorted((p, by_n[n_max]) for p, by_n in by_p.items() if n_max in by_n)
        color = f"C{f_index % 10}"
        name = common.series_name(fmt, source, sources)
        ax.plot([p for p, _ in measured], [t for _, t in measured], "o-", color=color, label=f"{name}: measured")
        ahead = [(p, common.median_of(source.rows, f"{fmt}_seconds_{p}_ranks")) for p in (16, 256)]
        ahead = [(p, t) for p, t in ahead if t is not None]
        if not ahead:
            continue
        line = measured[-1:] + ahead
        ax.plot([p for p, _ in line], [t for _, t in line], "s--", color=color, markerfacecolor="none",
                label=f"{name}: extrapolated (power law)")
        drawn = True
    return drawn


def draw(check, sources, out):
    if not any(_times(s.rows) for s in sources):
        return common.Drawn(notes=[f"{check}: no per-case output times (<format>_p<P>_n<N>_io_s) in this run"])
    sizes = {n for s in sources for by_p in _times(s.rows).values() for by_n in by_p.values() for n in by_n}
    if len(sizes) < 2:
        return common.Drawn(notes=[f"{check}: one size N measured; time against N^3 needs two or more: "
                                   "see the table"])
    fig, (left, right) = common.new(common.WIDE, panels=2)
    extrapolated = False
    for source in sources:
        times = _times(source.rows)
        _time_panel(left, times, source, sources)
        extrapolated |= _ranks_panel(right, times, source, sources)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("cells per rank, N^3")
    left.set_ylabel("time per output step [s]")
    left.set_title("markers: measured; lines: t = a + b N^3 fitted", fontsize=9)
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("ranks (one file per rank per step)")
    right.set_ylabel("time per output step at the largest N [s]")
    right.set_title("extrapolated to 16 and 256 ranks" if extrapolated
                    else "not extrapolated: see the table's notes", fontsize=9)
    drawn = common.Drawn([common.save(fig, (left, right), f"{check}: output time per format against N^3 "
                                      "(paper 001, Figs. 1-3)", out / f"{common.safe(check)}_time.png")])
    drawn += _ratio(check, sources, out)
    return drawn


def _ratio(check, sources, out):
    """Fig. 5: each format's time over ASCII's at the same ranks and N, against all ranks' cells."""
    fig, ax = common.new()
    drawn = 0
    for source in sources:
        times = _times(source.rows)
        ascii_times = times.get("ascii", {})
        for f_index, (fmt, by_p) in enumerate(sorted(times.items())):
            if fmt == "ascii":
                continue
            for p_index, (p, by_n) in enumerate(sorted(by_p.items())):
                pts = sorted((p * n ** 3, t / ascii_times[p][n]) for n, t in by_n.items()
                             if ascii_times.get(p, {}).get(n))
                if not pts:
                    continue
                ax.plot([x for x, _ in pts], [r for _, r in pts], marker="o", markersize=4, color=f"C{f_index % 10}",
                        label=common.series_name(f"{fmt}, ranks={p}", source, sources),
                        **dict(common.line_style(source), linestyle=_STYLES[p_index % 4]))
                drawn += len(pts)
    if drawn < 2:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: no ASCII times to compare the other formats with"]
                            if drawn == 0 else [])
    ax.axhline(1.0, color="grey", linewidth=0.9, linestyle="--", label="as fast as ASCII")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cells written per step, all ranks (ranks x N^3)")
    ax.set_ylabel("time / ASCII time [x] (below 1: faster)")
    return common.Drawn([common.save(fig, ax, f"{check}: output time relative to ASCII (paper 001, Fig. 5)",
                                     out / f"{common.safe(check)}_ratio.png")])
