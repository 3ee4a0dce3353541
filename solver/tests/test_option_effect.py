"""Options that would change nothing are refused: each option that acts only through another
(field output, probes, the source, the kernel, --quiet) is an error when the run as
configured would ignore it, on the command line and in a config file: exit 2, one line
naming the option and what would enable it; with that option present it is accepted. A
key given twice (command line, or config file) is an error naming the key, instead of the
last value winning silently; --probe, which adds a point each time, stays repeatable."""
import os

from yee_testlib import check, check_no_sanitizer_report, finish, run, scratch_dir

tmp = scratch_dir("yee-effect-")
BASE = ["--n", "8", "--steps", "2", "--quiet"]
OUT = os.path.join(tmp, "out")


def out_dir(name):
    return ["--output-dir", os.path.join(OUT, name)]


# option (with its value): the run that ignores it, the run that uses it, and the words
# (what would enable it) the refusal must name
DEPENDENT = [
    (["--output-every", "1"], [], ["--output", "binary"] + out_dir("every"), "--output ascii|binary|hdf5"),
    (["--output-fields", "ex"], [], ["--output", "ascii"] + out_dir("fields"), "--output ascii|binary|hdf5"),
    (["--output-dir", "/nonexistent/yee-out"], [], None, "--output ascii|binary|hdf5"),
    (["--output-dir", os.path.join(OUT, "dir")], [], ["--output", "binary"], "--output ascii|binary|hdf5"),
    (["--output-strategy", "per-rank"], [], ["--output", "binary"] + out_dir("strategy"), "--output ascii|binary|hdf5"),
    (["--overwrite"], [], ["--output", "binary"] + out_dir("overwrite"), "--output ascii|binary|hdf5"),
    (["--output-fsync"], [], ["--output", "binary"] + out_dir("fsync"), "--output ascii|binary|hdf5"),
    (["--ascii-layout", "coordinates"], ["--output", "binary"] + out_dir("layout-bin"),
     ["--output", "ascii"] + out_dir("ascii-layout"), "--output ascii"),
    (["--hdf5-chunk", "4x4x4"], ["--output", "binary"] + out_dir("chunk-bin"), ["--output", "hdf5"] + out_dir("chunk"),
     "--output hdf5"),
    (["--hdf5-compress", "deflate:1"], [], ["--output", "hdf5"] + out_dir("compress"), "--output hdf5"),
    (["--hdf5-layout", "records"], ["--output", "ascii"] + out_dir("layout-ascii"), ["--output", "hdf5"] +
     out_dir("layout"), "--output hdf5"),
    (["--probe-field", "Hx"], [], ["--probe", "1,1,1", "--probe-out", os.path.join(tmp, "pf.csv")], "--probe"),
    (["--probe-out", os.path.join(tmp, "p.csv")], [], ["--probe", "1,1,1"], "--probe"),
    (["--source-freq", "0.1"], ["--source", "none"], [], "--source ricker|gauss-sine"),
    (["--source-amp", "2"], ["--source", "none"], ["--source", "gauss-sine"], "--source ricker|gauss-sine"),
    (["--source-pos", "1,1,1"], ["--source", "none"], ["--source", "none", "--init-mode", "pulse"], "--init-mode pulse"),
    (["--dx", "0.01"], [], ["--source-freq", "3e9"], "--source-freq in Hz"),
    (["--tile", "2"], ["--kernel", "split"], ["--kernel", "fused"], "--kernel fused|wavefront"),
    (["--time-block", "2"], [], ["--kernel", "wavefront"], "--kernel wavefront"),
    (["--no-progress"], ["--quiet"], [], "--quiet"),
]


def refused(args, option, words, label):
    rc, out, err = run(args, timeout=60)
    check_no_sanitizer_report(err)
    lines = err.splitlines()
    ok = rc == 2 and len(lines) == 1 and lines[0].startswith("yee: error: %s has no effect" % option) and \
        words in lines[0] and out == ""
    check(ok, "%s: %s refused, naming %r (rc=%d %r)" % (label, option, words, rc, err.strip()[-300:]))


