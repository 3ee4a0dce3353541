"""`yeebench acceptance ...`: availability (EL), expected topology, kernel settings, sign-off report."""
import argparse
import datetime as dt
import json
import os
import re
import socket
import sys

from yeebench.acceptance import availability, report, waivers
from yeebench import kernel_settings, package_data, safe_io
from yeebench import node_topology as topology
from yeebench.acceptance.fileio import write_atomic
from yeebench.usage import UsageError

DEFAULT_TOPOLOGY_DIR = str(package_data.topology_dir())  # reframe/config/topology, or the installed copy


def _date(text):
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def _percent(text):
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage") from None
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is outside (0, 100]")
    return value


# -- availability -------------------------------------------------------------------------
def cmd_availability(args):
    text = availability.read_log(args.log)
    try:
        records = availability.parse_log(text)
        result = availability.effectiveness(records, days=args.days, end=args.end, start=args.start,
                                            threshold=args.threshold, min_coverage=args.min_coverage)
    except availability.AvailabilityError as err:
        raise UsageError(f"{args.log}: {err}") from None
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True, allow_nan=False) + "\n")
    else:
        print(f"window {result['start']} .. {result['end']} ({result['days']} days); node-days logged "
              f"{result['node_days_expected'] - result['node_days_unknown']} of {result['node_days_expected']} "
              f"({result['coverage_percent']:.1f}%, need {result['min_coverage_percent']:g}%)")
        print(f"scheduled {result['scheduled_hours']:.1f} h, operational {result['operational_hours']:.1f} h")
        print(f"{'node':<24} {'scheduled_h':>12} {'operational_h':>14} {'EL_%':>8} {'unknown_days':>13}")
        for node in result["nodes"][:args.worst]:
            el = f"{node['el_percent']:.2f}" if node["el_percent"] is not None else "-"
            print(f"{node['node']:<24} {node['scheduled_hours']:>12.1f} {node['operational_hours']:>14.1f} "
                  f"{el:>8} {node['days_unknown']:>13}")
        if len(result["nodes"]) > args.worst:
            print(f"... {len(result['nodes']) - args.worst} more node(s) (use --worst N)")
        print(f"EL = {result['el_percent']:.2f}%  {result['verdict']}: {result['reason']}")
    return 0 if result["verdict"] == "PASS" else 1


# -- topology -----------------------------------------------------------------------------
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _plain_name(text, option):
    """`text` when it can be part of a file name in --dir (no '/', '..' or leading dot); UsageError
    otherwise: a system name must never lead the recorded file out of its folder."""
    if not _PLAIN_NAME.fullmatch(text):
        raise UsageError(f"{option} {text!r} is not a plain name (letters, digits, '.', '_', '-'; "
                         f"not starting with '.' or '-')")
    return text


