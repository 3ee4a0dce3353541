"""The JSON report is a contract other parts parse (notes/interfaces.md): every key with
its type, the Mcells/s and GB/s formulas, per-rank placement, build provenance; plus the
--report file, the probe CSV and --version."""
import json
import os
import re

from yee_testlib import check, finish, report, run, scratch_dir

tmp = scratch_dir("yee-report-")
path = os.path.join(tmp, "r.json")
csv = os.path.join(tmp, "p.csv")
rc, out, err = run(["--nx", 12, "--ny", 10, "--nz", 8, "--steps", 30, "--energy-every", 10, "--report", path,
                    "--probe", "3,3,3", "--probe", "5,4,2", "--probe-out", csv, "--no-progress"], ranks=2, threads=1)
check(rc == 0 and out == "", "--report FILE: exit 0, nothing on stdout (rc=%d)" % rc)
check("VALID" in err and "Mcells/s" in err, "human summary on stderr")
rep = json.load(open(path))
check(not any(f.startswith("r.json.tmp") for f in os.listdir(tmp)), "no temporary file left behind")

TYPES = {"schema": str, "schema_version": int, "valid": bool, "grid": dict, "cells": int, "steps": int,
         "ranks": int, "threads": int, "dims": list, "precision": str, "backend": str, "mcells_per_s": float,
         "seconds": dict, "bytes_per_cell": int, "achieved_gbs": float, "energy": float, "checksum": str,
         "peak_rss_bytes": int, "field_bytes": int, "placement": list, "build": dict}
for key, typ in TYPES.items():
    check(isinstance(rep.get(key), typ), "key %s is a %s" % (key, typ.__name__))
check(rep["schema"] == "yee-report" and rep["schema_version"] == 1, "schema yee-report v1")
check(rep["grid"] == {"nx": 12, "ny": 10, "nz": 8} and rep["cells"] == 960 and rep["steps"] == 30, "grid, cells, steps")
check(rep["ranks"] == 2 and rep["dims"][0] * rep["dims"][1] * rep["dims"][2] == 2, "ranks and dims")
for k in ("update_h", "update_e", "halo", "reduce", "io", "total"):
    check(isinstance(rep["seconds"].get(k), float) and rep["seconds"][k] >= 0, "seconds.%s present" % k)
sec = rep["seconds"]
mean = rep["seconds_mean"]
check(all(0 <= mean[k] <= sec[k] * (1 + 1e-9) + 1e-12 for k in ("update", "halo", "reduce", "io", "total")),
      "seconds_mean: each phase's mean over ranks at most its maximum")
check(mean["update"] + mean["halo"] + mean["reduce"] + mean["diag"] + mean["io"] <= mean["total"] * 1.05 + 1e-3,
      "seconds_mean: the phases add up to at most the loop")
check(sec["total"] > 0 and sec["update"] <= sec["total"] * 1.05 + 1e-3, "phase times fit in the loop time")
spread = rep.get("update_spread", {})
# over 2 ranks the population standard deviation is half the range, i.e. mean - min
check(0 <= spread.get("min", -1) <= mean["update"] * (1 + 1e-9) and
      abs(spread.get("stddev", -1) - (mean["update"] - spread.get("min", 0))) <= 1e-6 * mean["update"] + 1e-9,
      "update_spread: the fastest rank's updates and their standard deviation over ranks (%s)" % spread)
mc = rep["cells"] * rep["steps"] / sec["total"] / 1e6
check(abs(rep["mcells_per_s"] - mc) <= 1e-9 * mc, "mcells_per_s = cells*steps/total/1e6")
gb = rep["bytes_per_cell"] * rep["cells"] * rep["steps"] / sec["total"] / 1e9
check(rep["bytes_per_cell"] == 48 and abs(rep["achieved_gbs"] - gb) <= 1e-9 * gb, "achieved_gbs from 48 B/cell")
check(re.fullmatch(r"[0-9a-f]{16}", rep["checksum"]) is not None, "checksum is 16 hex digits")
check([lvl for lvl, _ in rep["energy_series"]] == [0, 10, 20, 29], "energy every 10 steps and at the end")
pl = rep["placement"]
check([p["rank"] for p in pl] == [0, 1] and all(p["cpus"] and p["host"] and p["numa_nodes"] for p in pl),
      "placement: one entry per rank with host, cpus, numa_nodes")
