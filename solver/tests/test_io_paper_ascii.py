"""Paper 001's ASCII rows and its one I/O server writing a file per PE.

--ascii-layout coordinates: after the '#' header, one row per cell "x y z ex ey ez hx hy hz",
x = i * dx in metres, every value signed exponent notation of one width (the file size is set by
the grid, not by the values), reading back to exactly the values of the binary output of the same
run. --output-strategy root-per-rank: per step one file per rank, holding that rank's block,
written by rank 0 (the ASCII blocks equal the binary ones; HDF5 records read back equal too).
--ascii-layout without --output ascii is a usage error (exit 2, one line)."""
import glob
import os

from io_testlib import ensure_numpy, hdf5_kind, read_binary, read_hdf5
from yee_testlib import check, finish, report, run, scratch_dir

tmp = scratch_dir("yee-io-paper-ascii-")
rc, _, err = run(["--n", "4", "--steps", "1", "--output", "binary", "--ascii-layout", "coordinates",
                  "--output-dir", os.path.join(tmp, "bad")], timeout=60)
lines = err.strip().splitlines()
check(rc == 2 and len(lines) == 1 and "ascii-layout" in lines[0], "--ascii-layout with binary: exit 2, one line")

ensure_numpy()
import numpy as np  # noqa: E402

DX = 0.002
base = ["--nx", "10", "--ny", "6", "--nz", "5", "--steps", "2", "--init-mode", "none", "--source-pos", "2,3,2",
        "--dx", DX, "--decomp", "2x1x1"]
for prec, dtype, width in (("f32", np.float32, 15), ("f64", np.float64, 23)):
    out = {f: os.path.join(tmp, f + prec) for f in ("ascii", "binary")}
    report(base + ["--precision", prec, "--output", "ascii", "--ascii-layout", "coordinates", "--output-strategy",
                   "root-per-rank", "--output-dir", out["ascii"]], ranks=2)
    report(base + ["--precision", prec, "--output", "binary", "--output-dir", out["binary"]], ranks=2)
    ref = read_binary(out["binary"], 2)[0]
    files = sorted(glob.glob(os.path.join(out["ascii"], "fields_s000002_r*.txt")))
    check(len(files) == 2, "%s: root-per-rank writes one ASCII file per rank (%s)" % (prec, files))
    fixed, equal, coords, nonzero, offsets = True, True, True, False, []
    for path in files:
        with open(path) as f:
            head = [f.readline() for _ in range(3)]
            rows = f.read().splitlines()
        offsets.append(int(head[1].split()[6]))
        check(head[2].split()[2:] == ["x_m", "y_m", "z_m", "ex", "ey", "ez", "hx", "hy", "hz"],
              "%s %s: columns x_m y_m z_m and the six fields" % (prec, os.path.basename(path)))
        fixed = fixed and all(len(r) == 9 * width + 8 for r in rows)
        table = np.array([[float(v) for v in r.split()] for r in rows])
        idx = np.rint(table[:, :3] / DX).astype(int)
        coords = coords and np.allclose(idx * DX, table[:, :3], rtol=0, atol=DX * 1e-6)
        for c, name in enumerate(("ex", "ey", "ez", "hx", "hy", "hz")):
            got = table[:, 3 + c].astype(dtype)
            equal = equal and np.array_equal(got, ref[name][idx[:, 0], idx[:, 1], idx[:, 2]])
            nonzero = nonzero or bool(np.any(got != 0))
    check(offsets == [0, 5], "%s: the files hold the blocks of ranks 0 and 1 (x offsets %s)" % (prec, offsets))
    check(fixed, "%s: every row is 9 values of %d characters" % (prec, width))
    check(coords, "%s: x y z are the cell's index times --dx" % prec)
    check(equal and nonzero, "%s: the fields read back equal to the binary output (non-zero: %s)" % (prec, nonzero))

rep = report(["--n", "4", "--steps", "1", "--output", "binary", "--output-dir", os.path.join(tmp, "kind")])
if hdf5_kind(rep) == "none":
    print("SKIP  root-per-rank HDF5: this yee has no HDF5")
else:
    d = {s: os.path.join(tmp, "h5" + s) for s in ("root", "root-per-rank")}
    for s, path in d.items():
        report(base + ["--output", "hdf5", "--hdf5-layout", "components", "--output-strategy", s,
                       "--output-dir", path], ranks=2)
    whole, blocks = read_hdf5(d["root"], 2)[0], read_hdf5(d["root-per-rank"], 2)[0]
    check(len(glob.glob(os.path.join(d["root-per-rank"], "fields_s000002_r*.h5"))) == 2 and
          all(np.array_equal(whole[c], blocks[c]) for c in whole),
          "HDF5 root-per-rank: a file per rank, together equal to root's one file")
finish()
