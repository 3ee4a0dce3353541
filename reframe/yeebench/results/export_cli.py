"""`yeebench results export` and `yeebench results calibrate` (registered by results/cli.py).

Exit status: 0 done; 2 bad input or usage (nothing was sent); 3 the push or its read-back failed
(the line says how many figures the server had accepted)."""
import sys

EXIT_PUSH_FAILED = 3


def cmd_export(args):
    from yeebench.results import export_figures, export_formats, export_push, export_readback
    from yeebench.results.store import atomic_write_text
    objects = export_figures.load_objects(args.run)
    runs = len({obj["run_id"] for obj in objects})
    wire = None
    if args.push:
        wire_format = export_push.endpoint_format(args.push)
        _check_label_count(objects, args.max_labels)
        wire = export_formats.lines(objects, wire_format)   # refuses what the format cannot carry: nothing sent yet
    if args.verify and not args.push:
        raise _bad("--verify reads back what --push sent: give --push URL")
    fmt = args.format or ("openmetrics" if not args.push else None)
    if fmt:
        text = export_formats.document(export_formats.lines(objects, fmt), fmt)
        if args.output:
            atomic_write_text(args.output, text)
            print(args.output)
        else:
            sys.stdout.write(text)
    if not args.push:
        return 0
    try:
        sent = export_push.push(wire, args.push, wire_format, timeout=args.timeout)
    except export_push.PushError as err:
        print(f"yeebench results export: error: {err}", file=sys.stderr)
        return EXIT_PUSH_FAILED
    where = export_push.shown(args.push)
    if args.verify:
        try:
            problems = export_readback.verify(objects, args.push, wait_s=args.timeout, timeout=args.timeout)
        except export_readback.ReadbackError as err:
            print(f"yeebench results export: error: all {sent} figures accepted by {where}, but they could not be "
                  f"read back: {err}", file=sys.stderr)
            return EXIT_PUSH_FAILED
        if problems:
            print(f"yeebench results export: error: {sent} figures accepted by {where}, but {len(problems)} do "
                  f"not read back as sent; first: {problems[0]}", file=sys.stderr)
            return EXIT_PUSH_FAILED
    print(f"export: {sent} figures of {runs} run(s) pushed to {where} as {wire_format}: all accepted"
          + (" and read back" if args.verify else ""), file=sys.stderr)
    return 0


def _bad(message):
    from yeebench.results.errors import ResultsError
    return ResultsError(message)


def _check_label_count(objects, max_labels):
    """VictoriaMetrics keeps at most -maxLabelsPerTimeseries labels (30 by default) and drops the rest
    with only a log line: a figure with more would be stored under another, merged series."""
    from yeebench.results.export_figures import describe, labels
    for obj in objects:
        count = len(labels(obj)) + 1   # + the series name, which the database counts as a label
        if count > max_labels:
            raise _bad(f"{describe(obj)} has {count} labels, more than --max-labels {max_labels} (the "
                       f"database would drop some); raise the database's limit "
                       f"(VictoriaMetrics: -maxLabelsPerTimeseries) and --max-labels")


def cmd_calibrate(args):
    from yeebench.results import calibrate
    path, summary = calibrate.calibrate(args.system, args.results_dir, args.output, min_runs=args.min_runs,
                                        min_tolerance=args.min_tolerance, sigmas=args.sigmas,
                                        history_runs=args.history_runs, partial=args.partial)
    for line in summary:
        print(f"calibrate: {line}", file=sys.stderr)
    print(path)
    return 0


def register(sub, default_results_dir, positive_int, positive_float, threshold, guarded):
    from yeebench.results.export_formats import FORMATS
    p = sub.add_parser(
        "export", help="a run's figures as OpenMetrics, Influx line protocol or JSON lines; push them to a TSDB",
        description="Write the figures of recorded runs in a time-series format (labels and fields: "
                    "results/schema/export.md, schema version 1) and/or push them to an import endpoint: "
                    "VictoriaMetrics /api/v1/import/prometheus, /api/v1/import, /write, or an InfluxDB "
                    "/write, /api/v2/write (the path picks the format). Exit 0 done, 2 bad input (nothing "
                    "sent), 3 the push failed (the line says how many figures were accepted).")
    p.add_argument("run", nargs="+", metavar="RUN", help="run directory (or folder of runs)")
    p.add_argument("--format", choices=FORMATS,
                   help="what to write to -o or stdout (default: openmetrics; with --push, nothing unless given)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to this file instead of stdout")
    p.add_argument("--push", metavar="URL",
                   help="POST the figures to this import endpoint; credentials: user:password@ in the URL, or "
                        "the Authorization header in $YEEBENCH_PUSH_AUTHORIZATION")
    p.add_argument("--verify", action="store_true",
                   help="after --push, read every figure back (VictoriaMetrics' /api/v1/export) and require it "
                        "as sent")
    p.add_argument("--timeout", type=positive_float, default=30.0,
                   help="seconds to wait for the server (and for --verify) (default: %(default)s)")
    p.add_argument("--max-labels", type=positive_int, default=30,
                   help="refuse a figure with more labels than the database keeps (default: %(default)s, "
                        "VictoriaMetrics' default)")
    p.set_defaults(func=guarded(cmd_export))

    p = sub.add_parser(
        "calibrate", help="ReFrame references of a system from its recorded runs",
        description="From the recorded runs of a system, write each figure's ReFrame reference (value, lower, "
                    "upper, unit): the median of its repeats over the runs, and a tolerance of --sigmas robust "
                    "standard deviations (1.4826 x MAD) but at least --min-tolerance, on the worse side only "
                    "(both sides when the direction is unknown). The file is the one ReFrame then reads "
                    "(reframe/config/references/<system>.json, or $YEEBENCH_REFERENCES_DIR); its other entries "
                    "are kept. Refuses, naming them, figures with fewer than --min-runs runs.")
    p.add_argument("--system", required=True, help="system name (results/<system>/)")
    p.add_argument("--results-dir", default=default_results_dir, help="results tree (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="reference file to write (default: the references folder's <system>.json)")
    p.add_argument("--min-runs", type=positive_int, default=5,
                   help="runs a figure needs to be calibrated (default: %(default)s)")
    p.add_argument("--min-tolerance", type=threshold, default=0.05,
                   help="smallest tolerance, e.g. 5%% or 0.05 (default: 5%%)")
    p.add_argument("--sigmas", type=positive_float, default=3.0,
                   help="tolerance in robust standard deviations of the figure's values (default: %(default)s)")
    p.add_argument("--history-runs", type=positive_int, default=20,
                   help="use the newest N runs (default: %(default)s)")
    p.add_argument("--partial", action="store_true",
                   help="calibrate the figures with enough runs and list the others instead of refusing")
    p.set_defaults(func=guarded(cmd_calibrate))
