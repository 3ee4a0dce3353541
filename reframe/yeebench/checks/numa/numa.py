"""Memory placement (papers 000 and 003): numa-bw and the solver under NUMA policies.

Policies: none (no numactl at all, paper 000's "without NUMA policy"), localalloc,
interleave (all nodes) and remote (CPUs on node 0, memory on node 1; only with
>= 2 NUMA nodes).  Threads run on the cores of NUMA node 0 under every policy
except none.  `numactl --hardware` (node sizes, distances) is recorded with each
run.  FOMs: triad/copy GB/s (10^9 B/s) for numa-bw, Mcells/s for the solver.

Where numactl is missing, or the kernel refuses the memory policy (a Docker container without
CAP_SYS_NICE: `set_mempolicy: Operation not permitted`), the cases are still listed and skip with
that reason; a policy refused on a node the launch host cannot probe is found in the job and the case
skips with numactl's error (never a run measured without the policy).
"""

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import fixture, parameter, run_after, run_before, sanity_function, variable

from yeebench import capabilities, launch, numa_policy, scaling, shell, stage_files
from yeebench.numa_policy import POLICIES, numactl_failure  # noqa: F401 (the checks' API)
from yeebench.base import YeebenchCheck
from yeebench.fixtures import ProbeBinaries
from yeebench.parsers import jsonreport, numactl
from yeebench.solver import SMOKE_SOLVER, SolverMixin, keep_output_files

DOCKER_HINT = numa_policy.DOCKER_HINT

#: array_size meaning "LLC_FACTOR x the partition's last-level cache" (resolved at setup).
LLC_SIZED = 'llc'


SMOKE = {('NumaBandwidth', 'none'), ('NumaBandwidth', 'localalloc'), ('NumaSolver', 'localalloc')}


class NumaBase(YeebenchCheck):
    '''One memory policy; records numactl --hardware.'''

    policy = parameter(list(POLICIES))

    # Every partition: without numactl the cases skip with the reason instead of vanishing.
    valid_systems = ['*']
    tags = {'node', 'full'}

    hardware_file = 'numactl-hardware.txt'

    def is_smoke_case(self):
        return (type(self).__name__, self.policy) in SMOKE

    @run_after('setup')
    def check_policy(self):
        self.require_feature('numactl')
        topology = self.node_topology
        self.skip_if(self.policy == 'remote' and topology.num_numa_nodes < 2,
                     f'remote memory needs >= 2 NUMA nodes, this node has {topology.num_numa_nodes}')
        self.node0_cores = [c for c in topology.cores if set(c) <= set(topology.numa_nodes[0])]
        self.prerun_cmds.append(f'numactl --hardware > {shell.quote(self.hardware_file)}')
        # which policies the nodes' kernel refuses: declared by the system file (`local` probes it
        # when the configuration loads; any partition with the local scheduler is probed here)
        refused = capabilities.partition_extras(self.current_partition).get('numa_policy_refused', {}).get(self.policy)
        self.skip_if(refused, f'the memory policy cannot be set here: {refused}')

    def numactl_prefix(self):
        return ['numactl'] + POLICIES[self.policy][0] if self.policy != 'none' else []

    def numactl_error(self):
        '''numactl's own complaint in the job's stderr (the policy was refused on the node), or None.'''
        return numactl_failure(stage_files.read_stage_file(self, self.stderr, ''))

    def assert_policy_applied(self):
        '''A policy the node's kernel refused is a skip with numactl's reason (decided in the job, so a
        partition need not declare it), never a run measured without the policy.'''
        error = self.numactl_error()
        self.skip_if(error, f'the memory policy cannot be set on the node: {error} (numactl {self.policy}; '
                            f'declare it in the partition\'s extras numa_policy_refused to skip before running)')
        return sn.assert_true(True)

    def record_hardware(self):
        hw = numactl.parse_hardware(stage_files.read_stage_file(self, self.hardware_file))
        self.observations['numa_distances'] = hw['distances']
        self.observations['numa_size_mb'] = {str(k): v for k, v in hw['size_mb'].items()}
        return hw


