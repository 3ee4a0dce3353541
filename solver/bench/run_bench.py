#!/usr/bin/env python3
"""yee benchmark: Mcells/s at 128^3 and 256^3, f32 and f64, 1 and 2 threads, beside a
STREAM-style triad measured in the same run, and the % of the triad roofline
(roofline Mcells/s = triad GB/s / model bytes per cell: 48 B f32, 96 B f64; DESIGN.md 3).

  python3 solver/bench/run_bench.py [--yee PATH] [--triad PATH] [--sizes 128,256]
                                    [--threads 1,2] [--precisions f32,f64] [--repeats 3] [--out FILE]

Each yee configuration runs --repeats times and the best is kept (the machine is shared;
the best run is the least disturbed one); the triad is re-measured right before each
configuration with the same thread count. Prints a table; --out writes all figures as JSON."""
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
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread", OMP_PLACES="cores")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("run_bench: error: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--yee")
    ap.add_argument("--triad")
    ap.add_argument("--sizes", default="128,256")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--precisions", default="f32,f64")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="time steps (default: about 1 s of work per run)")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    a = ap.parse_args()
    yee, triad = find("yee", a.yee), find("yee-triad", a.triad)
    rows = []
    load_before = os.getloadavg()
    print("%-5s %-4s %-3s %10s %10s %10s %8s %9s" % ("size", "prec", "thr", "Mcells/s", "triad GB/s",
                                                       "roof Mc/s", "% roof", "RSS/field"))
    for size in [int(s) for s in a.sizes.split(",")]:
        for prec in a.precisions.split(","):
            for thr in [int(t) for t in a.threads.split(",")]:
                tri = run_json([triad, "--repeats", "5"], thr)
                steps = a.steps or max(10, int(300e6 / size ** 3))
                best = None
                for _ in range(a.repeats):
                    rep = run_json([yee, "--n", str(size), "--steps", str(steps), "--precision", prec,
                                    "--threads", str(thr), "--quiet", "--source", "ricker"], thr)
                    if best is None or rep["mcells_per_s"] > best["mcells_per_s"]:
                        best = rep
                bpc = best["bytes_per_cell"]
                roof = tri["best_gbs"] * 1e9 / bpc / 1e6
                row = {"size": size, "precision": prec, "threads": thr, "steps": steps,
                       "mcells_per_s": best["mcells_per_s"], "triad_best_gbs": tri["best_gbs"],
                       "bytes_per_cell": bpc, "roofline_mcells_per_s": roof,
                       "percent_of_roofline": 100.0 * best["mcells_per_s"] / roof,
                       "achieved_gbs": best["achieved_gbs"], "peak_rss_bytes": best["peak_rss_bytes"],
                       "field_bytes": best["field_bytes"], "rss_over_fields": best["rss_over_fields"],
                       "checksum": best["checksum"], "git_sha": best["build"]["git_sha"]}
                rows.append(row)
                print("%-5d %-4s %-3d %10.1f %10.2f %10.1f %7.1f%% %9.3f" % (
                    size, prec, thr, row["mcells_per_s"], tri["best_gbs"], roof, row["percent_of_roofline"],
                    row["rss_over_fields"]), flush=True)
    load_after = os.getloadavg()
    print("load average before %.2f, after %.2f (other work on the machine disturbs these figures)" % (
        load_before[0], load_after[0]))
    if a.out:
        doc = {"program": "yee-bench", "schema_version": 1, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "host": os.uname().nodename, "cpus": os.cpu_count(), "loadavg_before": load_before,
               "loadavg_after": load_after, "rows": rows}
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
