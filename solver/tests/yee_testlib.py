"""Helpers shared by the solver's verification tests: run `yee` (optionally under
mpirun) and parse its JSON report. Pure standard library, so the tests run with any
python3."""
import atexit
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

YEE = os.environ.get("YEE_BIN", "yee")
MPIEXEC = os.environ.get("YEE_MPIEXEC", "mpirun")
SANITIZED = os.environ.get("YEE_SANITIZED") == "1"
HERE = os.path.dirname(os.path.abspath(__file__))


_SCRATCH = []


def remove_scratch():
    """Removes this script's scratch folders now (at exit, and before a script re-executes itself)."""
    while _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)


def scratch_dir(prefix):
    """A fresh temporary folder for one test script, removed when the script exits, fails or is
    stopped with SIGTERM/SIGINT (kept with --keep or YEE_TEST_KEEP=1). Its name carries this host
    and PID, so that the folders of a run killed outright (SIGKILL: a test timeout) are removed by the
    next run of the same script on this host: some scripts write gigabytes of fields."""
    host = "".join(c for c in socket.gethostname() if c.isalnum())[:32] or "host"
    for stale in glob.glob(os.path.join(tempfile.gettempdir(), "%s%s-pid*-*" % (prefix, host))):
        try:
            pid = int(os.path.basename(stale)[len(prefix) + len(host):].split("-")[1][3:])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(stale, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            pass                                 # not ours, or a live process of another user
    path = tempfile.mkdtemp(prefix="%s%s-pid%d-" % (prefix, host, os.getpid()))
    if "--keep" in sys.argv or os.environ.get("YEE_TEST_KEEP") == "1":
        print("keeping %s" % path)
        return path
    _SCRATCH.append(path)
    atexit.register(remove_scratch)
    for sig in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))   # so that atexit runs
    return path


def env_for(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env["OMPI_MCA_ess_singleton_isolated"] = "1"  # a singleton (no mpirun) starts no orted
    # Open MPI 4.1 is not leak-free at MPI_Finalize: suppress its leaks (full unwinding,
    # so the frames name its libraries), report everything else.
    env["ASAN_OPTIONS"] = "fast_unwind_on_malloc=0:abort_on_error=0:detect_leaks=1"
    env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0" % os.path.join(HERE, "lsan.supp")
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def run(args, ranks=1, threads=1, timeout=120, mpirun=None):
    """Runs yee; returns (returncode, stdout, stderr). ranks > 1 (or mpirun=True) uses mpirun."""
    use_mpirun = ranks > 1 if mpirun is None else mpirun
    cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", YEE] if use_mpirun else [YEE]
    p = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                       env=env_for(threads))
    return p.returncode, p.stdout, p.stderr


def report(args, ranks=1, threads=1, timeout=120):
    """Runs yee and returns its JSON report; fails loudly on a non-zero exit."""
    rc, out, err = run(list(args) + ["--quiet"], ranks=ranks, threads=threads, timeout=timeout)
    if rc != 0:
        fail("yee %s (ranks=%d) exited %d: %s" % (" ".join(map(str, args)), ranks, rc, err.strip()[-2000:]))
    check_no_sanitizer_report(err)
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        fail("report is not JSON (%s): %r" % (e, out[:300]))


_KERNELS = {}


def has_kernel(name):
    """Whether this build of yee has the kernel `name` (a backend's traits.json lists its kernels):
    the verification scripts are shared by every backend and skip the cases of a kernel the binary
    refuses, saying so, rather than failing on them."""
    if name not in _KERNELS:
        rc, _, err = run(["--kernel", name, "--n", 8, "--steps", 1, "--quiet", "--report", os.devnull])
        _KERNELS[name] = not (rc == 2 and "not available" in err)
    return _KERNELS[name]


def without_missing_kernels(cases, args_of):
    """The cases whose --kernel this build has; prints one SKIP line per kernel it lacks."""
    kept, missing = [], set()
    for case in cases:
        args = [str(a) for a in args_of(case)]
        kernel = args[args.index("--kernel") + 1] if "--kernel" in args else None
        if kernel and not has_kernel(kernel):
            missing.add(kernel)
        else:
            kept.append(case)
    for kernel in sorted(missing):
        print("SKIP  --kernel %s cases: not available in %s" % (kernel, os.path.basename(YEE)))
    return kept


def check_no_sanitizer_report(err):
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "SUMMARY: "):
        if marker in err:
            fail("sanitizer report:\n" + err[-3000:])


def read_probes(path):
    """CSV from --probe-out -> (times, [series per probe])."""
    times, cols = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or line.startswith("step"):
                continue
            parts = line.strip().split(",")
            times.append(float(parts[1]))
            vals = [float(x) for x in parts[2:]]
            if cols is None:
                cols = [[] for _ in vals]
            for c, v in zip(cols, vals):
                c.append(v)
    return times, cols


failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        failures.append(msg)


def fail(msg):
    print("FAIL  " + msg)
    sys.exit(1)


def finish():
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")
