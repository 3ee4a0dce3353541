"""The papers' comparison checks: listing, smoke membership, and the job script each one writes (dry runs)."""
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from checkfiles import check_file
from test_suite_checks import list_checks, listed, run_reframe

FILES = ('binding_sweep', 'numa_sweep', 'node_scaling', 'fdtd_messages', 'fdtd_collectives', 'io_paper', 'acceptance_multicast')
SMOKE = ('FdtdBindingSweep', 'FdtdNumaSweep %placement=per-socket', 'FdtdNodeScaling', 'FdtdPackingSweep %ranks=2',
         'FdtdMessageStats %ranks=2', 'HaloMessageSizes', 'FdtdCollectiveProfile', 'IoOutputPaper',
         'AcceptanceMulticast')


def _files(*names):
    return [arg for f in names or FILES for arg in ('-c', str(check_file(f)))]


def test_the_paper_checks_load_and_their_smoke_cases(tmp_path):
    text = list_checks(*_files(), '--mode', 'smoke', tmp_path=tmp_path, nvidia_smi='exit 9')
    assert 'WARNING' not in text and 'skipping test file' not in text, text
    names = [line[2:].split(' /')[0] for line in listed(text)]
    assert sorted(names) == sorted(SMOKE)
    full = [line[2:].split(' /')[0] for line in listed(list_checks(*_files(), tmp_path=tmp_path, nvidia_smi='exit 9'))]
    assert {f'FdtdNumaSweep %placement={p}' for p in ('per-node', 'per-socket', 'per-core')} <= set(full)
    assert {f'FdtdPackingSweep %ranks={r}' for r in (2, 4, 8, 16, 32, 64)} <= set(full)


def _script(tmp_path, name, *args):
    run_reframe(*_files(), '-n', name, '--dry-run', *args, tmp_path=tmp_path)
    (script,) = list(Path(tmp_path).glob(f'**/stage/**/{name.split("%")[0]}*/sweep.sh'))
    return [line for line in script.read_text().splitlines() if line != 'set -e']


def _words(line):
    return shlex.split(line.replace(';', ' ; '))


def test_binding_sweep_runs_every_placement_on_the_same_grid_and_cores(tmp_path):
    lines = _script(tmp_path, 'FdtdBindingSweep', '-S', 'rounds=2')
    assert len(lines) == 12                                   # 3 placements x 2 methods x 2 rounds, interleaved
    reports = [re.search(r'--report (\S+)', line).group(1) for line in lines]
    assert reports[:6] == ['case-per_node-r0.json', 'case-per_socket-r0.json', 'case-per_core-r0.json',
                           'case-per_node_rankfile-r0.json', 'case-per_socket_rankfile-r0.json',
                           'case-per_core_rankfile-r0.json']
    for line in lines:
        rankfile = re.search(r'--rankfile (\S+)', line)
        assert bool(rankfile) == ('_rankfile-r' in line), line
        assert ('--map-by' in line) != bool(rankfile), line
        if rankfile:
            (stage,) = {p.parent for p in Path(tmp_path).glob('**/stage/**/FdtdBindingSweep*/sweep.sh')}
            text = (stage / rankfile.group(1)).read_text()
            assert re.fullmatch(r'(rank \d+=\S+ slot=[\d,-]+\n)+', text), text
            assert '--mca rmaps_rank_file_physical 1' in line
    grids = {tuple(w for w in _words(line) if re.fullmatch(r'\d+', w))[-2:] for line in lines}
    assert len(grids) == 1, grids                             # --n G --steps S identical in every case
    workers = set()
    for line in lines:
        env = dict(w.split('=', 1) for w in _words(line) if re.fullmatch(r'OMP_NUM_THREADS=\d+', w))
        np = int(_words(line)[_words(line).index('-np') + 1]) if '-np' in _words(line) else 1
        workers.add(np * int(env['OMP_NUM_THREADS']))
    assert len(workers) == 1, workers                         # ranks x threads alike: the node's cores


