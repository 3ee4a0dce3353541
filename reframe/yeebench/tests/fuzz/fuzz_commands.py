"""Fuzz stage of `make test`: hostile inputs through every results and acceptance command.

    python reframe/yeebench/tests/fuzz/fuzz_commands.py [--seed N] [--budget-s S] [--keep DIR]

Three classes of input, all drawn from a fixed seed and the small corpus beside this file:
  crafted reports  the corpus report with fields of the wrong type, huge and lone-surrogate values,
                   job output folders holding FIFOs and links to /proc and /dev/zero, and JSON text
                   that is cut, flipped, nested deeply or not UTF-8: ingest, compare, export, report,
                   baseline, acceptance report;
  damaged trees    a recorded results tree with one thing broken (a cut or NaN row, a FIFO for a rows
                   file, a 3 GB sparse provenance, a planted link for the history cache, its lock or its
                   journal, a stale or live temporary, a link loop): compare (also against the history),
                   report, baseline, export, calibrate, ingest;
  special files    FIFOs, devices, /proc files, sockets, sparse 3 GB files, link loops as every input,
                   and FIFOs, devices, links and folders as every output (-o, --baselines-dir,
                   --availability, --waivers, topology --check/--record, config from-slurm -o).
A command fails the stage when it prints a traceback, exits with a code it does not document, exits 2
without a one-line error, hangs (killed after its deadline), dies of a signal (the memory ceiling:
an unbounded read), writes anywhere but its named outputs, or replaces a special file it was given.
The stage stops starting commands at --budget-s and says how many it left out; exit 1 on any failure.
"""
import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")      # one core: a CI run is going on beside this
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse  # noqa: E402
import copy  # noqa: E402
import fcntl  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import forked  # noqa: E402
import mutations  # noqa: E402
import special_files as sf  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"
SEED = 20260101
REPORTS = 150          # crafted reports
SYSTEM = "generic-local"   # the corpus report's system: its runs land in results/generic-local/

INGEST, COMPARE, PLAIN = {0, 2}, {0, 1, 2}, {0, 2}


def _one_error_line(err):
    """True when stderr ends in exactly one 'error:' line (notes and warnings may come before it)."""
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if ": error: " in line or line.startswith("usage:")]
    return bool(lines) and len([e for e in errors if ": error: " in e]) == 1 and ": error: " in lines[-1]


