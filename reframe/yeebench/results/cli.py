"""`yeebench results ...`: ingest, compare, baseline, plot, report."""
import argparse
import sys
from pathlib import Path

from yeebench import safe_io
from yeebench.results import curve_gate
from yeebench.results.errors import ResultsError
from yeebench.usage import UsageError

DEFAULT_RESULTS_DIR = "results"


def parse_threshold(text):
    """'5%' or '0.05' -> 0.05; anything else is a usage error."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"threshold must look like 5% or 0.05, not {text!r}") from None
    if not 0 <= value < 10 or value != value:
        raise argparse.ArgumentTypeError(f"threshold out of range: {text!r}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


def _count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def _alpha(text):
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"alpha must be in (0, 1): {text!r}")
    return value


def _guard(func):
    """Turn a ResultsError, a usage error (a file refused) or a file-system error into a one-line message
    and exit code 2."""
    def run(args):
        try:
            return func(args)
        except (ResultsError, UsageError) as err:
            message = str(err)
        except OSError as err:  # unwritable results dir, output path that is a directory, full disk
            message = f"{err.strerror or err}: {err.filename}" if err.filename else str(err)
        print(f"yeebench results {args.results_command}: error: {message}", file=sys.stderr)
        return 2
    return run


def _print_plausibility(run_dir):
    """Each plausibility warning of a new run as one line on stderr (run.sh adds them to the ReFrame log)."""
    from yeebench.results import store
    prov = store.read_json(Path(run_dir) / store.PROVENANCE_FILE, "provenance")
    for w in (prov.get("plausibility") or {}).get("warnings", []):
        fields = [_one_line(w[key]) for key in ("check", "parameters", "metric", "message", "rule")]
        print("ingest: plausibility warning: {} {} {}: {} [{}]".format(*fields), file=sys.stderr)


def _one_line(value):
    """`value` as text on one line: a line break or other control character from a report (a check
    named 'x\\ningest: ...') is shown escaped, so no line of the ReFrame log can be forged."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@_guard
def cmd_ingest(args):
    from yeebench.results.ingest import ingest, ingest_reframe_db
    if (args.report is None) == (args.reframe_db is None):
        raise ResultsError("give a REPORT.json or --reframe-db DB (one of them)")
    if args.session and not args.reframe_db:
        raise ResultsError("--session selects sessions of --reframe-db")
    if args.report is not None:
        new = [ingest(args.report, args.results_dir)]
        known = empty = None
    else:
        new, known, empty = ingest_reframe_db(args.reframe_db, args.results_dir, args.session)
    for run_dir in new:
        _print_plausibility(run_dir)
        print(run_dir)
    if known is None:
        return 0
    print(f"ingest: {len(new)} new session(s) recorded, {len(known)} already recorded, "
          f"{len(empty)} without figures", file=sys.stderr)
    return 0


def _history_for(args, candidate):
    """The synced history of --results-dir, or None when there is none or it is turned off."""
    from yeebench.results.history import open_history
    if args.no_history or not Path(args.results_dir).is_dir():
        return None
    history = open_history(args.results_dir)
    for note in history.notes:
        print(f"compare: note: {_one_line(note)}", file=sys.stderr)
    for problem in history.unreadable:
        print(f"compare: note: left out of the history: {_one_line(problem)}", file=sys.stderr)
    return history


