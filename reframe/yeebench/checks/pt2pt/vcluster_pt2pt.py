"""Intra- vs inter-node NetPIPE on the virtual cluster, for the CI smoke test of the Slurm path.

A vcluster-owned minimal check (the suite's reframe/yeebench/checks/pt2pt/pt2pt.py measures the same pairs; it is
run beside this one). It exists because a rate-shaped link is judged by its large-message
bandwidth: `bw_large` is the best NetPIPE bandwidth among messages of at least max_size/4 (2 MiB),
where the link's token bucket (64 KiB at 1 Gbit/s) can add at most 3%; a single large size alone
would be at the mercy of one descheduled rank on a busy machine. The peak over all sizes
(`bw_peak`) is reported too: on a shaped link it is inflated by the bucket and is not a rate.

    yeebench vcluster exec -- reframe -C reframe/config/settings.py \
        -c reframe/yeebench/checks/pt2pt/vcluster_pt2pt.py --system vcluster -r
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_after, sanity_function, variable

from yeebench import launch
from yeebench.base import FigureDirections, SmokeRun
from yeebench import curve_foms
from yeebench.parsers import netpipe


@rfm.simple_test
class VclusterNetPIPE(FigureDirections, SmokeRun, rfm.RunOnlyRegressionTest):
    '''Two ranks on one virtual node (Open MPI vader) or on two nodes (Open MPI TCP over the bridge).'''

    locality = parameter(['intra', 'inter'])

    #: Largest message (bytes); bw_large is taken over the sizes >= max_size / 4.
    max_size = variable(int, value=8 * 1024 * 1024)

    #: Fixed NetPIPE repeats per size (-n), no perturbed sizes (-p 0): a short, steady run.
    repeats = variable(int, value=10)

    #: Direction of every performance variable (read by `yeebench results ingest`).
    perf_directions = {'latency_1B': 'lower', 'bw_peak': 'higher', 'bw_large': 'higher'}

    valid_systems = ['vcluster']
    valid_prog_environs = ['*']
    executable = 'NPopenmpi'
    num_tasks = 2
    time_limit = '5m'
    tags = {'vcluster', 'network', 'smoke'}
    maintainers = ['yeebench']

    @run_after('init')
    def place_pair(self):
        self.num_tasks_per_node = 1 if self.locality == 'inter' else 2
        self.env_vars = {'OMPI_MCA_pml': 'ob1',
                         'OMPI_MCA_btl': 'self,tcp' if self.locality == 'inter' else 'self,vader'}
        self.executable_opts = ['-o', 'np.out', '-u', str(self.max_size), '-n', str(self.repeats), '-p', '0']

    @run_after('setup')
    def virtual_cluster_only(self):
        # `-S valid_systems=...` lets this check onto any partition: it measures the virtual cluster's links
        self.skip_if('vcluster' not in self.current_partition.features,
                     f'runs only on the virtual cluster (yeebench vcluster up, --system vcluster): partition '
                     f"{self.current_partition.fullname} is not one (no 'vcluster' feature)")

    @run_after('setup')
    def one_rank_per_node(self):
        if self.locality == 'inter':
            launch.apply_one_per_node(self)

    def curve(self):
        with open(os.path.join(self.stagedir, 'np.out')) as fh:
            return netpipe.curve(fh.read())

    def figures(self):
        return curve_foms.curve_values(self.curve(), max_size=self.max_size)

    @sanity_function
    def assert_complete(self):
        reached = self.curve().max_size if os.path.exists(os.path.join(self.stagedir, 'np.out')) else 0
        return sn.assert_ge(reached, self.max_size, 'NetPIPE did not reach the largest message size')

    @performance_function('us')
    def latency_1B(self):
        return self.figures()['latency_1B']

    # the suite's peak_bw under this check's own name, which `yeebench vcluster verify` and its records use
    @performance_function('MB/s')
    def bw_peak(self):
        return self.figures()['peak_bw']

    @performance_function('MB/s')
    def bw_large(self):
        return self.figures()['bw_large']
