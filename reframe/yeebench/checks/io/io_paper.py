"""Paper 001 like for like: output time per format against N^3, fitted, extrapolated, compared.

  IoOutputPaper   one job: every format x every rank count (1, 2, 4 ... the partition's cores x
                  nodes; up to 2 ranks a core only with -S oversubscribe=true) x every size N of the
                  sweep (each rank an N^3 block, stacked along x; 10 steps written). `-S sizes=paper`
                  runs the paper's 17 sizes 30, 40 ... 190 (large: ASCII at 190^3 x 8 ranks is ~5 GB
                  per step); the default `quick` runs 20, 30, 40; a list such as `-S sizes=30,60` any
                  others.
The paper's configuration (the formats ascii, binary, hdf5, hdf5-zlib): one I/O server writing one
file per PE (`root-per-rank`: the fields are gathered to rank 0, which writes each rank's block to
that rank's file, every step; the paper: "only one I/O server can produce output data", "one output
file holds the entire data from one PE"), ASCII rows of the cell's coordinates and the 6 fields
(`--ascii-layout coordinates`: "outputted together with the Cartesian coordinate"; fixed-width
exponent notation, our choice: the paper names no number format), HDF5 as one 3-D dataset of
6-component records (`--hdf5-layout records`; hdf5-zlib: chunked + shuffle + zlib), the fields
excited by a point source at the centre of the first rank's block (the fields start at zero), and
every file fsync'ed before the output timer stops (the time to stable storage, not to the page
cache). Extra cases, other configurations of the same sweep: <format>-per-rank (every rank
writes its own file at once, one dataset per component: the layout this check used before),
hdf5-zlib-components (one writer, a file per rank, one dataset per component) and
hdf5-zlib-one-file (one writer, the whole grid in one file per step: the paper's "few files" side).
Beside them, per rank count and size, one run of the 10 steps without output (compute-p<P>-n<N>).
FOMs: <format>_p<P>_n<N>_io_s (s per output step), p<P>_n<N>_compute_s_10_steps (the updates of
the 10 steps without output, slowest rank: Fig. 3's reference) and, with 2 ranks or more,
p<P>_n<N>_halo_over_compute (interface exchange / computation, the paper's "about 1/6") and
p<P>_n<N>_compute_spread (standard deviation of the ranks' computation times over their mean, %:
the paper's "under 10 percent"); compute_s_10_steps, halo_over_compute and compute_spread at the
largest rank count and N; hdf5_zlib_per_pe_over_one_file (a file per PE over one file, time, at the
largest case, beside hdf5_zlib_bytes_per_step: the paper's file-count finding); per format
fit_rms_error (%, the fit t = a + b N^3 per rank count, yeebench.io_fits; paper: 8 %),
seconds_16_ranks and seconds_256_ranks at the largest N (extrapolated over rank counts, a power
law: our assumption, the paper does not say how it extended its fit), bytes_per_step at the
largest case (Fig. 4); and at the largest rank count and N, over the paper's configuration:
<format>_over_ascii and hdf5_over_binary (time ratios, < 1 = faster; the paper's finding about
>= 16 processes needs >= 16 ranks: observations['hardware']['ranks'] says how many were run).
Outputs are removed after each case.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import variable

from yeebench import comparisons, io_fits, launch, sweeps
from yeebench.fits import FitError
from yeebench.sweep_check import SolverSweep

#: The paper's configuration: one I/O server writing one file per PE (root-per-rank), every file on
#: stable storage before the timer stops.
PAPER_IO = ['--output-strategy', 'root-per-rank', '--output-fsync']
ONE_FILE = ['--output-strategy', 'root', '--output-fsync']
#: The paper's ASCII rows: the cell's Cartesian coordinates, then the 6 fields.
ASCII = ['--output', 'ascii', '--ascii-layout', 'coordinates']
RECORDS = ['--output', 'hdf5', '--hdf5-layout', 'records']
COMPONENTS = ['--output', 'hdf5', '--hdf5-layout', 'components']
ZLIB = ['--hdf5-compress', 'deflate']
#: format name -> yee options. The paper's four (hdf5-zlib: its HDF5 layout, one 3-D dataset of
#: 6-component records, chunked, shuffle + zlib), then the extra configurations.
FORMATS = {'ascii': [*ASCII, *PAPER_IO], 'binary': ['--output', 'binary', *PAPER_IO],
           'hdf5': [*RECORDS, *PAPER_IO], 'hdf5-zlib': [*RECORDS, *ZLIB, *PAPER_IO],
           'ascii-per-rank': [*ASCII, '--output-strategy', 'per-rank', '--output-fsync'],
           'binary-per-rank': ['--output', 'binary', '--output-strategy', 'per-rank', '--output-fsync'],
           'hdf5-zlib-per-rank': [*COMPONENTS, *ZLIB, '--output-strategy', 'per-rank', '--output-fsync'],
           'hdf5-zlib-components': [*COMPONENTS, *ZLIB, *PAPER_IO],
           'hdf5-zlib-one-file': [*RECORDS, *ZLIB, *ONE_FILE]}
#: The paper's configuration: the ratios and the compute reference come from these.
PAPER_FORMATS = ('ascii', 'binary', 'hdf5', 'hdf5-zlib')
STEPS = 10
#: The case without output of each (P, N): the compute time and the halo exchange's share.
COMPUTE = 'compute'


def point_source(n):
    """A point source at the centre of the first rank's N^3 block (the blocks are stacked along x);
    the fields start at zero (paper 001: 'the point source excitation is placed at the centre of the
    first FDTD subspace')."""
    return ['--init-mode', 'none', '--source', 'ricker', '--source-pos', f'{n // 2},{n // 2},{n // 2}']


@rfm.simple_test
class IoOutputPaper(SolverSweep):
    '''Paper 001: every format x rank count x size in one job, fitted and compared.'''

    #: quick | paper | comma list of N (cells per axis per rank).
    sizes = variable(str, value='quick')

    #: Allow up to 2 ranks per core (the partition's cores x nodes is the limit otherwise).
    oversubscribe = variable(bool, value=False)

    #: Largest RMS error (%) of a format's fit for its extrapolation to 16 and 256 ranks to be recorded.
    max_fit_error = variable(float, value=25.0)

    #: Formats compared (keys of FORMATS: the paper's four and the extra configurations).
    formats = variable(typ.List[str], value=list(FORMATS))

    rounds = 1
    tags = {'app', 'full'}
    # sizes where output outweighs the per-step fixed cost, best of 2 rounds (reframe/papers/001.md);
    # the paper's three formats and the old per-rank HDF5 configuration beside them
    smoke_overrides = {'sizes': '24,32,40,48', 'rounds': 2,
                       'formats': ['ascii', 'binary', 'hdf5-zlib', 'hdf5-zlib-per-rank']}

    def is_smoke_case(self):
        return True

    def sweep_options(self):
        return []

    def sweep_cases(self, nodes):
        try:
            sizes = io_fits.parse_sizes(self.sizes)
        except ValueError as err:
            raise ValueError(f'IoOutputPaper: {err}') from None
        unknown = [f for f in self.formats if f not in FORMATS]
        self.skip_if(unknown, f'unknown formats {unknown} (known: {", ".join(FORMATS)})')
        cores = self.node_topology.num_cores
        self.ranks_list = io_fits.rank_counts(cores, nodes, self.oversubscribe)
        self.observations['oversubscribed'] = self.oversubscribe
        # the paper's finding about 16 processes needs 16 ranks: the report compares only where they ran
        self.observations['hardware'] = dict(comparisons.hardware(self.node_topology, nodes),
                                             ranks=max(self.ranks_list))
        self.observations['paper_configuration'] = (
            'root-per-rank strategy (one writer, a file per rank), ASCII rows of coordinates and fields, HDF5 one '
            '3-D dataset of 6-component records, point source at the centre of the first block, fsync before the '
            'output timer stops: formats ' + ', '.join(PAPER_FORMATS))
        self.sizes_list = sizes
        env = {'OMP_NUM_THREADS': '1'}
        cases = []
        for p in self.ranks_list:
            per_node = min(-(-p // nodes), 2 * cores)
            prefix = self.launch_for(p, launch.packed_options(self, per_node, cores, list(env)))
            for n in sizes:
                # the reference without output: the updates' time, and the halo exchange not waiting
                # for rank 0's writing (with one writer the other ranks wait for it in the next exchange)
                cases.append(sweeps.Case(f'{COMPUTE}-p{p}-n{n}', prefix, env, options=tuple(str(o) for o in (
                    '--nx', n * p, '--ny', n, '--nz', n, '--decomp', f'{p}x1x1', '--steps', STEPS,
                    *point_source(n), '--quiet'))))
                for fmt in self.formats:
                    name = f'{fmt}-p{p}-n{n}'
                    opts = ['--nx', n * p, '--ny', n, '--nz', n, '--decomp', f'{p}x1x1', '--steps', STEPS,
                            *point_source(n), '--quiet', *FORMATS[fmt],
                            '--output-dir', f'out-{comparisons.safe_name(name)}']
                    cases.append(sweeps.Case(name, prefix, env, options=tuple(str(o) for o in opts)))
        return cases

    def round_score(self, report):
        if report['io'].get('format') == 'none':
            return -report['seconds']['total']      # the compute reference: its fastest round
        return -report['io']['seconds_per_step']    # each case keeps its fastest output round

    def guarded(self, case, line):
        if case.name.startswith(f'{COMPUTE}-'):
            return line
        return f'{line}\nrm -rf out-{comparisons.safe_name(case.name)}'

    def work_problems(self, best):
        problems = []
        for rep_name, rep in best.items():
            if rep_name.startswith(f'{COMPUTE}-'):
                continue
            io = rep.get('io', {})
            if io.get('steps_written') != STEPS:
                problems.append(f'{rep_name}: wrote {io.get("steps_written")} of {STEPS} steps')
            if io.get('fsync') is not True:
                problems.append(f'{rep_name}: the files were not fsync\'ed (io.fsync {io.get("fsync")})')
        return problems

    def collect_sweep_foms(self):
        io_s, compute = {}, {}
        for name, rep in self.best.items():
            fmt, p, n = name.rsplit('-', 2)
            if fmt == COMPUTE:
                compute[(int(p[1:]), int(n[1:]))] = dict(rep['seconds'], mean_update=rep['seconds_mean']['update'],
                                                         update_stddev=rep.get('update_spread', {}).get('stddev'))
                continue
            io_s[(fmt, int(p[1:]), int(n[1:]))] = (rep['io']['seconds_per_step'], rep['io']['bytes_written'] / STEPS)
            self.add_fom(f'{comparisons.safe_name(name)}_io_s', rep['io']['seconds_per_step'], 's', 'lower')
        p_max, n_max = max(self.ranks_list), max(self.sizes_list)
        self.compute_foms(compute, p_max, n_max)
        for fmt in self.formats:
            key = comparisons.safe_name(fmt)
            fits = io_fits.fit_by_ranks([(p, n, t) for (f, p, n), (t, _) in io_s.items() if f == fmt])
            error = None
            if fits and min(f.points for f in fits.values()) >= 3:   # two points fit any line exactly
                error = 100.0 * io_fits.combined_rms_error(fits)
                self.add_fom(f'{key}_fit_rms_error', error, '%', 'lower')
            for target in (16, 256):
                if error is None or error > self.max_fit_error:
                    self.observations.setdefault('not_extrapolated', {})[f'{fmt} {target}'] = (
                        f'fit error {error if error is None else round(error, 1)} % (limit {self.max_fit_error} %, '
                        'at least 3 sizes needed)')
                    continue
                try:
                    self.add_fom(f'{key}_seconds_{target}_ranks', io_fits.extrapolate(fits, n_max, target), 's', 'lower')
                except FitError as err:
                    self.observations.setdefault('not_extrapolated', {})[f'{fmt} {target}'] = str(err)
            self.add_fom(f'{key}_bytes_per_step', io_s[(fmt, p_max, n_max)][1], 'B', 'lower')
        at = {fmt: io_s[(fmt, p_max, n_max)][0] for fmt in self.formats if fmt in PAPER_FORMATS}
        if 'ascii' in at:
            self.add_ratios(at, 'ascii', 'time')
        if p_max < 16:
            self.observations['hdf5_over_binary_paper_finding'] = (
                f'not comparable: the paper\'s finding needs 16 ranks or more, this run had {p_max}; '
                'the ratios here are at that rank count')
        if 'binary' in at:
            for fmt in ('hdf5', 'hdf5-zlib'):
                if fmt in at:
                    name, value, unit, direction = comparisons.ratio_foms({fmt: at[fmt], 'binary': at['binary']},
                                                                          'binary', 'time')[0]
                    self.add_fom(name, value, unit, direction)
        self.file_count_foms(io_s, p_max, n_max)

    def file_count_foms(self, io_s, p_max, n_max):
        """The paper's file-count finding (many small HDF5 files vs few large ones): one writer, a file per
        PE over the whole grid in one file, at the largest case (< 1: the files per PE were faster)."""
        per_pe, one = io_s.get(('hdf5-zlib', p_max, n_max)), io_s.get(('hdf5-zlib-one-file', p_max, n_max))
        if per_pe and one and one[0] > 0:
            self.add_fom('hdf5_zlib_per_pe_over_one_file', per_pe[0] / one[0], 'x', 'lower')
        elif per_pe or one:
            comparisons.not_measured(self.observations, ['hdf5_zlib_per_pe_over_one_file'],
                                     'NOT MEASURED: needs the formats hdf5-zlib and hdf5-zlib-one-file')

    def compute_foms(self, compute, p_max, n_max):
        """Fig. 3's reference and the paper's communication share, from the runs without output: per
        (P, N) the updates' time of the 10 steps (slowest rank, as the paper) and halo exchange / updates."""
        for (p, n), sec in sorted(compute.items()):
            self.add_fom(f'p{p}_n{n}_compute_s_{STEPS}_steps', sec['update'], 's', 'lower')
            if p == p_max and n == n_max:
                self.add_fom(f'compute_s_{STEPS}_steps', sec['update'], 's', 'lower')
            if p > 1 and sec['update'] > 0:
                self.add_fom(f'p{p}_n{n}_halo_over_compute', sec['halo'] / sec['update'], 'x', 'lower')
                if p == p_max and n == n_max:
                    self.add_fom('halo_over_compute', sec['halo'] / sec['update'], 'x', 'lower')
            if p > 1 and sec['mean_update'] > 0 and sec['update_stddev'] is not None:
                spread = 100.0 * sec['update_stddev'] / sec['mean_update']   # the paper: "under 10 percent"
                self.add_fom(f'p{p}_n{n}_compute_spread', spread, '%', 'lower')
                if p == p_max and n == n_max:
                    self.add_fom('compute_spread', spread, '%', 'lower')
        if p_max < 2:
            comparisons.not_measured(self.observations, ['halo_over_compute', 'compute_spread'],
                                     'NOT MEASURED: one rank has no interface to exchange and no spread')