def accepted(args, label):
    rc, out, err = run(args, timeout=60)
    check_no_sanitizer_report(err)
    check(rc == 0, "%s: accepted (rc=%d %r)" % (label, rc, err.strip()[-300:]))


_, version, _ = run(["--version"])
hdf5 = "HDF5 none" not in version
wavefront = "wavefront" in run(["--help"])[1]
for opt, ignored, used, words in DEPENDENT:
    name = opt[0]
    if name == "--time-block" and not wavefront:
        print("SKIP  %s: this build has no wavefront kernel" % name)
        continue
    base = ["--n", "8", "--steps", "2"] + ([] if name == "--no-progress" else ["--quiet"])
    refused(base + ignored + opt, name, words, "command line")
    cfg = os.path.join(tmp, "c%s.toml" % name.strip("-"))
    with open(cfg, "w") as f:  # the option from a file, the rest from the command line
        f.write("%s = %s\n" % (name[2:].replace("-", "_"), opt[1] if len(opt) > 1 else "true"))
    refused(base + ignored + ["--config", cfg], name, words, "config file")
    if used is None or ("hdf5" in used and not hdf5):
        continue
    accepted(base + used + opt + (["--report", os.path.join(tmp, "r.json")] if name == "--no-progress" else []),
             "%s with %s" % (" ".join(opt), " ".join(used) or "the defaults"))
check(not os.path.exists("/nonexistent/yee-out"), "a refused --output-dir is not created")

# The existing cross-checks of output options still hold.
rc, _, err = run(BASE + ["--output", "binary", "--output-strategy", "shared"], timeout=60)
check(rc == 2 and "--output hdf5" in err, "--output-strategy shared with binary output is refused (%r)" % err.strip())

# A key given twice: refused, naming it (the last value used to win silently).
for args, words in ((["--steps", "3"], ["--steps is given twice", "'2'", "'3'"]),
                    (["--quiet"], ["--quiet is given twice"]),
                    (["--output", "ascii", "--output", "binary"], ["--output is given twice"])):
    rc, out, err = run(BASE + args, timeout=60)
    lines = err.splitlines()
    check(rc == 2 and len(lines) == 1 and all(w in lines[0] for w in words),
          "%s on the command line: refused naming %s (rc=%d %r)" % (" ".join(args), words, rc, err.strip()))
for text, words in (("steps = 3\nsteps = 4\n", ["line 2", "'steps'", "repeats line 1"]),
                    ("[a]\nsource_freq = 0.1\n[b]\nsource-freq = 0.2\n", ["line 4", "'source-freq'", "repeats line 2"]),
                    ("quiet = true\nquiet = false\n", ["'quiet'", "repeats line 1"])):
    cfg = os.path.join(tmp, "twice.toml")
    with open(cfg, "w") as f:
        f.write(text)
    rc, out, err = run(["--n", "8", "--config", cfg], timeout=60)
    lines = err.splitlines()
    check(rc == 2 and len(lines) == 1 and all(w in lines[0] for w in words),
          "config %r: refused naming %s (rc=%d %r)" % (text, words, rc, err.strip()))
# --probe stays repeatable (each adds a point), and the command line still overrides the file.
cfg = os.path.join(tmp, "probes.toml")
with open(cfg, "w") as f:
    f.write("probe = 1,1,1\nprobe = 2,2,2\nsteps = 5\n")
rc, out, err = run(["--n", "8", "--config", cfg, "--steps", "2", "--quiet", "--probe", "3,3,3", "--probe", "4,4,4",
                    "--probe-out", os.path.join(tmp, "probes.csv")], timeout=60)
check(rc == 0 and '"count": 2' in out and '"steps": 2' in out,
      "--probe twice is two probes; the command line's --steps overrides the file's (rc=%d %r)" % (rc, err.strip()))

finish()
