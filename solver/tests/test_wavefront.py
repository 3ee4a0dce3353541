"""Wavefront kernel (several time steps per pass) against the fused kernel: the probe time
series (E and H components, points on rank faces and at the source), the energy series
(energy every K steps splits the passes), the checksum and the field files written every
N steps must be bitwise identical for every time block, tile size, thread count, rank
count and uneven decomposition, in f32 and f64. The report must show that passes really
ran, and a run with a different source must differ (the comparison can fail)."""
import hashlib
import os
import sys

from yee_testlib import check, finish, report, scratch_dir

SMALL = "--small" in sys.argv  # the sanitizer build runs a subset
tmp = scratch_dir("yee-wavefront-")
GRID = ["--nx", 13, "--ny", 11, "--nz", 10]  # odd sizes: every split is uneven
PROBES = ["--probe", "6,5,4", "--probe", "6,5,5", "--probe", "0,0,0", "--probe", "12,10,9", "--probe", "7,6,5",
          "--probe", "3,8,2"]
COMMON = GRID + ["--steps", 29, "--source", "gauss-sine", "--source-freq", 0.1, "--source-pos", "6,5,4",
                 "--init-mode", "pulse", "--energy-every", 9] + PROBES

CASES = [  # (ranks, threads, flags)
    (1, 1, ["--time-block", 2, "--tile", 1]),
    (1, 2, ["--time-block", 3, "--tile", 1]),
    (1, 2, ["--time-block", 8, "--tile", 4]),
    (1, 2, ["--time-block", 10, "--tile", 11]),
    (1, 2, []),  # auto
    (2, 1, ["--decomp", "2x1x1", "--time-block", 4]),
    (2, 2, ["--decomp", "1x2x1", "--time-block", 5, "--tile", 2]),
    (2, 1, ["--decomp", "1x1x2", "--time-block", 3]),
    (3, 1, ["--decomp", "3x1x1", "--time-block", 4]),
    (3, 1, ["--decomp", "1x3x1", "--time-block", 3, "--tile", 1]),
    (4, 1, ["--decomp", "2x1x2", "--time-block", 2]),
    (4, 1, ["--decomp", "2x2x1"]),
    (6, 1, ["--decomp", "1x2x3", "--time-block", 3]),
    (8, 1, ["--decomp", "2x2x2", "--time-block", 5]),
]
if SMALL:
    CASES = [CASES[1], CASES[5], CASES[11]]


def run(precision, ranks, threads, kernel, flags, probe_field):
    csv = os.path.join(tmp, "p-%s-%d-%d-%s-%s-%d.csv" % (precision, ranks, threads, kernel, probe_field, len(os.listdir(tmp))))
    common = list(COMMON)
    for i in range(0, len(flags), 2):  # a flag of the case replaces COMMON's (yee refuses a flag given twice)
        if flags[i] in common[::2]:
            at = common.index(flags[i])
            del common[at:at + 2]
    rep = report(common + ["--precision", precision, "--kernel", kernel, "--probe-field", probe_field,
                           "--probe-out", csv] + flags, ranks=ranks, threads=threads)
    with open(csv) as f:
        return rep, f.read()


for precision in (("f64",) if SMALL else ("f32", "f64")):
    for probe_field in (("Ez",) if SMALL else ("Ez", "Hy")):
        ref, ref_csv = run(precision, 1, 1, "fused", [], probe_field)
        check(ref["valid"] and ref["e_max"] > 0 and len(ref["energy_series"]) == 5,
              "%s %s: fused reference ran, energy at %s" % (precision, probe_field, [s for s, _ in ref["energy_series"]]))
        for ranks, threads, flags in CASES if probe_field == "Ez" else CASES[:2] + CASES[5:7]:
            rep, csv = run(precision, ranks, threads, "wavefront", flags, probe_field)
            tb = rep["time_block"]
            label = "%s %s ranks=%d threads=%d dims=%s T=%d tile=%d" % (
                precision, probe_field, ranks, rep["threads"], rep["dims"], tb["steps"], tb["tile_rows"])
            check(rep["checksum"] == ref["checksum"], "%s: checksum %s == fused %s" % (label, rep["checksum"], ref["checksum"]))
            check(csv == ref_csv, "%s: probe series (6 probes x 29 steps) identical to fused" % label)
            if probe_field == "Ez":  # the energy sums depend on the reduction order: fused on the same ranks/threads
                decomp = flags[flags.index("--decomp"):][:2] if "--decomp" in flags else []
                same, _ = run(precision, ranks, threads, "fused", decomp, probe_field)
                check([s for s, _ in rep["energy_series"]] == [s for s, _ in ref["energy_series"]]
                      and rep["energy_series"] == same["energy_series"],
                      "%s: energy series identical to fused on the same ranks and threads" % label)
            check(tb["passes"] > 0 and tb["steps_in_passes"] >= 2 * tb["passes"],
                  "%s: %d passes took %d of 29 steps" % (label, tb["passes"], tb["steps_in_passes"]))

# The comparison can fail: another source frequency changes the probe series.
rep, csv = run("f64", 1, 1, "wavefront", ["--source-freq", 0.11], "Ez")
check(csv != ref_csv and rep["checksum"] != ref["checksum"], "a different source gives a different probe series")

# Ghost layers T deep only along the split axis: on a 2x1x1 split of 40^3 (20 planes per
# rank) with T = 8, rank 0's arrays hold 20 + 2*8 planes of the fused run's 42x42-cell
# (padded) planes, so the field memory grows by 36/22, not by deep ghosts on all three axes.
mem = {k: report(["--n", 40, "--steps", 10, "--kernel", k, "--decomp", "2x1x1"] +
                 (["--time-block", 8] if k == "wavefront" else []), ranks=2)["field_bytes"]
       for k in ("fused", "wavefront")}
check(abs(mem["wavefront"] / mem["fused"] - 36.0 / 22.0) < 0.01,
      "2x1x1 with T=8: field memory %d bytes = fused's %d x %.3f (36/22 = 1.636: deep ghosts along x only)"
      % (mem["wavefront"], mem["fused"], mem["wavefront"] / mem["fused"]))


def field_files(precision, ranks, threads, kernel, flags):
    out = os.path.join(tmp, "out-%s-%d-%d-%s-%d" % (precision, ranks, threads, kernel, len(os.listdir(tmp))))
    report(GRID + ["--steps", 14, "--precision", precision, "--init-mode", "pulse", "--source-pos", "6,5,4",
                   "--kernel", kernel, "--output", "binary", "--output-every", 3, "--output-dir", out] + flags,
           ranks=ranks, threads=threads)
    return {name: hashlib.sha256(open(os.path.join(out, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(out)) if name.endswith(".bin")}


ref_files = field_files("f32", 1, 1, "fused", [])
check(sorted(ref_files) == ["fields_s%06d.bin" % s for s in (3, 6, 9, 12)], "fused writes steps 3, 6, 9, 12")
for ranks, threads, flags in ([(1, 2, ["--time-block", 5])] if SMALL else
                              [(1, 2, ["--time-block", 5]), (1, 1, ["--time-block", 2, "--tile", 3]),
                               (2, 1, ["--decomp", "1x2x1", "--time-block", 4])]):
    files = field_files("f32", ranks, threads, "wavefront", flags)
    check(files == ref_files, "field output every 3 steps, ranks=%d %s: files identical to fused" % (ranks, flags))
finish()
