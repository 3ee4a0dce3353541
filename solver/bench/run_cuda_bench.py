#!/usr/bin/env python3
"""CUDA backend benchmark: Gcells/s, bytes per cell, achieved GB/s and % of the device's
measured copy bandwidth (yee-cuda-copy, measured in the same run) for each grid size and
precision (default 256^3 and 512^3, f32 and f64). Best of --repeats runs per case.
Target (DESIGN/solver README): >= 75% of measured bandwidth at 512^3 f32.

  run_cuda_bench.py --yee build/solver-cuda/yee-cuda --copy build/solver-cuda/yee-cuda-copy \\
                    [--sizes 256,512] [--precisions f32,f64] [--steps 200] [--repeats 3] [--out FILE]

Writes one JSON object (schema "yee-cuda-bench") to --out (atomically) or stdout, and a
table on stderr. Exit 1 when a run fails or reports an invalid result, 2 on bad arguments."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

TARGET = {"n": 512, "precision": "f32", "pct": 75.0}


def die(msg, code=1):
    print("run_cuda_bench: error: %s" % msg, file=sys.stderr)
    sys.exit(code)


def run_json(cmd, what, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        die("%s: %s" % (what, e))
    if p.returncode != 0:
        die("%s exited %d: %s" % (what, p.returncode, p.stderr.strip()[-500:]))
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        die("%s: output is not JSON: %r" % (what, p.stdout[:200]))


def int_list(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a comma-separated list of integers" % s)
    if not v or min(v) < 8:
        raise argparse.ArgumentTypeError("sizes must be >= 8")
    return v


def precision_list(s):
    v = s.split(",")
    if not v or any(p not in ("f32", "f64") for p in v):
        raise argparse.ArgumentTypeError("%r: precisions are f32 and/or f64" % s)
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--yee", required=True, help="the CUDA build's yee (yee-cuda)")
    ap.add_argument("--copy", required=True, help="yee-cuda-copy (measured device bandwidth)")
    ap.add_argument("--sizes", type=int_list, default=[256, 512], help="cubic grid edges (default 256,512)")
    ap.add_argument("--precisions", type=precision_list, default=["f32", "f64"], help="default f32,f64")
    ap.add_argument("--steps", type=int, default=200, help="time steps per run (default 200)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per case, best kept (default 3)")
    ap.add_argument("--copy-bytes", type=int, default=1 << 30, help="buffer size of the copy measurement")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per run (default 1200)")
    ap.add_argument("--out", help="JSON output file (default stdout)")
    a = ap.parse_args(argv)
    if a.steps < 1 or a.repeats < 1:
        ap.error("--steps and --repeats must be >= 1")
    return a


def measure(a):
    copy_cmd = [a.copy, "--bytes", str(a.copy_bytes)]
    copy = run_json(copy_cmd, "yee-cuda-copy", a.timeout)
    if not copy.get("valid") or not copy.get("best_gbs", 0) > 0:
        die("yee-cuda-copy reports an invalid measurement: %r" % copy)
    copy["command"] = " ".join(copy_cmd)
    bw = float(copy["best_gbs"])
    rows = []
    for n in a.sizes:
        for prec in a.precisions:
            cmd = [a.yee, "--nx", str(n), "--ny", str(n), "--nz", str(n), "--steps", str(a.steps), "--precision", prec,
                   "--source", "none", "--init-mode", "pulse", "--quiet", "--report", "-"]
            best = None
            for _ in range(a.repeats):
                rep = run_json(cmd, "yee %d^3 %s" % (n, prec), a.timeout)
                if not rep.get("valid"):
                    die("yee %d^3 %s: invalid result: %s" % (n, prec, rep.get("invalid_reason")))
                if rep.get("backend") != "cuda":
                    die("%s is the %r backend, not cuda" % (a.yee, rep.get("backend")))
                if best is None or rep["mcells_per_s"] > best["mcells_per_s"]:
                    best = rep
            gcells = best["mcells_per_s"] / 1e3
            achieved = gcells * best["bytes_per_cell"]  # GB/s: Gcells/s x B/cell
            rows.append({"n": n, "precision": prec, "steps": a.steps, "repeats": a.repeats,
                         "gcells_per_s": round(gcells, 4), "bytes_per_cell": best["bytes_per_cell"],
                         "achieved_gbs": round(achieved, 2), "pct_of_copy": round(100.0 * achieved / bw, 2),
                         "seconds": best["seconds"], "device": best.get("device"), "command": " ".join(cmd)})
    target = next((r for r in rows if r["n"] == TARGET["n"] and r["precision"] == TARGET["precision"]), None)
    return {"schema": "yee-cuda-bench", "schema_version": 1, "copy": copy, "results": rows,
            "target": {"case": "%d^3 %s" % (TARGET["n"], TARGET["precision"]), "pct_of_copy": TARGET["pct"],
                       "measured_pct": target["pct_of_copy"] if target else None,
                       "met": (target["pct_of_copy"] >= TARGET["pct"]) if target else None}}


def table(res):
    lines = ["device: %s, measured copy %.1f GB/s (memcpy %.1f, kernel %.1f)" % (
        res["copy"].get("device"), res["copy"]["best_gbs"], res["copy"]["memcpy_gbs"], res["copy"]["kernel_copy_gbs"]),
        "%6s %5s %10s %6s %10s %8s" % ("n", "prec", "Gcells/s", "B/cell", "GB/s", "% copy")]
    for r in res["results"]:
        lines.append("%6d %5s %10.3f %6d %10.1f %7.1f%%" % (r["n"], r["precision"], r["gcells_per_s"],
                                                           r["bytes_per_cell"], r["achieved_gbs"], r["pct_of_copy"]))
    t = res["target"]
    if t["measured_pct"] is not None:
        lines.append("target %s >= %.0f%% of copy: %.1f%% (%s)" % (t["case"], t["pct_of_copy"], t["measured_pct"],
                                                                 "met" if t["met"] else "NOT met"))
    return "\n".join(lines)


def write_atomically(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".cuda-bench-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    a = parse_args(argv)
    res = measure(a)
    text = json.dumps(res, indent=1) + "\n"
    print(table(res), file=sys.stderr)
    if a.out:
        write_atomically(a.out, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
