#!/usr/bin/env python3
"""CUDA backend benchmark: every CUDA kernel side by side in one run. Per grid size,
precision and kernel: Gcells/s, and the fraction of the device's measured copy bandwidth
(yee-cuda-copy, measured in the same run) that the run reaches when counted at the
minimal traffic of one time step, 12 field words per cell (48 B f32, 96 B f64: read E
and H once, write them once). Best of --repeats runs per case.
Targets: the fused kernel >= 75 % of copy at 384^3 and 512^3; a temporally blocked kernel
(wavefront) > 100 % (it moves less than one step's minimal traffic per step).

  run_cuda_bench.py --yee build/solver-cuda/yee-cuda --copy build/solver-cuda/yee-cuda-copy \\
                    [--sizes 256,384,512] [--precisions f32,f64] [--kernels split,fused,wavefront]
                    [--steps 100] [--repeats 2] [--out FILE]

A kernel entry is a --kernel name, optionally with settings: fused:tile=8 (--tile 8),
wavefront:tb=4 (--time-block 4), fused:depth=3 (the fused kernel's copies 3 planes ahead:
YEE_CUDA_FUSED_DEPTH=3 in yee's environment), joined with '+' (fused:tile=8+depth=1). Default: the
kernels the CUDA backend declares (src/backends/cuda/traits.json). Writes one JSON object
(schema "yee-cuda-bench", version 2, naming the device) to --out (atomically) or stdout,
and a table on stderr. Exit 1 when a run fails or reports an invalid result, 2 on bad
arguments."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRAITS = os.path.join(HERE, "..", "src", "backends", "cuda", "traits.json")
WORDS_PER_CELL = 12  # one step's minimal traffic: E and H read once and written once
TARGETS = [  # (kernel, sizes, minimum % of copy at the minimal traffic, strictly above?)
    ("fused", (384, 512), 75.0, False),
    ("wavefront", (384, 512), 100.0, True),
]
SETTINGS = {"tile": "--tile", "tb": "--time-block"}  # command-line flags
ENV_SETTINGS = {"depth": "YEE_CUDA_FUSED_DEPTH"}      # environment variables (measurement aids)


def die(msg, code=1):
    print("run_cuda_bench: error: %s" % msg, file=sys.stderr)
    sys.exit(code)


def run_json(cmd, what, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **env) if env else None)
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


def kernel_spec(entry):
    """'fused:tile=8+...' -> (label, name, extra yee arguments, extra environment)."""
    name, _, rest = entry.partition(":")
    if name not in ("split", "fused", "wavefront"):
        raise argparse.ArgumentTypeError("%r: the kernels are split, fused and wavefront" % entry)
    extra, env = [], {}
    for setting in filter(None, rest.split("+")):
        key, _, value = setting.partition("=")
        if key not in SETTINGS and key not in ENV_SETTINGS or not value.isdigit():
            raise argparse.ArgumentTypeError("%r: settings are tile=N, tb=N and depth=N" % entry)
        if key in SETTINGS:
            extra += [SETTINGS[key], value]
        else:
            env[ENV_SETTINGS[key]] = value
    return (entry, name, extra, env)


def kernel_list(s):
    v = [kernel_spec(e) for e in s.split(",") if e]
    if not v:
        raise argparse.ArgumentTypeError("no kernels")
    return v


def declared_kernels():
    try:
        with open(TRAITS) as f:
            return ",".join(json.load(f)["kernels"])
    except (OSError, ValueError, KeyError) as e:
        die("cannot read the CUDA backend's kernels from %s: %s" % (TRAITS, e), 2)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--yee", required=True, help="the CUDA build's yee (yee-cuda)")
    ap.add_argument("--copy", required=True, help="yee-cuda-copy (measured device bandwidth)")
    ap.add_argument("--sizes", type=int_list, default=[256, 384, 512], help="cubic grid edges (default 256,384,512)")
    ap.add_argument("--precisions", type=precision_list, default=["f32", "f64"], help="default f32,f64")
    ap.add_argument("--kernels", type=kernel_list, default=None,
                    help="kernels to compare (default: those of src/backends/cuda/traits.json)")
    ap.add_argument("--steps", type=int, default=100, help="time steps per run (default 100)")
    ap.add_argument("--repeats", type=int, default=2, help="runs per case, best kept (default 2)")
    ap.add_argument("--copy-bytes", type=int, default=1 << 30, help="buffer size of the copy measurement")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per run (default 1200)")
    ap.add_argument("--out", help="JSON output file (default stdout)")
    a = ap.parse_args(argv)
    if a.steps < 1 or a.repeats < 1:
        ap.error("--steps and --repeats must be >= 1")
    if a.kernels is None:
        a.kernels = kernel_list(declared_kernels())
    return a


def run_case(a, n, prec, kernel):
    label, name, extra, env = kernel
    cmd = [a.yee, "--nx", str(n), "--ny", str(n), "--nz", str(n), "--steps", str(a.steps), "--precision", prec,
           "--kernel", name] + extra + ["--source", "none", "--init-mode", "pulse", "--quiet", "--report", "-"]
    best = None
    for _ in range(a.repeats):
        rep = run_json(cmd, "yee %d^3 %s %s" % (n, prec, label), a.timeout, env)
        if not rep.get("valid"):
            die("yee %d^3 %s %s: invalid result: %s" % (n, prec, label, rep.get("invalid_reason")))
        if rep.get("backend") != "cuda":
            die("%s is the %r backend, not cuda" % (a.yee, rep.get("backend")))
        if best is None or rep["mcells_per_s"] > best["mcells_per_s"]:
            best = rep
    return ["%s=%s" % kv for kv in sorted(env.items())] + cmd, best


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
            checksums = {}
            for kernel in a.kernels:
                cmd, best = run_case(a, n, prec, kernel)
                gcells = best["mcells_per_s"] / 1e3
                minimal = WORDS_PER_CELL * (4 if prec == "f32" else 8)
                achieved = gcells * minimal  # GB/s that one step's minimal traffic would need
                checksums[kernel[0]] = best.get("checksum")
                rows.append({"n": n, "precision": prec, "kernel": kernel[0], "steps": a.steps,
                             "repeats": a.repeats, "gcells_per_s": round(gcells, 4),
                             "minimal_bytes_per_cell": minimal, "gbs_at_minimal": round(achieved, 2),
                             "pct_of_copy_at_minimal": round(100.0 * achieved / bw, 2),
                             "report_bytes_per_cell": best.get("bytes_per_cell"),
                             "checksum": best.get("checksum"), "time_block": best.get("time_block"),
                             "seconds": best["seconds"], "device": best.get("device"), "command": " ".join(cmd)})
            # Every kernel computes the same fields: a differing checksum is a wrong kernel.
            if len(set(checksums.values())) > 1:
                die("%d^3 %s: the kernels' checksums differ: %s" % (n, prec, checksums))
    targets = []
    for kernel, sizes, pct, strict in TARGETS:
        for r in rows:
            if r["kernel"] == kernel and r["n"] in sizes:
                got = r["pct_of_copy_at_minimal"]
                targets.append({"case": "%s %d^3 %s" % (kernel, r["n"], r["precision"]), "pct_of_copy": pct,
                                "above": strict, "measured_pct": got, "met": got > pct if strict else got >= pct})
    return {"schema": "yee-cuda-bench", "schema_version": 2, "device": copy.get("device"), "copy": copy,
            "words_per_cell": WORDS_PER_CELL, "kernels": [k[0] for k in a.kernels], "results": rows,
            "targets": targets}


def table(res):
    kernels = res["kernels"]
    lines = ["device: %s, measured copy %.1f GB/s (memcpy %.1f, kernel %.1f); %% of copy at %d words/cell "
             "(48 B f32, 96 B f64)" % (res["device"], res["copy"]["best_gbs"], res["copy"]["memcpy_gbs"],
                                       res["copy"]["kernel_copy_gbs"], res["words_per_cell"]),
             "%6s %5s " % ("n", "prec") + " ".join("%21s" % k[:21] for k in kernels),
             "%6s %5s " % ("", "") + " ".join("%21s" % "Gcells/s  % copy" for _ in kernels)]
    cases = []
    for r in res["results"]:
        if (r["n"], r["precision"]) not in cases:
            cases.append((r["n"], r["precision"]))
    for n, prec in cases:
        cells = []
        for k in kernels:
            r = next(x for x in res["results"] if (x["n"], x["precision"], x["kernel"]) == (n, prec, k))
            cells.append("%12.2f %7.1f%%" % (r["gcells_per_s"], r["pct_of_copy_at_minimal"]))
        lines.append("%6d %5s " % (n, prec) + " ".join("%21s" % c for c in cells))
    for t in res["targets"]:
        lines.append("target %s %s %.0f%% of copy: %.1f%% (%s)" % (t["case"], ">" if t["above"] else ">=",
                                                                  t["pct_of_copy"], t["measured_pct"],
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