class Fuzz:
    def __init__(self, root, seed, budget_s):
        self.root = Path(root)
        self.rng = random.Random(seed)
        self.deadline = time.monotonic() + budget_s
        self.failures, self.ran, self.left_out = [], 0, 0
        self.current_class = "setup"
        self.tally = {}      # class -> {"ran": n, kind of problem -> commands with it}
        self.outside = self.root / "outside"
        sf.prepare_outside(str(self.outside))
        self.jobs = self.root / "jobs"
        self.guarded = [self.outside, self.jobs]
        self.slurm_env = self._fake_slurm()
        self._base = None

    # -- running one command ----------------------------------------------------------------------
    def case_dir(self, name):
        path = self.root / "cases" / name
        path.mkdir(parents=True)
        return path

    def out_of_time(self):
        return time.monotonic() > self.deadline

    def check(self, label, argv, cwd, codes, writable=(), guards=(), timeout=45, env=None, refuse=False):
        """Run `yeebench argv` in cwd and record what is wrong with it (see the module's docstring).
        writable: where it may write; guards: special files it must leave as they are; refuse: it
        must exit 2."""
        if self.out_of_time():
            self.left_out += 1
            return None
        argv = [str(a) for a in argv]
        writable = [str(w) for w in writable]
        before = {str(d): sf.tree_state(str(d)) for d in self.guarded}
        before[str(cwd)] = sf.tree_state(str(cwd), skip=writable)
        prints = {str(g): sf.fingerprint(str(g)) for g in guards}
        outcome = forked.run(argv, str(cwd), timeout, env)
        self.ran += 1
        counts = self.tally.setdefault(self.current_class, {"ran": 0})
        counts["ran"] += 1
        problems = []
        if outcome.hung:
            problems.append(f"hung: killed after {timeout} s")
        elif outcome.signal:
            problems.append(f"died of signal {outcome.signal} (memory ceiling {forked.MEMORY_LIMIT >> 30} GiB?)")
        elif outcome.traceback:
            problems.append("printed a traceback")
        elif outcome.code not in codes:
            problems.append(f"exit {outcome.code}; documented: {sorted(codes)}")
        elif outcome.code == 2 and not _one_error_line(outcome.err):
            problems.append("exit 2 without exactly one error line")
        if refuse and outcome.code not in (2, None):
            problems.append(f"exit {outcome.code} where a refusal (exit 2) was due")
        for folder, state in before.items():
            skip = writable if folder == str(cwd) else ()
            changed = sf.changes(state, sf.tree_state(folder, skip=skip))
            if changed:
                problems.append("wrote outside its outputs: " + "; ".join(changed[:4]))
        for path, fingerprint in prints.items():
            if sf.fingerprint(path) != fingerprint:
                problems.append(f"replaced or changed {path}")
        if problems:
            self.failures.append((label, argv, problems, outcome.err.strip()[-1200:]))
            counts["failed"] = counts.get("failed", 0) + 1
            for kind in {_problem_kind(p) for p in problems}:
                counts[kind] = counts.get(kind, 0) + 1
        return outcome

    # -- fixtures ---------------------------------------------------------------------------------
    def _fake_slurm(self):
        """sinfo and scontrol on PATH printing the corpus' answers (config from-slurm's outputs)."""
        bin_dir = self.root / "bin"
        bin_dir.mkdir()
        scripts = {"sinfo": f'cat "{CORPUS / "sinfo.txt"}"',
                   "scontrol": f'case "$*" in *"show node"*) cat "{CORPUS / "scontrol-nodes.txt"}";; *) exit 1;; esac',
                   "srun": "exit 1"}
        for name, body in scripts.items():
            (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
            (bin_dir / name).chmod(0o755)
        return {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}

    def job_dirs(self):
        """Job output folders whose rfm_job.out is something no read may wait on or swallow whole."""
        dirs = []
        for kind in ("fifo", "dev-zero", "proc-file", "sparse-3g", "link-loop", "directory", "socket"):
            folder = self.jobs / kind
            folder.mkdir(parents=True)
            sf.make(folder / "rfm_job.out", kind, str(self.outside))
            sf.make(folder / "yee.json", "fifo" if kind != "fifo" else "dev-zero", str(self.outside))
            dirs.append(str(folder))
        return dirs

    def base_tree(self):
        """A results tree of three recorded runs of the corpus report (and its history cache)."""
        if self._base is None:
            self._base = self._record_base()
        return self._base

    def _record_base(self):
        base = self.root / "base"
        seed = json.loads((CORPUS / "report.json").read_text())
        for i in range(3):
            report = copy.deepcopy(seed)
            report["session_info"]["uuid"] = f"{i}a000000-0000-4000-8000-000000000000"
            report["session_info"]["time_start_unix"] += 3600 * i
            path = base / f"report-{i}.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(report))
            outcome = forked.run(["results", "ingest", str(path), "--results-dir", str(base / "results")],
                                 str(base), 120)
            if outcome.code != 0:
                raise SystemExit(f"fuzz: cannot record the corpus report: {outcome.err.strip()[-500:]}")
        runs = sorted(p.name for p in (base / "results" / SYSTEM).iterdir())
        forked.run(["results", "compare", "--baseline", f"results/{SYSTEM}/{runs[0]}", "--candidate",
                    f"results/{SYSTEM}/{runs[1]}"], str(base), 120)
        return base / "results", runs

    # -- class 1: crafted reports -------------------------------------------------------------------
    def crafted_reports(self, count):
        seed = json.loads((CORPUS / "report.json").read_text())
        job_dirs = self.job_dirs()
        for i in range(count):
            case = self.case_dir(f"report-{i}")
            report = mutations.mutate_report(self.rng, copy.deepcopy(seed), job_dirs)
            path = case / "report.json"
            path.write_bytes(mutations.report_text(self.rng, report))
            results, out = case / "results", case / "out"
            label = f"crafted report {i}"
            for fmt in ("html", self.rng.choice(("text", "json"))):
                self.check(f"{label}: acceptance report --format {fmt}", ["acceptance", "report", path, "--format",
                                                                         fmt, "-o", out / f"a.{fmt}"], case, PLAIN,
                           writable=[out])
            ingest = self.check(f"{label}: ingest", ["results", "ingest", path, "--results-dir", results], case,
                                INGEST, writable=[results])
            if not ingest or ingest.code != 0 or not ingest.out.strip():
                continue
            run = ingest.out.strip().splitlines()[-1]
            self.check(f"{label}: compare", ["results", "compare", "--baseline", run, "--candidate", run,
                                             "--results-dir", results], case, COMPARE, writable=[results])
            self.check(f"{label}: export", ["results", "export", run, "--format",
                                            self.rng.choice(("jsonl", "openmetrics", "influx", "vm-jsonl"))],
                       case, PLAIN)
            if i % 4 == 0:
                self.check(f"{label}: baseline", ["results", "baseline", run, "--baselines-dir", out / "b"],
                           case, PLAIN, writable=[out])
            if i % 8 == 0:
                self.check(f"{label}: report", ["results", "report", run, "-o", out / "r.html"], case, PLAIN,
                           writable=[out], timeout=120)

    # -- class 2: damaged trees -----------------------------------------------------------------------
    def damaged_trees(self):
        base, runs = self.base_tree()
        for name, damage in DAMAGES:
            case = self.case_dir(f"tree-{name}")
            results = case / "results"
            shutil.copytree(base, results, symlinks=True)
            run_dirs = [results / SYSTEM / r for r in runs]
            done = damage(self, results, run_dirs)
            holder, guards = done if isinstance(done, tuple) else (None, [])
            out = case / "out"
            label = f"damaged tree ({name})"
            try:
                a, b, c = (str(p) for p in run_dirs)
                self.check(f"{label}: compare", ["results", "compare", "--baseline", a, "--candidate", b,
                                                 "--results-dir", results], case, COMPARE, writable=[results])
                self.check(f"{label}: compare with the history", ["results", "compare", "--baseline", "history",
                                                                  "--candidate", c, "--results-dir", results],
                           case, COMPARE, writable=[results])
                self.check(f"{label}: export", ["results", "export", a], case, PLAIN)
                self.check(f"{label}: baseline", ["results", "baseline", a, b, "--baselines-dir", out / "b"], case,
                           PLAIN, writable=[out])
                self.check(f"{label}: calibrate", ["results", "calibrate", "--system", SYSTEM, "--results-dir",
                                                   results, "--min-runs", "2", "-o", out / "ref.json"], case,
                           PLAIN, writable=[results, out])
                self.check(f"{label}: ingest", ["results", "ingest", CORPUS / "report.json", "--results-dir",
                                                results], case, INGEST, writable=[results], guards=guards)
                if name in REPORTED_DAMAGES:
                    self.check(f"{label}: report", ["results", "report", a, "-o", out / "r.html"], case, PLAIN,
                               writable=[out], timeout=120)
            finally:
                if holder is not None:
                    os.close(holder)

    # -- class 3: special files -----------------------------------------------------------------------
    def special_inputs(self, run, tree):
        for kind in sf.INPUT_KINDS:
            case = self.case_dir(f"input-{kind}")
            slot = sf.make(case / "input", kind, str(self.outside))
            out = case / "out"
            for what, argv, codes in (
                    ("ingest", ["results", "ingest", slot, "--results-dir", case / "results"], INGEST),
                    ("ingest --reframe-db", ["results", "ingest", "--reframe-db", slot, "--results-dir",
                                             case / "results"], INGEST),
                    ("compare --baseline FILE", ["results", "compare", "--baseline", slot, "--candidate", run,
                                                 "--no-history"], COMPARE),
                    ("acceptance report", ["acceptance", "report", slot, "--format", "text"], PLAIN),
                    ("acceptance report --availability", ["acceptance", "report", CORPUS / "report.json",
                                                          "--availability", slot, "--format", "json"], PLAIN),
                    ("acceptance report --waivers", ["acceptance", "report", CORPUS / "report.json", "--waivers",
                                                     slot, "--format", "json"], PLAIN),
                    ("acceptance availability", ["acceptance", "availability", slot], COMPARE),
                    ("acceptance topology --check", ["acceptance", "topology", "--check", slot], COMPARE)):
                self.check(f"special input ({kind}): {what}", argv, case, codes,
                           writable=[case / "results", out], guards=[slot])

    def special_outputs(self, run, tree):
        for kind in sf.OUTPUT_KINDS:
            for index, (what, make_argv, env) in enumerate((
                    ("results report -o", lambda s: ["results", "report", run, "-o", s], None),
                    ("results compare -o", lambda s: ["results", "compare", "--baseline", run, "--candidate", run,
                                                      "--no-history", "-o", s], None),
                    ("results export -o", lambda s: ["results", "export", run, "-o", s], None),
                    ("results calibrate -o", lambda s: ["results", "calibrate", "--system", SYSTEM,
                                                        "--results-dir", tree, "--min-runs", "2", "-o", s], None),
                    ("results baseline", None, None),
                    ("acceptance report -o", lambda s: ["acceptance", "report", CORPUS / "report.json",
                                                        "--format", "text", "-o", s], None),
                    ("acceptance topology --record -o", lambda s: ["acceptance", "topology", "--record", "-o", s],
                     None),
                    ("config from-slurm -o", lambda s: ["config", "from-slurm", "-o", s], self.slurm_env))):
                case = self.case_dir(f"output-{kind}-{index}")
                if make_argv is None:        # the baseline file <dir>/<system>.json is the special file
                    (case / "b").mkdir()
                    slot = sf.make(case / "b" / f"{SYSTEM}.json", kind, str(self.outside))
                    argv = ["results", "baseline", run, "--baselines-dir", case / "b"]
                else:
                    slot = sf.make(case / "target", kind, str(self.outside))
                    argv = make_argv(slot)
                self.check(f"special output ({kind}): {what}", argv, case, PLAIN, guards=[slot], env=env,
                           refuse=True)
            case = self.case_dir(f"output-{kind}-plot")
            slot = sf.make(case / "plots", kind, str(self.outside))
            if kind not in ("directory", "link-to-directory"):    # a folder (or a link to one) is a plot folder
                self.check(f"special output ({kind}): results plot -o", ["results", "plot", run, "-o", slot], case,
                           PLAIN, guards=[slot], refuse=True)

    def summary(self):
        for label, argv, problems, err in self.failures:
            print(f"FAIL {label}: {'; '.join(problems)}\n  yeebench {' '.join(argv)[:300]}")
            if err:
                print("  " + err.replace("\n", "\n  ")[-1200:])
        note = f", {self.left_out} left out at the time budget" if self.left_out else ""
        print(self.table())
        print(f"fuzz: {self.ran} commands, {len(self.failures)} failed{note}")
        return 1 if self.failures else 0

    def table(self):
        """Commands per class and, per kind of problem, how many showed it (a command may show several)."""
        head = f"{'class':<10} {'commands':>8} {'failed':>6}  " + " ".join(f"{k:>9}" for k in PROBLEM_KINDS)
        lines = [head]
        for name, counts in self.tally.items():
            lines.append(f"{name:<10} {counts['ran']:>8} {counts.get('failed', 0):>6}  "
                         + " ".join(f"{counts.get(k, 0):>9}" for k in PROBLEM_KINDS))
        return "\n".join(lines)


#: Kinds of problem in the table, by the first words of the problem's text.
PROBLEM_KINDS = ("hung", "signal", "traceback", "exit-code", "no-1-line", "not-2", "outside", "replaced")


def _problem_kind(problem):
    for prefix, kind in (("hung", "hung"), ("died of signal", "signal"), ("printed a traceback", "traceback"),
                         ("exit 2 without", "no-1-line"), ("exit", "exit-code"), ("wrote outside", "outside"),
                         ("replaced", "replaced")):
        if problem.startswith(prefix):
            return "not-2" if "where a refusal" in problem else kind
    return "other"


# -- the damages of class 2: each breaks one thing in a copy of the base tree ---------------------------
def _rows(run):
    return run / "rows.jsonl"


def _replace(path, kind, fuzz):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    sf.make(path, kind, str(fuzz.outside))


def _rewrite_row(run, change):
    lines = _rows(run).read_text().splitlines()
    row = json.loads(lines[0])
    change(row)
    lines[0] = json.dumps(row)
    _rows(run).write_text("\n".join(lines) + "\n")


def _text(path, text):
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))


