"""Fuzz: >= 1000 random and malformed command lines and config files thrown at `yee`
(run as a singleton, no mpirun). Each run must end without a crash, hang or sanitizer
report; a rejection is exit 2 with exactly one line 'yee: error: ...'; an accepted run
exits 0 with a JSON report. Reproducible: YEE_FUZZ_SEED (default 20261121)."""
import concurrent.futures
import json
import os
import random
import subprocess
import sys

from yee_testlib import YEE, env_for, scratch_dir

SEED = int(os.environ.get("YEE_FUZZ_SEED", "20261121"))
CASES = int(os.environ.get("YEE_FUZZ_CASES", "1000"))
rng = random.Random(SEED)
work = scratch_dir("yee-fuzz-")

BAD_NUMBERS = ["", "-1", "0", "-0", "abc", "1e3", "0x10", "99999999999999999999", "1.5", " 4", "4 ", "+",
               "nan", "inf", "-inf", "1e400", "--", "٣", "\u00e9", "3,3", "2147483648", "-9223372036854775809"]
SMALL = ["1", "2", "3", "4", "5", "7"]
VALUES = {
    "nx": SMALL, "ny": SMALL, "nz": SMALL, "n": SMALL + ["1048577", "100000"],
    "steps": ["1", "2", "3", "1000000001"],
    "precision": ["f32", "f64", "f16", "F32", "double"],
    "decomp": ["auto", "1x1x1", "2x1x1", "1x1", "1x1x1x1", "x", "0x1x1", "axbxc", "1x-1x1", "1xx1"],
    "courant": ["0.5", "0.577", "0.5773502691896258", "0.58", "1", "0", "-0.3", "1e-300"],
    "source": ["ricker", "gauss-sine", "none", "sine", "RICKER"],
    "source-freq": ["0.05", "0.5", "0.51", "1e9", "3e11", "0", "-0.1"],
    "source-amp": ["1", "0", "-5", "1e300", "1e-300"],
    "source-pos": ["0,0,0", "1,1,1", "9,9,9", "1,1", "a,b,c", "-1,0,0", "1,,1", ",,,", "0,0,0,0"],
    "dx": ["1e-3", "0", "-1", "1e300"],
    "init-mode": ["none", "pulse", "TM110", "TE101", "TE011", "TM110+TE101", "TE110", "TM", "TM(1,1,0)",
                  "TM(1,1,0", "TM11", "+", "TM110+", "TE(0,2,3)", "TM(99999999999,1,0)"],
    "energy-every": ["0", "1", "2", "-1"],
    "probe": ["0,0,0", "1,2,1", "3,3,3", "x", "1,2", "9,9,9"],
    "probe-field": ["Ez", "Hx", "Ey", "ez", "E"],
    "probe-out": ["p.csv", "", "sub/none/p.csv", "/proc/forbidden.csv"],
    "report": ["-", "r.json", "", "missing/r.json", "/"],
    "kernel": ["fused", "split", "wavefront", "wavefront", "cuda", ""],
    "tile": ["0", "1", "3", "-2", "9"],
    "time-block": ["auto", "1", "2", "3", "5", "0", "-1", "65", "x"],
    "threads": ["1", "2", "0", "-1", "5000"],
    "config": ["@cfg", "missing.toml", "", "/", "/dev/null"],
}
SWITCHES = ["quiet", "no-progress", "help", "version"]
JUNK = ["-", "--", "---nx", "-nx", "--=3", "--nx=", "--nx==3", "--Nx", "--n x", "\x01", "\u2603", "--help=1",
        "--quiet=0", "x" * 300, "--" + "a" * 500]


def mutate(s):
    if not s or rng.random() < 0.7:
        return s
    i = rng.randrange(len(s))
    return s[:i] + rng.choice(["", "x", "0", "-", ",", " ", "9" * 20, "\u00ff"]) + s[i + 1:]


def random_config():
    lines = []
    for _ in range(rng.randint(0, 8)):
        r = rng.random()
        key = rng.choice(list(VALUES) + SWITCHES)
        if key == "config":
            key = "steps"
        if r < 0.6:
            val = rng.choice(VALUES.get(key, ["true", "false", "maybe", "1"]))
            q = rng.choice(["", "", "'", '"'])
            lines.append("%s%s = %s%s%s%s" % (rng.choice(["", " ", "\t"]), key.replace("-", rng.choice(["-", "_"])),
                                              q, mutate(val), q, rng.choice(["", " # c", ";x"])))
        elif r < 0.7:
            lines.append(rng.choice(["[grid]", "[", "[]", "# comment", "; c", "", "= 3", "nx", "nx 3", "unknown = 1"]))
        elif r < 0.8:
            lines.append("".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randint(1, 40))))
        elif r < 0.85:
            lines.append("nx = " + "9" * rng.randint(1, 5000))
        else:
            lines.append("%s = %s" % (key, rng.choice(BAD_NUMBERS)))
    text = "\n".join(lines) + rng.choice(["", "\n", "\r\n"])
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    return data


