"""Paper 001 like for like: output time per format against N^3, fitted, extrapolated, compared.

  IoOutputPaper   one job: every format (ascii, binary, hdf5 contiguous, hdf5-zlib: the paper's
                  chunked + shuffle + zlib layout) x every rank count (1, 2, 4 ... the partition's
                  cores x nodes; up to 2 ranks a core only with -S oversubscribe=true) x every
                  size N of the sweep (each rank an N^3 block, stacked along x; 10 steps written,
                  one file per rank per step as in the paper). `-S sizes=paper` runs the paper's 17
                  sizes 30, 40 ... 190 (large: ASCII at 190^3 x 8 ranks is ~5 GB per step);
                  the default `quick` runs 20, 30, 40; a list such as `-S sizes=30,60` any others.
FOMs: <format>_p<P>_n<N>_io_s (s per output step) and, per format, fit_rms_error (%, the fit
t = a + b N^3 per rank count, yeebench.io_fits; paper: 8 %), seconds_16_ranks and
seconds_256_ranks at the largest N (extrapolated over rank counts, a power law: our assumption,
the paper does not say how it extended its fit), bytes_per_step at the largest case (Fig. 4);
and at the largest rank count and N: <format>_over_ascii and hdf5_over_binary (time ratios,
< 1 = faster; paper: HDF5 beats binary only at >= 16 processes and > 1 GB). Outputs are
removed after each case.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import variable

from yeebench import comparisons, io_fits, launch, sweeps
from yeebench.fits import FitError
from yeebench.sweep_check import SolverSweep

#: format name -> yee options (hdf5-zlib: chunked, shuffle + deflate, paper 001's layout)
FORMATS = {'ascii': ['--output', 'ascii'], 'binary': ['--output', 'binary'], 'hdf5': ['--output', 'hdf5'],
           'hdf5-zlib': ['--output', 'hdf5', '--hdf5-compress', 'deflate']}
STEPS = 10


@rfm.simple_test
class IoOutputPaper(SolverSweep):
    '''Paper 001: every format x rank count x size in one job, fitted and compared.'''

    #: quick | paper | comma list of N (cells per axis per rank).
    sizes = variable(str, value='quick')

    #: Allow up to 2 ranks per core (the partition's cores x nodes is the limit otherwise).
    oversubscribe = variable(bool, value=False)

    #: Largest RMS error (%) of a format's fit for its extrapolation to 16 and 256 ranks to be recorded.
    max_fit_error = variable(float, value=25.0)

    #: Formats compared (keys of FORMATS).
    formats = variable(typ.List[str], value=list(FORMATS))

    rounds = 1
    tags = {'app', 'full'}
    # sizes where output outweighs the per-step fixed cost, best of 2 rounds: the fit stays within
    # max_fit_error here (about 50 s on 2 shared cores; reframe/papers/001.md)
    smoke_overrides = {'sizes': '24,32,40,48', 'rounds': 2, 'formats': ['ascii', 'binary', 'hdf5-zlib']}

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
        self.sizes_list = sizes
        env = {'OMP_NUM_THREADS': '1'}
        cases = []
        for p in self.ranks_list:
            per_node = min(-(-p // nodes), 2 * cores)
            prefix = self.launch_for(p, launch.packed_options(self, per_node, cores, list(env)))
            for n in sizes:
                for fmt in self.formats:
                    name = f'{fmt}-p{p}-n{n}'
                    opts = ['--nx', n * p, '--ny', n, '--nz', n, '--decomp', f'{p}x1x1', '--steps', STEPS,
                            '--init-mode', 'TM110+TE101', '--quiet', *FORMATS[fmt], '--output-strategy', 'per-rank',
                            '--output-dir', f'out-{comparisons.safe_name(name)}']
                    cases.append(sweeps.Case(name, prefix, env, options=tuple(str(o) for o in opts)))
        return cases

    def round_score(self, report):
        return -report['io']['seconds_per_step']    # each case keeps its fastest output round

    def guarded(self, case, line):
        return f'{line}\nrm -rf out-{comparisons.safe_name(case.name)}'

    def work_problems(self, best):
        problems = []
        for rep_name, rep in best.items():
            if rep.get('io', {}).get('steps_written') != STEPS:
                problems.append(f'{rep_name}: wrote {rep.get("io", {}).get("steps_written")} of {STEPS} steps')
        return problems

    def collect_sweep_foms(self):
        io_s = {}
        for name, rep in self.best.items():
            fmt, p, n = name.rsplit('-', 2)
            io_s[(fmt, int(p[1:]), int(n[1:]))] = (rep['io']['seconds_per_step'], rep['io']['bytes_written'] / STEPS)
            self.add_fom(f'{comparisons.safe_name(name)}_io_s', rep['io']['seconds_per_step'], 's', 'lower')
        p_max, n_max = max(self.ranks_list), max(self.sizes_list)
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
        at = {fmt: io_s[(fmt, p_max, n_max)][0] for fmt in self.formats}
        if 'ascii' in at:
            self.add_ratios(at, 'ascii', 'time')
        if 'binary' in at:
            for fmt in ('hdf5', 'hdf5-zlib'):
                if fmt in at:
                    name, value, unit, direction = comparisons.ratio_foms({fmt: at[fmt], 'binary': at['binary']},
                                                                          'binary', 'time')[0]
                    self.add_fom(name, value, unit, direction)
