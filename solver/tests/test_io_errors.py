"""Field output error paths: bad --output* flags are usage errors (exit 2, one line);
an unusable or non-empty --output-dir stops every rank before the run (exit 2, files
left untouched); a disk that fills up during the run stops every rank with exit 1 and
a message naming the rank and the reason, without hanging, crashing (HDF5 included) or leaving
temporary or truncated files under final names (checked on a small tmpfs, root only)."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

from io_testlib import ensure_numpy, hdf5_kind, leftovers
from yee_testlib import MPIEXEC, YEE, check, env_for, finish, report, run, scratch_dir

ensure_numpy()
import h5py  # noqa: E402

tmp = scratch_dir("yee-io-err-")
SMALL = ["--n", "8", "--steps", "2", "--quiet"]
HDF5 = hdf5_kind(report(["--n", "2", "--steps", "1"]))


def usage_error(args, words, ranks=1):
    rc, out, err = run(SMALL + args, ranks=ranks, timeout=60)
    lines = [ln for ln in err.splitlines() if ln.startswith("yee: error: ")]
    ok = rc == 2 and len(lines) == 1 and all(w in lines[0] for w in words) and out == ""
    check(ok, "%s (ranks=%d) -> exit 2, one line naming %s%s" % (" ".join(args), ranks, words,
                                                                   "" if ok else ": rc=%d %r" % (rc, err[-300:])))


# Bad flags and flag combinations.
usage_error(["--output", "netcdf"], ["--output", "none|ascii|binary|hdf5"])
usage_error(["--output", "ascii", "--output-fields", "ex,qq"], ["--output-fields", "qq"])
usage_error(["--output", "ascii", "--output-fields", "ex,EX"], ["--output-fields", "twice"])
usage_error(["--output", "ascii", "--output-fields", ""], ["--output-fields"])
usage_error(["--output", "binary", "--output-every", "0"], ["--output-every", "out of range"])
usage_error(["--output", "binary", "--output-strategy", "all"], ["--output-strategy", "root|root-per-rank|per-rank|shared"])
usage_error(["--output", "binary", "--output-strategy", "shared"], ["shared", "--output hdf5"])
if HDF5 == "none":
    usage_error(["--output", "hdf5"], ["--output hdf5", "without HDF5"])
elif HDF5 == "serial":
    usage_error(["--output", "hdf5", "--output-strategy", "shared"], ["shared", "serial HDF5"])
usage_error(["--output", "binary", "--hdf5-compress", "deflate"], ["--hdf5-compress", "no effect", "--output hdf5"])
usage_error(["--output", "hdf5", "--hdf5-compress", "gzip"], ["--hdf5-compress", "deflate:LEVEL"])
usage_error(["--output", "hdf5", "--hdf5-compress", "deflate:12"], ["--hdf5-compress"])
usage_error(["--output", "hdf5", "--hdf5-chunk", "0x4x4"], ["--hdf5-chunk", "positive"])
usage_error(["--output", "hdf5", "--hdf5-chunk", "4x4"], ["--hdf5-chunk"])
if HDF5 != "none":
    usage_error(["--output", "hdf5", "--hdf5-chunk", "none", "--hdf5-compress", "deflate"], ["chunked"])
usage_error(["--output", "binary", "--output-dir", ""], ["--output-dir", "empty"])

# Unusable directories: a file, a path below a file, a read-only file system.
afile = os.path.join(tmp, "afile")
open(afile, "w").close()
usage_error(["--output", "binary", "--output-dir", afile], ["--output-dir", "not a directory"])
usage_error(["--output", "binary", "--output-dir", afile + "/sub"], ["cannot create", "Not a directory"], ranks=2)
usage_error(["--output", "ascii", "--output-dir", "/proc/yee-output"], ["--output-dir /proc/yee-output"], ranks=2)

# A non-empty directory is not overwritten silently; --overwrite replaces same-named files only.
full = os.path.join(tmp, "full")
os.makedirs(full)
with open(os.path.join(full, "fields_s000002.json"), "w") as f:
    f.write("old")
with open(os.path.join(full, "keep.txt"), "w") as f:
    f.write("mine")
for ranks in (1, 3):
    usage_error(["--output", "binary", "--output-dir", full], ["already holds 2 entries", "--overwrite"], ranks=ranks)
check(sorted(os.listdir(full)) == ["fields_s000002.json", "keep.txt"] and
      open(os.path.join(full, "fields_s000002.json")).read() == "old", "refused directory is left untouched")
rc, out, err = run(SMALL + ["--output", "binary", "--output-dir", full, "--overwrite"], ranks=2, timeout=60)
meta = json.load(open(os.path.join(full, "fields_s000002.json")))
check(rc == 0 and meta["step"] == 2 and open(os.path.join(full, "keep.txt")).read() == "mine",
      "--overwrite replaces the same-named file and keeps others")
empty = os.path.join(tmp, "empty")
os.makedirs(empty)
rc, out, err = run(SMALL + ["--output", "ascii", "--output-dir", empty], timeout=60)
check(rc == 0 and len(glob.glob(os.path.join(empty, "fields_*.txt"))) == 2, "an existing empty directory is used")


# A full disk in the middle of the run: a 192 KiB tmpfs in a private mount namespace.
def complete(path):
    """True when a final file is whole: headers match data sizes, HDF5 opens, ASCII has every row."""
    if path.endswith(".json"):
        meta = json.load(open(path))
        data = os.path.join(os.path.dirname(path), meta["data_file"])
        return os.path.getsize(data) == meta["component_bytes"] * len(meta["components"])
    if path.endswith(".h5"):
        with h5py.File(path, "r") as f:
            return all(f[d][...].size == f[d].size for d in f) and len(f) == 6
    if path.endswith(".txt"):
        with open(path) as f:
            head = [f.readline() for _ in range(2)]
            shape = [int(x) for x in head[1].split()[-3:]]
            rows = sum(1 for ln in f if not ln.startswith("#"))
        return rows == shape[0] * shape[1] * shape[2]
    return path.endswith(".bin") or path.endswith(".xdmf")


def full_disk(fmt, strategy, ranks, n=16, steps=6, size="192k", extra=()):
    mnt = os.path.join(tmp, "mnt-%s-%s-%d-%d-%s" % (fmt, strategy, ranks, n, size))
    os.makedirs(mnt)
    tarball = mnt + ".tar"
    yee = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [YEE]
    args = ["--n", str(n), "--steps", str(steps), "--quiet", "--output", fmt, "--output-strategy", strategy,
            "--output-dir", mnt + "/out"] + list(extra)
    script = ('mount -t tmpfs -o size=%s yee-full "$1" || exit 99; shift; out="$1"; shift; '
              '"$@"; rc=$?; tar -C "$(dirname "$out")" -cf "$TARBALL" .; exit $rc' % size)
    env = env_for(1)
    env["TARBALL"] = tarball
    name = "full disk (%s), %s/%s/%d ranks, n=%d%s" % (size, fmt, strategy, ranks, n, " " + " ".join(extra) if extra else "")
    try:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", mnt,
                            mnt + "/out"] + yee + args, capture_output=True, text=True, timeout=90, env=env)
    except subprocess.TimeoutExpired:
        check(False, name + ": the run hangs")
        return
    if p.returncode == 99:
        print("SKIP  %s: cannot mount a tmpfs (%s)" % (name, p.stderr.strip()[-200:]))
        return
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("yee: error: ")]
    crashed = "Segmentation fault" in p.stderr or "Signal:" in p.stderr or p.returncode in (139, -11)
    check(p.returncode == 1 and not crashed and len(lines) == 1 and "No space left on device" in lines[0] and
          (ranks == 1 or "rank " in lines[0]),
          name + ": exit 1 (was %d), no crash, one message: %s" % (p.returncode, lines or p.stderr[-300:]))
    ex = os.path.join(tmp, "x-" + os.path.basename(mnt))
    with tarfile.open(tarball) as t:
        t.extractall(ex)
    out = os.path.join(ex, "out")
    finals = [os.path.join(out, n) for n in os.listdir(out) if not n.startswith(".")]
    check(not leftovers(out), name + ": no temporary files left")
    bad = [os.path.basename(f) for f in finals if not complete(f)]
    check(not bad, name + ": %d final file(s), all complete %s" % (len(finals), bad or ""))


if os.geteuid() != 0 or not shutil.which("unshare"):
    print("SKIP  full-disk cases: need root and unshare to mount a private tmpfs")
else:
    # Every format and strategy on 1 and 2 ranks: a disk that fills after some steps (n=16,
    # 192 KiB), and one too small for the first step's files (n=48, 200 KiB: HDF5 fails in
    # the middle of the data, where HDF5 1.10 used to crash at exit); HDF5 with compression
    # (no size known in advance, so the write itself hits the full disk); 3 ranks once.
    combos = [(f, s) for f in ("ascii", "binary", "hdf5") for s in ("root", "per-rank")] + [("hdf5", "shared")]
    for fmt, strategy in combos:
        if (fmt == "hdf5" and HDF5 == "none") or (strategy == "shared" and HDF5 != "parallel"):
            print("SKIP  full disk, %s/%s: this yee has %s HDF5" % (fmt, strategy, HDF5))
            continue
        for ranks in (1, 2):
            full_disk(fmt, strategy, ranks)
            full_disk(fmt, strategy, ranks, n=48, steps=3, size="200k")
    full_disk("binary", "per-rank", 3)
    if HDF5 != "none":
        for ranks in (1, 2):
            full_disk("hdf5", "per-rank", ranks, n=48, steps=3, size="300k",
                      extra=("--hdf5-compress", "deflate:1", "--init-mode", "TM110+TE101+TE011"))

if "--keep" not in sys.argv:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
