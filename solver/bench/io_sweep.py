#!/usr/bin/env python3
"""Field-output sweep (paper 001): format x strategy x ranks x grid per rank ->
seconds per output step, GB/s, bytes per step, I/O share of the loop, beside the
no-output baseline. Every rank owns an N^3 block, blocks stacked along x (Px1x1; --stack z: 1x1xP), the
fields start as a cavity mode (nonzero everywhere, so ASCII and compressed sizes are
not flattered by zeros), output after every step for --steps steps, 1 thread per rank.

  python3 solver/bench/io_sweep.py [--yee PATH] [--sizes 30,60,90] [--ranks 1,2,4]
          [--formats none,ascii,binary,hdf5] [--strategies root,per-rank,shared]
          [--steps 10] [--repeats 1] [--output-root DIR] [--out FILE.json] [--markdown]

--output-root: where the files go (default: a temporary folder under build/); point
it at a parallel file system to measure that. Each case's files are deleted after it
ran (sizes come from the solver's report). The best of --repeats runs is kept."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def find_yee(explicit):
    if explicit:
        return explicit
    for cand in (os.path.join(ROOT, "build", "install", "bin", "yee"), os.path.join(ROOT, "build", "solver", "yee")):
        if os.path.exists(cand):
            return cand
    return shutil.which("yee") or sys.exit("io_sweep: error: cannot find yee (build it or pass --yee)")


def run_case(yee, fmt, strategy, ranks, n, steps, outdir, stack, yield_idle):
    if stack == "x":
        grid, decomp = (n * ranks, n, n), "%dx1x1" % ranks
    else:
        grid, decomp = (n, n, n * ranks), "1x1x%d" % ranks
    bind = "core" if ranks <= os.cpu_count() else "none"
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", bind, yee,
           "--nx", str(grid[0]), "--ny", str(grid[1]), "--nz", str(grid[2]), "--decomp", decomp,
           "--steps", str(steps), "--init-mode", "TM110+TE101", "--source", "none", "--quiet", "--report", "-",
           "--output", fmt]
    if fmt != "none":
        cmd += ["--output-every", "1", "--output-strategy", strategy, "--output-dir", outdir]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if yield_idle:
        env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    shutil.rmtree(outdir, ignore_errors=True)
    if p.returncode != 0:
        sys.exit("io_sweep: error: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return json.loads(p.stdout)


def row_of(rep, fmt, strategy, ranks, n):
    io, sec = rep["io"], rep["seconds"]
    steps = rep["steps"]
    return {"format": fmt, "strategy": strategy if fmt != "none" else "-", "ranks": ranks, "n_per_rank": n,
            "io_seconds_per_step": io["seconds_per_step"], "io_gbs": io["gbs"],
            "bytes_per_step": io["bytes_written"] / max(1, io["steps_written"]), "files_written": io["files_written"],
            "io_share": 100.0 * io["share"], "compute_seconds_per_step": (sec["total"] - sec["io"]) / steps,
            "mcells_per_s": rep["mcells_per_s"], "mpiio_setting": io.get("mpiio_setting", "")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--yee")
    ap.add_argument("--sizes", default="30,60,90")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--formats", default="none,ascii,binary,hdf5")
    ap.add_argument("--strategies", default="root,per-rank,shared")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--output-root")
    ap.add_argument("--stack", choices=["x", "z"], default="x",
                    help="axis the ranks' blocks are stacked along (x: contiguous per rank in a shared file)")
    ap.add_argument("--yield-when-idle", action="store_true",
                    help="Open MPI ranks yield the CPU while waiting (for a machine shared with other work)")
    ap.add_argument("--out", help="write all rows as JSON")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    a = ap.parse_args()
    yee = find_yee(a.yee)
    root = a.output_root or os.path.join(ROOT, "build")
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="yee-io-sweep-", dir=root)
    rows = []
    t0 = time.time()
    try:
        for n in [int(x) for x in a.sizes.split(",")]:
            for ranks in [int(x) for x in a.ranks.split(",")]:
                for fmt in a.formats.split(","):
                    for strategy in (["root"] if fmt == "none" else a.strategies.split(",")):
                        if strategy == "shared" and fmt != "hdf5":
                            continue
                        best = None
                        for _ in range(a.repeats):
                            rep = run_case(yee, fmt, strategy, ranks, n, a.steps, os.path.join(work, "out"), a.stack,
                                           a.yield_when_idle)
                            r = row_of(rep, fmt, strategy, ranks, n)
                            key = r["io_seconds_per_step"] if fmt != "none" else r["compute_seconds_per_step"]
                            if best is None or key < best[0]:
                                best = (key, r)
                        rows.append(best[1])
                        print("%-6s %-8s %d x %3d^3: %8.4f s/step  %7.3f GB/s  %11.0f B/step  I/O %5.1f %%"
                              % (fmt, best[1]["strategy"], ranks, n, best[1]["io_seconds_per_step"],
                                 best[1]["io_gbs"], best[1]["bytes_per_step"], best[1]["io_share"]),
                              file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {"yee": yee, "steps": a.steps, "repeats": a.repeats, "stack": a.stack,
            "yield_when_idle": a.yield_when_idle, "output_root": root, "seconds": time.time() - t0,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count()}
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        os.replace(tmp, a.out)
    if a.markdown:
        print("| format | strategy | ranks | N/rank | s/step | GB/s | MB/step | I/O share | compute s/step |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %s | %d | %d | %.4f | %.3f | %.2f | %.1f %% | %.4f |" % (
                r["format"], r["strategy"], r["ranks"], r["n_per_rank"], r["io_seconds_per_step"], r["io_gbs"],
                r["bytes_per_step"] / 1e6, r["io_share"], r["compute_seconds_per_step"]))


if __name__ == "__main__":
    main()
