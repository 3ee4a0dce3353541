"""The XDMF sidecar always describes exactly the complete HDF5 steps on disk: after a
normal run, after a SIGTERM in the middle of the output, and after a disk that fills
up (root only: a private tmpfs); every step it names opens through h5py with the
grid it states. --output-every larger than --steps is a usage error, not an empty
directory with exit 0. `yee --help` points to the I/O README that exists."""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET

from io_testlib import ensure_numpy, hdf5_kind, leftovers
from yee_testlib import MPIEXEC, YEE, check, env_for, finish, report, run, scratch_dir

tmp = scratch_dir("yee-io-sidecar-")
rc, out, err = run(["--n", "8", "--steps", "4", "--output", "binary", "--output-every", "7", "--output-dir",
                    os.path.join(tmp, "every")], timeout=60)
lines = [ln for ln in err.splitlines() if ln.startswith("yee: error: ")]
check(rc == 2 and len(lines) == 1 and "--output-every 7" in lines[0] and "--steps 4" in lines[0]
      and not os.path.exists(os.path.join(tmp, "every")),
      "--output-every 7 with --steps 4 -> exit 2, one line, no directory (%s)" % (lines or err[-200:]))

rc, out, err = run(["--help"], timeout=30)
pointer = re.search(r"see (solver/\S+README\.md)", out)
repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
check(rc == 0 and pointer is not None and os.path.isfile(os.path.join(repo, pointer.group(1))) and
      "--output-every" in open(os.path.join(repo, pointer.group(1))).read(),
      "yee --help points to the I/O README that exists (%s)" % (pointer.group(1) if pointer else out[:200]))

HDF5 = hdf5_kind(report(["--n", "2", "--steps", "1"]))
if HDF5 == "none":
    print("SKIP  sidecar cases: this yee has no HDF5")
    shutil.rmtree(tmp, ignore_errors=True)
    finish()
    sys.exit(0)
ensure_numpy()
import h5py  # noqa: E402


def sidecar_files(outdir):
    """(step numbers, HDF5 files) the sidecar names; None when there is no sidecar."""
    path = os.path.join(outdir, "fields.xdmf")
    if not os.path.exists(path):
        return None
    root = ET.parse(path).getroot()
    files, steps = set(), []
    for item in root.iter("DataItem"):
        if item.get("Format") == "HDF":
            files.add(item.text.strip().split(":/")[0])
    for grid in root.iter("Grid"):
        t = grid.find("Time")
        if t is not None:
            steps.append(float(t.get("Value")))
    return steps, files


def step_files(outdir):
    return {os.path.basename(p) for p in glob.glob(os.path.join(outdir, "fields_s*.h5"))}


def opens(outdir, files):
    for name in files:
        with h5py.File(os.path.join(outdir, name), "r") as f:
            if len(f) != 6 or any(f[d].size == 0 for d in f):
                return False
    return True


def agrees(name, outdir, at_least=1):
    described = sidecar_files(outdir)
    on_disk = step_files(outdir)
    check(described is not None, name + ": fields.xdmf written")
    if described is None:
        return
    steps, files = described
    check(files == on_disk and len(on_disk) >= at_least,
          name + ": the sidecar names exactly the %d step file(s) on disk (%d named)" % (len(on_disk), len(files)))
    check(opens(outdir, files), name + ": every step it names opens with all components")
    check(not leftovers(outdir), name + ": no temporary files left")


# A normal run: every step, in order.
done = os.path.join(tmp, "done")
rc, _, err = run(["--n", "8", "--steps", "4", "--quiet", "--output", "hdf5", "--output-every", "2",
                  "--output-dir", done], timeout=60)
check(rc == 0, "hdf5 run exits 0 (%s)" % err[-200:])
agrees("complete run", done, at_least=2)
check(sidecar_files(done)[0] == sorted(sidecar_files(done)[0]), "complete run: steps in time order")


# SIGTERM in the middle of the output.
def killed(strategy, ranks):
    outdir = os.path.join(tmp, "killed-%s" % strategy)
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [
        YEE, "--n", "24", "--steps", "100000", "--quiet", "--output", "hdf5", "--output-strategy", strategy,
        "--output-dir", outdir]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env_for(1),
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(step_files(outdir)) < 3 * (ranks if strategy == "per-rank" else 1):
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    name = "SIGTERM during %s output, %d rank(s)" % (strategy, ranks)
    check(p.returncode != 0, name + ": the run did not finish (rc %s)" % p.returncode)
    # a kill may leave the step being written as a hidden temporary: never named, never final
    for t in leftovers(outdir):
        os.remove(t)
    agrees(name, outdir, at_least=2)


killed("root", 1)
killed("per-rank", 2)


# A disk that fills up: a 192 KiB tmpfs in a private mount namespace.
def full_disk(strategy, ranks):
    mnt = os.path.join(tmp, "mnt-%s" % strategy)
    os.makedirs(mnt)
    tarball = mnt + ".tar"
    yee = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [YEE]
    args = ["--n", "16", "--steps", "6", "--quiet", "--output", "hdf5", "--output-strategy", strategy,
            "--output-dir", mnt + "/out"]
    script = ('mount -t tmpfs -o size=192k yee-full "$1" || exit 99; shift; out="$1"; shift; '
              '"$@"; rc=$?; tar -C "$(dirname "$out")" -cf "$TARBALL" .; exit $rc')
    env = env_for(1)
    env["TARBALL"] = tarball
    name = "full disk, hdf5/%s/%d ranks" % (strategy, ranks)
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", mnt,
                        mnt + "/out"] + yee + args, capture_output=True, text=True, timeout=90, env=env)
    if p.returncode == 99:
        print("SKIP  %s: cannot mount a tmpfs (%s)" % (name, p.stderr.strip()[-200:]))
        return
    check(p.returncode == 1 and re.search("No space left on device", p.stderr), name + ": exit 1, disk full")
    ex = os.path.join(tmp, "x-%s" % strategy)
    with tarfile.open(tarball) as t:
        t.extractall(ex)
    agrees(name, os.path.join(ex, "out"), at_least=1)


if os.geteuid() != 0 or not shutil.which("unshare"):
    print("SKIP  full-disk sidecar cases: need root and unshare to mount a private tmpfs")
else:
    full_disk("root", 1)
    full_disk("per-rank", 2)

shutil.rmtree(tmp, ignore_errors=True)
finish()
