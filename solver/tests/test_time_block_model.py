"""The wavefront kernel's cache model (solver/README.md, "Wavefront kernel"): for several
grids, precisions, thread and rank counts the reported time block T and tile rows B must be
the README's choice, the (T, B) with the least r * (1 + T/n) where r = (B+T+1)/(B*T), B the
widest tile whose pass working set (T+2 planes of B+T+1 rows of 6 * (nz+2) words) fits in
half the reported cache share and at most ny / (2 * threads); T <= 16 and <= the smallest
split subdomain n. The reported cache share must be this machine's largest per-core cache
share (Linux sysfs), so the model is sized for the cache it runs on."""
import glob
import os

from yee_testlib import check, finish, report


def sysfs_share():
    best = 0
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            kind = open(d + "/type").read().strip()
            size = open(d + "/size").read().strip()
            shared = open(d + "/shared_cpu_list").read().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024 * 1024}.get(size[-1], 1)
        size = int(size.rstrip("KM")) * scale
        cpus = sum(int(r.split("-")[1]) - int(r.split("-")[0]) + 1 if "-" in r else 1 for r in shared.split(","))
        best = max(best, size // cpus)
    return best


def expected(nz, ny, word, threads, cache, n_split):
    row = 6.0 * (nz + 2) * word
    budget_rows = 0.5 * cache / row
    tile_cap = max(1, ny // (2 * threads))
    rows_for = lambda t: max(1, min(tile_cap, int(budget_rows / (t + 2)) - t - 1))
    ratio = lambda t, b: (b + t + 1) / (b * t)
    best, best_cost = (1, rows_for(1)), ratio(1, rows_for(1))
    for t in range(2, min(16, n_split or 64) + 1):
        b = rows_for(t)
        cost = ratio(t, b) * (1 + t / n_split if n_split else 1)
        if cost < best_cost:
            best, best_cost = (t, b), cost
    return best


share = sysfs_share()
CASES = [  # (nx, ny, nz, precision, ranks, threads, decomposition)
    (24, 40, 20, "f32", 1, 1, None),
    (24, 40, 20, "f64", 1, 2, None),
    (16, 300, 600, "f64", 1, 2, None),  # long rows: the budget, not the tile cap, limits B
    (40, 30, 30, "f32", 2, 1, "2x1x1"),  # T capped by the 20-plane subdomains and their redundancy
    (12, 64, 900, "f32", 2, 1, "2x1x1"),
]
for nx, ny, nz, prec, ranks, threads, decomp in CASES:
    args = ["--nx", nx, "--ny", ny, "--nz", nz, "--steps", 1, "--precision", prec, "--kernel", "wavefront"]
    if decomp:
        args += ["--decomp", decomp]
    tb = report(args, ranks=ranks, threads=threads)["time_block"]
    n_split = nx // ranks if ranks > 1 else 0
    want = expected(nz, ny, 4 if prec == "f32" else 8, threads, tb["model_cache_bytes"], n_split)
    t, b = tb["steps"], tb["tile_rows"]
    check((t, b) == want, "%dx%dx%d %s %dx%d: T=%d B=%d (model: T=%d B=%d)" % (nx, ny, nz, prec, ranks, threads,
                                                                            t, b, *want))
    fits = (t + 2) * (b + t + 1) * 6 * (nz + 2) * (4 if prec == "f32" else 8) <= tb["model_cache_bytes"] / 2
    check(fits or b == 1, "  working set fits half the cache share (or B is 1)")
    check(abs(tb["model_traffic_ratio"] - (b + t + 1) / (b * t)) < 1e-12, "  model_traffic_ratio = (B+T+1)/(B*T)")
    check(share == 0 or tb["model_cache_bytes"] == share,
          "  cache share %d B = sysfs's largest per-core share %d B" % (tb["model_cache_bytes"], share))

# A pass evens its tiles out: the fewest tiles of at most B rows that are a multiple of the
# thread count, over the pass's skewed rows (ny + T - 1), so no thread runs a last tile alone.
def even(span, max_rows, threads):
    tiles = -(-(-(-span // max_rows)) // threads) * threads
    return -(-span // tiles)


for ny, t, threads in ((40, 4, 2), (256, 16, 2), (41, 3, 3), (40, 4, 1)):
    tb = report(["--nx", 24, "--ny", ny, "--nz", 20, "--steps", t + 2, "--kernel", "wavefront",
                 "--time-block", t], threads=threads)["time_block"]
    span = ny + t - 1
    want = even(span, tb["tile_rows"], threads)
    tiles = -(-span // tb["pass_tile_rows"]) if tb["pass_tile_rows"] else 0
    check(tb["pass_tile_rows"] == want and tiles % threads == 0 and tb["pass_tile_rows"] <= tb["tile_rows"],
          "ny=%d T=%d %d threads: a pass ran %d tiles of %d rows (model B=%d, evened: %d)"
          % (ny, t, threads, tiles, tb["pass_tile_rows"], tb["tile_rows"], want))
finish()
