"""The memory check counts what a cgroup already uses: with 60 MiB held by another process
in a 128 MiB cgroup, `--n 130` (about 85 MiB) is refused before it allocates, exit 2, one
line naming the need and what is available (it used to be killed by the kernel, exit 137,
without a word). Stand-in cgroup trees (YEE_CGROUP_DIR) cover cgroup v2 and v1, a limit
on an ancestor, and the file cache the kernel reclaims (not counted); a real cgroup with a
real 60 MiB process is tried where this machine lets one be made (skipped, with the
reason, elsewhere)."""
import os
import subprocess
import sys
import time

from yee_testlib import MPIEXEC, YEE, check, env_for, finish, scratch_dir

tmp = scratch_dir("yee-mem-")
MiB = 1 << 20
NEED_130 = "need about 85 MiB"  # 6 arrays of 132^3 f32 + the 32 MiB runtime allowance


def tree(name, levels):
    """A stand-in cgroup hierarchy under a folder without memory files (where reading stops):
    levels from the top down, each a dict of file -> text; returns the lowest (this process's)."""
    d = os.path.join(tmp, name)
    for depth, files in enumerate(levels):
        d = os.path.join(d, "level%d" % depth)
        os.makedirs(d)
        for f, text in files.items():
            with open(os.path.join(d, f), "w") as fh:
                fh.write(text)
    return d  # the leaf: this process's cgroup


