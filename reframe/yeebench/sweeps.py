"""Like-for-like comparisons run as one job.

A comparison (binding, NUMA policy, packing, collective implementation, node count) runs all
of its cases in the same allocation, on the same nodes, with the same grid, steps and ranks x
threads (what a case changes is its name's business: placement, memory policy, MCA setting),
interleaved over rounds - A B C, A B C, ... - so that a slow minute of a shared machine does not
fall on one case only. Each case keeps its best round. The ratios between cases are then
recorded by the check (yeebench.comparisons).

This module plans the commands, makes them the job's program (run_sweep: the suite's one way to
run a series of launches as one job, also used by the acceptance checks) and reads the reports back;
the check supplies the launch prefix of each case (yeebench.launch owns the launcher's options).
"""
import json
import os
import shlex
from dataclasses import dataclass, field

from reframe.core.backends import getlauncher

from yeebench.comparisons import safe_name

#: The job's program: one line per run, kept with the results.
SCRIPT = 'sweep.sh'


class SweepError(ValueError):
    """A case's report is missing or unusable (the message names the case and file)."""


@dataclass(frozen=True)
class Case:
    '''One case of a comparison: how it is launched and what it runs under.'''
    name: str
    prefix: str                                   # launcher prefix ('' to run the program directly)
    env: dict = field(default_factory=dict)       # set for this case only (env K=V ...)
    wrapper: tuple = ()                           # e.g. ('numactl', '--localalloc')
    options: tuple = ()                           # extra program options of this case


def node_counts(nodes, wanted=()):
    '''The node counts of a curve on `nodes` nodes: `wanted` where given (those from 1 to `nodes`), else
    1, 2, 4 ... and `nodes` itself (the papers' curves); ascending.'''
    if wanted:
        return sorted({n for n in wanted if 1 <= n <= nodes})
    counts, n = {nodes}, 1
    while n < nodes:
        counts.add(n)
        n *= 2
    return sorted(counts)


#: Between a case's name and the node count it runs on, below all nodes.
AT = '@'


def counted(name, count, all_nodes):
    '''Case `name` on `count` nodes: `name` itself on all nodes, else `name@<count>-nodes`.'''
    return name if count == all_nodes else f'{name}{AT}{count}-nodes'


def uncounted(name):
    '''The name on all nodes of a case named by `counted`.'''
    return name.split(AT, 1)[0]


def count_suffixes(count, all_nodes, curve):
    '''The suffixes the figures of `count` nodes are recorded under: '' (the figure's plain name) on all
    nodes, and '_<count>_nodes' on a `curve` of two or more counts.'''
    return ([''] if count == all_nodes else []) + ([f'_{count}_nodes'] if len(curve) > 1 else [])


def report_file(case, rnd):
    return f'case-{safe_name(case.name if isinstance(case, Case) else case)}-r{rnd}.json'


def command(case, program, options, rnd):
    '''The shell line running one round of one case, writing its report file.'''
    env = ['env'] + [f'{k}={v}' for k, v in sorted(case.env.items())] if case.env else []
    quoted = ' '.join(shlex.quote(str(w)) for w in (*case.wrapper, program, *options, *case.options,
                                                    '--report', report_file(case, rnd)))
    # the prefix is the launcher's own, already a shell word list
    return ' '.join(p for p in (' '.join(shlex.quote(w) for w in env), case.prefix, quoted) if p)


def commands(cases, program, options, rounds):
    '''Every round of every case, interleaved: round 0 of each case, then round 1, ...'''
    if rounds < 1:
        raise SweepError(f'rounds must be >= 1, got {rounds}')
    names = [c.name for c in cases]
    if len(set(map(safe_name, names))) != len(names):
        raise SweepError(f'case names must be distinct: {names}')
    return [command(case, program, options, rnd) for rnd in range(rounds) for case in cases]


def run_sweep(test, lines, stop_at_first_failure=False, keep=()):
    '''Make `lines` (one run each, in order) the job's program: written to SCRIPT in the stage directory,
    run as `bash sweep.sh` on the local launcher (each line launches itself) and kept with the results
    together with `keep`. `stop_at_first_failure`: the job ends at the first failing line (`set -e`; a
    comparison's cases are worthless without the others), else every line runs (a failed point or read
    must not skip the later points or the clean-up line).'''
    with open(os.path.join(test.stagedir, SCRIPT), 'w') as fh:
        fh.write(('set -e\n' if stop_at_first_failure else '') + ''.join(f'{line}\n' for line in lines))
    test.job.launcher = getlauncher('local')()
    test.executable, test.executable_opts = 'bash', [SCRIPT]
    test.keep_files = list(test.keep_files) + [n for n in (SCRIPT, *keep) if n not in test.keep_files]


def read_reports(stagedir, cases, rounds):
    '''{case name: [report, ...]} of every round; SweepError naming the first missing or invalid one.'''
    out = {}
    for case in cases:
        for rnd in range(rounds):
            path = os.path.join(stagedir, report_file(case, rnd))
            try:
                with open(path) as fh:
                    rep = json.load(fh)
            except (OSError, ValueError) as err:
                raise SweepError(f'case {case.name}, round {rnd}: no readable report {os.path.basename(path)} '
                                 f'({err.__class__.__name__}: {err})') from None
            if rep.get('valid') is not True:
                raise SweepError(f'case {case.name}, round {rnd}: the solver says INVALID '
                                 f'({rep.get("invalid_reason", "no reason given")})')
            out.setdefault(case.name, []).append(rep)
    return out


def best(reports, metric='mcells_per_s'):
    '''{case: its best round}: the highest `metric`, or the highest `metric(report)` when it is a function.'''
    score = metric if callable(metric) else (lambda r: r[metric])
    return {name: max(reps, key=score) for name, reps in reports.items()}


def same_work(reports):
    '''Problems (strings) when the cases did not run the same grid, steps and ranks x threads.'''
    keys = {name: (tuple(sorted(r['grid'].items())), r['steps'], r['ranks'] * r['threads'])
            for name, r in reports.items()}
    if len(set(keys.values())) <= 1:
        return []
    return ['cases differ in (grid, steps, ranks x threads): '
            + '; '.join(f'{n}: {k[0]}, {k[1]} steps, {k[2]} workers' for n, k in sorted(keys.items()))]
