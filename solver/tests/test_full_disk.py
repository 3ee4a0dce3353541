"""A disk that fills at any point of the field output: every format (HDF5 plain, compressed
and as records) and strategy stops with exit 1 and one line naming the cause, leaves no
temporary and no incomplete file under a final name, and does not crash (HDF5 1.10 used
to crash in MPI_Finalize after a failed close: exit 139). The disk is filled after a given
number of bytes by a preloaded shim (enospc_after.c: every write call of yee, HDF5 and
MPI-IO), and for real on small tmpfs mounts (root only): compressed HDF5 with 4-12 KiB
free, and the shared strategy, whose MPI-IO layer may drop a write error, on a disk too
small for its file."""
import glob
import json
import os
import shutil
import subprocess
import tempfile

from io_testlib import ensure_numpy, leftovers
from yee_testlib import MPIEXEC, YEE, check, env_for, finish, run, scratch_dir

ensure_numpy()
import h5py  # noqa: E402

tmp = scratch_dir("yee-full-disk-")
SHIM = os.environ.get("YEE_TEST_ENOSPC_SHIM", "")
_, VERSION, _ = run(["--version"])
HDF5 = "parallel" if "HDF5 parallel" in VERSION else ("serial" if "HDF5 serial" in VERSION else "none")


def complete(path):
    """True when a final file is whole: HDF5 opens and reads, headers match data, every row."""
    if path.endswith(".h5"):
        with h5py.File(path, "r") as f:
            return len(f) > 0 and all(f[d][...].size == f[d].size for d in f)
    if path.endswith(".json"):
        meta = json.load(open(path))
        data = os.path.join(os.path.dirname(path), meta["data_file"])
        return os.path.getsize(data) == meta["component_bytes"] * len(meta["components"])
    if path.endswith(".txt"):
        with open(path) as f:
            head = [f.readline() for _ in range(2)]
            shape = [int(x) for x in head[1].split()[-3:]]
            return sum(1 for ln in f if not ln.startswith("#")) == shape[0] * shape[1] * shape[2]
    if path.endswith(".xdmf"):  # names only files that exist
        names = [w.split(":")[0].strip() for w in open(path).read().split(">") if ".h5:" in w]
        return all(os.path.exists(os.path.join(os.path.dirname(path), n)) for n in names)
    return path.endswith(".bin")


def verdict(name, rc, err, out):
    """The checks every full-disk run must pass."""
    lines = [ln for ln in err.splitlines() if ln.startswith("yee: error: ")]
    crashed = rc in (139, -11, 134, -6) or "Segmentation fault" in err or "Signal:" in err
    check(rc == 1 and not crashed and len(lines) == 1 and "No space left on device" in lines[0],
          "%s: exit 1 (was %d), no crash, one line with the cause: %s" % (name, rc, lines or err.strip()[-300:]))
    left = leftovers(out) if os.path.isdir(out) else []
    finals = sorted(glob.glob(os.path.join(out, "*"))) if os.path.isdir(out) else []
    bad = [os.path.basename(f) for f in finals if not complete(f)]
    check(not left and not bad, "%s: no temporaries %s, %d final file(s) all complete %s" %
          (name, [os.path.basename(x) for x in left], len(finals), bad))


