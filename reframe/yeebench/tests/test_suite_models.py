"""Hockney fit, n_1/2, interpolation; references; NetPIPE lookup; MPI selections (OSU: test_osu_*.py)."""
import json
import stat
from pathlib import Path

import pytest

from yeebench import fits, launch, mpi, references, tools
from yeebench import curve_foms
from yeebench.parsers import netpipe, osu

DATA = Path(__file__).parent / 'data'


def test_hockney_recovers_a_line():
    sizes = [1, 8, 64, 512, 4096, 32768, 262144]
    alpha, beta = fits.hockney_fit(sizes, [2.0 + 0.001 * n for n in sizes])
    assert alpha == pytest.approx(2.0) and beta == pytest.approx(0.001)


def test_hockney_on_recorded_netpipe():
    rows = netpipe.parse_np_out((DATA / 'netpipe' / 'np-default.out').read_text())
    alpha, beta = fits.hockney_fit([r['bytes'] for r in rows], [r['latency_us'] for r in rows])
    assert 0 < alpha < 2 * max(r['latency_us'] for r in rows[:4])
    assert 0 < 1 / beta < 10 * max(r['bandwidth_MBs'] for r in rows)


def test_hockney_needs_two_sizes():
    with pytest.raises(fits.FitError):
        fits.hockney_fit([8, 8], [1.0, 1.0])


def test_n_half_and_interpolation():
    assert fits.n_half([1, 2, 4, 8], [1, 2, 4, 8]) == pytest.approx(4.0)
    assert fits.n_half([1, 2, 4], [1.0, 3.0, 4.0]) == pytest.approx(1.5)
    assert fits.interpolate([1, 100], [1, 100], 10) == pytest.approx(10)
    with pytest.raises(fits.FitError):
        fits.interpolate([], [], 1)


def test_reference_lookup(tmp_path):
    (tmp_path / 'sys.json').write_text(json.dumps({'partitions': {
        '*': {'OsuPt2Pt*': {'latency_1B': [1.0, None, 0.5, 'us']}},
        'cpu': {'OsuPt2Pt %benchmark=osu_latency*': {'latency_1B': [0.8, None, 0.2, 'us']}}}}))
    data = references.load('sys', tmp_path)
    assert references.lookup(data, 'cpu', ['OsuPt2Pt %benchmark=osu_latency %x=1']) == {
        'latency_1B': (0.8, None, 0.2, 'us')}
    assert references.lookup(data, 'gpu', ['OsuPt2Pt %benchmark=osu_bw']) == {'latency_1B': (1.0, None, 0.5, 'us')}
    assert references.lookup(data, 'cpu', ['Other']) == {}
    assert references.load('absent', tmp_path) == {}
    (tmp_path / 'bad.json').write_text('{')
    with pytest.raises(references.ReferenceError, match='not valid JSON'):
        references.load('bad', tmp_path)
    (tmp_path / 'short.json').write_text(json.dumps({'partitions': {'*': {'X': {'v': [1]}}}}))
    with pytest.raises(references.ReferenceError, match='expected'):
        references.lookup(references.load('short', tmp_path), 'p', ['X'])


def test_shipped_reference_files_are_valid():
    for path in references.DEFAULT_DIR.glob('*.json'):
        data = references.load(path.stem)
        for checks in data['partitions'].values():
            for values in checks.values():
                assert all(isinstance(v, list) and len(v) == 4 for v in values.values()), path


def test_local_references_bound_nothing_a_busy_machine_can_move():
    # `local` is any machine under any load: only sign bounds (a rate or an efficiency is never negative)
    for pattern, values in references.load('local', references.DEFAULT_DIR)['partitions']['*'].items():
        for var, (value, lower, upper, _) in values.items():
            assert upper is None and lower is not None and value * (1 + lower) <= 0, (pattern, var)


