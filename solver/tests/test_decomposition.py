"""Decomposition invariance: the field checksum (order-independent hash of every owned
value) must be bitwise identical for 1, 2, 3, 4, 6 and 8 ranks (prime and uneven splits,
1x1xP and Px1x1), for 1 and 2 threads, all three kernels and any cache tile or time block."""
import sys

from yee_testlib import check, finish, report, without_missing_kernels

SMALL = "--small" in sys.argv  # the sanitizer build runs a subset
GRID = ["--nx", 13, "--ny", 11, "--nz", 10]  # odd sizes: every split below is uneven
COMMON = GRID + ["--steps", 24, "--source", "ricker", "--source-freq", 0.1, "--source-pos", "6,5,4",
                 "--init-mode", "pulse", "--energy-every", 5]

CASES = [  # (ranks, threads, extra flags)
    (1, 1, []),
    (1, 2, []),
    (1, 2, ["--kernel", "split"]),
    (1, 1, ["--tile", 1]),
    (1, 2, ["--tile", 3, "--threads", 2]),
    (2, 1, ["--decomp", "2x1x1"]),
    (2, 2, ["--decomp", "1x1x2"]),
    (3, 1, ["--decomp", "3x1x1"]),
    (3, 1, ["--decomp", "1x3x1"]),
    (3, 1, ["--decomp", "1x1x3"]),
    (4, 1, ["--decomp", "auto"]),
    (4, 1, ["--decomp", "2x2x1"]),
    (4, 1, ["--decomp", "1x1x4", "--kernel", "split"]),
    (6, 1, ["--decomp", "auto"]),
    (6, 1, ["--decomp", "1x2x3"]),
    (8, 1, ["--decomp", "2x2x2"]),
    (8, 1, ["--decomp", "8x1x1"]),
    (1, 2, ["--kernel", "wavefront"]),
    (1, 1, ["--kernel", "wavefront", "--time-block", 4, "--tile", 2]),
    (3, 2, ["--decomp", "1x1x3", "--kernel", "wavefront", "--time-block", 3]),
    (8, 1, ["--decomp", "8x1x1", "--kernel", "wavefront"]),  # 1-cell subdomains: T = 1, fused steps
]
if SMALL:
    CASES = [CASES[0], CASES[1], CASES[5], CASES[9], CASES[17], CASES[19]]

CASES = without_missing_kernels(CASES, lambda case: case[2])

for precision in (("f64",) if SMALL else ("f32", "f64")):
    ref = None
    for ranks, threads, extra in CASES:
        rep = report(COMMON + ["--precision", precision] + extra, ranks=ranks, threads=threads)
        label = "%s ranks=%d threads=%d dims=%s %s" % (precision, ranks, rep["threads"], rep["dims"], " ".join(map(str, extra)))
        if ref is None:
            ref = rep
            check(rep["e_max"] > 0 and rep["valid"], "%s: reference run has non-zero fields" % label)
            continue
        check(rep["checksum"] == ref["checksum"],
              "%s: checksum %s == %s" % (label, rep["checksum"], ref["checksum"]))
        check(rep["ranks"] == ranks, "%s: report says %d ranks" % (label, rep["ranks"]))

# The checksum can fail: one more step changes it (--steps replaced: yee refuses a flag given twice).
more = list(COMMON[:-4])
more[more.index("--steps") + 1] = 25
rep = report(more + ["--precision", "f64", "--init-mode", "pulse"])
check(rep["checksum"] != ref["checksum"], "a different run gives a different checksum")
finish()