def cmd_topology(args):
    observed = topology.observe()
    if args.record:
        system = _plain_name(args.system or "local", "--system")
        if args.partition is not None:
            _plain_name(args.partition, "--partition")
        name = f"{system}-{args.partition}.yaml" if args.partition else f"{system}.yaml"
        if not args.output and os.path.exists(args.dir) and not os.path.isdir(args.dir):
            raise UsageError(f"--dir {args.dir} is not a directory")
        path = args.output or os.path.join(args.dir, name)
        safe_io.check_output(path)
        doc = topology.to_expected(observed, system, args.partition)
        header = (f"# Expected topology of {system}{':' + args.partition if args.partition else ''}, "
                  f"recorded on {observed['host']} ({dt.date.today()}) by "
                  "`yeebench acceptance topology --record`.\n"
                  "# AcceptanceTopology fails on any node that differs; edit by hand if this node was not typical.\n")
        import yaml
        try:
            write_atomic(path, header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
        except OSError as err:
            raise UsageError(f"cannot write {path}: {err.strerror or err}") from None
        print(path)
        return 0
    if args.check:
        try:
            expected = topology.load_expected(args.check)
        except topology.TopologyError as err:
            raise UsageError(str(err)) from None
        problems = topology.compare(expected, observed)
        for p in problems:
            print(f"MISMATCH {socket.gethostname()}: {p}")
        print(f"{'FAIL' if problems else 'PASS'}: {socket.gethostname()} "
              f"{'differs from' if problems else 'matches'} {args.check}")
        return 1 if problems else 0
    sys.stdout.write(json.dumps(observed, indent=2, sort_keys=True) + "\n")
    return 0


# -- kernel settings ----------------------------------------------------------------------
def cmd_settings(args):
    settings = kernel_settings.collect()
    findings = kernel_settings.assess(settings)
    if args.format == "json":
        sys.stdout.write(json.dumps({"settings": settings, "findings": findings}, indent=2,
                                    sort_keys=True) + "\n")
    else:
        for key, value in sorted(settings.items()):
            print(f"{key:<32} {value}")
        for f in findings:
            print(f"{f['level'].upper()}: {f['setting']} = {f['value']}: {f['reason']}")
    return 0


# -- report -------------------------------------------------------------------------------
def cmd_report(args):
    from yeebench.results.errors import ResultsError
    if args.output and args.output != "-":
        safe_io.check_output(args.output)      # refused before any work, not after it
    try:
        summary = report.collect(args.reports)
        report.add_case(summary, report.availability_case(args.availability))
        if args.waivers:
            waivers.apply(summary, waivers.load(args.waivers))
    except (ResultsError, waivers.WaiverError) as err:
        raise UsageError(str(err)) from None
    link = None
    if args.results_page:
        if args.format != "html" or not args.output or args.output == "-":
            raise UsageError("--results-page needs --format html and -o FILE")
        try:
            report.write_results_page(args.reports, args.results_page)
            link = os.path.relpath(os.path.abspath(args.results_page),
                                   os.path.dirname(os.path.abspath(args.output)))
        except ResultsError as err:  # the sign-off page is still written, without the link
            sys.stderr.write(f"yeebench acceptance report: warning: no results page: {err}\n")
    if args.format == "html":
        text = report.as_html(summary, title=args.title, results_link=link)
    elif args.format == "json":
        text = report.as_json(summary)
    else:
        text = report.as_text(summary)
    if args.output and args.output != "-":
        try:
            write_atomic(args.output, text)
        except OSError as err:
            raise UsageError(f"cannot write {args.output}: {err.strerror or err}") from None
        sys.stderr.write(report.as_text(summary).splitlines()[0] + "\n")
        print(args.output)
    else:
        sys.stdout.write(text)
    verdict = report.overall(summary)
    return 1 if args.strict and verdict != "ACCEPTABLE" else 0


def register(subparsers):
    parser = subparsers.add_parser(
        "acceptance", help="acceptance of a new cluster: availability, topology, settings, sign-off report",
        description="Tools of the acceptance set (ReFrame checks tagged `acceptance`, reframe/yeebench/checks/*/acceptance*.py).")
    sub = parser.add_subparsers(dest="acceptance_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    p = sub.add_parser("availability", formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="effectiveness level EL = 100 * operational / scheduled hours, with the verdict",
                       description="Availability (EL) over a window, paper 003's effectiveness test: "
                                   "EL = 100 * operational use time / scheduled use time, PASS when "
                                   "EL >= threshold over the window, counted per node and day.  Exit 0 "
                                   "PASS, 1 FAIL or INSUFFICIENT DATA (too few node-days logged, or the "
                                   "unknown ones decide the verdict), 2 bad input.",
                       epilog="Log format:\n" + availability.AVAILABILITY_FORMAT)
    p.add_argument("log", help="CSV log of scheduled vs operational hours")
    p.add_argument("--days", type=_positive_int,
                   help=f"window length in days (default {availability.DEFAULT_DAYS}); give at most two of "
                        "--start, --end, --days")
    p.add_argument("--end", type=_date, help="last day of the window (default: start + days - 1, or the "
                                             "last date in the log)")
    p.add_argument("--start", type=_date, help="first day of the window (default: end - days + 1)")
    p.add_argument("--threshold", type=_percent, default=97.0, help="required EL in percent (default 97)")
    p.add_argument("--min-coverage", type=_percent, default=availability.DEFAULT_MIN_COVERAGE,
                   help="node-days that must be logged, percent of nodes x days "
                        f"(default {availability.DEFAULT_MIN_COVERAGE:g}); below it: INSUFFICIENT DATA")
    p.add_argument("--worst", type=_positive_int, default=10, help="nodes listed, least available first")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_availability)

    p = sub.add_parser("topology", help="show, record or check this node's topology",
                       description="Without options: print this node's topology (hwloc, numactl) as JSON. "
                                   "--record writes the expected-topology file the AcceptanceTopology check "
                                   "compares every node against; --check compares this node with a file "
                                   "(exit 1 on mismatch).")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--record", action="store_true", help="write <dir>/<system>[-<partition>].yaml")
    mode.add_argument("--check", metavar="FILE", help="compare this node with an expected-topology file")
    p.add_argument("--system", help="system name for --record (default: local)")
    p.add_argument("--partition", help="partition name for --record (file <system>-<partition>.yaml)")
    p.add_argument("--dir", default=DEFAULT_TOPOLOGY_DIR, help="folder of expected files (default: %(default)s)")
    p.add_argument("-o", "--output", help="file to write instead of <dir>/<system>.yaml")
    p.set_defaults(func=cmd_topology)

    p = sub.add_parser("settings", help="kernel settings known to cost performance, with reasons",
                       description="Read ASLR, transparent huge pages, huge pages, frequency governor, "
                                   "NUMA reclaim/balancing on this node and say which are known to cost "
                                   "performance and why.")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_settings)

    p = sub.add_parser("report", help="one page of every acceptance check for a site to sign",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Summarise the acceptance checks of ReFrame JSON report(s): verdict "
                                   "(PASS, FAIL or NOT MEASURED) with its reason, and the figures of merit. "
                                   "The headline is ACCEPTABLE only when nothing failed and every check "
                                   "that measured nothing is waived in the --waivers file.",
                       epilog="Waiver file format:\n" + waivers.WAIVER_FORMAT)
    p.add_argument("reports", nargs="+", metavar="REPORT", help="ReFrame JSON report (--report-file)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("--format", choices=("html", "text", "json"), default="html")
    p.add_argument("--title", default="yeebench acceptance report")
    p.add_argument("--strict", action="store_true", help="exit 1 unless the verdict is ACCEPTABLE")
    p.add_argument("--availability", metavar="LOG",
                   help="availability log (CSV, see `yeebench acceptance availability --help`): its EL "
                        "verdict over the last 30 days is a row of the page; without it the row is NOT MEASURED")
    p.add_argument("--waivers", metavar="FILE",
                   help="operator waivers for checks that measured nothing (recorded on the page)")
    p.add_argument("--results-page", metavar="FILE",
                   help="also write the results tooling's report (all figures, provenance) and link it")
    p.set_defaults(func=cmd_report)
