#!/usr/bin/env python3
"""Plots of an io_sweep.py result, after paper 001's figures:
  io_time.png   seconds per output step vs cells per rank, one panel per format, one line
                per strategy x ranks, with the no-output step time (figures 2-3)
  io_size.png   bytes per step vs total cells, per format (figure 4)
  io_ratio.png  time per step relative to ASCII (same strategy, ranks, size) (figure 5)

  python3 solver/bench/io_plots.py SWEEP.json -o DIR

(`yeebench results plot` draws the same metrics from ReFrame runs of reframe/yeebench/checks/io/io.py.)"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep")
    ap.add_argument("-o", "--out-dir", default=".")
    a = ap.parse_args()
    try:
        rows = json.load(open(a.sweep))["rows"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit("io_plots: error: cannot read %s: %s" % (a.sweep, e))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(a.out_dir, exist_ok=True)
    formats = [f for f in ("ascii", "binary", "hdf5") if any(r["format"] == f for r in rows)]
    series = lambda f: sorted({(r["strategy"], r["ranks"]) for r in rows if r["format"] == f})
    pts = lambda f, s, p, key: sorted((r["n_per_rank"] ** 3, r[key]) for r in rows
                                      if r["format"] == f and r["strategy"] == s and r["ranks"] == p)

    fig, axes = plt.subplots(1, len(formats), figsize=(5 * len(formats), 4), sharey=True, squeeze=False)
    for ax, f in zip(axes[0], formats):
        for s, p in series(f):
            xy = pts(f, s, p, "io_seconds_per_step")
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label="%s, %d rank(s)" % (s, p))
        base = sorted((r["n_per_rank"] ** 3, r["compute_seconds_per_step"]) for r in rows
                      if r["format"] == "none" and r["ranks"] == 1)
        if base:
            ax.plot([x for x, _ in base], [y for _, y in base], "k--", label="compute, 1 rank")
        ax.set(xscale="log", yscale="log", title=f, xlabel="cells per rank")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("seconds per output step")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "io_time.png"), dpi=110)

    fig, ax = plt.subplots(figsize=(6, 4))
    for f in formats:
        xy = sorted({(r["n_per_rank"] ** 3 * r["ranks"], r["bytes_per_step"]) for r in rows
                     if r["format"] == f and r["strategy"] in ("root", "shared")})
        ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=f)
    ax.set(xscale="log", yscale="log", xlabel="cells (all ranks)", ylabel="bytes per step", title="file size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "io_size.png"), dpi=110)

    ascii_t = {(r["strategy"], r["ranks"], r["n_per_rank"]): r["io_seconds_per_step"] for r in rows
               if r["format"] == "ascii"}
    fig, ax = plt.subplots(figsize=(6, 4))
    for f in formats:
        if f == "ascii":
            continue
        for s, p in series(f):
            ref_s = "root" if s == "shared" else s
            xy = [(r["n_per_rank"] ** 3 * p, r["io_seconds_per_step"] / ascii_t[(ref_s, p, r["n_per_rank"])])
                  for r in rows if r["format"] == f and r["strategy"] == s and r["ranks"] == p
                  and (ref_s, p, r["n_per_rank"]) in ascii_t]
            xy.sort()
            if xy:
                ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label="%s %s, %d" % (f, s, p))
    ax.set(xscale="log", xlabel="cells (all ranks)", ylabel="time / ASCII time", title="relative to ASCII")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out_dir, "io_ratio.png"), dpi=110)
    print(os.path.abspath(a.out_dir))


if __name__ == "__main__":
    main()
