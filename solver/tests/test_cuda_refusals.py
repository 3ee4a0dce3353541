"""Input the GPU cannot run is refused before any work, like any bad input: one line
"yee: error: ..." naming the problem, exit 2, no report, on one rank and on two:
  - a --tile whose shared memory per block is more than the GPU allows (fused kernel, f64
    at 32 rows and the default pipeline depth; wavefront kernel, whose tiles hold two steps);
  - a fused tile of more than 32 rows (a thread per cell, at most 1024 per block);
  - a grid whose two copies of E and H do not fit the GPU's free memory.
Tiles that fit run, whatever their row count (the refusals are not blanket ones). Needs a GPU (exit 77 without).
Environment: YEE_BIN (the CUDA build's yee)."""
from cuda_testlib import require_gpu_or_skip
from yee_testlib import check, finish, run

require_gpu_or_skip("refusals of tiles and grids the GPU cannot run")

SMALL = ["--nx", 20, "--ny", 40, "--nz", 40, "--steps", 2, "--quiet"]
CASES = [  # (label, args, words the line must contain)
    ("fused tile too large for shared memory", SMALL + ["--tile", 32, "--precision", "f64"],
     ["--tile 32", "shared memory", "fused"]),
    ("fused tile of more than 32 rows", SMALL + ["--tile", 128, "--precision", "f64"],
     ["--tile 128", "at most 32 rows", "fused"]),
    ("wavefront tile too large for shared memory", SMALL + ["--kernel", "wavefront", "--tile", 32, "--precision", "f64"],
     ["--tile 32", "shared memory", "wavefront"]),
    # 12 arrays of 2000^3 f32 (388 GB; half of it per rank on two) on a GPU of at most 141 GB,
    # while the host needs only one component's staging copy (32 GB).
    ("grid larger than the GPU's memory", ["--n", 2000, "--steps", 1, "--quiet"], ["GPU memory", "free on"]),
]
for label, args, words in CASES:
    for ranks in (1, 2):
        a = args + (["--decomp", "1x1x2"] if ranks == 2 else [])
        rc, out, err = run(a, ranks=ranks, timeout=300)
        ours = [x for x in err.splitlines() if x.startswith("yee: error: ")]
        # mpirun adds its own banner about the non-zero exit; one rank prints one line only
        one_line = len(ours) == 1 and (ranks > 1 or len(err.strip().splitlines()) == 1)
        check(rc == 2 and one_line and all(w in ours[0] for w in words) and '"schema"' not in out,
              "%s, %d rank(s): exit 2 (got %d) with one line naming it (%r)" % (
                  label, ranks, rc, ours[0] if ours else err.strip()[-300:]))

# The same flags with tiles that fit run and report.
for args in (SMALL + ["--tile", 16], SMALL + ["--tile", 3], SMALL + ["--tile", 12, "--kernel", "wavefront"],
             SMALL + ["--tile", 16, "--kernel", "wavefront", "--precision", "f64"]):
    rc, out, err = run(args + ["--report", "-"])
    check(rc == 0 and '"valid": true' in out, "%s: runs (exit %d: %s)" % (" ".join(map(str, args)), rc, err.strip()[-200:]))
finish()
