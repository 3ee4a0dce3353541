#!/usr/bin/env python3
"""`make test-export`: a recorded run pushed to a real VictoriaMetrics in every format it accepts, and
every figure read back equal; the Grafana dashboard's queries answered from it.

    export_ci.py --report build/reframe/reports/test-suite.json --out build/export
    export_ci.py --run results/local/<run-id> --out build/export

1. ingest the report (or take the run) and write beside it two runs of the same figures whose labels
   hold what a format must escape: quotes, backslashes, commas, spaces, '=' and non-ASCII text, and
   in the second a line break as well (Influx line protocol cannot carry one: export must refuse it);
2. start `victoria-metrics` on 127.0.0.1 on a free port, its data in a temporary folder below --out;
3. per format (openmetrics -> /api/v1/import/prometheus, vm-jsonl -> /api/v1/import, influx -> /write)
   push the runs with `yeebench results export --push URL?extra_label=ci_format=<format> --verify`
   (every figure read back through /api/v1/export: labels, timestamp, value), then read each figure
   again through the Prometheus query API (/api/v1/query, last_over_time) and require it equal;
4. the database's refusals: a push the server answers with an error (HTTP 400) and one to a port
   nobody listens on exit 3 saying that 0 figures were accepted;
5. every query of results/grafana_dashboard.json must return series, and their values must be
   figures of the run;
6. the database is stopped by its PID whatever happens (also on SIGTERM, which make's stage runner sends).
Exit 0 when all of it holds; 1 naming the first thing that did not; 2 for missing input or tools.
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from yeebench.results import export_figures, export_readback, store
from yeebench.results.errors import ResultsError

REPO = Path(__file__).resolve().parents[1]
DASHBOARD = REPO / "results" / "grafana_dashboard.json"
ENDPOINTS = {"openmetrics": "/api/v1/import/prometheus", "vm-jsonl": "/api/v1/import", "influx": "/write"}
HOSTILE = 'say "hi" \\ back\\slash, a=b µs ✓ Ünïcödé'


class Failed(Exception):
    pass


def yeebench(*argv, timeout=300):
    return subprocess.run([sys.executable, "-m", "yeebench", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def hostile_run(run, results_dir, suffix, text):
    """A copy of the run's first figures whose parameter values and check name need escaping."""
    rows = []
    for row in run.rows[:20]:
        row = dict(row, run_id=f"{run.run_id}-{suffix}", parameters=dict(row["parameters"], label=text))
        rows.append(row)
    prov = dict(run.provenance or {}, run_id=f"{run.run_id}-{suffix}")
    return store.write_run(Path(results_dir) / run.rows[0]["system"] / f"{run.run_id}-{suffix}", rows, prov,
                           json.dumps({"copied_from": run.run_id}))


class Termination:
    """The SIGTERM handler: it raises SystemExit(143) so that `finally` stops the database, except inside
    hold(), where it waits until the block ends: a database being started is then always recorded (its PID
    in hand) before the exit, so no signal arriving between fork and assignment leaves it running."""

    def __init__(self):
        self.holding = self.pending = False

    def __call__(self, *_):
        if self.holding:
            self.pending = True
        else:
            sys.exit(143)

    @contextlib.contextmanager
    def hold(self):
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            if self.pending:
                sys.exit(143)


TERMINATION = Termination()


