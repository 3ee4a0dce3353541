"""The OSU checks through ReFrame with stand-in OSU programs: smoke settings only under `--mode smoke`,
skip reasons naming where OSU was looked for, and a collective beating its bound failing the case."""
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from checkfiles import check_file

from yeebench import osu

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parent / 'data'
VADER_LATENCY = 'OsuPt2Pt%transport=ob1-vader%locality=intra%benchmark=osu_latency%buffers=host'   # declaration order


def stand_in(folder, name, output=''):
    '''An executable `name` printing `output` from rank 0 only (as OSU does).'''
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text('#!/bin/sh\n[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0\ncat <<\'EOF\'\n' + output + 'EOF\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def reframe(tmp_path, *args, env_extra=None):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), YEEBENCH_PREFIX=str(tmp_path / 'prefix'))
    env.pop('OSU_HOME', None)
    env.update(env_extra or {})
    cmd = [str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local', *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)


def job_scripts(tmp_path):
    return {p.parent.name: p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_job.sh')}


def osu_home(tmp_path):
    home = tmp_path / 'osu'
    for name in ('osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr'):
        stand_in(home / 'libexec/osu-micro-benchmarks/mpi/pt2pt', name)
    for name in ('osu_allreduce', 'osu_bcast', 'osu_alltoall'):
        stand_in(home / 'libexec/osu-micro-benchmarks/mpi/collective', name)
    return home


# -- defect: smoke settings leaked into full runs ------------------------------------------------

@pytest.mark.parametrize('check, name, full, smoke', [
    ('pt2pt.py', VADER_LATENCY, '-m 4194304', '-m 65536'),
    ('collectives.py', 'OsuCollective%case=allreduce:tuned%num_procs=2%buffers=host', '-m 1048576', '-m 4096'),
    ('pt2pt.py', 'NetPIPEPt2Pt%transport=ob1-vader%locality=intra', '-u 4194304', '-u 65536 -n 200'),
])
def test_smoke_sizes_only_when_the_run_selects_smoke(tmp_path, check, name, full, smoke):
    env = {'OSU_HOME': str(osu_home(tmp_path))}
    args = ['-c', str(check_file(check)), '-n', name, '--dry-run']
    out = reframe(tmp_path / 'full', *args, env_extra=env)
    scripts = job_scripts(tmp_path / 'full')
    assert out.returncode == 0 and len(scripts) == 1, out.stdout + out.stderr
    assert full in next(iter(scripts.values())), scripts
    out = reframe(tmp_path / 'smoke', *args, '--mode', 'smoke', env_extra=env)
    scripts = job_scripts(tmp_path / 'smoke')
    assert out.returncode == 0 and len(scripts) == 1, out.stdout + out.stderr
    assert smoke in next(iter(scripts.values())), scripts


# -- defect: the "not found" reason did not say where it looked ----------------------------------

def test_missing_osu_names_every_place_searched(tmp_path):
    prefix = tmp_path / 'build/install'
    env = {'PATH': str(tmp_path / 'empty'), 'YEEBENCH_PREFIX': str(prefix)}
    reason = osu.locate('osu_bw', env).reason
    for place in ('OSU_HOME (not set)', 'PATH (no osu_bw)', 'Spack view (no active environment)',
                  f"{prefix}/libexec/osu-micro-benchmarks (not built: run make build)"):
        assert place in reason, reason
    (tmp_path / 'build/osu-build.failed').parent.mkdir(parents=True)
    (tmp_path / 'build/osu-build.failed').write_text('build-osu: /x/osu.tar.gz: gunzip failed (not a valid gzip file)\n')
    assert '(build-osu: /x/osu.tar.gz: gunzip failed' in osu.locate('osu_bw', env).reason


def test_an_installed_package_names_no_build_of_its_own(tmp_path, monkeypatch):
    # a wheel in site-packages has no checkout: no build/install beside it, nothing to `make`
    monkeypatch.setattr(osu.package_data, 'checkout_root', lambda: None)
    reason = osu.locate('osu_bw', {'PATH': str(tmp_path / 'empty')}).reason
    assert "the suite's build (none: an installed package, YEEBENCH_PREFIX not set)" in reason, reason
    assert 'make build' not in reason and 'site-packages' not in reason, reason
    assert osu.suite_prefix({}) is None


def test_osu_home_pointing_at_nothing_is_its_own_reason(tmp_path):
    stand_in(tmp_path / 'bin', 'osu_bw')    # another OSU on PATH must not be taken silently
    env = {'OSU_HOME': str(tmp_path / 'typo'), 'PATH': str(tmp_path / 'bin')}
    found = osu.locate('osu_bw', env)
    assert found.path is None and f'OSU_HOME={tmp_path}/typo does not exist' in found.reason
    (tmp_path / 'empty-home').mkdir()
    found = osu.locate('osu_bw', dict(env, OSU_HOME=str(tmp_path / 'empty-home')))
    assert found.path is None and 'has no osu_bw' in found.reason


@pytest.mark.parametrize('layout', ['c/mpi/pt2pt/standard', 'mpi/pt2pt', 'libexec/osu-micro-benchmarks/mpi/pt2pt'])
def test_osu_home_in_every_layout(tmp_path, layout):
    exe = stand_in(tmp_path / layout, 'osu_latency')
    found = osu.locate('osu_latency', {'OSU_HOME': str(tmp_path), 'PATH': ''})
    assert found.path == str(exe.resolve()) and found.origin == 'OSU_HOME'


def test_search_order_path_spack_then_suite_build(tmp_path):
    suite = stand_in(tmp_path / 'prefix/libexec/osu-micro-benchmarks/mpi/collective', 'osu_allreduce')
    env = {'PATH': str(tmp_path / 'empty'), 'YEEBENCH_PREFIX': str(tmp_path / 'prefix')}
    assert osu.locate('osu_allreduce', env).origin == 'suite build'
    spack_env = tmp_path / 'env'
    (spack_env).mkdir()
    (spack_env / 'spack.yaml').write_text('spack:\n  view: true\n')
    stand_in(spack_env / '.spack-env/view/libexec/osu-micro-benchmarks/mpi/collective', 'osu_allreduce')
    assert osu.locate('osu_allreduce', dict(env, SPACK_ENV=str(spack_env))).origin == 'spack view'
    stand_in(tmp_path / 'bin', 'osu_allreduce')
    found = osu.locate('osu_allreduce', dict(env, SPACK_ENV=str(spack_env), PATH=str(tmp_path / 'bin')))
    assert found.origin == 'PATH' and found.path != str(suite)


def test_missing_osu_skips_the_checks_with_the_reason(tmp_path):
    out = reframe(tmp_path, '-c', str(REPO / 'reframe/yeebench/checks/pt2pt/pt2pt.py'), '-n', VADER_LATENCY,
                  '-r', env_extra={'PATH': f'{tmp_path}/empty:/usr/bin:/bin'})
    assert out.returncode == 0, out.stdout
    assert re.search(r'SKIP .*OSU Micro-Benchmarks not found: searched OSU_HOME \(not set\); PATH \(no osu_latency\)',
                     re.sub(r'\x1b\[[0-9;]*m', '', out.stdout)), out.stdout


# -- defect: collective efficiencies over 100% passed unnoticed -----------------------------------

def osu_table(title, rows):
    return (f'# OSU MPI {title} v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n' +
            ''.join(f'{n:<10d}{t:>18.2f}\n' for n, t in rows))


SIZES = [2 ** k for k in range(0, 13)]


@pytest.mark.parametrize('allreduce_us, expect', [(lambda n: 10.0 + n / 100, 'OK'), (lambda n: 0.5, 'FAIL')])
def test_collective_under_its_bound_fails_with_the_reason(tmp_path, allreduce_us, expect):
    home = osu_home(tmp_path)
    # ping-pong: 2 us + 1 ns/B, so the allreduce bound at p=2 is 1 us + 0.5 ns/B
    stand_in(home / 'libexec/osu-micro-benchmarks/mpi/pt2pt', 'osu_latency',
             osu_table('Latency Test', [(n, 2.0 + n / 1000) for n in SIZES]))
    stand_in(home / 'libexec/osu-micro-benchmarks/mpi/collective', 'osu_allreduce',
             osu_table('Allreduce Latency Test', [(n, allreduce_us(n)) for n in SIZES]))
    out = reframe(tmp_path, '-c', str(REPO / 'reframe/yeebench/checks/collectives/collectives.py'),
                  '-n', 'OsuCollective%case=allreduce:tuned%num_procs=2%buffers=host',
                  '-S', 'max_size=4096', '-r', env_extra={'OSU_HOME': str(home)})
    text = re.sub(r'\x1b\[[0-9;]*m', '', out.stdout)
    assert re.search(rf'\[\s*{expect}\s*\]', text), text
    if expect == 'FAIL':
        assert re.search(r'allreduce at 1 B took 0.50 us, below its lower bound 1.00 us: efficiency 200% '
                         r'exceeds 100% by more than the 10% noise', text), text
    else:   # the raw ping-pong curves stay with the case's output
        kept = {p.name for p in (tmp_path / 'rfm').rglob('output/**/pingpong-*.txt')}
        assert kept == {'pingpong-1.txt', 'pingpong-2.txt', 'pingpong-3.txt'}, kept


# -- the virtual cluster's smoke run measures OSU intra vs inter on the shaped link -----------------

def test_vcluster_smoke_runs_the_osu_pairs():
    from yeebench.vcluster import smoke
    cmd = ' '.join(smoke.reframe_command('/tmp/out', 'vcluster', with_suite=True))
    for transport, locality in (('ob1-vader', 'intra'), ('ob1-tcp', 'inter')):
        for benchmark in ('osu_latency', 'osu_bw'):
            assert f'OsuPt2Pt%transport={transport}%locality={locality}%benchmark={benchmark}%buffers=host' in cmd


@pytest.mark.parametrize('inter_bw, inter_lat, ok', [(118.0, 40.0, True), (150.0, 40.0, False), (118.0, 0.2, False)])
def test_vcluster_verify_judges_osu_rows(inter_bw, inter_lat, ok):
    from yeebench.vcluster import verify as V
    rows = [V.Row('OsuPt2Pt', 'mpirun', 'intra', 'bw_large', 6000.0, 'MB/s', 'pass'),
            V.Row('OsuPt2Pt', 'mpirun', 'intra', 'latency_1B', 0.4, 'us', 'pass'),
            V.Row('OsuPt2Pt', 'mpirun', 'inter', 'bw_large', inter_bw, 'MB/s', 'pass'),
            V.Row('OsuPt2Pt', 'mpirun', 'inter', 'latency_1B', inter_lat, 'us', 'pass')]
    good, lines = V.verify(rows, 1e9, 0.15)
    assert good is ok and any('OsuPt2Pt@mpirun: inter-node bw_large' in line for line in lines), lines
