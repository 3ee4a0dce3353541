#!/usr/bin/env python3
"""yee benchmark: Mcells/s of each kernel (fused, wavefront) at 128^3 and 256^3, f32 and f64,
1 and 2 threads (and optionally 2 ranks x 1 thread), beside a STREAM-style triad and an
in-place read-modify-write measured in the same run, and the single-pass roofline
(roofline Mcells/s = GB/s / model bytes per cell: 48 B f32, 96 B f64; DESIGN.md 3).

  python3 solver/bench/run_bench.py [--yee PATH] [--triad PATH] [--sizes 128,256]
                                    [--threads 1,2] [--layouts 1x2,2x1] [--precisions f32,f64]
                                    [--kernels fused,wavefront] [--repeats 3] [--steps N] [--out FILE]

Each configuration runs its kernels interleaved (fused, wavefront, fused, ...) --repeats
times and keeps each kernel's best (the machine may be shared; the best run is the least
disturbed one); the triad is re-measured right before each configuration with the same
thread count. The roofline column uses the triad (as before); `xRMW` is Mcells/s over the
read-modify-write roofline, the one a kernel that streams the fields once per step cannot
beat. `--layouts RxT` (ranks x threads) replaces --threads and runs yee under mpirun.
Prints a table with the load average per row; --out writes all figures as JSON."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def find(name, explicit):
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "build", "install", "bin", name),
                 os.path.join(here, "..", "..", "build", "solver", name)):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return shutil.which(name) or sys.exit("run_bench: error: cannot find %s (build it or pass --%s)" % (name, name))


def run_json(cmd, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread", OMP_PLACES="cores",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("run_bench: error: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return json.loads(p.stdout)


def layouts(a):
    if a.layouts:
        out = []
        for item in a.layouts.split(","):
            r, _, t = item.partition("x")
            out.append((int(r), int(t)))
        return out
    return [(1, int(t)) for t in a.threads.split(",")]


def yee_cmd(yee, ranks, size, steps, prec, thr, kernel):
    cmd = [yee, "--n", str(size), "--steps", str(steps), "--precision", prec, "--threads", str(thr), "--quiet",
           "--source", "ricker", "--kernel", kernel]
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks), "--bind-to", "core", "--map-by", "core"] + cmd
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--yee")
    ap.add_argument("--triad")
    ap.add_argument("--sizes", default="128,256")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--layouts", help="ranks x threads per rank, e.g. 1x2,2x1 (replaces --threads)")
    ap.add_argument("--precisions", default="f32,f64")
    ap.add_argument("--kernels", default="fused,wavefront")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="time steps (default: about 1 s of fused work, >= 40)")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    a = ap.parse_args()
    yee, triad = find("yee", a.yee), find("yee-triad", a.triad)
    kernels = a.kernels.split(",")
    rows = []
    load_before = os.getloadavg()
    print("%-5s %-4s %-4s %-9s %9s %7s %5s %6s %9s %8s %7s %5s" % (
        "size", "prec", "RxT", "kernel", "Mcells/s", "T/tile", "xfus", "triad", "RMW GB/s", "roofMc/s", "xRMW", "load"))
    for size in [int(s) for s in a.sizes.split(",")]:
        for prec in a.precisions.split(","):
            for ranks, thr in layouts(a):
                tri = run_json([triad, "--repeats", "5"], ranks * thr)
                steps = a.steps or max(40, int(300e6 / size ** 3))
                best = {}
                for _ in range(a.repeats):
                    for kernel in kernels:
                        rep = run_json(yee_cmd(yee, ranks, size, steps, prec, thr, kernel), thr)
                        if kernel not in best or rep["mcells_per_s"] > best[kernel]["mcells_per_s"]:
                            best[kernel] = rep
                load = os.getloadavg()[0]
                for kernel in kernels:
                    rep = best[kernel]
                    bpc = rep["bytes_per_cell"]
                    roof = tri["best_gbs"] * 1e9 / bpc / 1e6
                    rmw = tri.get("rmw_best_gbs", tri["best_gbs"])
                    roof_rmw = rmw * 1e9 / bpc / 1e6
                    tb = rep.get("time_block") or {}
                    row = {"size": size, "precision": prec, "ranks": ranks, "threads": thr, "kernel": kernel,
                           "steps": steps, "mcells_per_s": rep["mcells_per_s"],
                           "vs_fused": rep["mcells_per_s"] / best[kernels[0]]["mcells_per_s"],
                           "time_block": tb.get("steps"), "tile_rows": tb.get("tile_rows"),
                           "triad_best_gbs": tri["best_gbs"], "rmw_best_gbs": rmw, "bytes_per_cell": bpc,
                           "roofline_mcells_per_s": roof, "percent_of_roofline": 100.0 * rep["mcells_per_s"] / roof,
                           "rmw_roofline_mcells_per_s": roof_rmw, "x_rmw_roofline": rep["mcells_per_s"] / roof_rmw,
                           "halo_bytes_per_step": rep.get("halo_bytes_per_step"), "halo_share": rep.get("halo_share"),
                           "achieved_gbs": rep["achieved_gbs"], "peak_rss_bytes": rep["peak_rss_bytes"],
                           "field_bytes": rep["field_bytes"], "rss_over_fields": rep["rss_over_fields"],
                           "checksum": rep["checksum"], "git_sha": rep["build"]["git_sha"], "load_after": load}
                    rows.append(row)
                    print("%-5d %-4s %-4s %-9s %9.1f %7s %5.2f %6.2f %9.2f %8.1f %7.2f %5.1f" % (
                        size, prec, "%dx%d" % (ranks, thr), kernel, row["mcells_per_s"],
                        "%s/%s" % (tb.get("steps", "-"), tb.get("tile_rows", "-")), row["vs_fused"], tri["best_gbs"],
                        rmw, roof_rmw, row["x_rmw_roofline"], load), flush=True)
                checks = {best[k]["checksum"] for k in kernels}
                if len(checks) != 1:
                    sys.exit("run_bench: error: the kernels disagree (checksums %s)" % sorted(checks))
    load_after = os.getloadavg()
    print("load average before %.2f, after %.2f (other work on the machine disturbs these figures)" % (
        load_before[0], load_after[0]))
    if a.out:
        doc = {"program": "yee-bench", "schema_version": 2, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "host": os.uname().nodename, "cpus": os.cpu_count(), "loadavg_before": load_before,
               "loadavg_after": load_after, "rows": rows}
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
