"""Point-to-point (paper 000 Table 2 / Fig. 4, paper 002 Figs. 1-2): latency and bandwidth against
message size on log axes, one colour per locality (intra vs inter node) and transport.

The checks record the curve as its alpha-beta (Hockney) fit plus a few measured points (latency
at 1 B and 4 KB, peak bandwidth): the fit is drawn as the line, the measured points as markers on
it, so a reader sees both the model and how well it holds.
"""
from yeebench.results.figures import common

CHECKS = ("NetPIPEPt2Pt", "OsuPt2Pt")
KEY = ("latency_1B", "peak_bw", "peak_bibw")

_FACTOR = {"B": 1, "KB": 1024, "MB": 2 ** 20}
_SERIES_PARAMS = ("locality", "transport", "benchmark", "buffers")


def _sizes_measured(rows):
    out = {}
    for found, row in common.matching(rows, r"latency_(\d+)(B|KB|MB)"):
        out[row["metric"]] = int(found.group(1)) * _FACTOR[found.group(2)]
    return out


def _curves(rows):
    """{case label: (params, rows)}: one curve per locality x transport (x benchmark where several)."""
    names = [k for k in common.varying(rows) if k in _SERIES_PARAMS] or [
        k for k in _SERIES_PARAMS if any(k in r["parameters"] for r in rows)][:2]
    curves = {}
    for row in rows:
        key = common.label(row["parameters"], names)
        curves.setdefault(key, (row["parameters"], []))[1].append(row)
    return curves


def draw(check, sources, out):
    fig, (lat, bw) = common.new(common.WIDE, panels=2)
    points = 0
    largest = 1
    for _, row in common.matching([r for s in sources for r in s.rows], r"n_half"):
        largest = max(largest, row["value"] * 4)  # the curve well past its half-bandwidth size
    sizes = [2.0 ** e for e in range(0, 1 + int(max(largest, 65536)).bit_length())]
    for source in sources:
        for index, (name, (params, rows)) in enumerate(sorted(_curves(source.rows).items())):
            alpha = common.median_of(rows, "hockney_alpha")
            beta_ns = common.median_of(rows, "hockney_beta")
            color = f"C{index % 10}"
            legend = common.series_name(name, source, sources)
            style = common.line_style(source)
            if alpha is not None and beta_ns is not None:
                model = [alpha + beta_ns * 1e-3 * n for n in sizes]
                lat.plot(sizes, model, color=color, label=f"{legend}: fit {alpha:.2g} us + n x {beta_ns:.2g} ns/B",
                         **style)
                bw.plot(sizes, [n / t for n, t in zip(sizes, model)], color=color, label=f"{legend}: fit", **style)
            for metric, size in _sizes_measured(rows).items():
                value = common.median_of(rows, metric)
                lat.plot([size], [value], "o", color=color, markersize=6)
                points += 1
            peak = common.metric_present(rows, "peak_bw", "peak_bibw", "bandwidth_peak")
            if peak:
                bw.axhline(common.median_of(rows, peak), color=color, linewidth=0.9, linestyle=":",
                           label=f"{legend}: measured {peak} {common.fmt(common.median_of(rows, peak))} MB/s")
                points += 1
    if points == 0:
        common.close(fig)
        return common.Drawn(notes=[f"{check}: no latency or bandwidth figures in this run"])
    for ax in (lat, bw):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
    lat.set_ylabel("one-way latency [us]")
    lat.set_title("latency (markers: measured, line: alpha-beta fit)", fontsize=9)
    bw.set_ylabel("bandwidth [MB/s]")
    bw.set_title("bandwidth (line: n / fitted time, dotted: measured peak)", fontsize=9)
    path = common.save(fig, (lat, bw), f"{check}: latency and bandwidth against message size",
                       out / f"{common.safe(check)}_size.png")
    return common.Drawn([path])