class VictoriaMetrics:
    """The database on a free loopback port, data in a temporary folder; start() inside the `try` whose
    `finally` calls stop(), which ends it by its PID."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.data = tempfile.mkdtemp(prefix="vm-data-", dir=workdir)
        self.log_path = Path(workdir) / "victoria-metrics.log"
        self.log = open(self.log_path, "wb")
        self.proc = None

    def start(self):
        with TERMINATION.hold():
            self.proc = subprocess.Popen(
                [self.binary, f"-storageDataPath={self.data}", f"-httpListenAddr=127.0.0.1:{self.port}",
                 "-retentionPeriod=100y",           # a recorded run may be older than the default month
                 "-search.latencyOffset=0s", "-search.disableCache", "-loggerLevel=WARN"],
                stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            print(f"export-ci: victoria-metrics PID {self.proc.pid} on {self.base}, data in {self.data}",
                  flush=True)

    def wait_ready(self, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failed(f"victoria-metrics exited with {self.proc.returncode} at start: {self.log_tail()}")
            try:
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                        f"{self.base}/health", timeout=2) as answer:
                    if answer.read().strip() == b"OK":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise Failed(f"victoria-metrics did not answer /health within {seconds} s: {self.log_tail()}")

    def log_tail(self):
        self.log.flush()
        text = self.log_path.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-3:]) or "(empty log)"

    def stop(self):
        if self.proc is None:
            self.log.close()
            shutil.rmtree(self.data, ignore_errors=True)
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)
        print(f"export-ci: victoria-metrics PID {self.proc.pid} stopped")


def push_and_verify(vm, runs, fmt):
    url = f"{vm.base}{ENDPOINTS[fmt]}?extra_label=ci_format={fmt}"
    proc = yeebench("results", "export", *runs, "--push", url, "--verify", "--timeout", "30")
    if proc.returncode != 0:
        raise Failed(f"export --push {fmt} exited {proc.returncode}: {proc.stderr.strip()}")
    print(f"export-ci: {fmt}: {proc.stderr.strip()}")


def query_back(vm, objects, fmt):
    """Every figure through the Prometheus query API: one series per figure, its value as sent."""
    last = max(export_figures.timestamp_ms(o["timestamp"]) for o in objects) / 1000
    first = min(export_figures.timestamp_ms(o["timestamp"]) for o in objects) / 1000
    span = int(last - first) + 60
    samples = []
    for run_id in sorted({o["run_id"] for o in objects}):
        query = f'last_over_time({export_figures.SERIES}{{ci_format="{fmt}",run_id="{run_id}"}}[{span}s])'
        for series in export_readback.instant_query(vm.base, query, last + 1):
            labels = dict(series["metric"], __name__=export_figures.SERIES)
            samples.append((labels, float(series["value"][1]), None))
    # an instant query answers at the query's time: compare labels and values, not timestamps
    by_labels = {tuple(sorted(s[0].items())): s[1] for s in samples}
    problems = []
    for obj in objects:
        key = tuple(sorted({"__name__": export_figures.SERIES, **export_figures.labels(obj), "ci_format": fmt}.items()))
        if key not in by_labels:
            problems.append(f"{export_figures.describe(obj)}: no series")
        elif not export_readback.same_value(obj["value"], by_labels.pop(key)):
            problems.append(f"{export_figures.describe(obj)}: value differs")
    problems += [f"unexpected series {dict(k)}" for k in by_labels]
    if problems:
        raise Failed(f"{fmt}: {len(problems)} figure(s) do not read back through /api/v1/query; first: {problems[0]}")
    print(f"export-ci: {fmt}: {len(objects)} figures read back through /api/v1/query")


def refusals(vm, run_dir, newline_run, total):
    """Bad input exits 2 before sending; a database error and an unreachable one exit 3 with a count."""
    proc = yeebench("results", "export", newline_run, "--format", "influx", "-o", os.devnull)
    if proc.returncode != 2 or "line break" not in proc.stderr:
        raise Failed(f"a line break in an Influx tag was not refused (exit {proc.returncode}): {proc.stderr.strip()}")
    print(f"export-ci: refused as expected (exit 2): {proc.stderr.strip()}")
    for url, says in ((f"{vm.base}/api/v1/import/prometheus?extra_label=bad", "HTTP 400"),
                      (f"http://127.0.0.1:{free_port()}/api/v1/import", "connection refused")):
        proc = yeebench("results", "export", run_dir, "--push", url, "--timeout", "10")
        expected = f"0 of {total} figures were accepted"
        if proc.returncode != 3 or says not in proc.stderr or expected not in proc.stderr:
            raise Failed(f"push to {url} should exit 3 with '{says}' and '{expected}', got exit "
                         f"{proc.returncode}: {proc.stderr.strip()}")
        print(f"export-ci: refused as expected (exit 3): {proc.stderr.strip()}")


def dashboard_queries(dashboard):
    doc = json.loads(Path(dashboard).read_text())
    for panel in doc["panels"]:
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]


def grafana_expr(expr):
    """A dashboard query with Grafana's variables as Grafana would fill them for 'All' systems."""
    return (expr.replace("${system}", ".*").replace("$system", ".*")
            .replace("$__interval", "1h").replace("$__rate_interval", "1h").replace("$__range", "1d"))


