"""Native vs container: the same benchmark on the host and inside the yeebench image.

Each comparison has two fixtures that run the identical command, one on the host and one through the
partition's container platform (ReFrame's `container_platform`), then reports native, container and
container/native figures.  Two run models, picked by the platform:
  * Docker (local, CI): mpirun runs inside the container, the image's own Open MPI (self-contained);
  * Apptainer/Singularity/Sarus/Shifter (clusters): the partition's launcher (mpirun, or srun --mpi=pmix)
    starts one container per rank, the host MPI talks to the image's MPI (hybrid; needs ABI-compatible
    MPIs, see containers/README.md); the native leg runs the same launcher line on the host binaries.
    `-S ranks_per_node=1` puts the two NetPIPE ranks on two nodes (inter-node).
The solver comparison also requires the image to compute the same checksum as the host build.

    reframe -C reframe/config/settings.py -c reframe/yeebench/checks/containers/container.py --exec-policy=serial \
            -S SolverRun.image=yeebench:latest -S NetpipeRun.image=yeebench:latest -r
    reframe ... -S platform=Apptainer -S image=$PWD/build/containers/yeebench.sif -r    # a SIF, hybrid

Nothing about the image is asked on the launch host (a login node may have no Docker, Apptainer or
MPI): the job's pre-run lines ask the node whether it has the image (else both legs skip with the
reason), record its sha256 (SIF file, or Docker image id) and the sha256 of the spack.lock baked into
it, and, before a hybrid run, the Open MPI version on the node and in the image, which must be of one
major series (else the case fails naming both versions); see image_probe.py beside this file.  An image file
that is not a SIF fails at setup, naming the file.

Run it with --exec-policy=serial: native and container runs must not overlap, or the ratios measure
the overlap.

Needs a built image (containers/ci-build.sh or containers/README.md) and a partition that declares a
container platform; skips with the reason otherwise.
"""
import copy
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError, SanityError

from yeebench import apptainer, capabilities
from yeebench.checks.containers import image_probe
from yeebench import curve_foms
from yeebench import launch, shell
from yeebench.base import YeebenchCheck
from yeebench.fixtures import SolverBinary
from yeebench.parsers import ParseError, jsonreport, netpipe
from yeebench.stage_files import read_stage_file

#: Platforms that start one container per rank under the host launcher (hybrid model).
HYBRID_PLATFORMS = ('Apptainer', 'Singularity', 'Sarus', 'Shifter')


#: Settings of the image (containers/Dockerfile ENV), applied to the native leg as well: the Open MPI/UCX
#: transport, and one OpenMP thread per rank (natively OpenMP would start one thread per core per rank).
SAME_SETTINGS = {'OMPI_MCA_btl_vader_single_copy_mechanism': 'none', 'UCX_TLS': '^cma', 'OMP_NUM_THREADS': '1'}