def yee(args, cgroup=None, ranks=1):
    env = env_for(1)
    env.pop("YEE_MEMORY_LIMIT_BYTES", None)
    env.pop("SLURM_MEM_PER_NODE", None)
    if cgroup:
        env["YEE_CGROUP_DIR"] = cgroup
    cmd = ([MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks > 1 else []) + [YEE]
    p = subprocess.run(cmd + args + ["--steps", "1", "--quiet", "--report", os.devnull], capture_output=True,
                       text=True, timeout=120, env=env)
    return p.returncode, [ln for ln in p.stderr.splitlines() if ln.startswith("yee: error: ")], p.stderr


def v2(limit, current, inactive_file=0):
    return {"memory.max": limit, "memory.current": "%d\n" % current,
            "memory.stat": "anon %d\nfile %d\ninactive_file %d\n" % (current - inactive_file, inactive_file,
                                                                        inactive_file)}


def v1(limit, usage, inactive_file=0):
    return {"memory.limit_in_bytes": "%d\n" % limit, "memory.usage_in_bytes": "%d\n" % usage,
            "memory.stat": "cache %d\nrss %d\ntotal_inactive_file %d\n" % (inactive_file, usage - inactive_file,
                                                                            inactive_file)}


def refused(rc, lines, err, what, *words):
    ok = rc == 2 and len(lines) == 1 and NEED_130 in lines[0] and "available" in lines[0] and \
        "in use by other processes" in lines[0] and all(w in lines[0] for w in words)
    check(ok, "%s: --n 130 refused before allocating, need and room named (rc=%d %s)" %
          (what, rc, lines or err.strip()[-300:]))


# cgroup v2: the job's limit with 60 MiB used by another process; the step below has none.
leaf = tree("v2", [v2("%d\n" % (128 * MiB), 60 * MiB), v2("max\n", 60 * MiB)])
rc, lines, err = yee(["--n", "130"], leaf)
refused(rc, lines, err, "v2, 128 MiB limit on the parent, 60 MiB in use", "128 MiB limit of cgroup memory.max")
rc, lines, err = yee(["--n", "64"], leaf)
check(rc == 0, "v2: --n 64 (about 38 MiB) fits in what is left (rc=%d %s)" % (rc, err.strip()[-200:]))
# The same limit unused: --n 130 fits (the limit alone would allow it; the old check's view).
rc, lines, err = yee(["--n", "130"], tree("v2-idle", [v2("%d\n" % (128 * MiB), 1 * MiB)]))
check(rc == 0, "v2, 128 MiB limit, nothing else in use: --n 130 runs (rc=%d %s)" % (rc, err.strip()[-200:]))
# File cache the kernel reclaims first is not in the way.
rc, lines, err = yee(["--n", "130"], tree("v2-cache", [v2("%d\n" % (128 * MiB), 70 * MiB, inactive_file=60 * MiB)]))
check(rc == 0, "v2, 60 of the 70 MiB in use is inactive file cache: --n 130 runs (rc=%d %s)" % (rc, err.strip()[-200:]))
# cgroup v1, the limit two levels up.
leaf = tree("v1", [v1(128 * MiB, 62 * MiB), v1(1 << 62, 62 * MiB), v1(1 << 62, 2 * MiB)])
rc, lines, err = yee(["--n", "130"], leaf)
refused(rc, lines, err, "v1, limit on the grandparent", "128 MiB limit of cgroup memory.limit_in_bytes")
# Two ranks on the node share what is left: each fits alone (2 x 43 MiB), not both.
rc, lines, err = yee(["--n", "120", "--decomp", "2x1x1"], tree("v2-two", [v2("%d\n" % (128 * MiB), 60 * MiB)]),
                     ranks=2)
check(rc == 2 and len(lines) == 1 and "2 rank(s) on this node" in lines[0] and "available" in lines[0],
      "2 ranks: their sum is compared with what is left (rc=%d %s)" % (rc, lines or err.strip()[-300:]))


# A real cgroup: 128 MiB, another process holding 60 MiB in it.
def own_cgroup():
    """(kind, directory of this process's memory cgroup) or (None, reason)."""
    try:
        entries = open("/proc/self/cgroup").read().splitlines()
        mounts = open("/proc/self/mountinfo").read().splitlines()
    except OSError as e:
        return None, str(e)
    roots = {}
    for m in mounts:
        fields, tail = m.split(" - ")[0].split(), m.split(" - ")[1].split()
        if tail[0] == "cgroup2":
            roots.setdefault("v2", fields[4])
        if tail[0] == "cgroup" and "memory" in tail[2].split(","):
            roots.setdefault("v1", fields[4])
    for e in entries:
        _, ctrl, path = e.split(":", 2)
        if "memory" in ctrl.split(",") and "v1" in roots:
            return "v1", roots["v1"] + path
        if ctrl == "" and "v2" in roots and os.path.exists(os.path.join(roots["v2"] + path, "memory.max")):
            return "v2", roots["v2"] + path
    return None, "no memory cgroup controller mounted"


HOG = "import sys\nb = bytearray(b'\\x01') * (60 << 20)\nprint('ready', flush=True)\nsys.stdin.read()\n"
kind, parent = own_cgroup()
if kind is None:
    print("SKIP  real cgroup: %s" % parent)
else:
    cg = os.path.join(parent, "yee-in-use-%d" % os.getpid())
    try:
        os.mkdir(cg)
        with open(os.path.join(cg, "memory.limit_in_bytes" if kind == "v1" else "memory.max"), "w") as f:
            f.write(str(128 * MiB))
    except OSError as e:
        print("SKIP  real cgroup: cannot make a %s memory cgroup under %s (%s)" % (kind, parent, e))
        cg = None
    if cg:
        enter = 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"'
        hog = subprocess.Popen(["sh", "-c", enter, "sh", cg, sys.executable, "-c", HOG], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        try:
            ready = hog.stdout.readline().strip() == "ready"
            if not ready:
                print("SKIP  real cgroup: the 60 MiB process did not start in %s (rc=%s)" % (cg, hog.poll()))
            else:
                env = env_for(1)
                env.pop("YEE_MEMORY_LIMIT_BYTES", None)
                p = subprocess.run(["sh", "-c", enter, "sh", cg, YEE, "--n", "130", "--steps", "1", "--quiet",
                                    "--report", os.devnull], capture_output=True, text=True, timeout=120, env=env)
                lines = [ln for ln in p.stderr.splitlines() if ln.startswith("yee: error: ")]
                refused(p.returncode, lines, p.stderr, "real %s cgroup of 128 MiB, 60 MiB held by another process "
                        "(was killed, exit 137)" % kind, "128 MiB limit of cgroup")
        finally:
            hog.stdin.close()
            hog.wait(timeout=30)
            for _ in range(50):  # the cgroup empties once its processes are reaped
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)

finish()
