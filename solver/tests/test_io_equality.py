"""Field output gives the same global field whatever the format, strategy and rank
count: every combination of {ascii, binary, hdf5} x {root, root-per-rank, per-rank, shared (HDF5)} x
{1, 2, 3, 4 ranks} is read back and compared bit for bit with the 1-rank binary output,
and the last step's data must reproduce the solver's own checksum. Also checks the HDF5
attributes, compression with collective parallel writes, the XDMF sidecar and the
report's I/O figures."""
import os
import shutil
import sys
import xml.etree.ElementTree as ET

from io_testlib import COMPONENTS, checksum, ensure_numpy, hdf5_kind, leftovers, read_hdf5, read_output, step_files
from yee_testlib import check, finish, report, scratch_dir

ensure_numpy()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

GRID = ["--nx", "10", "--ny", "7", "--nz", "9"]  # uneven splits for 2, 3 and 4 ranks
STEPS = 4
BASE = GRID + ["--steps", STEPS, "--source-pos", "3,2,5", "--init-mode", "pulse", "--output-every", "2"]
tmp = scratch_dir("yee-io-eq-")


def run(fmt, strategy, ranks, extra=(), precision="f32", tag=""):
    out = os.path.join(tmp, "%s-%s-%d-%s%s" % (fmt, strategy, ranks, precision, tag or ("-x" if extra else "")))
    rep = report(BASE + ["--precision", precision, "--output", fmt, "--output-strategy", strategy,
                         "--output-dir", out] + list(extra), ranks=ranks)
    return out, rep


def same(a, b):
    return set(a) == set(b) and all(np.array_equal(a[c], b[c]) and a[c].dtype == b[c].dtype for c in a)


ref_dir, ref_rep = run("binary", "root", 1, tag="-ref")
dtype = np.float32
ref = {s: read_output(ref_dir, "binary", s, dtype) for s in (2, 4)}
check(set(ref[4]) == set(COMPONENTS) and all(ref[4][c].shape == (10, 7, 9) for c in COMPONENTS),
      "1-rank binary output holds six 10x7x9 arrays")
check(any(np.abs(ref[4][c]).max() > 0 for c in COMPONENTS), "the written field is not all zero")
check(checksum(ref[4]) == ref_rep["checksum"],
      "checksum of the last written step = solver checksum %s" % ref_rep["checksum"])

HDF5 = hdf5_kind(ref_rep)
check(HDF5 in ("none", "serial", "parallel"), "build info names the HDF5 kind: %s" % ref_rep["build"].get("hdf5"))
if HDF5 != "parallel":
    print("SKIP  HDF5 cases%s: this yee has %s HDF5" % ("" if HDF5 == "none" else " with the shared strategy", HDF5))
combos = [(f, s) for f in ("ascii", "binary", "hdf5") for s in ("root", "root-per-rank", "per-rank")] + [("hdf5", "shared")]
combos = [(f, s) for f, s in combos if (f != "hdf5" or HDF5 != "none") and (s != "shared" or HDF5 == "parallel")]
for ranks in (1, 2, 3, 4):
    for fmt, strategy in combos:
        out, rep = run(fmt, strategy, ranks)
        name = "%s/%s/%d rank(s)" % (fmt, strategy, ranks)
        data = {s: read_output(out, fmt, s, dtype) for s in (2, 4)}
        check(same(data[2], ref[2]) and same(data[4], ref[4]), name + ": steps 2 and 4 equal the reference bitwise")
        check(rep["checksum"] == ref_rep["checksum"] and checksum(data[4]) == rep["checksum"],
              name + ": data reproduce the solver checksum")
        io = rep["io"]
        nfiles = len([p for p in os.listdir(out)])
        check(io["steps_written"] == 2 and io["files_written"] == nfiles and nfiles > 0 and
              io["bytes_written"] == sum(os.path.getsize(os.path.join(out, p)) for p in os.listdir(out)),
              name + ": report counts %d files, %d bytes (on disk: %d files)" % (io["files_written"],
                                                                                 io["bytes_written"], nfiles))
        check(not leftovers(out), name + ": no temporary files left")

# --output-fsync changes durability, not content.
out, rep = run("binary", "per-rank", 2, extra=["--output-fsync"])
check(same(read_output(out, "binary", 4, dtype), ref[4]) and not leftovers(out),
      "--output-fsync: binary/per-rank/2 equal the reference, no temporary files")