class ContainerOrNativeRun(YeebenchCheck):
    '''Runs `command` (a benchmark with its options, `repeats` times) natively or in the image.'''

    #: 'native' or 'container'.
    where = variable(str)

    #: Image reference for the container platform (Docker: name:tag; Apptainer: path of a .sif).
    image = variable(str, value='yeebench:latest')

    #: Container platform by ReFrame name (Docker, Apptainer, ...); empty: the partition's default one.
    platform = variable(str, value='')

    #: MPI ranks.
    ranks = variable(int, value=2)

    #: Ranks per node under the partition's launcher (hybrid model); 0: the launcher decides.
    ranks_per_node = variable(int, value=0)

    #: Back-to-back runs of the benchmark; the comparison keeps the best of them.
    repeats = variable(int, value=5)

    #: Extra `docker run` options: room for Open MPI's shared-memory segments, no network needed, and
    #: CAP_SYS_NICE, without which Docker's seccomp profile refuses the NUMA memory-policy calls.
    docker_options = variable(typ.List[str], value=['--shm-size=512m', '--network=none', '--cap-add=SYS_NICE'])

    num_tasks = 1
    executable = 'true'
    time_limit = '5m'

    #: Whether the partition's launcher starts one container per rank (set at setup).
    hybrid = False

    def program(self):
        '''(path on the host, name inside the image, arguments) of the benchmark.'''
        raise NotImplementedError

    @run_after('setup')
    def build_command(self):
        if self.where not in ('native', 'container'):
            raise ValueError(f"where must be 'native' or 'container', got {self.where!r}")
        platform = self.platform or self.current_partition.container_runtime or ''
        # Without the image there is nothing to compare with: the native leg skips too.
        self.skip_if(not platform, f'partition {self.current_partition.fullname} declares no container platform')
        self.skip_if(platform not in self.current_partition.container_environs,
                     f'partition {self.current_partition.fullname} does not declare container platform {platform}')
        if self.platform:
            self.container_platform = platform
        # A SIF the launch host can read (a shared file system) is checked now, before any job.
        if platform in HYBRID_PLATFORMS and os.path.isfile(self.image):
            problem = apptainer.sif_problem(self.image)
            if problem:
                raise ReframeError(f'container check, setup: {problem}')
        # Everything else about the image is asked on the node (image_probe): is it there, its id,
        # its spack.lock, its MPI; judged from the job's files in judge_image.
        self.hybrid = platform in HYBRID_PLATFORMS
        self.prerun_cmds = list(self.prerun_cmds) + image_probe.commands(platform, self.image,
                                                                         self.where == 'container', self.hybrid)
        host_path, image_name, args = self.program()
        bench = ' '.join(shlex.quote(a) for a in [host_path if self.where == 'native' else image_name, *args])
        # Both legs use the image's settings: CMA single copy (process_vm_readv) fails across container
        # boundaries, and measured on these machines it is also slower than copy-in/copy-out up to 256 KiB,
        # so a native leg with CMA made the image look up to 2x faster (see containers/README.md).
        self.env_vars.update(SAME_SETTINGS)
        if platform in HYBRID_PLATFORMS:
            # The partition's launcher starts the ranks, natively or each in `apptainer exec IMAGE bench`;
            # the earlier repeats run the same launcher line before it (hybrid_repeats).
            self.num_tasks = self.ranks
            if self.ranks_per_node:
                self.num_tasks_per_node = self.ranks_per_node
                self.skip_if(-(-self.ranks // self.ranks_per_node) > self.partition_nodes,
                             f'{self.ranks} ranks at {self.ranks_per_node} per node need more nodes than '
                             f'{self.current_partition.fullname} has ({self.partition_nodes})')
            if self.where == 'native':
                self.executable, self.executable_opts = host_path, list(args)
                return
            # ReFrame writes the platform's image and options into the job script as they are
            self.container_platform.image = shell.quote(self.image)
            self.container_platform.command = bench
            # Host paths the partition wants in every container (extras.container_binds: the PMIx
            # server's directory under srun, a site's interconnect libraries).
            binds = [f'-B{path}' for path in self.current_partition.extras.get('container_binds', [])]
            self.container_platform.options = [shell.quote(o) for o in binds + (
                apptainer.exec_options() if platform == 'Apptainer' else [])]
            return
        # The same mpirun line natively and inside a Docker container (the image's own Open MPI).
        self.job.launcher = getlauncher('local')()
        mpirun = launch.container_mpirun(self.ranks, self.node_topology.num_cores)
        loop = f'for i in $(seq {self.repeats}); do {mpirun} {bench} || exit 1; done'
        if self.where == 'native':
            self.executable = 'bash'
            self.executable_opts = ['-c', loop]     # quoted as one word with the command line
        else:
            self.container_platform.image = shell.quote(self.image)
            self.container_platform.command = f'bash -c {shlex.quote(loop)}'
            if platform == 'Docker':
                self.container_platform.options = [shell.quote(o) for o in self.docker_options]

    @run_before('run')
    def hybrid_repeats(self):
        '''Under the partition's launcher ReFrame runs one launcher line: the first repeats-1 runs of
        the same line go before it, so the comparison keeps the best of `repeats` here too.'''
        if not self.hybrid or self.repeats < 2:
            return
        if self.where == 'native':
            program = ' '.join(shlex.quote(a) for a in [self.executable, *self.executable_opts])
        else:      # launch_command adds the stage mount to the platform it is called on: use a copy
            program = copy.deepcopy(self.container_platform).launch_command(self.stagedir)
        # ReFrame copies the task counts to the job only when it writes the script, after this hook.
        self.job.num_tasks, self.job.num_tasks_per_node = self.num_tasks, self.num_tasks_per_node
        line = f'{self.job.launcher.run_command(self.job)} {program}'
        self.prerun_cmds.append(f'for i in $(seq {self.repeats - 1}); do {line} || exit 1; done')

    @run_before('sanity')
    def judge_image(self):
        '''The node's answers: no image skips (both legs); the container leg records the image's
        provenance, and a hybrid run with host and image MPI of different major series fails.'''
        if self.is_dry_run():      # no job ran: nothing was asked
            return
        findings = image_probe.Findings(self.stagedir, self.image, self.hybrid and self.where == 'container')
        missing = findings.missing_reason()
        self.skip_if(missing, missing)
        if self.where != 'container':
            return
        self.observations.update(findings.provenance())
        problem = findings.abi_problem()
        if problem:
            raise SanityError(problem)

    def output_text(self):
        return read_stage_file(self, self.stdout), read_stage_file(self, self.stderr)


class SolverRun(ContainerOrNativeRun):
    '''The solver on a small cube; results: the best Mcells/s and the checksums.'''
    yee = fixture(SolverBinary, scope='environment')

    #: Cube edge and steps: about 0.3 s per run on two idle cores (shorter runs time the noise).
    n = variable(int, value=96)
    steps = variable(int, value=200)

    def program(self):
        return (self.yee.paths['yee'], 'yee',
                ['--nx', str(self.n), '--ny', str(self.n), '--nz', str(self.n),
                 '--steps', str(self.steps), '--quiet'])

    def reports(self):
        out, _ = self.output_text()
        return [r for r in jsonreport.find_json_objects(out) if r.get('schema') == 'yee-report']

    @sanity_function
    def assert_runs(self):
        reports = self.reports()
        problems = [p for r in reports for p in jsonreport.yee_problems(r)]
        return sn.all([
            sn.assert_eq(len(reports), self.repeats, f'expected {self.repeats} solver reports'),
            sn.assert_false(problems, '; '.join(problems)),
        ])


class NetpipeRun(ContainerOrNativeRun):
    '''NetPIPE ping-pong up to 256 KiB; results: best 1-byte latency and peak bandwidth.'''

    max_size = variable(int, value=256 * 1024)

    #: Fixed repeats per size (NetPIPE -n) and no perturbed sizes (-p 0): bounded run time.
    netpipe_repeats = variable(int, value=50)

    def program(self):
        host, why = capabilities.netpipe(self.current_partition)
        self.skip_if(self.where == 'native' and host is None, why)
        # The curves are read from stderr; NetPIPE's own output file goes to this job's stage directory
        # natively and nowhere in the image (its user cannot write the mounted stage directory, and a
        # fixed path such as /tmp/np.out is shared by every job on the node, and with the host under
        # Apptainer).
        out = os.path.join(self.stagedir, 'np.out') if self.where == 'native' else '/dev/null'
        return (host or 'NPopenmpi', 'NPopenmpi', ['-u', str(self.max_size), '-n', str(self.netpipe_repeats),
                                                    '-p', '0', '-o', out])

    def curves(self):
        '''One curve per repeat, read from the progress lines on stderr (np.out is not kept in the image).'''
        _, err = self.output_text()
        return netpipe.curves(err, 'stderr')

    @sanity_function
    def assert_runs(self):
        try:
            runs = self.curves()
        except ParseError as err:
            return sn.assert_true(False, str(err))
        return sn.all([
            sn.assert_eq(len(runs), self.repeats, f'expected {self.repeats} NetPIPE curves'),
            sn.assert_true(all(r.max_size >= self.max_size for r in runs),
                           'a NetPIPE run stopped before the largest size'),
        ])


class ContainerVsNativeBase(YeebenchCheck):
    '''Reports native, container and container/native for the figures of two fixtures.'''

    #: Image reference (passed to the container fixture through -S image=...).
    image = variable(str, value='yeebench:latest')

    num_tasks = 1
    executable = 'true'
    tags = {'container', 'app'}

    @run_before('run')
    def local_launch(self):
        self.job.launcher = getlauncher('local')()

    @sanity_function
    def validate(self):
        # Both fixtures passed their own sanity before this test was set up; subclasses add checks.
        return sn.all([sn.assert_true(os.path.isdir(self.native.stagedir)),
                       sn.assert_true(os.path.isdir(self.container.stagedir)), *self.extra_sanity()])

    def extra_sanity(self):
        return []

    @run_before('sanity')
    def record_image(self):
        '''The image's provenance (name, sha256, baked spack.lock, MPI versions) with the ratios.'''
        self.observations.update({k: v for k, v in self.container.observations.items()
                                  if k.startswith('image') or k.endswith('_mpi')})

    def add_ratio(self, name, native_value, container_value, unit, direction):
        self.add_fom(f'native_{name}', native_value, unit, direction)
        self.add_fom(f'container_{name}', container_value, unit, direction)
        # container/native in %: 100 = no overhead; for 'lower' figures below 100 means faster in the image.
        self.add_fom(f'ratio_{name}', 100.0 * container_value / native_value, '%', direction)


@rfm.simple_test
class SolverContainerVsNative(ContainerVsNativeBase):
    '''yee: best Mcells/s natively and in the image, and the image's checksum equals the host's.'''
    native = fixture(SolverRun, scope='environment', variables={'where': 'native'})
    container = fixture(SolverRun, scope='environment', variables={'where': 'container'})

    def extra_sanity(self):
        native = {r['checksum'] for r in self.native.reports()}
        inside = {r['checksum'] for r in self.container.reports()}
        return [sn.assert_eq(inside, native, 'the image computes a different checksum than the host build')]

    def collect_foms(self):
        best = {w: max(r['mcells_per_s'] for r in f.reports())
                for w, f in (('native', self.native), ('container', self.container))}
        self.add_ratio('mcells', best['native'], best['container'], 'Mcells/s', 'higher')


@rfm.simple_test
class NetpipeContainerVsNative(ContainerVsNativeBase):
    '''NetPIPE: best 1-byte latency and peak bandwidth natively and in the image.'''
    native = fixture(NetpipeRun, scope='environment', variables={'where': 'native'})
    container = fixture(NetpipeRun, scope='environment', variables={'where': 'container'})
    tags = {'container', 'network'}

    def collect_foms(self):
        lat, bw = {}, {}
        for where, fix in (('native', self.native), ('container', self.container)):
            runs = [curve_foms.curve_values(run) for run in fix.curves()]
            # the best of the repeated runs (a pt2pt check reports its one run): noise only slows a run
            lat[where] = min(r['latency_1B'] for r in runs)
            bw[where] = max(r['peak_bw'] for r in runs)
        self.add_ratio('latency_1B', lat['native'], lat['container'], 'us', 'lower')
        self.add_ratio('peak_bw', bw['native'], bw['container'], 'MB/s', 'higher')