@rfm.simple_test
class NumaBandwidth(NumaBase):
    '''STREAM-style triad (numa-bw) under one policy, with the pages' nodes checked.'''

    probes = fixture(ProbeBinaries, scope='environment')

    #: Bytes per array (>= 4x the last-level cache for a memory figure), or LLC_SIZED: LLC_FACTOR x the
    #: partition's last-level cache (processor entry caches, else extras.llc_bytes).
    array_size = variable(str, value='256Mi')

    #: Timed repetitions.
    repeats = variable(int, value=10)

    #: The probe's JSON report (kept in the output directory for the results tooling).
    report_file = 'numa-bw.json'

    # a memory figure, not a cache figure: arrays of 4x the node's last-level cache, 6 timed repeats
    smoke_overrides = {'array_size': LLC_SIZED, 'repeats': 6}

    @run_after('init')
    def keep_probe_report(self):
        keep_output_files(self, self.report_file)

    @run_after('setup')
    def set_command(self):
        self.job.launcher = getlauncher('local')()   # an OpenMP program, no MPI launcher
        if self.array_size == LLC_SIZED:
            llc, how = capabilities.llc_bytes(self.current_partition)
            self.skip_if(llc is None, f'cannot size the arrays from the last-level cache: {how}; '
                                      f'set -S NumaBandwidth.array_size=BYTES (>= 4x the LLC)')
            self.array_size = str(scaling.triad_array_bytes(llc))
            self.observations['array_sizing'] = f'{scaling.LLC_FACTOR} x last-level cache ({how}, {llc} B)'
        threads = len(self.node0_cores) if self.policy != 'none' else self.node_topology.num_cores
        self.num_tasks = 1
        self.num_cpus_per_task = threads * self.node_topology.cpus_per_core
        self.env_vars.update({'OMP_NUM_THREADS': str(threads), 'OMP_PLACES': 'cores', 'OMP_PROC_BIND': 'close'})
        prog = [self.probes.paths['numa-bw'], '--size', self.array_size, '--repeats', str(self.repeats),
                '--threads', str(threads), '--output', self.report_file]
        expect = POLICIES[self.policy][1]
        if expect is not None:
            prog += ['--expect-nodes', expect]
        cmd = self.numactl_prefix() + prog
        self.executable, self.executable_opts = cmd[0], cmd[1:]

    def report(self):
        return jsonreport.parse_probe(stage_files.read_stage_file(self, self.report_file), 'numa-bw')

    @sanity_function
    def assert_valid(self):
        sn.evaluate(self.assert_policy_applied())
        self.record_hardware()
        report = self.report()
        self.observations['pages_by_node'] = report.get('pages', {}).get('fraction_by_node', {})
        return sn.assert_true(report['valid'], 'numa-bw says its result is INVALID')

    def collect_foms(self):
        report = self.report()
        self.add_fom('triad_bw', jsonreport.numa_bw_triad(report), 'GB/s', 'higher')
        self.add_fom('copy_bw', float(report['kernels']['copy']['best_gbs']), 'GB/s', 'higher')


@rfm.simple_test
class NumaSolver(SolverMixin, NumaBase):
    '''The solver (1 rank, threads on NUMA node 0's cores) under one policy.'''

    smoke_overrides = SMOKE_SOLVER

    @run_before('run')
    def wrap_in_numactl(self):
        threads = len(self.node0_cores) if self.policy != 'none' else self.node_topology.num_cores
        self.num_tasks = self.num_tasks_per_node = 1
        self.num_cpus_per_task = threads * self.node_topology.cpus_per_core
        self.env_vars.update({'OMP_NUM_THREADS': str(threads), 'OMP_PLACES': 'cores', 'OMP_PROC_BIND': 'close'})
        # the launcher must not bind: numactl sets the CPUs
        launch.apply_unbound(self, ['OMP_NUM_THREADS', 'OMP_PLACES', 'OMP_PROC_BIND'])
        cmd = self.numactl_prefix() + [self.yee.paths['yee']] + self.solver_options()
        self.executable, self.executable_opts = cmd[0], cmd[1:]

    @sanity_function
    def assert_valid(self):
        sn.evaluate(self.assert_policy_applied())
        self.record_hardware()
        return self.solver_sanity()