@_guard
def cmd_compare(args):
    from yeebench.results import compare, formats, sources
    if args.output:
        safe_io.check_output(args.output)      # refused before any work, not after it
    candidate = sources.load_sources(args.candidate)
    from_history = args.baseline == ["history"] and not Path("history").exists()
    baseline = None if from_history else sources.load_sources(args.baseline)
    try:
        compare.check_ignore_fields(args.ignore, candidate.rows + (baseline.rows if baseline else []))
    except ValueError as err:
        raise ResultsError(str(err)) from None
    if baseline is not None:
        sources.check_comparable((("baseline", baseline), ("candidate", candidate)), args.ignore)
    cand_rows = candidate.rows
    if args.metric:
        cand_rows = compare.select_metrics(cand_rows, args.metric)
    history = _history_for(args, candidate)
    exclude = {row["run_id"] for row in candidate.rows}
    systems = sources.systems_of(candidate)
    curve_notes = []   # the curve rule's lines (curve_gate.py), printed after the table
    if from_history:
        if history is None:
            raise ResultsError(f"--baseline history needs recorded runs in --results-dir {args.results_dir}")
        version = sources.recorded_version(candidate, "candidate")
        values = history.values(systems, exclude, args.statistic, args.history_runs, suite_version=version)
        if not values:
            raise ResultsError(f"no recorded runs of {', '.join(systems)} by yeebench {version} in "
                               f"{args.results_dir} besides the candidate")
        results = compare.compare_with_history(cand_rows, values, threshold=args.threshold, z=args.z,
                                               statistic=args.statistic, size_threshold=args.size_threshold,
                                               max_regressed_sizes=args.max_regressed_sizes, notes=curve_notes)
        base_label = f"history of {', '.join(systems)} in {args.results_dir} (newest {args.history_runs} runs)"
    else:
        base_rows = baseline.rows
        if args.metric:
            base_rows = compare.select_metrics(base_rows, args.metric)
        exclude |= {row["run_id"] for row in baseline.rows}
        noise = history.noise(systems, exclude, args.statistic, args.history_runs) if history else None
        spreads = history.usual_spread(systems, exclude, args.history_runs) if history else None
        results = compare.compare_rows(base_rows, cand_rows, threshold=args.threshold,
                                       alpha=args.alpha, z=args.z, ignore=tuple(args.ignore),
                                       statistic=args.statistic, history=noise, spreads=spreads,
                                       size_threshold=args.size_threshold,
                                       max_regressed_sizes=args.max_regressed_sizes, notes=curve_notes)
        base_label = baseline.label
    if args.metric and not results:
        raise ResultsError(f"no metric matches {' '.join(args.metric)}")
    counts = compare.summary(results)
    header = [f"baseline:  {base_label}", f"candidate: {candidate.label}",
              f"statistic {args.statistic} of the repeats, threshold {args.threshold * 100:g}%, "
              f"alpha {args.alpha:g}, noise band {args.z:g} sigma, a curve's sizes {args.size_threshold * 100:g}% "
              f"with at most {args.max_regressed_sizes} regressed, run-to-run noise from "
              + (f"{history.run_count()} recorded runs" if history else "no history")]
    formatter = formats.FORMATTERS[args.format]
    if args.format == "json":
        text = formatter(results, counts, header, settings={
            "baseline": base_label, "candidate": candidate.label, "threshold": args.threshold,
            "alpha": args.alpha, "z": args.z, "ignore": args.ignore, "metric": args.metric,
            "statistic": args.statistic, "history_runs": history.run_count() if history else 0,
            "size_threshold": args.size_threshold, "max_regressed_sizes": args.max_regressed_sizes})
    else:
        text = formatter(results, counts, header)
    if args.output:
        from yeebench.results.store import atomic_write_text
        atomic_write_text(args.output, text)
    else:
        sys.stdout.write(text)
    lost = sum(1 for r in results if r["verdict"] == "missing" and r.get("missing_in") == "candidate")
    if args.output or args.format != "table":
        print(f"compare: {formats.summary_line(counts)}", file=sys.stderr)
    for line in curve_notes:
        print(f"compare: {_one_line(line)}", file=sys.stderr)
    disturbed = sum(1 for r in results if r.get("disturbed"))
    if disturbed:
        print(f"compare: {disturbed} figure(s) not judged: a run's repeats disagree (the machine was busy or "
              f"slowed down during it); rerun that side", file=sys.stderr)
    if lost and not args.allow_missing:
        print(f"compare: {lost} figure(s) of the baseline have no counterpart in the candidate "
              f"(--allow-missing to accept)", file=sys.stderr)
    if counts["regressed"]:
        return 1
    if lost and not args.allow_missing:
        return 1
    if args.fail_on_missing and counts["missing"]:
        return 1
    return 0


@_guard
def cmd_baseline(args):
    from yeebench.results.baseline import promote
    path, previous = promote(args.run, args.baselines_dir, args.system)
    if previous:
        print(f"baseline: replaced {previous}", file=sys.stderr)
    print(path)
    return 0


