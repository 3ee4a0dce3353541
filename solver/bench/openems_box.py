#!/usr/bin/env python3
"""Run openEMS on the same hollow PEC box as yee's benchmark, for a side-by-side Mcells/s.

  python3 solver/bench/openems_box.py [--n 256] [--steps 200] [--threads 2]
                                      [--engine multithreaded] [--repeats 3] [--keep DIR]
                                      [--yee PATH [--kernels fused,wavefront]]

Needs the openEMS binary (Debian: `apt-get install openems`; installed by hand, not a
dependency of the suite, not run by CI). The box: n mesh lines per axis, i.e. n^3 FDTD cells as openEMS counts them (dx = 1 mm), PEC on
all six walls, a Gaussian-pulse soft Ez source at the centre, a fixed number of steps
(end criterion off). openEMS computes in float32, so compare with `yee --precision f32`.
Writes the openEMS XML itself (no python3-openems needed), runs
`openEMS box.xml --engine=ENGINE --numThreads=T`, and prints the speed openEMS reports
("Speed: ... MCells/s") as one JSON object per line."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def box_xml(n, steps):
    # openEMS updates (and counts) one FDTD cell per mesh line per axis, so n lines give the
    # n^3 cell updates per step that yee counts for an n^3 grid.
    lines = ",".join(str(i) for i in range(n))
    c = n // 2
    f0, fc = 2e9, 2e9  # Hz; dx = 1 mm resolves up to ~30 GHz, so the pulse is well resolved
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<openEMS>
  <FDTD NumberOfTimesteps="{steps}" endCriteria="0" f_max="{f0 + fc}">
    <Excitation Type="0" f0="{f0}" fc="{fc}"/>
    <BoundaryCond xmin="0" xmax="0" ymin="0" ymax="0" zmin="0" zmax="0"/>
  </FDTD>
  <ContinuousStructure CoordSystem="0">
    <Properties>
      <Excitation Name="source" Type="0" Excite="0,0,1">
        <Primitives>
          <Box Priority="0"><P1 X="{c}" Y="{c}" Z="{c}"/><P2 X="{c}" Y="{c}" Z="{c + 1}"/></Box>
        </Primitives>
      </Excitation>
    </Properties>
    <RectilinearGrid DeltaUnit="0.001" CoordSystem="0">
      <XLines>{lines}</XLines>
      <YLines>{lines}</YLines>
      <ZLines>{lines}</ZLines>
    </RectilinearGrid>
  </ContinuousStructure>
</openEMS>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--engine", default="multithreaded", help="basic | sse | sse-compressed | multithreaded")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", help="keep the XML and openEMS output in this directory")
    ap.add_argument("--yee", help="also run this yee binary on the same box (f32, same threads and steps) "
                                  "right after each openEMS run, for a side-by-side figure")
    ap.add_argument("--kernels", default="fused", help="yee kernels to run after each openEMS run (default fused), "
                                                     "e.g. fused,wavefront")
    a = ap.parse_args()
    if a.n < 4 or a.steps < 1 or a.threads < 1 or a.repeats < 1:
        sys.exit("openems_box: error: --n >= 4, --steps, --threads, --repeats >= 1")
    exe = shutil.which("openEMS")
    if not exe:
        sys.exit("openems_box: error: openEMS not found (Debian: apt-get install openems)")
    work = a.keep or tempfile.mkdtemp(prefix="openems-box-")
    os.makedirs(work, exist_ok=True)
    xml = os.path.join(work, "box.xml")
    with open(xml, "w") as f:
        f.write(box_xml(a.n, a.steps))
    kernels = a.kernels.split(",")
    best, yee_best = None, {}
    for r in range(a.repeats):
        p = subprocess.run([exe, "box.xml", "--engine=" + a.engine, "--numThreads=%d" % a.threads],
                           cwd=work, capture_output=True, text=True)
        out = p.stdout + p.stderr
        m = re.search(r"Speed:\s*([0-9.eE+]+)\s*MCells/s", out)
        if p.returncode != 0 or not m:
            sys.exit("openems_box: error: openEMS exited %d without a speed line:\n%s" % (p.returncode, out[-1500:]))
        speed = float(m.group(1))
        row = {"program": "openEMS", "engine": a.engine, "threads": a.threads, "n": a.n, "cells": a.n ** 3,
               "steps": a.steps, "repeat": r, "mcells_per_s": speed}
        print(json.dumps(row), flush=True)
        best = speed if best is None else max(best, speed)
        for kernel in kernels if a.yee else []:
            env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
            q = subprocess.run([a.yee, "--n", str(a.n), "--steps", str(a.steps), "--precision", "f32",
                                "--threads", str(a.threads), "--source", "gauss-sine", "--kernel", kernel, "--quiet"],
                               capture_output=True, text=True, env=env)
            if q.returncode != 0:
                sys.exit("openems_box: error: yee exited %d: %s" % (q.returncode, q.stderr.strip()[-500:]))
            y = json.loads(q.stdout)["mcells_per_s"]
            yee_best[kernel] = max(y, yee_best.get(kernel, y))
            print(json.dumps({"program": "yee", "kernel": kernel, "precision": "f32", "threads": a.threads, "n": a.n,
                              "steps": a.steps, "repeat": r, "mcells_per_s": y}), flush=True)
    print(json.dumps({"program": "openEMS", "engine": a.engine, "threads": a.threads, "n": a.n,
                      "best_mcells_per_s": best}))
    for kernel, y in yee_best.items():
        print(json.dumps({"program": "yee", "kernel": kernel, "precision": "f32", "threads": a.threads, "n": a.n,
                          "best_mcells_per_s": y, "vs_openems": y / best}))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