def check_dashboard(vm, objects, dashboard):
    """Each query returns series at the run's time, of the run's system, with values among its figures."""
    system = objects[0]["system"]
    at = max(export_figures.timestamp_ms(o["timestamp"]) for o in objects) / 1000 + 1
    count = 0
    for title, expr in dashboard_queries(dashboard):
        result = export_readback.instant_query(vm.base, grafana_expr(expr), at)
        if not result:
            raise Failed(f"dashboard panel {title!r}: query {expr!r} returns no series from run {objects[0]['run_id']}")
        check = re.search(r'check="([^"]+)"', expr)
        metric = re.search(r'metric="([^"]+)"', expr)
        allowed = [o["value"] for o in objects
                   if (not check or o["check"] == check.group(1)) and (not metric or o["metric"] == metric.group(1))]
        for series in result:
            if series["metric"].get("system", system) != system:
                raise Failed(f"dashboard panel {title!r}: a series of system {series['metric'].get('system')}")
            value = float(series["value"][1])
            if check and metric and not any(export_readback.same_value(v, value) for v in allowed):
                raise Failed(f"dashboard panel {title!r}: value {value} is no {check.group(1)} {metric.group(1)} of the run")
        count += 1
        print(f"export-ci: dashboard {title!r}: {len(result)} series")
    return count


def run(args, out):
    results_dir = out / "results"
    if args.run:
        run_dir = Path(args.run)
    else:
        from yeebench.results.ingest import ingest
        run_dir = ingest(args.report, results_dir)
    run = store.load_run(run_dir)
    plain_hostile = hostile_run(run, results_dir, "escaping", HOSTILE)
    newline_hostile = hostile_run(run, results_dir, "linebreak", HOSTILE + "\nsecond line\r\tend")
    objects = export_figures.load_objects([run_dir])
    plain_objects = export_figures.load_objects([plain_hostile])
    newline_objects = export_figures.load_objects([newline_hostile])
    print(f"export-ci: run {run.run_id}: {len(objects)} figures (+ {len(plain_objects)} and {len(newline_objects)} "
          f"with labels to escape)")
    vm = VictoriaMetrics(args.victoria_metrics, out)
    try:
        vm.start()
        vm.wait_ready()
        for fmt in ENDPOINTS:
            runs = [run_dir, plain_hostile] + ([] if fmt == "influx" else [newline_hostile])
            push_and_verify(vm, runs, fmt)
            query_back(vm, objects + plain_objects + ([] if fmt == "influx" else newline_objects), fmt)
        refusals(vm, run_dir, newline_hostile, len(objects))
        panels = check_dashboard(vm, objects, args.dashboard)
    finally:
        vm.stop()
    summary = {"run_id": run.run_id, "figures": len(objects), "formats": list(ENDPOINTS),
               "dashboard_queries": panels}
    (out / "export-ci.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"export-ci: passed: {len(objects)} figures of {run.run_id} pushed as {', '.join(ENDPOINTS)} and read "
          f"back equal; {panels} dashboard queries answered")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--report", help="ReFrame run report to ingest (the test-suite stage's)")
    source.add_argument("--run", help="an already ingested run directory")
    parser.add_argument("--out", required=True, help="work folder (emptied first)")
    parser.add_argument("--victoria-metrics", default=shutil.which("victoria-metrics") or "victoria-metrics",
                        help="the binary (default: from PATH)")
    parser.add_argument("--dashboard", default=str(DASHBOARD), help="Grafana dashboard whose queries must answer")
    args = parser.parse_args(argv)
    if not shutil.which(args.victoria_metrics):
        print(f"export-ci: {args.victoria_metrics} not found: install the Debian package victoria-metrics "
              f"(make deps-test)", file=sys.stderr)
        return 2
    if args.report and not Path(args.report).is_file():
        print(f"export-ci: {args.report} is missing: run 'make test-suite' first", file=sys.stderr)
        return 2
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # SIGTERM (the stage runner stopping the run) must still reach the finally that stops the database
    previous = signal.signal(signal.SIGTERM, TERMINATION)
    try:
        run(args, out)
    except (Failed, ResultsError, export_readback.ReadbackError) as err:
        print(f"export-ci: FAILED: {err}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
