"""--hdf5-layout records (paper 001's HDF5 layout): one 3-D dataset /fields shaped like the
grid whose elements are records of the written components (an HDF5 array type), equal
value for value to the per-component layout of the same run, for root on 1 and 2 ranks and
per-rank on 2, float32 and float64, uncompressed and chunked + shuffle + zlib; the point
source (--init-mode none with the default soft source) gives non-zero fields. The report
states whether the files were fsync'ed (io.fsync, io.sync) and the layout (io.hdf5_layout).
An unknown layout, the layout with another format and with shared are usage errors (exit 2,
one line)."""
import os
import shutil
import sys

from io_testlib import ensure_numpy, hdf5_kind, step_files
from yee_testlib import check, finish, report, run, scratch_dir

tmp = scratch_dir("yee-io-records-")

for args, what in ((["--hdf5-layout", "rows"], "rows"),
                   (["--hdf5-layout", "records", "--output", "binary"], "needs --output hdf5"),
                   (["--hdf5-layout", "records", "--output", "hdf5", "--output-strategy", "shared"], "shared")):
    rc, out, err = run(["--n", "4", "--steps", "1", "--output-dir", os.path.join(tmp, "bad")] + args, timeout=60)
    lines = [ln for ln in err.strip().splitlines() if ln]
    check(rc == 2 and len(lines) == 1 and "hdf5-layout" in lines[0] and not os.path.exists(os.path.join(tmp, "bad")),
          "--hdf5-layout: %s -> exit 2, one line (%s)" % (what, lines[-1:] if lines else rc))

rep = report(["--n", "6", "--steps", "2", "--output", "binary", "--output-fsync", "--output-dir",
              os.path.join(tmp, "sync")])
check(rep["io"].get("fsync") is True and "fsync" in rep["io"].get("sync", ""),
      "--output-fsync is reported: io.fsync %r, io.sync %r" % (rep["io"].get("fsync"), rep["io"].get("sync")))
rep = report(["--n", "6", "--steps", "2", "--output", "binary", "--output-dir", os.path.join(tmp, "nosync")])
check(rep["io"].get("fsync") is False and rep["io"].get("hdf5_layout") == "components",
      "without --output-fsync: io.fsync %r, layout %r" % (rep["io"].get("fsync"), rep["io"].get("hdf5_layout")))

if hdf5_kind(rep) == "none":
    print("SKIP  records cases: this yee has no HDF5")
    shutil.rmtree(tmp, ignore_errors=True)
    finish()
    sys.exit(0)
ensure_numpy()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

COMPS = ["ex", "ey", "ez", "hx", "hy", "hz"]
base = ["--nx", "10", "--ny", "7", "--nz", "9", "--steps", "3", "--init-mode", "none", "--source-pos", "2,3,4"]
n = 0
for ranks, strategy in ((1, "root"), (2, "root"), (2, "per-rank")):
    for prec in ("f32", "f64"):
        for comp in ([], ["--hdf5-compress", "deflate"]):
            n += 1
            dirs = {lay: os.path.join(tmp, "%s%d" % (lay, n)) for lay in ("components", "records")}
            reps = {lay: report(base + ["--precision", prec, "--output", "hdf5", "--output-strategy", strategy,
                                        "--hdf5-layout", lay, "--output-dir", d, "--output-fsync"] + comp,
                                ranks=ranks) for lay, d in dirs.items()}
            label = "%d rank(s) %s %s%s" % (ranks, strategy, prec, " deflate" if comp else "")
            check(reps["records"]["io"]["hdf5_layout"] == "records" and reps["records"]["io"]["fsync"] is True,
                  "%s: report says records + fsync" % label)
            for step in (1, 2, 3):
                ok, nonzero = True, False
                for path_c, path_r in zip(step_files(dirs["components"], step, ".h5"),
                                          step_files(dirs["records"], step, ".h5")):
                    with h5py.File(path_c, "r") as fc, h5py.File(path_r, "r") as fr:
                        ds = fr["fields"]
                        ok = ok and list(fr.keys()) == ["fields"] and ds.ndim == 3
                        ok = ok and ds.shape == fc["ex"].shape and ds.dtype.subdtype is not None
                        base_t, shape = ds.dtype.subdtype
                        ok = ok and shape == (6,) and base_t == fc["ex"].dtype
                        ok = ok and ds.attrs["components"].decode() == ",".join(COMPS)
                        ok = ok and (ds.chunks is not None and ds.compression == "gzip" and ds.shuffle
                                     if comp else ds.compression is None)
                        rec = ds[...]
                        for c, name in enumerate(COMPS):
                            ok = ok and np.array_equal(rec[..., c], fc[name][...])
                        nonzero = nonzero or bool(np.any(rec != 0))
                        ok = ok and list(fr.attrs["offset"]) == list(fc.attrs["offset"])
                check(ok and (nonzero or step == 1),
                      "%s step %d: /fields is a 3-D dataset of 6-float records equal to /ex ... /hz" % (label, step))

shutil.rmtree(tmp, ignore_errors=True)
finish()
