"""Base classes of every yeebench check (reused by the acceptance checks).

YeebenchCheck adds to ReFrame's RunOnlyRegressionTest:
  * figures of merit declared with a unit and a direction (`add_fom`), published
    as ReFrame performance variables (their units reach the JSON run report with
    the values) plus the loggable `perf_directions` dict;
  * reference values read from reframe/config/references/<system>.json;
  * the node topology of the current partition (`node_topology`);
  * MPI launching from a placement Layout (`apply_layout`, `apply_packed`, `launch_prefix`);
    the launcher options come from yeebench.launch, the one module that knows launchers;
  * the smoke set declared once: a check lists its smoke cases (`is_smoke_case`) and the
    settings they take in a smoke run (`smoke_overrides`); the base class tags the cases and
    applies the settings only in a run that sets the `smoke` variable (`-S smoke=true`, which the
    suite's `--mode smoke` adds to `-t smoke`), so a full run of a smoke member measures at full size.

FigureDirections (`perf_directions`) and SmokeRun (`smoke`) are the plugins YeebenchCheck is made of
that a check or fixture with another base mixes in.

Every check is valid on every partition and environment of any ReFrame configuration
(`valid_systems = ['*']`); what a partition lacks (a processor entry, nodes, GPUs, a program, an MPI
launcher) is a skip whose reason names the configuration key that unlocks it. The optional keys are
listed in reframe/README.md ("Using yeebench with your own ReFrame configuration").
"""
import math

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from yeebench import capabilities, gpus, launch, references, shell, topology as topo

DIRECTIONS = ('higher', 'lower')

#: Tag of a check whose program is compiled in its own job from the suite's sources, not taken
#: from an installation: a check that reports where its programs came from (the Spack stage's
#: origins fact) names such cases as not judged instead of failing them.
BUILT_IN_JOB = 'built-in-job'


class SmokeRun(rfm.RegressionTestPlugin):
    '''The `smoke` variable, on every test of the suite (fixtures included), so that `-S smoke=true`
    names a variable each test has.'''

    #: True in a run of the smoke set: `-S smoke=true` (the suite's configuration has `--mode smoke`
    #: for `-t smoke -S smoke=true`). YeebenchCheck's smoke cases then take their `smoke_overrides`.
    smoke = variable(typ.Bool, value=False)


class FigureDirections(rfm.RegressionTestPlugin):
    '''The loggable `perf_directions`, the one place a figure's direction is declared: YeebenchCheck
    fills it from add_fom(); a check that is no YeebenchCheck mixes this in and sets it in its class
    body (checks/pt2pt/vcluster_pt2pt.py, results/gate/gate_check.py).'''

    #: Direction of every performance variable: name -> 'higher' | 'lower' (is better).
    #: Loggable, so it is written to ReFrame's JSON report for the results tooling.
    perf_directions = variable(typ.Dict[str, str], value={}, loggable=True)

    @run_after('init')
    def _known_directions(self):
        wrong = {k: v for k, v in self.perf_directions.items() if v not in DIRECTIONS}
        if wrong:
            raise ValueError(f'perf_directions must be one of {DIRECTIONS}, got {wrong}')


