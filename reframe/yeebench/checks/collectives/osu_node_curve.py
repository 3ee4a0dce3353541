"""Paper 004's axis for the OSU collectives: each implementation against coll/tuned over node counts.

  OsuCollectiveNodeCurve  one job on every node of the partition (`nodes`, 0 = all); on each count n
                          of 1, 2, 4 ... and all of them (`-S node_counts=1,2` to choose), a rank per
                          core on n nodes, the case's OSU collective under its implementation AND the
                          same benchmark under coll/tuned (the twin: the implementation's variables
                          unset, tuned's set), every srun/mpirun step told its node count and ranks
                          per node; all of it interleaved over `rounds`. Each output file per
                          (implementation or tuned, count, round) is kept with the results.
                          FOMs per count (`_<n>_nodes`; the plain names: on all nodes):
                          latency_<size>B for the smallest and largest size, their
                          latency_<size>B_over_tuned, and over_tuned (x, lower: the geometric mean
                          over every size of the implementation's time over tuned's); the case
                          `tuned` records its latencies only. The full curves per count are in
                          observations['curves'].
OsuCollective is the process-count axis (one job per count, packed onto as few nodes as hold it).
UCC and HCOLL are checked with ompi_info on the compute node as OsuCollective does: no component,
the case skips with the reason the job wrote.
"""
import math

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from yeebench import capabilities, launch, mpi, osu, shell, single_copy, stage_files, sweeps
from yeebench.base import YeebenchCheck
from yeebench.checks.collectives.collectives import CASES, MISSING_FILE
from yeebench.parsers import osu as osu_parser
from yeebench.placement import Placement
from yeebench.single_copy_check import SingleCopyDecided

TUNED = 'tuned'


def output_file(variant, count, rnd):
    '''The OSU output of `variant` (the case's implementation, or 'tuned' for its twin) on `count` nodes.'''
    return f'osu-{variant.replace(":", "_")}-{count}-nodes-r{rnd}.txt'


def hosts_file(count):
    return f'hosts-{count}-nodes.txt'


def best_curve(tables):
    '''{size: latency} of several rounds' (sizes, latencies): the lowest latency per size. A round's slow
    moment is noise another process or the network added to the collective, never a property of it, so
    the fastest round is the implementation's time (as the solver sweeps keep each case's best round).'''
    out = {}
    for sizes, lat in tables:
        for size, t in zip(sizes, lat):
            out[size] = min(t, out.get(size, math.inf))
    return dict(sorted(out.items()))


def ratio_curve(impl, tuned):
    '''{size: impl / tuned} over the sizes both curves have with a positive tuned time.'''
    return {s: impl[s] / tuned[s] for s in impl if tuned.get(s, 0) > 0}


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def count_foms(impl, curves, suffix):
    '''[(name, value, unit, direction)] of one node count: `curves` {'impl': {size: us}, 'tuned': ...}.'''
    lat = curves['impl']
    ends = sorted({min(lat), max(lat)})
    foms = [(f'latency_{s}B{suffix}', lat[s], 'us', 'lower') for s in ends]
    if impl == TUNED:
        return foms
    ratios = ratio_curve(lat, curves['tuned'])
    foms += [(f'latency_{s}B_over_tuned{suffix}', ratios[s], 'x', 'lower') for s in ends if s in ratios]
    if ratios:
        foms.append((f'over_tuned{suffix}', geomean(ratios.values()), 'x', 'lower'))
    return foms


