"""Halo traffic per rank per step (paper 002, Table 1 counts bytes per process): the report's
per-rank maximum and mean of bytes sent, and the per-rank maximum of messages, against the
count from the split itself. Each rank sends, per time step and per neighbour along an axis,
one message (H up, E down) of the 2 tangential components of its face: face cells x 2 x bytes
per value; blocks follow the documented split (the first n % p parts one cell larger)."""
import itertools
import os

from yee_testlib import check, finish, report, run, scratch_dir

GRID = (13, 10, 8)  # odd and uneven: 3 and 6 ranks split some axes unevenly
STEPS = 6


def extents(n, parts):
    """Cells of each part of n cells over `parts` ranks (the first n % parts get one more)."""
    return [n // parts + (1 if c < n % parts else 0) for c in range(parts)]


def expected(dims, bytes_per_value):
    """(bytes, messages) per step of every rank of the process grid `dims`, counted from the split."""
    ext = [extents(GRID[a], dims[a]) for a in range(3)]
    ranks = []
    for coords in itertools.product(*(range(p) for p in dims)):
        local = [ext[a][coords[a]] for a in range(3)]
        sent, messages = 0, 0
        for a in range(3):
            neighbours = (coords[a] > 0) + (coords[a] < dims[a] - 1)
            face = local[(a + 1) % 3] * local[(a + 2) % 3]
            sent += neighbours * 2 * face * bytes_per_value
            messages += neighbours
        ranks.append((sent, messages))
    return ranks


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


CASES = [  # (process grid, precision, bytes per value)
    ((3, 1, 1), "f32", 4),  # odd count: the two end ranks send half of what the middle one sends
    ((1, 3, 1), "f64", 8),  # the same along y, 8 B values
    ((2, 3, 1), "f32", 4),  # two axes, uneven faces: the ranks differ in face size too
    ((1, 1, 1), "f32", 4),  # alone: nothing sent
]
GRID_ARGS = ["--nx", GRID[0], "--ny", GRID[1], "--nz", GRID[2], "--steps", STEPS, "--kernel", "fused"]

for dims, precision, bpv in CASES:
    ranks = dims[0] * dims[1] * dims[2]
    decomp = "x".join(map(str, dims))
    rep = report(GRID_ARGS + ["--precision", precision, "--decomp", decomp], ranks=ranks)
    label = "%s ranks=%d %s" % (decomp, ranks, precision)
    want = expected(dims, bpv)
    total = sum(b for b, _ in want)
    check(rep["dims"] == list(dims) and rep["ranks"] == ranks, "%s: split as asked (%s)" % (label, rep["dims"]))
    check(rep["halo_bytes_per_step"] == total,
          "%s: halo_bytes_per_step is the total over ranks, %d B (%s)" % (label, total, rep["halo_bytes_per_step"]))
    got_max = rep["halo_bytes_per_rank_per_step_max"]
    check(got_max == max(b for b, _ in want),
          "%s: per-rank max %d B = faces x 2 components x %d B (%s)" % (label, max(b for b, _ in want), bpv, got_max))
    got_mean = rep["halo_bytes_per_rank_per_step_mean"]
    check(close(got_mean, total / ranks), "%s: per-rank mean %.6g B (%s)" % (label, total / ranks, got_mean))
    check(close(got_mean * ranks, rep["halo_bytes_per_step"]) and got_max * ranks >= rep["halo_bytes_per_step"],
          "%s: mean x ranks = total <= max x ranks" % label)
    check(rep["halo_messages_per_rank_per_step_max"] == max(m for _, m in want)
          and rep["halo_messages_per_step"] == sum(m for _, m in want),
          "%s: messages per rank per step at most %d, %d in all (%s, %s)"
          % (label, max(m for _, m in want), sum(m for _, m in want), rep["halo_messages_per_rank_per_step_max"],
             rep["halo_messages_per_step"]))

# The human summary carries the same per-rank figures (3 ranks along x: 640 B at the ends, 1280 B between).
tmp = scratch_dir("yee-halo-rank-")
rc, out, err = run(GRID_ARGS + ["--decomp", "3x1x1", "--no-progress", "--report", os.path.join(tmp, "r.json")],
                   ranks=3)
line = [ln for ln in err.splitlines() if ln.startswith("yee: halo per step:")]
check(rc == 0 and line == ["yee: halo per step: 2560 B from all ranks; per rank 1280 B max, 853 B mean, "
                           "up to 2 message(s)"], "human summary: per-rank halo line (%r)" % line)
finish()
