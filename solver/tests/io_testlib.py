"""Helpers of the field-output tests: read back what `yee --output ...` wrote (ASCII,
raw binary + JSON header, HDF5; whole-grid or per-rank files) as global numpy arrays,
and recompute the solver's checksum from them. Needs numpy and h5py: when the python
running the test lacks them, re-runs the test with $YEE_PY (the project's venv)."""
import glob
import json
import os
import sys

from yee_testlib import remove_scratch

COMPONENTS = ["ex", "ey", "ez", "hx", "hy", "hz"]
SKIP = 77  # ctest SKIP_RETURN_CODE


def ensure_numpy():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        py = os.environ.get("YEE_PY")
        if py and os.path.exists(py) and not os.environ.get("YEE_IO_REEXEC"):
            os.environ["YEE_IO_REEXEC"] = "1"  # once: no loop when YEE_PY lacks them too
            remove_scratch()                    # exec skips atexit: the new run makes its own folder
            os.execv(py, [py] + sys.argv)
        print("SKIP: numpy and h5py are needed (set YEE_PY to a python that has them)")
        sys.exit(SKIP)


def hdf5_kind(report):
    """'none', 'serial' or 'parallel': the HDF5 this yee was built with (report build.hdf5)."""
    return str(report.get("build", {}).get("hdf5", "none")).split(" ")[0]


def step_files(outdir, step, ext):
    """Files of one step: the whole-grid file, or the per-rank files in rank order."""
    whole = os.path.join(outdir, "fields_s%06d%s" % (step, ext))
    if os.path.exists(whole):
        return [whole]
    return sorted(glob.glob(os.path.join(outdir, "fields_s%06d_r*%s" % (step, ext))))


def _place(out, comp, block_off, arr, gshape, dtype):
    import numpy as np
    if comp not in out:
        out[comp] = np.full(gshape, np.nan, dtype=dtype)
    sl = tuple(slice(o, o + n) for o, n in zip(block_off, arr.shape))
    out[comp][sl] = arr


def read_binary(outdir, step):
    import numpy as np
    out, meta = {}, None
    for path in step_files(outdir, step, ".json"):
        with open(path) as f:
            meta = json.load(f)
        raw = np.fromfile(os.path.join(outdir, meta["data_file"]), dtype=np.dtype(meta["dtype"]))
        cells = int(np.prod(meta["shape"]))
        assert raw.size == cells * len(meta["components"]), "%s: size %d" % (path, raw.size)
        for c, name in enumerate(meta["components"]):
            arr = raw[c * cells:(c + 1) * cells].reshape(meta["shape"], order=meta["order"])
            _place(out, name, meta["offset"], arr, meta["global_shape"], raw.dtype)
    return out, meta


def read_hdf5(outdir, step):
    import h5py
    out, attrs = {}, None
    for path in step_files(outdir, step, ".h5"):
        with h5py.File(path, "r") as f:
            attrs = {k: f.attrs[k] for k in f.attrs}
            for name in f:
                _place(out, name, [int(x) for x in f.attrs["offset"]], f[name][...],
                       [int(x) for x in f.attrs["global_shape"]], f[name].dtype)
    return out, attrs


def read_ascii(outdir, step, dtype):
    import numpy as np
    out, header = {}, None
    for path in step_files(outdir, step, ".txt"):
        with open(path) as f:
            header = [f.readline(), f.readline(), f.readline()]
        grid = [int(x) for x in header[1].split()[2:5]]
        cols = header[2].split()[5:]  # "# columns: i j k <components>"
        table = np.loadtxt(path, dtype=np.float64, comments="#", ndmin=2)
        idx = table[:, :3].astype(np.int64)
        for c, name in enumerate(cols):
            if name not in out:
                out[name] = np.full(grid, np.nan, dtype=dtype)
            # values are shortest round-trip decimals: parsing as float64 then casting is exact
            out[name][idx[:, 0], idx[:, 1], idx[:, 2]] = table[:, 3 + c].astype(dtype)
    return out, header


def read_output(outdir, fmt, step, dtype):
    if fmt == "binary":
        return read_binary(outdir, step)[0]
    if fmt == "hdf5":
        return read_hdf5(outdir, step)[0]
    return read_ascii(outdir, step, dtype)[0]


def _mix64(x):
    import numpy as np
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def checksum(fields):
    """The solver's order-independent checksum (kernels::checksum) of six global arrays."""
    import numpy as np
    shape = fields["ex"].shape
    g1, g2 = np.uint64(shape[1] + 1), np.uint64(shape[2] + 1)
    i, j, k = np.meshgrid(*[np.arange(n, dtype=np.uint64) for n in shape], indexing="ij")
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for c, name in enumerate(COMPONENTS):
            arr = np.ascontiguousarray(fields[name])
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint64).astype(np.uint64)
            g = ((i * g1 + j) * g2 + k) * np.uint64(6) + np.uint64(c)
            total = total + np.sum(_mix64(bits ^ _mix64(g + np.uint64(0x9E3779B97F4A7C15))), dtype=np.uint64)
    return "%016x" % int(total)


def leftovers(outdir):
    """Temporary files left behind (hidden .NAME.tmp-TAG files)."""
    return sorted(glob.glob(os.path.join(outdir, ".*.tmp-*")))