@rfm.simple_test
class OsuCollectiveNodeCurve(SingleCopyDecided, YeebenchCheck):
    '''One OSU collective and implementation, against coll/tuned, on 1, 2, 4 ... nodes in one job.'''

    case = parameter(CASES, fmt=lambda c: f'{c[0]}:{c[1]}')

    #: Nodes of the job; 0 = every node of the partition.
    nodes = variable(int, value=0)

    #: Node counts of the curve; empty: 1, 2, 4 ... and all of `nodes`.
    node_counts = variable(typ.List[int], value=[])

    #: Rounds of every (variant, count) run, interleaved; each size keeps its lowest latency.
    rounds = variable(int, value=2)

    #: Largest message size (bytes).
    max_size = variable(int, value=1024 * 1024)

    #: Timed / warm-up iterations per size (0: OSU's defaults).
    iterations = variable(int, value=0)
    warmup = variable(int, value=0)

    tags = {'network', 'full'}
    time_limit = '30m'
    smoke_overrides = {'max_size': 4096, 'iterations': 50, 'warmup': 5, 'rounds': 1}

    def is_smoke_case(self):
        # one case: an implementation beside its tuned twin, so the smoke run forms the ratio
        return self.case == ('allreduce', 'han')

    @property
    def collective(self):
        return self.case[0]

    @property
    def implementation(self):
        return self.case[1]

    def twins(self):
        '''(label, environment, variables to unset) of each run per count and round.'''
        impl = mpi.collective_env(self.collective, self.implementation)
        if self.implementation == TUNED:
            return [('impl', impl, [])]
        tuned = mpi.collective_env(self.collective, TUNED)
        return [('impl', impl, []), (TUNED, tuned, [k for k in impl if k not in tuned])]

    def output_variant(self, label):
        return self.implementation if label == 'impl' else TUNED

    @run_after('setup')
    def plan_curve(self):
        path, why = capabilities.osu_benchmark(self.current_partition, osu.collective_benchmark(self.collective))
        self.skip_if(path is None, why)
        self.require_openmpi(f'implementation {self.implementation}')
        self.skip_if(self.rounds < 1, f'rounds must be >= 1, got {self.rounds}')
        nodes = self.nodes or self.partition_nodes
        why = self.too_few_nodes(nodes)
        self.skip_if(why, f'nodes={nodes}: {why}')
        self.curve_nodes = nodes
        self.curve = sweeps.node_counts(nodes, self.node_counts)
        self.skip_if(not self.curve, f'node_counts={self.node_counts}: none between 1 and {nodes}')
        cores = self.node_topology.num_cores
        self.num_tasks, self.num_tasks_per_node, self.num_cpus_per_task = nodes * cores, cores, 1
        self.observations['osu'] = {'path': path, 'origin': capabilities.osu_origin(self.current_partition)}
        self.observations['node_counts'] = list(self.curve)
        self.observations['node_counts_ran'] = (
            f'counts {", ".join(map(str, self.curve))} of {nodes} node(s), a rank per core ({cores} per node)')
        opts = [path, *osu.options(self.max_size, self.iterations, self.warmup)]
        self.osu_argv = opts
        self.layouts, hosts, runs = {}, [], []
        for count in self.curve:
            layout = Placement('per-core', 1).resolve(self.node_topology, count)
            env = dict(layout.omp_env())
            prefix = launch.prefix(self, layout.num_tasks, launch.layout_options(self, layout, cores, list(env)),
                                   cores)
            self.layouts[count] = layout
            # OSU prints no host names: the same launch of `hostname` shows where this prefix puts the ranks
            omp = ' '.join(f'{k}={shell.quote(v)}' for k, v in sorted(env.items()))   # the -x names exist
            hosts.append(f'env {omp} {prefix} hostname > {hosts_file(count)}')
            runs.append((count, prefix, env))
        lines = list(hosts)
        for rnd in range(self.rounds):   # every count and variant once per round: A B C, A B C, ...
            for count, prefix, env in runs:
                for label, variant_env, unset in self.twins():
                    envs = ['env', *(f'-u {k}' for k in unset),
                            *(f'{k}={shell.quote(v)}' for k, v in sorted(dict(env, **variant_env).items()))]
                    lines.append(' '.join([*envs, prefix, shell.words(opts), '>',
                                           output_file(self.output_variant(label), count, rnd)]))
        self.expected_files = [output_file(self.output_variant(label), count, rnd)
                               for rnd in range(self.rounds) for count in self.curve for label, _, _ in self.twins()]
        self.osu_path = path
        sweeps.run_sweep(self, lines, stop_at_first_failure=True,
                         keep=[*self.expected_files, *(hosts_file(n) for n in self.curve)])
        self.single_copy_probed = self.node_topology.num_cores >= 2

    @run_before('run', always_last=True)
    def component_guard(self):
        impl = self.implementation
        if impl in mpi.OPTIONAL_COMPONENTS:   # no component, nothing to measure: the reason, and no run
            self.prerun_cmds.insert(0, f"if ! {mpi.has_component_test(impl)}; then echo 'this Open MPI has no "
                                       f"coll/{impl} component (ompi_info)' > {MISSING_FILE}; exit 0; fi")

    def single_copy_probe_argv(self):
        size = single_copy.PROBE_BYTES   # the collective itself on 2 ranks of one node (host buffers)
        return [self.osu_path] + osu.options(size, 2, 1, min_size=size)

    # -- reading the job's outputs -----------------------------------------------------------------
    def table(self, name):
        return osu_parser.parse(stage_files.read_stage_file(self, name)).column('latency_us')

    def read_curves(self):
        '''{count: {'impl': {size: us}, 'tuned': {size: us}}}: each size's lowest latency over the rounds.'''
        curves = {}
        for count in self.curve:
            curves[count] = {label: best_curve(self.table(output_file(self.output_variant(label), count, rnd))
                                               for rnd in range(self.rounds))
                             for label, _, _ in self.twins()}
        return curves

    def output_problems(self):
        '''Problems with the expected outputs: missing, unparsable, short, non-positive; [] when all is well.'''
        problems = []
        for name in self.expected_files:
            try:
                sizes, lat = self.table(name)
            except (OSError, ValueError, KeyError) as err:
                problems.append(f'{name}: no OSU table ({err.__class__.__name__}: {err})')
                continue
            if not sizes:
                problems.append(f'{name}: no OSU table')
            elif 2 * max(sizes) <= self.max_size:
                problems.append(f'{name}: OSU output stops at {max(sizes)} B, before the largest size {self.max_size} B')
            elif not all(t > 0 for t in lat):
                problems.append(f'{name}: non-positive latency in OSU output')
        return problems

    def host_problems(self):
        '''Problems with where each count's launch put its ranks (`hostname` under the same prefix).'''
        problems = []
        for count, layout in self.layouts.items():
            text = stage_files.read_stage_file(self, hosts_file(count), None)
            names = stage_files.lines(text)
            if text is None or not names:
                problems.append(f'{count} node(s): no host names in {hosts_file(count)}')
            elif len(set(names)) != layout.num_nodes or len(names) != layout.num_tasks:
                problems.append(f'{count} node(s): the launch ran {len(names)} ranks on {len(set(names))} host(s), '
                                f'{layout.num_tasks} on {layout.num_nodes} requested')
        return problems

    @sanity_function
    def assert_curve(self):
        missing = stage_files.read_stage_file(self, MISSING_FILE, default=None)
        if missing is not None:   # the node's MPI lacks the implementation (written by the job)
            self.skip(missing.strip())
        problems = self.host_problems() + self.output_problems()
        if problems and not all(stage_files.read_stage_file(self, n, None) for n in self.expected_files):
            problems.append(f'the job stopped at: {stage_files.last_line(stage_files.read_stage_file(self, str(self.stderr), ""))}')
        return sn.all([self.assert_no_mpi_errors(),
                       sn.assert_false(problems, '; '.join(problems))])

    def collect_foms(self):
        curves = self.read_curves()
        self.observations['curves'] = {
            str(count): {'sizes': list(c['impl']), **{self.output_variant(k): list(v.values()) for k, v in c.items()}}
            for count, c in curves.items()}
        for count, c in curves.items():
            for suffix in sweeps.count_suffixes(count, self.curve_nodes, self.curve):
                for name, value, unit, direction in count_foms(self.implementation, c, suffix):
                    self.add_fom(name, value, unit, direction)
