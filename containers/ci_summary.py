#!/usr/bin/env python3
"""Summary of a containers/ci-build.sh run: image, timings, the in-container smoke result and the
native-vs-container figures from ReFrame's JSON report, written atomically as JSON.

    ci_summary.py --out build/containers/ci-build.json --image yeebench:latest --size BYTES \
        --timing build=268 --timing smoke=80 --smoke-log smoke.log --reframe-report report.json

Exits 1 (one line on stderr) when a native-vs-container comparison in the report did not pass, so an
all-skipped ReFrame run cannot look green; exits 2 on bad arguments or unreadable files.
"""
import argparse
import json
import os
import re
import sys

#: The comparisons of reframe/yeebench/checks/containers/container.py that must have passed.
COMPARISONS = ('SolverContainerVsNative', 'NetpipeContainerVsNative')


class SummaryError(Exception):
    """A file is unreadable or not what ci-build.sh produces (exit 2)."""


def smoke_result(text):
    '''(passed, total) from ReFrame's closing line "Ran P/T test case(s) ..." of the smoke log.'''
    clean = re.sub(r'\x1b\[[0-9;]*m', '', text)
    m = re.search(r'Ran (\d+)/(\d+) test case\(s\).*\((\d+) failure', clean)
    if not m:
        raise SummaryError('no ReFrame summary line ("Ran N/M test case(s)") in the smoke log')
    return {'ran': int(m.group(1)), 'total': int(m.group(2)), 'failures': int(m.group(3))}


def comparisons(report):
    '''{check: {'result': .., figure: [value, unit]}} for the native-vs-container checks in a report.'''
    found = {}
    for run in report.get('runs', []):
        for case in run.get('testcases', []):
            name = case.get('name', '').split(' ')[0]
            if name not in COMPARISONS:
                continue
            entry = {'result': case.get('result')}
            for key, values in (case.get('perfvalues') or {}).items():
                entry[key.split(':')[-1]] = [values[0], values[4]]
            found[entry_name(name, case.get('system', ''), case.get('partition'))] = entry
    return found


def entry_name(check, system, partition):
    '''One entry per partition: local keeps the bare check name, cluster partitions add theirs.'''
    where = f'{system}:{partition}' if partition and ':' not in system else system
    return check if where.split(':')[0] in ('', 'local') else f'{check}@{where}'


def implausible(report):
    '''["entry: warning"]: the comparisons' figures that break yeebench's plausibility rules, judged as
    ingest judges any run (a container leg far from the native one: the host changed speed between the
    legs), or a note why none were judged.'''
    try:
        from yeebench.results import ingest, plausibility
        from yeebench.results.errors import ResultsError
    except ImportError:
        return ['not checked: the yeebench package is not importable by this Python']
    try:
        rows, _ = ingest.build_rows(report, 'native-vs-container')
    except (ResultsError, KeyError, TypeError) as err:
        raise SummaryError(f'the ReFrame report\'s figures cannot be read: {err}') from None
    by_entry = {}
    for row in rows:
        if row['check'] in COMPARISONS:
            by_entry.setdefault(entry_name(row['check'], row['system'], row['partition']), []).append(row)
    return [f'{name}: {w["message"]}' for name, group in by_entry.items() for w in plausibility.evaluate(group)]


def not_passed(found):
    '''Comparisons missing from `found`, or present with a result other than pass.'''
    bad = []
    for check in COMPARISONS:
        entries = {k: v for k, v in found.items() if k == check or k.startswith(check + '@')}
        bad += [check] if not entries else [k for k, v in entries.items() if v.get('result') != 'pass']
    return bad


def read(path, what):
    try:
        with open(path) as f:
            return f.read()
    except OSError as err:
        raise SummaryError(f'cannot read the {what} {path}: {err.strerror}') from None


def write_atomically(path, doc):
    tmp = f'{path}.tmp'
    with open(tmp, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')
    os.replace(tmp, path)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--out', required=True, help='JSON file to write')
    p.add_argument('--image', required=True, help='image reference')
    p.add_argument('--size', type=int, required=True, help='image size in bytes')
    p.add_argument('--timing', action='append', default=[], metavar='STEP=SECONDS',
                   help='seconds a step took (repeatable)')
    p.add_argument('--smoke-log', help='output of the in-container smoke set')
    p.add_argument('--reframe-report', help="ReFrame's JSON report of the native-vs-container run")
    p.add_argument('--charliecloud', choices=('passed', 'skipped'), default='skipped')
    p.add_argument('--sha256', help='sha256 of the image file (SIF images)')
    p.add_argument('--spack-lock-sha256', help='sha256 of the spack.lock baked into a Spack-built image')
    p.add_argument('--runtime', default='docker', help='the container runtime (docker, apptainer 1.4.5, ...)')
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        timings = {}
        for item in args.timing:
            step, sep, value = item.partition('=')
            if not sep or not value.isdigit():
                raise SummaryError(f'--timing wants STEP=SECONDS, got {item!r}')
            timings[step] = int(value)
        doc = {'image': args.image, 'image_size_bytes': args.size, 'seconds': timings,
               'runtime': args.runtime, 'charliecloud': args.charliecloud}
        for key, value in (('image_sha256', args.sha256), ('image_spack_lock_sha256', args.spack_lock_sha256)):
            if value is None:
                continue
            if not re.fullmatch(r'[0-9a-f]{64}', value):
                raise SummaryError(f'{key} must be 64 hex digits, got {value!r}')
            doc[key] = value
        if args.smoke_log:
            doc['smoke'] = smoke_result(read(args.smoke_log, 'smoke log'))
        if args.reframe_report:
            try:
                report = json.loads(read(args.reframe_report, 'ReFrame report'))
            except json.JSONDecodeError as err:
                raise SummaryError(f'{args.reframe_report} is not JSON: {err.msg}') from None
            doc['native_vs_container'] = comparisons(report)
            doc['plausibility'] = implausible(report)
        write_atomically(args.out, doc)
    except SummaryError as err:
        print(f'ci_summary: error: {err}', file=sys.stderr)
        return 2
    print(json.dumps(doc))
    for warning in doc.get('plausibility', []):
        print(f'ci_summary: warning: {warning}', file=sys.stderr)
    if args.reframe_report:
        failed = not_passed(doc['native_vs_container'])
        if failed:
            print(f'ci_summary: error: native-vs-container check(s) did not pass: {", ".join(failed)}',
                  file=sys.stderr)
            return 1
    if args.smoke_log and (doc['smoke']['failures'] or doc['smoke']['ran'] == 0):
        print('ci_summary: error: the in-container smoke set had failures or ran nothing', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
