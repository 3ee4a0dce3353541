"""Faults from outside the input: a SIGTERM during field output (every format and strategy,
sent to yee itself and to mpirun) leaves no temporary file behind; a run that would not fit
the memory limit of its node (YEE_MEMORY_LIMIT_BYTES, summed over the node's ranks, and a
real cgroup where one can be made) is refused before it allocates, with one line naming
the need and the limit; temporary files are never opened through a planted symlink."""
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from yee_testlib import MPIEXEC, YEE, check, env_for, finish, run, scratch_dir

tmp = scratch_dir("yee-faults-")
random.seed(12345)


def hdf5_kind():
    rc, out, _ = run(["--version"])
    return "parallel" if "parallel" in out else ("serial" if "serial" in out else "none")


HDF5 = hdf5_kind()


def temporaries(*dirs):
    found = []
    for d in dirs:
        found += glob.glob(os.path.join(d, ".*.tmp*")) + glob.glob(os.path.join(d, "*.tmp.*"))
    return sorted(os.path.basename(f) for f in found)


# --- SIGTERM while fields are written --------------------------------------------------
def sigterm(fmt, strategy, ranks, trials=3, n=40, steps=400):
    how = "mpirun -np %d" % ranks if ranks > 1 else "yee itself"
    name = "SIGTERM to %s during %s/%s output" % (how, fmt, strategy)
    need = steps * n ** 3 * 6 * 4  # a run the signal misses writes every step: six f32 components per cell
    free = shutil.disk_usage(tmp).free
    if free < 2 * need:
        print("SKIP  %s: %d MiB free under %s, a run may write %d MiB" % (name, free >> 20, tmp, need >> 20))
        return
    left, signalled, early = [], 0, ""
    for t in range(trials):
        d = tempfile.mkdtemp(prefix="term-", dir=tmp)
        out = os.path.join(d, "out")
        cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [
            YEE, "--n", str(n), "--steps", str(steps), "--quiet", "--output", fmt, "--output-strategy", strategy,
            "--output-dir", out, "--report", os.path.join(d, "report.json")]
        p = subprocess.Popen(cmd, env=env_for(1), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Signal once the output has started, at a random moment of a step.
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None and len(os.listdir(out) if os.path.isdir(out) else []) < 3:
            time.sleep(0.02)
        time.sleep(random.random() * 0.3)
        hit = p.poll() is None
        if hit:
            p.send_signal(signal.SIGTERM)
            signalled += 1
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            check(False, name + ": the run does not end")
            return
        if not hit:  # the run ended first: say how; only a clean end is the machine's speed, not a fault
            early = "; a run ended before the signal, rc=%d: %s" % (p.returncode, (err.strip().splitlines() or [""])[-1])
            check(p.returncode == 0, name + early)
        time.sleep(0.2)  # ranks killed by the launcher are gone by now
        left += temporaries(out, d)
        shutil.rmtree(d, ignore_errors=True)  # the fields written before the signal: not needed, and large
    check(not left, name + ": %d of %d trial(s) signalled, nothing left behind %s%s" %
          (signalled, trials, left[:4] if left else "", early))
    if not signalled:  # how fast the runs end is this machine's, not the program's: nothing was tested
        print("SKIP  %s: every one of %d runs wrote its %d steps and ended cleanly before its signal%s" %
              (name, trials, steps, early))


combos = [(f, s) for f in ("ascii", "binary", "hdf5") for s in ("root", "per-rank")] + [("hdf5", "root-per-rank"),
                                                                                      ("hdf5", "shared")]
for fmt, strategy in combos:
    if (fmt == "hdf5" and HDF5 == "none") or (strategy == "shared" and HDF5 != "parallel"):
        print("SKIP  SIGTERM, %s/%s: this yee has %s HDF5" % (fmt, strategy, HDF5))
        continue
    for ranks in (1, 2):
        sigterm(fmt, strategy, ranks)
if HDF5 != "none":
    # Larger steps on a loaded machine (two busy processes beside): rank 0 is still writing
    # when the idle rank 1 has ended, and mpirun's SIGKILL follows the first rank's end
    # within milliseconds; the writer must have cleaned up by then.
    # 20 steps: the signal comes after about 3; a run it misses writes 20 files of 48 MiB, not 400.
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        sigterm("hdf5", "root", 2, trials=8, n=128, steps=20)
    finally:
        for b in busy:
            b.kill()
            b.wait()


def sigterm_in_lock_probe():
    """Open MPI's MPI-IO creates and removes TEMP.locktest.<rank> while it opens a shared
    file: too brief to hit from outside, so a preloaded shim signals each rank right there."""
    name = "SIGTERM to mpirun -np 2 inside MPI-IO's lock probe (hdf5/shared)"
    shim = os.environ.get("YEE_TEST_SHIM", "")
    if not os.path.isfile(shim):
        print("SKIP  %s: no test shim (YEE_TEST_SHIM=%r; ctest sets it)" % (name, shim))
        return
    d = tempfile.mkdtemp(prefix="lockprobe-", dir=tmp)
    out = os.path.join(d, "out")
    env = env_for(1)
    env.update(LD_PRELOAD=shim, YEE_TEST_SIGTERM_ON_OPEN=".locktest.")
    p = subprocess.run([MPIEXEC, "-np", "2", "--oversubscribe", "--bind-to", "none", YEE, "--n", "16", "--steps",
                        "3", "--quiet", "--output", "hdf5", "--output-strategy", "shared", "--output-dir", out,
                        "--report", os.path.join(d, "report.json")], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    hit = p.stderr.count("sigterm_on_open: signalled on ")
    if hit == 0:
        print("SKIP  %s: this MPI-IO opens no lock-probe file (rc=%d)" % (name, p.returncode))
        return
    time.sleep(0.2)
    left = temporaries(out, d)
    check(p.returncode != 0 and not left, "%s: %d rank(s) signalled there, rc=%d, nothing left behind %s" %
          (name, hit, p.returncode, left[:4] if left else ""))


if HDF5 == "parallel":
    sigterm_in_lock_probe()

# --- memory limits ---------------------------------------------------------------------
def limited(args, limit, ranks=1):
    env = env_for(1)
    env["YEE_MEMORY_LIMIT_BYTES"] = str(limit)
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [YEE]
    p = subprocess.run(cmd + args, capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, [ln for ln in p.stderr.splitlines() if ln.startswith("yee: error: ")], p.stderr


MiB = 1 << 20
rc, lines, err = limited(["--n", "300", "--steps", "1", "--quiet"], 300 * MiB)
check(rc == 2 and len(lines) == 1 and "need about 662 MiB" in lines[0] and "300 MiB limit" in lines[0] and
      "YEE_MEMORY_LIMIT_BYTES" in lines[0], "300^3 cells under a 300 MiB limit: refused, need and limit named: %s" %
      (lines or err[-200:]))
rc, lines, err = limited(["--n", "16", "--steps", "2", "--quiet"], 300 * MiB)
check(rc == 0, "16^3 cells under a 300 MiB limit run (rc=%d %s)" % (rc, err[-200:]))
# Slurm's per-node allocation (megabytes) is a limit too.
env = env_for(1)
env["SLURM_MEM_PER_NODE"] = "300"
p = subprocess.run([YEE, "--n", "300", "--steps", "1", "--quiet"], capture_output=True, text=True, timeout=120, env=env)
check(p.returncode == 2 and "300 MiB limit of SLURM_MEM_PER_NODE" in p.stderr and len(p.stderr.splitlines()) == 1,
      "SLURM_MEM_PER_NODE=300: --n 300 refused: %s" % p.stderr.strip()[-200:])
# Two ranks on one node: each needs about 84 MiB (under 120 MiB), together about 168 MiB.
rc, lines, err = limited(["--n", "160", "--steps", "1", "--quiet", "--decomp", "2x1x1"], 120 * MiB, ranks=2)
check(rc == 2 and len(lines) == 1 and "2 rank(s) on this node" in lines[0] and "120 MiB limit" in lines[0],
      "2 ranks on a node are counted together: %s" % (lines or err[-200:]))
rc, lines, err = limited(["--n", "160", "--steps", "1", "--quiet", "--decomp", "2x1x1"], 400 * MiB, ranks=2)
check(rc == 0, "the same 2 ranks under 400 MiB run (rc=%d %s)" % (rc, err[-200:]))
# Root output gathers the whole grid on rank 0: counted too.
rc, lines, err = limited(["--n", "128", "--steps", "1", "--quiet", "--output", "binary", "--output-dir",
                          os.path.join(tmp, "mem-out")], 100 * MiB)
check(rc == 2 and len(lines) == 1 and "output buffers" in lines[0] and not os.path.exists(os.path.join(tmp, "mem-out")),
      "root output's gathered fields are counted, nothing is created: %s" % (lines or err[-200:]))


def own_cgroup():
    """(kind, directory of this process's memory cgroup) or (None, reason)."""
    try:
        entries = open("/proc/self/cgroup").read().splitlines()
        mounts = open("/proc/self/mountinfo").read().splitlines()
    except OSError as e:
        return None, str(e)
    v2 = v1 = None
    for m in mounts:
        parts = m.split(" - ")
        fields, tail = parts[0].split(), parts[1].split()
        if tail[0] == "cgroup2" and v2 is None:
            v2 = fields[4]
        if tail[0] == "cgroup" and "memory" in tail[2].split(",") and v1 is None:
            v1 = fields[4]
    for e in entries:
        hid, ctrl, path = e.split(":", 2)
        if "memory" in ctrl.split(",") and v1:
            return "v1", v1 + path
        if ctrl == "" and v2 and os.path.exists(os.path.join(v2 + path, "memory.max")):
            return "v2", v2 + path
    return None, "no memory cgroup controller mounted"


kind, parent = own_cgroup()
if kind is None:
    print("SKIP  real cgroup: %s" % parent)
else:
    cg = os.path.join(parent, "yee-test-%d" % os.getpid())
    limit_file = "memory.limit_in_bytes" if kind == "v1" else "memory.max"
    try:
        os.mkdir(cg)
        with open(os.path.join(cg, limit_file), "w") as f:
            f.write(str(300 * MiB))
    except OSError as e:
        print("SKIP  real cgroup: cannot make a %s memory cgroup under %s (%s)" % (kind, parent, e))
        cg = None
    if cg:
        env = env_for(1)
        env.pop("YEE_MEMORY_LIMIT_BYTES", None)
        script = 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"'
        for args, want in ((["--n", "300", "--steps", "1", "--quiet"], 2), (["--n", "64", "--steps", "2", "--quiet"], 0)):
            p = subprocess.run(["sh", "-c", script, "sh", cg, YEE] + args, capture_output=True, text=True,
                               timeout=120, env=env)
            lines = [ln for ln in p.stderr.splitlines() if ln.startswith("yee: error: ")]
            if p.returncode == 99:
                print("SKIP  real cgroup: cannot move a process into %s (%s)" % (cg, p.stderr.strip()[-200:]))
                break
            if want == 2:
                check(p.returncode == 2 and len(lines) == 1 and "300 MiB limit of cgroup" in lines[0],
                      "%s cgroup of 300 MiB: --n 300 refused before allocating (was killed, exit 137): rc=%d %s" %
                      (kind, p.returncode, lines or p.stderr[-200:]))
            else:
                check(p.returncode == 0, "%s cgroup of 300 MiB: --n 64 runs (rc=%d)" % (kind, p.returncode))
        try:
            os.rmdir(cg)
        except OSError:
            pass


# --- temporaries are created exclusively ---------------------------------------------
# A name yee could be expected to use for a temporary (its pid is known to whoever starts
# it) is planted as a symlink to a victim file; yee must neither follow it nor truncate it.
def planted(kind):
    d = tempfile.mkdtemp(prefix="plant-", dir=tmp)
    victim = os.path.join(d, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    out = os.path.join(d, "out")
    os.makedirs(out)
    report = os.path.join(d, "report.json")
    env = env_for(1)
    fmt, ext = ("hdf5", "h5") if kind == "hdf5" else ("ascii", "txt")
    p = subprocess.Popen([YEE, "--n", "16", "--steps", "3", "--quiet", "--output", fmt, "--output-dir", out,
                          "--overwrite", "--report", report], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    names = [report + ".tmp.%d" % p.pid] if kind == "report" else \
        [os.path.join(out, ".fields_s%06d.%s.tmp-%d" % (s, ext, p.pid)) for s in (1, 2, 3)]
    for n in names:
        os.symlink(victim, n)
    _, err = p.communicate(timeout=60)
    intact = open(victim, "rb").read() == b"precious\n"
    check(p.returncode == 0 and intact, "a symlink planted at a predictable %s temporary name is not followed "
          "(rc=%d, victim %s)" % (kind, p.returncode, "intact" if intact else "overwritten"))


planted("report")
planted("ascii")
if HDF5 != "none":
    planted("hdf5")

finish()