# Double precision keeps float64 in every format.
d64_dir, d64_rep = run("binary", "root", 1, precision="f64", tag="-ref")
d64 = read_output(d64_dir, "binary", 4, np.float64)
for fmt, strategy, ranks in [("ascii", "per-rank", 3)] + ([("hdf5", "shared", 2)] if HDF5 == "parallel" else []):
    out, rep = run(fmt, strategy, ranks, precision="f64")
    got = read_output(out, fmt, 4, np.float64)
    check(same(got, d64) and checksum(got) == rep["checksum"] == d64_rep["checksum"],
          "f64 %s/%s/%d: float64 data equal and checksum %s" % (fmt, strategy, ranks, rep["checksum"]))

# No output: the report says so and nothing is created.
rep = report(GRID + ["--steps", "2"], ranks=1)
check(rep["io"]["format"] == "none" and rep["io"]["bytes_written"] == 0 and rep["io"]["files_written"] == 0,
      "--output none: zero bytes and files in the report")

if HDF5 != "parallel":
    shutil.rmtree(tmp, ignore_errors=True)
    finish()
    sys.exit(0)

# HDF5 metadata: attributes and per-dataset times (from the shared-file runs).
data, attrs = read_hdf5(os.path.join(tmp, "hdf5-shared-2-f32"), 4)
dt = ref_rep["courant"]
check(int(attrs["step"][0]) == 4 and abs(attrs["time"][0] - 4 * dt) < 1e-12 and abs(attrs["dt"][0] - dt) < 1e-15
      and attrs["dx"][0] == 1.0 and list(attrs["global_shape"]) == [10, 7, 9],
      "HDF5 root attributes: step 4, time 4*dt, dt, dx, global_shape")
with h5py.File(step_files(os.path.join(tmp, "hdf5-shared-2-f32"), 4, ".h5")[0], "r") as f:
    check(abs(f["hz"].attrs["time"][0] - 3.5 * dt) < 1e-12 and abs(f["ez"].attrs["time"][0] - 4 * dt) < 1e-12,
          "dataset times: E at step*dt, H at (step-1/2)*dt")

# Compression (shuffle + deflate) in every strategy, incl. collective parallel writes.
for strategy, ranks in (("root", 2), ("per-rank", 2), ("shared", 3)):
    out, rep = run("hdf5", strategy, ranks, extra=["--hdf5-compress", "deflate:6", "--hdf5-chunk", "4x4x4",
                                                   "--output-fields", "ez,hx"])
    got = read_output(out, "hdf5", 4, dtype)
    with h5py.File(step_files(out, 4, ".h5")[0], "r") as f:
        d = f["ez"]
        filt = (d.compression, d.compression_opts, d.shuffle, d.chunks)
    check(set(got) == {"ez", "hx"} and all(np.array_equal(got[c], ref[4][c]) for c in got),
          "deflate %s/%d: ez, hx equal the reference" % (strategy, ranks))
    check(filt[0] == "gzip" and filt[1] == 6 and filt[2] and filt[3] is not None and max(filt[3]) <= 4,
          "deflate %s/%d: gzip level 6 + shuffle, chunks %s" % (strategy, ranks, filt[3]))

# XDMF sidecar: every referenced dataset exists with the stated dimensions.
for strategy in ("root", "per-rank", "shared"):
    out = os.path.join(tmp, "hdf5-%s-4-f32" % strategy)
    root = ET.parse(os.path.join(out, "fields.xdmf")).getroot()
    items = [e for e in root.iter("DataItem") if e.get("Format") == "HDF"]
    ok = len(items) == 2 * 6 * (4 if strategy == "per-rank" else 1)
    for e in items:
        fname, dset = e.text.strip().split(":")
        with h5py.File(os.path.join(out, fname), "r") as f:
            ok = ok and list(f[dset.lstrip("/")].shape) == [int(x) for x in e.get("Dimensions").split()]
    times = [float(t.get("Value")) for t in root.iter("Time")]
    check(ok and len(times) == 2 and abs(times[1] - 4 * dt) < 1e-12,
          "XDMF (%s, 4 ranks): %d HDF items resolve to datasets, times %s" % (strategy, len(items), times))

if not [m for m in sys.argv if m == "--keep"]:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