def make_exe(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_netpipe_on_path(tmp_path):
    exe = make_exe(tmp_path / 'NPmpi')
    assert tools.find_netpipe({'PATH': str(tmp_path)}) == str(exe)
    assert tools.find_netpipe({'PATH': str(tmp_path / 'none')}) is None


def test_collective_selections():
    assert mpi.collective_env('allreduce', 'tuned:ring') == {
        'OMPI_MCA_coll': 'self,basic,libnbc,tuned', 'OMPI_MCA_coll_tuned_use_dynamic_rules': '1',
        'OMPI_MCA_coll_tuned_allreduce_algorithm': '4'}
    assert mpi.collective_env('bcast', 'basic') == {'OMPI_MCA_coll': 'self,basic,libnbc'}
    assert 'han' in mpi.collective_env('alltoall', 'han')['OMPI_MCA_coll']
    assert mpi.implementations('bcast')[0] == 'tuned' and mpi.implementations('bcast')[-4:] == ['han', 'basic', 'ucc', 'hcoll']
    with pytest.raises(ValueError, match='no forced tuned algorithm'):
        mpi.collective_env('bcast', 'tuned:ring')
    with pytest.raises(ValueError, match='unknown collective implementation'):
        mpi.collective_env('bcast', 'fca')
    # UCC and HCOLL (FCA's successors) where Open MPI has them: selected and given priority
    assert mpi.collective_env('allreduce', 'ucc') == {
        'OMPI_MCA_coll': 'self,basic,libnbc,tuned,ucc', 'OMPI_MCA_coll_ucc_enable': '1',
        'OMPI_MCA_coll_ucc_priority': '100'}
    assert mpi.collective_env('bcast', 'hcoll')['OMPI_MCA_coll'].endswith(',hcoll')


def test_pair_options():
    assert launch.pair_options('mpirun', False) == ['--map-by', 'core', '--bind-to', 'core']
    assert launch.pair_options('srun', True) == ['--nodes=2', '--ntasks-per-node=1', '--cpu-bind=cores']
    assert launch.pair_options('srun', False) == ['--nodes=1', '--ntasks-per-node=2', '--cpu-bind=cores']
    assert launch.pair_options('local', True) == []


def test_best_at_or_above():
    assert fits.best_at_or_above([1, 4, 16, 64], [9.0, 5.0, 7.0, 6.0], 16) == 7.0
    with pytest.raises(fits.FitError, match='no message size >= 128 B'):
        fits.best_at_or_above([1, 4, 16, 64], [1.0] * 4, 128)


def _foms(*args, **kwargs):
    return {name: (value, unit, direction) for name, value, unit, direction in
            curve_foms.curve_foms(*args, **kwargs)}


def test_netpipe_foms_include_bw_large():
    # NPopenmpi -u 65536: bw_large is the best of 16, 24, 32, 48 and 64 KiB (np.out column 2, Mbps)
    rows = netpipe.parse_np_out((DATA / 'netpipe' / 'np-default.out').read_text())
    foms = _foms([r['bytes'] for r in rows], [r['latency_us'] for r in rows],
                 [r['bandwidth_MBs'] for r in rows], 'peak_bw', 65536)
    assert set(foms) == {'latency_1B', 'latency_4KB', 'hockney_alpha', 'hockney_beta', 'peak_bw',
                         'bw_large', 'n_half'}
    assert foms['bw_large'] == (pytest.approx(13471.349187 * 2 ** 20 / 8 / 1e6), 'MB/s', 'higher')
    # with a 128 KiB maximum only the 32-64 KiB sizes count
    small = _foms([r['bytes'] for r in rows], bandwidth=[r['bandwidth_MBs'] for r in rows], max_size=131072)
    assert small['bw_large'][0] == pytest.approx(foms['bw_large'][0])
    with pytest.raises(fits.FitError):
        _foms([r['bytes'] for r in rows], bandwidth=[r['bandwidth_MBs'] for r in rows], max_size=1 << 20)


def test_bw_large_ignores_a_mid_size_burst():
    # recorded osu_bw (OSU 7.0 fork) whose peak is at 2 KB, far above every large message
    table = osu.parse((DATA / 'osu' / '7.0-osu_bw.txt').read_text())
    sizes, bw = table.column('bandwidth_MBs')
    foms = _foms(sizes, bandwidth=bw, peak_name='peak_bw', max_size=65536)
    assert foms['peak_bw'][0] == pytest.approx(3689.13)
    assert foms['bw_large'][0] == pytest.approx(141.35)   # best of 16, 32, 64 KiB
    # a token bucket on a 125 MB/s link: bursts at mid sizes, the rate at large ones
    sizes = [2 ** k for k in range(10, 24)]
    shaped = [125.0 * (1 + 65536 / n) if n <= 65536 else 125.0 * (1 + 65536 / n) ** 0.1 for n in sizes]
    foms = _foms(sizes, bandwidth=shaped, max_size=sizes[-1])
    assert foms['peak_bw'][0] > 2 * 125 and foms['bw_large'][0] == pytest.approx(125.0, rel=0.03)


def test_bibw_and_pingpong_names():
    table = osu.parse((DATA / 'osu' / '7.4-osu_bibw.txt').read_text())
    sizes, bw = table.column('bandwidth_MBs')
    foms = _foms(sizes, bandwidth=bw, peak_name='peak_bibw', max_size=65536)
    assert foms['bibw_large'][0] == pytest.approx(20174.79) and 'bw_large' not in foms
    lat = osu.parse((DATA / 'osu' / '7.4-osu_latency.txt').read_text())
    foms = _foms(*lat.column('latency_us'), max_size=65536)
    assert not {'peak_bw', 'bw_large'} & set(foms) and 'n_half' in foms