def test_binding_sweep_rankfile_cases_skip_with_the_reason_where_srun_launches(tmp_path):
    # srun takes no rankfile: the --map-by cases still run (generic-slurm launches with srun)
    run_reframe(*_files('binding_sweep'), '-n', 'FdtdBindingSweep', '-p', 'host', '--dry-run',
                '--flex-alloc-nodes=1', tmp_path=tmp_path, system='generic-slurm')
    (script,) = list(Path(tmp_path).glob('**/stage/**/FdtdBindingSweep*/sweep.sh'))
    text = script.read_text()
    assert 'case-per_socket-r0.json' in text and '--rankfile' not in text and 'rankfile-r' not in text


def _check_module(name):
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location(f'{name}_under_test', check_file(name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # ReFrame looks its test classes' files up through it
    spec.loader.exec_module(module)
    return module


def _binding_foms(rates):
    from yeebench.sweep_check import SolverSweep
    module = _check_module('binding_sweep')

    class Recorder:
        add_ratios = SolverSweep.add_ratios
        cannot_differ = None   # 2 sockets per node: per socket and per node can differ

        def __init__(self):
            self.best, self.foms = {n: {'mcells_per_s': v} for n, v in rates.items()}, {}

        def add_fom(self, name, value, unit, direction):
            self.foms[name] = (round(value, 3), unit, direction)
    rec = Recorder()
    module.FdtdBindingSweep.collect_count_foms(rec, rec.best, '')
    return rec.foms


def test_binding_sweep_ratios_per_method_and_between_methods():
    foms = _binding_foms({'per-node': 49, 'per-socket': 53, 'per-core': 27,
                          'per-node-rankfile': 50, 'per-socket-rankfile': 54, 'per-core-rankfile': 30})
    assert foms['per_socket_over_per_core'] == (1.963, 'x', 'higher')
    assert foms['per_socket_rankfile_over_per_core_rankfile'] == (1.8, 'x', 'higher')   # rankfile vs rankfile
    assert foms['per_core_rankfile_over_per_core'] == (1.111, 'x', 'higher')
    assert 'per_socket_rankfile_over_per_core' not in foms                            # never across methods
    assert foms['per_socket_over_per_node'] == (1.082, 'x', 'higher')                  # the paper's 5300 / 4900
    assert 'per_socket_rankfile_over_per_node_rankfile' in foms
    assert len(foms) == 2 + 2 + 3 + 2


def test_binding_sweep_ratios_without_rankfile_cases():
    assert sorted(_binding_foms({'per-node': 49, 'per-socket': 53, 'per-core': 27})) == \
        ['per_node_over_per_core', 'per_socket_over_per_core', 'per_socket_over_per_node']


def test_io_sweep_keeps_each_cases_fastest_output_round():
    score = _check_module('io_paper').IoOutputPaper.round_score
    fast_io = {'mcells_per_s': 10, 'io': {'seconds_per_step': 0.01}}
    fast_solver = {'mcells_per_s': 90, 'io': {'seconds_per_step': 0.05}}
    assert max((fast_solver, fast_io), key=lambda r: score(None, r)) is fast_io
    # the run without output (the compute reference) keeps its fastest round
    slow, fast = ({'io': {'format': 'none', 'seconds_per_step': 0}, 'seconds': {'total': t}} for t in (0.2, 0.1))
    assert max((slow, fast), key=lambda r: score(None, r)) is fast


def test_numa_sweep_baseline_is_unbound_and_policies_are_bound(tmp_path):
    lines = _script(tmp_path, 'FdtdNumaSweep%placement=per-core', '-S', 'rounds=1')
    unpinned, local, inter = lines
    assert 'case-unpinned-r0.json' in unpinned and 'numactl' not in unpinned
    assert '--bind-to none' in unpinned and 'OMP_PROC_BIND=false' in unpinned
    for line, policy in ((local, '--localalloc'), (inter, '--interleave=all')):
        assert f'if why=$(numactl {policy} true 2>&1)' in line and '--bind-to core' in line
        assert f'numactl {policy} ' in line.split('; then ', 1)[1]


def test_collective_profile_allreduces_every_step_under_each_implementation(tmp_path):
    lines = _script(tmp_path, 'FdtdCollectiveProfile', '-S', 'rounds=1')
    assert [re.search(r'--report case-(\w+)-r0', line).group(1) for line in lines] == \
        ['tuned', 'han', 'basic', 'ucc', 'hcoll']
    assert all('--energy-every 1' in line for line in lines)
    assert 'OMPI_MCA_coll=self,basic,libnbc ' in lines[2]
    for line, comp in zip(lines[3:], ('ucc', 'hcoll')):
        assert line.startswith(f"if ompi_info --parsable 2>/dev/null | grep -q '^mca:coll:{comp}:'; then")
        assert f"no coll/{comp} component (ompi_info)' > case-{comp}.skip" in line


def test_io_sweep_runs_the_papers_sizes_per_format_and_rank_count(tmp_path):
    lines = [line for line in _script(tmp_path, 'IoOutputPaper', '-S', 'sizes=paper', '-S', 'formats=ascii,hdf5-zlib')
             if not line.startswith('rm -rf ')]
    sizes = sorted({int(re.search(r'--ny (\d+)', line).group(1)) for line in lines})
    assert sizes == list(range(30, 191, 10))
    zlib = [line for line in lines if 'out-hdf5_zlib_p' in line]
    # the paper's configuration: one writer, a file per PE, one 3-D dataset of records, zlib, fsync, a point source
    assert zlib and all('--output hdf5 --hdf5-layout records --hdf5-compress deflate --output-strategy root-per-rank '
                        '--output-fsync' in line and '--init-mode none --source ricker' in line for line in zlib)
    ascii_lines = [line for line in lines if 'out-ascii_p' in line]
    assert ascii_lines and all('--output ascii --ascii-layout coordinates --output-strategy root-per-rank'
                               in line for line in ascii_lines)
    ranks = {re.search(r'_p(\d+)_n', line).group(1) for line in lines if ' --output ' in line}
    # two formats and the run without output (the compute reference) per size and rank count
    assert len(lines) == 3 * 17 * len(ranks)
    assert sum(' --output ' not in line for line in lines) == 17 * len(ranks)


def test_multicast_without_an_mpi_compiler_on_the_node_is_not_measured_with_the_reason(tmp_path):
    # A runtime-only image has no mpicc: the job must say so, not fail to launch a probe it never built.
    out = run_reframe(*_files('acceptance_multicast'), '-n', 'AcceptanceMulticast', '--mode', 'smoke',
                      '-S', 'mpicc=no-such-mpicc', '-r', tmp_path=tmp_path)
    text = out.stdout + out.stderr
    assert 'NOT MEASURED AcceptanceMulticast: no-such-mpicc not found on the node PATH' in text, text
    (script,) = list(Path(tmp_path).glob('**/stage/**/McastProbe*/rfm_build.sh')) or \
        list(Path(tmp_path).glob('**/output/**/McastProbe*/rfm_build.sh'))
    assert subprocess.run(['bash', '-n', str(script)]).returncode == 0


def test_multicast_whose_compiler_wrapper_cannot_build_is_not_measured_with_the_reason(tmp_path):
    # Debian's runtime openmpi-bin ships mpicc without gcc: the wrapper exists and fails.
    wrapper = tmp_path / 'broken-mpicc'
    wrapper.write_text('#!/bin/sh\necho "wrapper: no underlying compiler" >&2\nexit 1\n')
    wrapper.chmod(0o755)
    out = run_reframe(*_files('acceptance_multicast'), '-n', 'AcceptanceMulticast', '--mode', 'smoke',
                      '-S', f'mpicc={wrapper}', '-r', tmp_path=tmp_path)
    text = out.stdout + out.stderr
    assert 'could not build the mcast probe: wrapper: no underlying compiler' in text, text


def _curve_foms(module_name, check, reports, all_nodes, curve):
    from yeebench import sweeps
    from yeebench.sweep_check import SolverSweep
    cls = getattr(_check_module(module_name), check)

    class Recorder:
        add_ratios, by_count, count_suffixes = SolverSweep.add_ratios, SolverSweep.by_count, SolverSweep.count_suffixes
        collect_foms = SolverSweep.collect_foms
        collect_count_foms, collect_sweep_foms = cls.collect_count_foms, cls.collect_sweep_foms
        cannot_differ = None

        def __init__(self):
            self.sweep_nodes, self.curve, self.foms = all_nodes, curve, {}
            self.best = {sweeps.counted(name, n, all_nodes): rep for (name, n), rep in reports.items()}
            self.case_count = {sweeps.counted(name, n, all_nodes): (name, n) for name, n in reports}

        def add_fom(self, name, value, unit, direction):
            self.foms[name] = round(value, 3)
    rec = Recorder()
    rec.collect_foms()
    return rec.foms


def test_collective_profile_records_each_node_counts_ratio_to_tuned():
    def rep(rate):
        return {'mcells_per_s': rate, 'seconds_mean': {'total': 10.0, 'halo': 1.0, 'reduce': 1.0, 'update': 8.0}}
    foms = _curve_foms('fdtd_collectives', 'FdtdCollectiveProfile',
                       {('tuned', 1): rep(10), ('han', 1): rep(10), ('tuned', 2): rep(20), ('han', 2): rep(23)}, 2, [1, 2])
    assert foms['han_over_tuned_1_nodes'] == 1.0 and foms['han_over_tuned_2_nodes'] == 1.15
    assert foms['han_over_tuned'] == 1.15                        # the plain name: all nodes
    assert foms['han_mcells_per_s_1_nodes'] == 10 and foms['tuned_allreduce_share_2_nodes'] == 10.0
    assert 'han_over_tuned_1_nodes' not in _curve_foms(           # one count: the plain names only
        'fdtd_collectives', 'FdtdCollectiveProfile', {('tuned', 1): rep(10), ('han', 1): rep(10)}, 1, [1])


def test_binding_sweep_forms_ratios_within_each_node_count_only():
    def rep(rate):
        return {'mcells_per_s': rate}
    foms = _curve_foms('binding_sweep', 'FdtdBindingSweep',
                       {('per-core', 1): rep(10), ('per-socket', 1): rep(20),
                        ('per-core', 4): rep(30), ('per-socket', 4): rep(45)}, 4, [1, 4])
    assert foms['per_socket_over_per_core_1_nodes'] == 2.0
    assert foms['per_socket_over_per_core_4_nodes'] == foms['per_socket_over_per_core'] == 1.5


def test_a_shape_that_is_not_three_sizes_is_one_line_not_an_unpacking_error(tmp_path):
    out = run_reframe(*_files('fdtd_messages'), '-n', 'FdtdMessageStats%ranks=2', '-S', 'shape=abc', '--dry-run',
                      tmp_path=tmp_path, expect_rc=1)
    text = out.stdout + out.stderr
    assert "FdtdMessageStats: shape='abc' is not NXxNYxNZ" in text, text
    assert 'value error' not in text and 'unpack' not in text, text


def test_grid_shapes():
    from reframe.core.exceptions import ReframeError

    from yeebench.solver import grid_shape
    assert grid_shape('800x400x4', 'C') == ('800', '400', '4')
    for bad in ('abc', '1x2', '1x2x3x4', '0x1x1', '1x-2x3', '\u00b2x1x1', '', 'x1x1'):
        with pytest.raises(ReframeError, match=r"C: shape=.* is not NXxNYxNZ"):
            grid_shape(bad, 'C')