def random_value(key, malformed):
    if malformed and rng.random() < 0.5:
        return rng.choice(BAD_NUMBERS)
    val = rng.choice(VALUES[key])
    return mutate(val) if malformed else val


def random_case(i):
    """Mostly malformed command lines (each has at least one broken token); about 1 in 30
    is built from plausible values only, so accepted runs (tiny grids) are exercised too."""
    plausible = rng.random() < 0.035
    # A tiny-grid baseline first (later tokens may override it), so accepted runs stay fast.
    args = ["--n", "4", "--steps", "2"] if plausible or rng.random() < 0.8 else ["--steps=1", "--nx=3", "--ny", "5", "--nz", "2"]
    cfg_data = None
    tokens = rng.randint(1, 6)
    broken = -1 if plausible else rng.randrange(tokens)
    for t in range(tokens):
        malformed = t == broken or (not plausible and rng.random() < 0.3)
        r = rng.random()
        if r < 0.8 or plausible:
            key = rng.choice([k for k in VALUES if k not in ("n", "nx", "ny", "nz", "steps", "threads")]
                             if plausible else list(VALUES))
            val = random_value(key, malformed)
            if val == "@cfg":
                cfg_data = random_config()
                val = "cfg%d.toml" % i
            if rng.random() < 0.3:
                args.append("--%s=%s" % (key, val))
            else:
                args += ["--" + key, val]
        elif r < 0.9 and not malformed:
            args.append("--" + rng.choice(SWITCHES[:2]))
        else:
            args.append(rng.choice(JUNK))
    if rng.random() < 0.25 and cfg_data is None:
        cfg_data = random_config()
        args += ["--config", "cfg%d.toml" % i]
    return args, cfg_data


def run_case(i, args, cfg_data):
    d = os.path.join(work, "c%d" % i)
    os.makedirs(d)
    if cfg_data is not None:
        with open(os.path.join(d, "cfg%d.toml" % i), "wb") as f:
            f.write(cfg_data)
    env = env_for(1)
    for attempt in range(2):
        try:
            p = subprocess.run([YEE] + args, cwd=d, capture_output=True, timeout=60, env=env)
        except subprocess.TimeoutExpired:
            return "hang (> 60 s)"
        # Open MPI's singleton start-up can fail transiently on a crowded machine ("An error
        # occurred in MPI_Init_thread"); that is not about yee's input handling: retry once.
        if p.returncode != 0 and b"An error occurred in MPI_Init" in p.stderr and attempt == 0:
            retried.append(i)
            continue
        break
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    for marker in ("Sanitizer", "runtime error:", "SUMMARY:"):
        if marker in err:
            return "sanitizer report: " + err[-1500:]
    if p.returncode < 0:
        return "killed by signal %d" % -p.returncode
    lines = err.splitlines()
    if p.returncode == 2:
        if len(lines) != 1 or not lines[0].startswith("yee: error: ") or out:
            return "exit 2 without exactly one error line: %r" % err[-500:]
        return None
    if p.returncode == 0:
        if "--help" in args or "--version" in args or any(a.startswith("--help") for a in args):
            return None
        try:
            if "--report" not in " ".join(args) and not any(a.startswith("--report") for a in args):
                json.loads(out)
        except ValueError:
            return "exit 0 but stdout is not a JSON report: %r" % out[:200]
        return "accepted"
    if p.returncode == 1 and len([l for l in lines if l.startswith("yee: error: ")]) >= 1:
        return None  # a runtime verdict (e.g. non-finite fields from an absurd amplitude)
    return "exit %d: %r" % (p.returncode, err[-500:])


retried = []
cases = [random_case(i) for i in range(CASES)]
failures, accepted = [], 0
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    futs = {pool.submit(run_case, i, a, c): (i, a) for i, (a, c) in enumerate(cases)}
    for fut in concurrent.futures.as_completed(futs):
        i, a = futs[fut]
        res = fut.result()
        if res == "accepted":
            accepted += 1
        elif res:
            failures.append((i, a, res))
for i, a, res in sorted(failures)[:20]:
    print("FAIL  case %d: yee %s\n      %s" % (i, " ".join(repr(x) for x in a)[:400], res))
print("%d cases (seed %d): %d accepted and run, %d rejected, %d failures, %d retried after MPI_Init failed" % (
    len(cases), SEED, accepted, len(cases) - accepted - len(failures), len(failures), len(retried)))
sys.exit(1 if failures else 0)
