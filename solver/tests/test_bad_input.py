"""Every error path: exit code 2, exactly one line on stderr starting 'yee: error: ' that
names the problem, nothing on stdout; with several ranks no rank hangs."""
import os
import shutil
import sys

from yee_testlib import check, check_no_sanitizer_report, finish, run, scratch_dir, without_missing_kernels

SMALL = "--small" in sys.argv
tmp = scratch_dir("yee-bad-")


def cfg(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


unreadable = os.path.join(tmp, "no-such-dir", "x.toml")
big = cfg("big.toml", "# padding\n" * 120000)  # 1.2 MB of comments: over the 1 MiB bound
adir = os.path.join(tmp, "adir")
os.makedirs(adir)
CASES = [  # (args, ranks, words the message must contain)
    (["--nx", "-4"], 1, ["--nx", "out of range"]),
    (["--ny", "0"], 1, ["--ny", "out of range"]),
    (["--nz", "1e3"], 1, ["--nz", "not an integer"]),
    (["--n", ""], 1, ["--n", "not an integer"]),
    (["--steps", "0"], 1, ["--steps", "out of range"]),
    (["--steps", "-1"], 1, ["--steps", "out of range"]),
    (["--steps", "99999999999999999999"], 1, ["--steps", "not an integer"]),
    (["--frobnicate", "3"], 1, ["unknown flag", "--frobnicate"]),
    (["stray"], 1, ["unexpected argument"]),
    (["--nx"], 1, ["--nx", "needs a value"]),
    (["--quiet=yes"], 1, ["--quiet", "takes no value"]),
    (["--precision", "f16"], 1, ["--precision", "f32|f64"]),
    (["--courant", "0.58"], 1, ["--courant", "stability limit"]),
    (["--courant", "-0.1"], 1, ["--courant", "> 0"]),
    (["--courant", "nan"], 1, ["--courant", "finite"]),
    (["--source", "laser"], 1, ["--source", "ricker"]),
    (["--source-freq", "0"], 1, ["--source-freq", "> 0"]),
    (["--source-freq", "0.7"], 1, ["--source-freq", "Nyquist"]),
    (["--source-pos", "1,2"], 1, ["--source-pos", "i,j,k"]),
    (["--n", "8", "--source-pos", "1,2,8"], 1, ["--source-pos", "outside"]),
    (["--n", "8", "--probe", "9,0,0"], 1, ["--probe", "outside"]),
    (["--init-mode", "TE110"], 1, ["--init-mode", "single-component"]),
    (["--init-mode", "wave"], 1, ["--init-mode"]),
    (["--energy-every", "-2"], 1, ["--energy-every", "out of range"]),
    (["--threads", "0"], 1, ["--threads", "out of range"]),
    (["--decomp", "2x2"], 1, ["--decomp", "PxQxR"]),
    (["--decomp", "0x1x1"], 1, ["--decomp", "out of range"]),
    (["--kernel", "magic"], 1, ["--kernel"]),
    (["--n", "100000"], 1, ["GiB"]),
    # Values the help excludes, contradictions and flags that would be ignored.
    (["--courant", "0"], 1, ["--courant", "> 0"]),
    (["--config", cfg("courant0.toml", "courant = 0\n")], 1, ["--courant", "> 0"]),
    (["--nx", "32", "--n", "24"], 1, ["--n", "--nx", "conflict"]),
    (["--n", "24", "--nz", "8"], 1, ["--n", "--nz", "conflict"]),
    (["--config", cfg("axes.toml", "n = 24\nny = 8\n")], 1, ["--n", "--ny", "conflict", "axes.toml"]),
    (["--time-block", "4"], 1, ["--time-block", "no effect", "--kernel fused", "--kernel wavefront"]),
    (["--kernel", "split", "--time-block", "auto"], 1, ["--time-block", "no effect", "--kernel wavefront"]),
    (["--steps", "10", "--energy-every", "11"], 1, ["--energy-every 11", "larger than --steps 10"]),
    # Config files: only small regular files are read.
    (["--config", "/dev/zero"], 1, ["--config", "/dev/zero", "not a regular file"]),
    (["--config", big], 1, ["--config", "larger than 1 MiB"]),
    # Report and probe targets are checked before the run, not after it.
    (["--report", adir], 1, ["--report", "is a directory"]),
    (["--report", "/proc"], 1, ["--report", "/proc", "is a directory"]),
    (["--report", "/proc/yee-report.json"], 1, ["--report", "not writable"]),
    (["--probe", "1,1,1", "--probe-out", adir], 1, ["--probe-out", "is a directory"]),
    (["--probe", "1,1,1", "--probe-out", "/proc/self/yee.csv"], 1, ["--probe-out", "not writable"]),
    (["--report", "/proc/self/status"], 1, ["--report", "/proc/self/status"]),
    (["--report", adir, "--energy-every", "1"], 2, ["--report", "is a directory"]),
    (["--report", os.path.join(tmp, "missing", "r.json")], 1, ["--report", "not writable"]),
    (["--config", unreadable], 1, ["--config", "cannot read"]),
    (["--config", tmp], 1, ["--config"]),
    (["--config", cfg("badkey.toml", "[run]\nnx = 8\ncolour = red\n")], 1, ["unknown key", "colour", "line 3"]),
    (["--config", cfg("badval.ini", "steps = many\n")], 1, ["--steps", "not an integer"]),
    (["--config", cfg("noeq.ini", "nx 8\n")], 1, ["line 1", "key = value"]),
    (["--config", cfg("courant.toml", "courant = 0.6\n")], 1, ["--courant", "stability limit"]),
    (["--kernel", "wavefront", "--time-block", "0"], 1, ["--time-block", "out of range"]),
    (["--kernel", "wavefront", "--time-block", "-2"], 1, ["--time-block", "out of range"]),
    (["--time-block", "some"], 1, ["--time-block", "not an integer"]),
    (["--kernel", "wavefront", "--n", "8", "--time-block", "9"], 1, ["--time-block 9", "larger than the grid"]),
    (["--kernel", "wavefront", "--ny", "6", "--tile", "7"], 1, ["--tile 7", "larger than the grid"]),
    (["--kernel", "wavefront", "--nx", "9", "--decomp", "2x1x1", "--time-block", "5"], 2,
     ["--time-block 5", "deeper than the smallest subdomain", "4 cells along x"]),
    (["--kernel", "wavefront", "--n", "12", "--decomp", "1x4x1", "--time-block", "4"], 4,
     ["--time-block 4", "deeper than the smallest subdomain", "3 cells along y"]),
    (["--decomp", "2x1x1"], 3, ["--decomp 2x1x1", "makes 2 ranks", "3 are running"]),
    (["--decomp", "4x1x1", "--nx", "3"], 4, ["4 ranks along x", "only 3 cells"]),
    (["--n", "1"], 2, ["2 ranks", "only 1 cells"]),
    (["--nx", "2", "--ny", "1", "--nz", "1"], 3, ["3 ranks", "only 2 cells"]),
]
_, version, _ = run(["--version"])
CPU_BUILD = "backend cpu" in version
if CPU_BUILD:  # a GPU flag on a build without GPUs (the CUDA build's own tests cover it there)
    CASES.append((["--gpu-per-rank"], 1, ["--gpu-per-rank", "GPU backends only", "cpu"]))
if SMALL:
    CASES = [c for c in CASES if c[1] == 1]
CASES = without_missing_kernels(CASES, lambda case: case[0])

for args, ranks, words in CASES:
    rc, out, err = run(["--n", "8", "--steps", "2"] + args if args[0] == "--report" else args, ranks=ranks,
                       mpirun=ranks > 1, timeout=60)
    check_no_sanitizer_report(err)
    ours = [line for line in err.splitlines() if line.startswith("yee: error: ")]
    # mpirun adds its own banner about the non-zero exit; single-rank runs must print one line only
    one_line = len(ours) == 1 and (ranks > 1 or len(err.splitlines()) == 1)
    named = bool(ours) and all(w in ours[0] for w in words)
    check(rc == 2 and one_line and named and out == "",
          "%s (ranks=%d): exit %d, %r" % (" ".join(args)[:70], ranks, rc, ours[0] if ours else err[-200:]))

# Good config file: keys as on the command line, command line wins, comments and sections ok.
good = cfg("good.toml", "# yee config\n[grid]\nnx = 6\nny = '7'\nnz = 5 # comment\n[run]\nsteps = 3\n"
                        "precision = \"f64\"\nprobe = 1,1,1\nprobe = 2,2,2\nquiet = true\n")
rc, out, err = run(["--config", good, "--steps", "4", "--probe-out", os.path.join(tmp, "p.csv")])
import json
ok = rc == 0
if ok:
    rep = json.loads(out)
    ok = rep["grid"] == {"nx": 6, "ny": 7, "nz": 5} and rep["steps"] == 4 and rep["precision"] == "f64" \
        and rep["probes"]["count"] == 2 and err == ""
check(ok, "a valid config file is read (command line overrides it): rc=%d %s" % (rc, err.strip()[:200]))
# --cuda-aware only chooses the halo path of device buffers: a CPU build runs, and says so
# (once, on rank 0).
if CPU_BUILD:
    rc, out, err = run(["--n", "8", "--steps", "2", "--quiet", "--cuda-aware", "off"])
    check(rc == 0 and err.splitlines() == ["yee: warning: --cuda-aware has no effect with the cpu backend (halo "
                                           "messages are in host memory)"],
          "--cuda-aware on a CPU build: exit %d, one warning line %r" % (rc, err[-200:]))
    rc, out, err = run(["--n", "8", "--steps", "2", "--quiet", "--cuda-aware", "on", "--decomp", "2x1x1"], ranks=2)
    check(rc == 0 and len([ln for ln in err.splitlines() if "warning" in ln]) == 1,
          "--cuda-aware with 2 ranks: one warning, not one per rank (rc=%d %r)" % (rc, err[-200:]))
# The memory limit override must be a number of bytes.
os.environ["YEE_MEMORY_LIMIT_BYTES"] = "lots"
rc, out, err = run(["--n", "8", "--steps", "1"])
del os.environ["YEE_MEMORY_LIMIT_BYTES"]
check(rc == 2 and err.startswith("yee: error: YEE_MEMORY_LIMIT_BYTES") and len(err.splitlines()) == 1,
      "YEE_MEMORY_LIMIT_BYTES=lots: exit %d, %r" % (rc, err[-200:]))
rc, out, err = run(["--help"])
import re
flags = set(re.findall(r"^  --([a-z-]+)", out, re.M))
check(rc == 0 and {"nx", "steps", "precision", "decomp", "courant", "source", "source-freq", "source-pos",
                   "init-mode", "energy-every", "probe", "probe-out", "report", "quiet", "threads", "config",
                   "help", "version"} <= flags, "--help documents every flag (%d found)" % len(flags))
shutil.rmtree(tmp, ignore_errors=True)
finish()