# --- the disk fills after a number of bytes (preloaded shim) -----------------------------
def injected(fmt, strategy, ranks, after, extra=()):
    name = "%s/%s/%d ranks%s, disk full after %d bytes" % (fmt, strategy, ranks, " " + " ".join(extra) if extra
                                                           else "", after)
    d = tempfile.mkdtemp(prefix="inj-", dir=tmp)
    out = os.path.join(d, "out")
    env = env_for(1)
    env.update(LD_PRELOAD=SHIM, YEE_TEST_ENOSPC_PATH=out + "/", YEE_TEST_ENOSPC_AFTER=str(after))
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "-x", "LD_PRELOAD", "-x",
            "YEE_TEST_ENOSPC_PATH", "-x", "YEE_TEST_ENOSPC_AFTER"] if ranks > 1 else []) + [YEE]
    try:
        p = subprocess.run(cmd + ["--n", "8", "--steps", "3", "--quiet", "--output", fmt, "--output-strategy",
                                  strategy, "--output-dir", out, "--report", os.path.join(d, "r.json")] + list(extra),
                           capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        check(False, name + ": the run hangs")
        return
    verdict(name, p.returncode, p.stderr, out)
    shutil.rmtree(d, ignore_errors=True)


if not os.path.isfile(SHIM):
    print("SKIP  injected full disk: no shim (YEE_TEST_ENOSPC_SHIM=%r; ctest sets it)" % SHIM)
else:
    # 8^3 cells: a step's files hold 12 KiB of fields; 13000 bytes fills the disk in step 2.
    # HDF5: the header, the first dataset, the metadata the close would write, step 2.
    cases = [("ascii", ()), ("binary", ())]
    if HDF5 != "none":
        cases += [("hdf5", ()), ("hdf5", ("--hdf5-compress", "deflate:1")),
                  ("hdf5", ("--hdf5-layout", "records", "--hdf5-chunk", "4x4x4"))]
    for fmt, extra in cases:
        for strategy in ("root", "per-rank"):
            for after in ((0, 96, 2048, 13000) if fmt == "hdf5" else (96, 13000)):
                injected(fmt, strategy, 1, after, extra)
    if HDF5 != "none":  # two ranks: rank 0 alone, or each rank, meets the full disk
        for strategy in ("root", "per-rank"):
            injected("hdf5", strategy, 2, 2048, ("--hdf5-compress", "deflate:1"))
            injected("hdf5", strategy, 2, 96)


# --- a real small file system -------------------------------------------------------------
def small_disk(size, args, name, ranks=1):
    mnt = tempfile.mkdtemp(prefix="mnt-", dir=tmp)
    keep = mnt + ".kept"
    yee = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [YEE]
    script = ('mount -t tmpfs -o size=%s yee-full "$1" || exit 99; d="$1"; k="$2"; shift 2; "$@" --output-dir "$d/out"; '
              'rc=$?; cp -a "$d/out" "$k" 2>/dev/null; exit $rc' % size)
    try:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", mnt, keep] + yee +
                           ["--quiet", "--report", os.devnull] + args, capture_output=True, text=True, timeout=90,
                           env=env_for(1))
    except subprocess.TimeoutExpired:
        check(False, name + ": the run hangs")
        return
    if p.returncode == 99:
        print("SKIP  %s: cannot mount a tmpfs (%s)" % (name, p.stderr.strip()[-200:]))
        return
    verdict(name, p.returncode, p.stderr, keep)


if os.geteuid() != 0 or not shutil.which("unshare") or HDF5 == "none":
    print("SKIP  small tmpfs cases: need root, unshare and an HDF5 build")
else:
    for kib in (4, 8, 12):  # was: "cannot close a dataset", then a crash in MPI_Finalize (139)
        small_disk("%dk" % kib, ["--n", "16", "--steps", "2", "--output", "hdf5", "--hdf5-compress", "deflate:1"],
                   "compressed HDF5, %d KiB free" % kib)
    # Room for the metadata but not for the data: the write itself meets the full disk.
    small_disk("40k", ["--n", "48", "--steps", "2", "--output", "hdf5", "--hdf5-compress", "deflate:1",
                       "--init-mode", "TM110+TE101+TE011"], "compressed HDF5 larger than a 40 KiB disk")
    if HDF5 == "parallel":
        for extra in ([], ["--hdf5-compress", "deflate:1"]):
            small_disk("100k", ["--n", "16", "--steps", "3", "--output", "hdf5", "--output-strategy", "shared"] + extra,
                       "shared HDF5 %s on a 100 KiB disk, 2 ranks" % (" ".join(extra) or "uncompressed"), ranks=2)

finish()