class YeebenchCheck(FigureDirections, SmokeRun, rfm.RunOnlyRegressionTest):
    '''Base of yeebench checks: FOMs with units and directions, references from data files.'''

    #: Free-form facts recorded with the run (e.g. NUMA distances); loggable.
    observations = variable(typ.Dict[str, object], value={}, loggable=True)

    #: Number of nodes the check uses (checks needing more skip on smaller partitions).
    num_nodes = variable(int, value=1)

    #: Nodes a check may use on any partition, from the command line (`-S max_nodes=4`); 0: the
    #: partition's extras.num_nodes, default 1.
    max_nodes = variable(int, value=0)

    #: Settings (variable name -> value) a smoke case takes in a smoke run (`smoke` set: smaller
    #: sizes, fewer iterations); a run without it keeps the full settings.
    smoke_overrides = variable(typ.Dict[str, object], value={})

    # listed everywhere: what a partition lacks is a skip naming the key to add, never a silent drop
    valid_systems = ['*']
    valid_prog_environs = ['*']
    time_limit = '10m'
    maintainers = ['yeebench']

    @run_after('init')
    def _fresh_fom_tables(self):
        # per-instance dicts: class-level defaults must never be shared between tests
        self.perf_directions = {}
        self.observations = {}
        self._foms = {}

    # -- the smoke set ------------------------------------------------------
    def is_smoke_case(self):
        '''Override: True for the parameter combinations that belong to the smoke set.'''
        return False

    @run_after('init')
    def _tag_smoke_cases(self):
        if self.is_smoke_case():
            self.tags |= {'smoke'}

    @property
    def smoke_run(self):
        '''True when this case runs as part of the smoke set: it is a member and the run set `smoke`.'''
        return 'smoke' in self.tags and self.smoke

    @run_after('init', always_last=True)
    def _apply_smoke_overrides(self):
        if self.smoke_run and self.smoke_overrides:
            for name, value in self.smoke_overrides.items():
                setattr(self, name, value)
            self.observations['smoke_overrides'] = dict(self.smoke_overrides)

    # -- skipping with the reason recorded (the suite's one skip path) -----------------
    @run_before('run', always_last=True)
    def _quote_command_line(self):
        # ReFrame joins the executable and its options with spaces into the job script: quote each
        # word, so no value (an -S setting, a path) is read by the shell as syntax.
        self.executable = shell.quote(self.executable)
        self.executable_opts = [shell.quote(opt) for opt in self.executable_opts]

    def skip(self, msg=None):
        '''Skip this case; the reason also goes to `observations` (ReFrame's report drops it).

        Plugins mixed in before this class (e.g. AcceptanceMixin) extend it and call super().'''
        self.observations['skip_reason'] = msg
        super().skip(msg)

    def skip_if(self, cond, msg=None):
        if cond:
            self.skip(msg)

    def require_feature(self, feature):
        '''Skip, naming the partition and the feature, where the partition lacks `feature`.'''
        why = capabilities.missing_reason(self.current_partition, feature)
        self.skip_if(why, why)

    def require_gpus(self, per_node=1):
        '''Skip where the partition declares no GPUs (naming the key), else request
        min(`per_node`, its GPUs) per node from the scheduler (`num_gpus_per_node`); returns its GPUs per node.'''
        count, how = gpus.partition_gpus(self.current_partition)
        self.skip_if(count < 1, how)
        self.num_gpus_per_node = max(1, min(per_node, count))
        return count

    # -- partition facts --------------------------------------------------
    @property
    def partition_nodes(self):
        '''Nodes a check may use on the current partition: `-S max_nodes=N`, else the partition's
        extras.num_nodes, else 1.'''
        if self.max_nodes > 0:
            return self.max_nodes
        return int(self.current_partition.extras.get('num_nodes', 1))

    def too_few_nodes(self, needed):
        '''The skip reason of a case needing `needed` nodes where fewer are available (None when they are).'''
        if needed <= self.partition_nodes:
            return None
        source = ('-S max_nodes' if self.max_nodes > 0 else
                  'extras.num_nodes' if 'num_nodes' in self.current_partition.extras else 'extras.num_nodes, default')
        return (f'needs {needed} nodes, partition {self.current_partition.fullname} has {self.partition_nodes} '
                f'({source}): add extras {{\'num_nodes\': N}} to it or run with -S max_nodes=N')

    @property
    def node_topology(self):
        '''Topology of one node of the current partition: its `processor` entry (written, or found by
        ReFrame's remote_detect), else this machine's for a partition with the `local` scheduler.'''
        proc = self.current_partition.processor
        if proc.num_cpus:
            return topo.Topology.from_reframe_processor(proc)
        if capabilities.launch_host_is_node(self.current_partition):
            return topo.detect()
        return None

    @property
    def environ_features(self):
        return set(self.current_environ.features)

    def require_openmpi(self, what):
        '''Skip `what` (an Open MPI component selection) unless the environment has the feature
        `openmpi` or the partition extras.mpi_implementation 'openmpi' (on a `local`-scheduler partition
        that declares neither: this machine's `mpirun --version`); the reason names both keys.'''
        if 'openmpi' in self.environ_features or \
                capabilities.partition_extras(self.current_partition).get('mpi_implementation') == 'openmpi':
            return
        self.skip(f'{what} is an Open MPI selection; environment {self.current_environ.name} declares no '
                  f"openmpi: add 'openmpi' to its features, or extras {{'mpi_implementation': 'openmpi'}} "
                  f'to partition {self.current_partition.fullname}, where its MPI is Open MPI')

    @run_after('setup')
    def _require_topology(self):
        self.skip_if(self.node_topology is None,
                     f'partition {self.current_partition.fullname} has no processor entry: add one to it '
                     f'(num_cpus, num_sockets, num_cpus_per_core, topology) or let ReFrame detect it '
                     f'(remote_detect: true in the general section, or RFM_REMOTE_DETECT=1)')
        why = self.too_few_nodes(self.num_nodes)
        self.skip_if(why, why)
        # the launcher the partition gave the job: a check that replaces it launches its own runs
        self._partition_job_launcher = self.job.launcher

    @run_before('run', always_last=True)
    def _require_multi_process_launcher(self):
        if getattr(self, '_partition_job_launcher', None) is self.job.launcher:
            why = launch.one_process_reason(self, self.num_tasks)
            self.skip_if(why, why)

    # -- MPI launching (every launcher difference lives in yeebench.launch) ------------
    def apply_layout(self, layout, rankfile=None):
        '''Set tasks, OpenMP environment and launcher options from a placement Layout.

        `rankfile`: file name (in the stage directory) to write an Open MPI rankfile
        to and launch with it instead of --map-by (paper 000's method).
        '''
        self.num_tasks = layout.num_tasks
        self.num_tasks_per_node = layout.ranks_per_node
        self.num_cpus_per_task = layout.cpus_per_task
        if layout.obj == 'socket':
            self.num_tasks_per_socket = layout.placement.ranks_per_object
        self.env_vars.update(layout.omp_env())
        launch.apply_layout(self, layout, self._num_cores(), rankfile)

    def apply_packed(self, ranks, threads, ranks_per_node=None):
        '''`ranks` x `threads` packed onto consecutive cores, `ranks_per_node` per node.

        More ranks than cores (paper 000's job-balancing runs) run unbound and oversubscribed.
        '''
        cores = self.node_topology.num_cores
        ranks_per_node = ranks_per_node or ranks
        over = ranks_per_node * threads > cores
        self.num_tasks = ranks
        self.num_tasks_per_node = ranks_per_node
        self.num_cpus_per_task = threads * self.node_topology.cpus_per_core
        self.env_vars.update({'OMP_NUM_THREADS': str(threads)})
        if not over:
            self.env_vars.update({'OMP_PLACES': 'cores', 'OMP_PROC_BIND': 'close'})
        launch.apply_packed(self, ranks_per_node, threads, cores, list(self.env_vars))

    def _num_cores(self):
        topology = self.node_topology
        return topology.num_cores if topology else None

    def launch_prefix(self, num_tasks, options=()):
        '''Command prefix launching `num_tasks` ranks (for extra runs in prerun_cmds).'''
        return launch.prefix(self, num_tasks, options, self._num_cores())

    # -- figures of merit -------------------------------------------------
    def add_fom(self, name, value, unit, direction):
        '''Declare one figure of merit (a number, or a deferred expression).'''
        if direction not in DIRECTIONS:
            raise ValueError(f'direction of {name!r} must be one of {DIRECTIONS}, got {direction!r}')
        self._foms[name] = (value, unit)
        self.perf_directions[name] = direction

    def collect_foms(self):
        '''Override: call add_fom() for every figure of merit (runs after sanity).'''

    @run_before('performance')
    def _publish_foms(self):
        if self.is_dry_run():    # --dry-run: nothing ran, there are no outputs to read FOMs from
            return
        self.collect_foms()
        self.perf_variables = {
            name: sn.make_performance_function(value if hasattr(value, 'evaluate') else sn.defer(value), unit)
            for name, (value, unit) in self._foms.items()
        }
        self._apply_references()

    def _apply_references(self):
        data = references.load(self.current_system.name)
        if not data:
            return
        names = [self.display_name, self.unique_name, type(self).__name__]
        refs = references.lookup(data, self.current_partition.name, names)
        refs = {k: v for k, v in refs.items() if k in self._foms}
        if refs:
            self.reference = {self.current_partition.fullname: refs}


def finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)