check(all(set(p["cpus"]) <= set(p["thread_cpus"]) for p in pl), "thread_cpus: the main thread's CPUs among them")
check(all(p["peak_rss_bytes"] > p["field_bytes"] > 0 for p in pl) and rep["peak_rss_bytes"] >= rep["field_bytes"],
      "peak RSS and field bytes per rank")
b = rep["build"]
check(re.fullmatch(r"[0-9a-f]{40}|unknown", b["git_sha"]) is not None and isinstance(b["dirty"], bool)
      and b["compiler"] and "-ffp-contract=off" in b["flags"], "build provenance")

lines = [l for l in open(csv) if not l.startswith("#")]
check(lines[0].strip() == "step,time,p3_3_3,p5_4_2" and len(lines) == 31, "probe CSV header and one row per step")
check(all(len(l.split(",")) == 4 for l in lines[1:]), "probe CSV rows complete")

hb = rep["halo_bytes"] / rep["steps"]
check(rep["halo_bytes"] > 0 and abs(rep["halo_bytes_per_step"] - hb) <= 1e-9 * hb, "halo_bytes_per_step = halo_bytes/steps")
# Message statistics (paper 002, Table 1): 2 ranks split along one axis, each with one neighbour, send
# one message per step (H up from the lower rank, E down from the upper), 2 tangential components of a face.
check(rep["halo_messages"] == 2 * rep["steps"] and rep["halo_messages_per_step"] == 2,
      "halo_messages: one message per rank per step (%s)" % rep["halo_messages"])
face = {0: 10 * 8, 1: 12 * 8, 2: 12 * 10}[[a for a in range(3) if rep["dims"][a] == 2][0]]
check(rep["halo_message_bytes_mean"] == 2 * face * 4 == rep["halo_bytes"] / rep["halo_messages"],
      "halo_message_bytes_mean: 2 components x face cells x 4 B (%s)" % rep["halo_message_bytes_mean"])
check(abs(rep["halo_seconds_per_step"] - sec["halo"] / rep["steps"]) <= 1e-12 + 1e-9 * sec["halo"],
      "halo_seconds_per_step = seconds.halo / steps")
check(0 < rep["halo_seconds_per_message"] <= sec["halo"] / rep["steps"] * (1 + 1e-9) + 1e-12,
      "halo_seconds_per_message: a rank's halo time over its %d messages, at most the slowest rank's" % rep["steps"])
check(abs(rep["halo_share"] - sec["halo"] / sec["total"]) <= 1e-9 and rep["time_block"] is None,
      "halo_share = seconds.halo/total; time_block null for the fused kernel")
rc, out, err = run(["--nx", 12, "--ny", 10, "--nz", 8, "--steps", 30, "--kernel", "wavefront", "--time-block", 3,
                    "--energy-every", 10, "--quiet"], ranks=2, threads=1)
tb = json.loads(out)["time_block"] if rc == 0 else {}
# steps 0, 10, 20 and 29 are energy steps: passes of 3,3,3 in 1..9 and 11..19, 3,3,2 in 21..28
check(tb.get("steps") == 3 and tb.get("passes") == 9 and tb.get("steps_in_passes") == 26
      and tb.get("model_traffic_ratio", 0) > 0, "wavefront report: time_block %s" % tb)

rc, out, err = run(["--version"])
check(rc == 0 and out.startswith("yee ") and "backend" in out, "--version")
finish()