@_guard
def cmd_plot(args):
    from yeebench.results import plots, sources
    runs = [sources.load_source(r) for r in args.run]
    baseline = sources.load_sources([args.baseline]) if args.baseline else None
    written, not_drawn = plots.write_figures(runs, Path(args.output_dir), baseline=baseline)
    for path in written:
        print(path)
    for line in not_drawn:  # a figure the run cannot fill: why, on stderr; the paths stay the output
        print(f"not drawn: {line}", file=sys.stderr)
    return 0


@_guard
def cmd_report(args):
    from yeebench.results import report, sources
    try:
        args.output.encode("utf-8")
    except UnicodeEncodeError:      # bytes of another encoding: the page links its side files by name
        raise ResultsError(f"-o {args.output!r} is not a UTF-8 file name; the page names its files in UTF-8") from None
    safe_io.check_output(args.output)
    runs = [sources.load_source(r) for r in args.run]
    baseline = sources.load_sources([args.baseline]) if args.baseline else None
    sources.check_comparable([(f"run {r.label}", r) for r in runs]
                             + ([("baseline", baseline)] if baseline else []))
    path = report.write_report(runs, Path(args.output), baseline=baseline, threshold=args.threshold)
    print(path)
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "results", help="record, compare, plot and report benchmark results",
        description="Results tooling: ReFrame run reports -> recorded rows with provenance; "
                    "noise-aware comparison (the CI regression gate); plots; an HTML report.")
    sub = parser.add_subparsers(dest="results_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    p = sub.add_parser("ingest", help="record a ReFrame run report as a run directory",
                       description="Turn ReFrame's --report-file JSON, or the sessions stored in ReFrame's "
                                   "results database, into RESULTS_DIR/<system>/<run-id>/ "
                                   "(rows.jsonl, provenance.json, report.json). Never overwrites a run; "
                                   "prints each new run directory.")
    p.add_argument("report", metavar="REPORT.json", nargs="?", help="ReFrame run report (--report-file)")
    p.add_argument("--reframe-db", metavar="DB",
                   help="record the sessions of ReFrame's results database not recorded yet instead "
                        "(the suite's: build/reframe/results-db/<system>.db)")
    p.add_argument("--session", action="append", default=[], metavar="UUID",
                   help="only this session of --reframe-db (repeatable)")
    p.add_argument("--results-dir", default=DEFAULT_RESULTS_DIR, help="results tree (default: %(default)s)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("compare", help="compare a candidate run with a baseline (exit 1 on regression)",
                       description="Match rows by system, partition, environ, check, parameters and metric; "
                                   "classify each metric as improved/unchanged/regressed/insufficient/missing using "
                                   "its direction, the best (or median) of its repeats, their MAD spread, a "
                                   "one-sided Mann-Whitney test (>= 3 repeats each) and the run-to-run noise "
                                   "of the recorded history. 'insufficient' (never a failure): too few repeats "
                                   "and too little history to tell a change from noise, or the slower side's best "
                                   "repeat not matched by its other repeats (a disturbed run: rerun). Exit 1 when anything "
                                   "regressed beyond the threshold and the noise, or a baseline figure has no "
                                   "counterpart; 2 on bad input.")
    p.add_argument("--baseline", nargs="+", required=True, metavar="RUN_OR_DIR",
                   help="run directory, folder of runs (pooled), baseline file results/baselines/<system>.json, "
                        "or 'history': the recorded runs of the candidate's system in --results-dir")
    p.add_argument("--candidate", nargs="+", required=True, metavar="RUN_OR_DIR",
                   help="run directory or folder of runs (pooled)")
    p.add_argument("--threshold", type=parse_threshold, default=0.05,
                   help="smallest change that counts, e.g. 5%% or 0.05 (default: 5%%)")
    p.add_argument("--size-threshold", type=parse_threshold, default=curve_gate.DEFAULT_SIZE_THRESHOLD,
                   help="smallest change that counts at one size of a measured curve (the per-size figures "
                        "curve_latency_<n>B, curve_bw_<n>B, a collective's latency_<n>B, efficiency_<n>B), "
                        "each size against its own noise (default: %s)" % f"{curve_gate.DEFAULT_SIZE_THRESHOLD:.0%}".replace("%", "%%"))
    p.add_argument("--max-regressed-sizes", type=_count, default=curve_gate.DEFAULT_MAX_REGRESSED_SIZES, metavar="N",
                   help="a curve fails only when more than N of its sizes regressed; N or fewer pass with a "
                        "warning naming them (default: %(default)s: one stray size among twenty is likely, "
                        "a protocol or threshold change moves several; 0: any size fails)")
    p.add_argument("--alpha", type=_alpha, default=0.05,
                   help="significance level of the Mann-Whitney test (default: %(default)s)")
    p.add_argument("--z", type=_positive_float, default=2.0,
                   help="noise band in standard errors of the median difference (default: %(default)s)")
    p.add_argument("--statistic", choices=("best", "median"), default="best",
                   help="each side's value: its best repeat (min for lower-is-better, max for higher-is-better; "
                        "interference only slows runs down) or its median (default: %(default)s)")
    p.add_argument("--ignore", action="append", default=[], metavar="FIELD",
                   help="drop a field from the match key: system, partition, environ or parameters.NAME "
                        "(repeatable; e.g. --ignore parameters.binding to compare two bindings)")
    p.add_argument("--metric", action="append", default=[], metavar="PATTERN",
                   help="compare only metrics matching this shell pattern (repeatable; default: all)")
    p.add_argument("--format", choices=("table", "json", "csv", "markdown"), default="table")
    p.add_argument("-o", "--output", help="write the comparison to this file instead of stdout")
    p.add_argument("--allow-missing", action="store_true",
                   help="exit 0 even when a figure of the baseline has no counterpart in the candidate")
    p.add_argument("--fail-on-missing", action="store_true",
                   help="exit 1 also when the candidate has figures the baseline lacks")
    p.add_argument("--results-dir", default=DEFAULT_RESULTS_DIR,
                   help="recorded runs whose run-to-run spread is the noise model, and the history for "
                        "--baseline history (default: %(default)s)")
    p.add_argument("--history-runs", type=_positive_int, default=20,
                   help="how many of the newest recorded runs make up the history (default: %(default)s)")
    p.add_argument("--no-history", action="store_true", help="ignore the recorded runs' noise")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("baseline", help="promote run(s) to results/baselines/<system>.json",
                       description="Store the rows of one or more runs as the system's baseline file "
                                   "(replaced atomically). Several runs pool their repeats, so the baseline's "
                                   "spread includes run-to-run variation.")
    p.add_argument("run", nargs="+", metavar="RUN", help="run directory (or folder of runs)")
    p.add_argument("--baselines-dir", default=f"{DEFAULT_RESULTS_DIR}/baselines",
                   help="where baseline files live (default: %(default)s)")
    p.add_argument("--system", help="baseline name when the runs cover several systems")
    p.set_defaults(func=cmd_baseline)

    p = sub.add_parser("plot", help="PNG plots of one or more runs",
                       description="Latency/bandwidth vs message size, collectives vs size with the "
                                   "alpha-beta bound, Mcells/s per binding x NUMA policy, scaling efficiency, "
                                   "NUMA bandwidth bars; a bar chart per metric for anything else.")
    p.add_argument("run", nargs="+", metavar="RUN", help="run directory (or folder of runs)")
    p.add_argument("-o", "--output-dir", default="plots", help="folder for the PNGs (default: %(default)s)")
    p.add_argument("--baseline", metavar="RUN_OR_DIR", help="draw this run/baseline beside the runs")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("report", help="one self-contained HTML report of one or more runs",
                       description="Write an HTML file with plots embedded, every figure of merit with units "
                                   "(and verdicts against --baseline), and a provenance summary. Opens offline.")
    p.add_argument("run", nargs="+", metavar="RUN", help="run directory (or folder of runs)")
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--baseline", metavar="RUN_OR_DIR", help="run, folder of runs or baseline file")
    p.add_argument("--threshold", type=parse_threshold, default=0.05,
                   help="threshold for the verdicts (default: 5%%)")
    p.set_defaults(func=cmd_report)

    from yeebench.results import export_cli   # export, calibrate
    export_cli.register(sub, DEFAULT_RESULTS_DIR, _positive_int, _positive_float, parse_threshold, _guard)