def _live_temporary(fuzz, results):
    """A run being written by an ingest elsewhere (another PID namespace or host): held by its lock."""
    tmp = results / SYSTEM / ".20991231T000000Z-live.pid999999999.tok.tmp"
    tmp.mkdir()
    fd = os.open(tmp / ".owner", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd, [tmp, tmp / ".owner"]


DAMAGES = [
    ("rows-cut", lambda f, t, r: _text(_rows(r[0]), _rows(r[0]).read_bytes()[:-37])),
    ("rows-garbage-line", lambda f, t, r: _text(_rows(r[0]), _rows(r[0]).read_text() + "{not json\n")),
    ("rows-empty", lambda f, t, r: _text(_rows(r[0]), "")),
    ("rows-nan", lambda f, t, r: _rewrite_row(r[0], lambda row: row.update(value=float("nan")))),
    ("rows-inf", lambda f, t, r: _rewrite_row(r[0], lambda row: row.update(value=float("inf")))),
    ("rows-400-digits", lambda f, t, r: _rewrite_row(r[0], lambda row: row.update(value=10 ** 400))),
    ("rows-5000-digits", lambda f, t, r: _text(_rows(r[0]), '{"value": ' + "9" * 5000 + "}\n")),
    ("rows-deep", lambda f, t, r: _text(_rows(r[0]), "[" * 100000 + "]" * 100000 + "\n")),
    ("rows-lone-surrogate", lambda f, t, r: _rewrite_row(r[0], lambda row: row.update(check="X\ud800"))),
    ("rows-control-chars", lambda f, t, r: _rewrite_row(
        r[0], lambda row: row["parameters"].update(p="a\nyeebench results compare: error: forged\r\x1b[2J"))),
    ("rows-fifo", lambda f, t, r: _replace(_rows(r[0]), "fifo", f)),
    ("rows-dev-zero", lambda f, t, r: _replace(_rows(r[0]), "dev-zero", f)),
    ("rows-proc", lambda f, t, r: _replace(_rows(r[0]), "proc-file", f)),
    ("rows-sparse-3g", lambda f, t, r: _replace(_rows(r[0]), "sparse-3g", f)),
    ("rows-directory", lambda f, t, r: _replace(_rows(r[0]), "directory", f)),
    ("rows-link-loop", lambda f, t, r: _replace(_rows(r[0]), "link-loop", f)),
    ("provenance-garbage", lambda f, t, r: _text(r[0] / "provenance.json", "{\"schema\": ")),
    ("provenance-fifo", lambda f, t, r: _replace(r[0] / "provenance.json", "fifo", f)),
    ("provenance-sparse-3g", lambda f, t, r: _replace(r[0] / "provenance.json", "sparse-3g", f)),
    ("provenance-types", lambda f, t, r: _text(r[0] / "provenance.json", json.dumps(
        {"schema": "yeebench-provenance", "schema_version": 1, "run_id": 5, "suite_version": ["x"],
         "reframe": "x", "plausibility": {"warnings": [{"check": "a\nb"}]}}))),
    ("report-json-fifo", lambda f, t, r: _replace(r[0] / "report.json", "fifo", f)),
    ("cache-garbage", lambda f, t, r: _text(t / ".history.sqlite", b"not a database" * 100)),
    ("cache-fifo", lambda f, t, r: _replace(t / ".history.sqlite", "fifo", f)),
    ("cache-link", lambda f, t, r: _replace(t / ".history.sqlite", "link-to-file", f)),
    ("cache-directory", lambda f, t, r: _replace(t / ".history.sqlite", "directory", f)),
    ("lock-dangling-link", lambda f, t, r: _replace(t / ".history.sqlite.lock", "dangling-link", f)),
    ("lock-fifo", lambda f, t, r: _replace(t / ".history.sqlite.lock", "fifo", f)),
    ("lock-directory", lambda f, t, r: _replace(t / ".history.sqlite.lock", "directory", f)),
    ("journal-link", lambda f, t, r: sf.make(t / ".history.sqlite-journal", "dangling-link", str(f.outside))),
    ("temporary-link", lambda f, t, r: sf.make(t / SYSTEM / ".x.0123456789abcdef.tmp", "link-to-directory",
                                                str(f.outside))),
    ("temporary-live", lambda f, t, r: _live_temporary(f, t)),
    ("run-link-loop", lambda f, t, r: os.symlink("..", t / SYSTEM / "loop")),
    ("run-fifo", lambda f, t, r: sf.make(t / SYSTEM / "20991231T000000Z-fifo", "fifo", str(f.outside))),
]
REPORTED_DAMAGES = {"rows-lone-surrogate", "rows-control-chars", "provenance-types", "cache-link"}


CLASSES = {"outputs": lambda fuzz, run, tree, args: fuzz.special_outputs(run, tree),
           "inputs": lambda fuzz, run, tree, args: fuzz.special_inputs(run, tree),
           "trees": lambda fuzz, run, tree, args: fuzz.damaged_trees(),
           "reports": lambda fuzz, run, tree, args: fuzz.crafted_reports(args.reports)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=SEED, help="random seed of the crafted inputs (default: %(default)s)")
    parser.add_argument("--budget-s", type=float, default=170, help="start no command after this (default: %(default)s)")
    parser.add_argument("--reports", type=int, default=REPORTS, help="crafted reports (default: %(default)s)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    parser.add_argument("--classes", default=",".join(CLASSES), help="which classes to run (default: %(default)s)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="yeebench-fuzz-"))
    root.mkdir(parents=True, exist_ok=True)
    import yeebench.cli  # noqa: F401  imported once here: every forked command starts from it
    for module in ("yeebench.results.ingest", "yeebench.results.compare", "yeebench.results.history",
                   "yeebench.results.export_cli", "yeebench.results.calibrate", "yeebench.acceptance.cli",
                   "yeebench.acceptance.report"):
        try:
            __import__(module)
        except ImportError:          # a checkout without that command: its runs fail below, naming it
            pass
    from yeebench.results import host_info
    host_info.mpi_version(), host_info.ucx_version(), host_info.compiler_version(), host_info.topology()
    fuzz = Fuzz(root, args.seed, args.budget_s)
    try:
        tree, runs = fuzz.base_tree()
        run = str(tree / SYSTEM / runs[0])
        chosen = args.classes.split(",")
        for name in CLASSES:
            if name in chosen:
                fuzz.current_class = name
                CLASSES[name](fuzz, run, tree, args)
        code = fuzz.summary()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"fuzz: seed {args.seed}, {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
