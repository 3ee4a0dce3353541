"""The acceptance checks' jobs in ReFrame's idioms, generated (--dry-run) for the Slurm template with a
launch host PATH that holds nothing: a probe is a build fixture compiled on a node (SingleSource) and
run as the check's executable; a series of runs is the job's program (`bash sweep.sh`), never
`true` with the work hidden in pre-run commands."""
import subprocess
import sys
from pathlib import Path

import pytest
from checkfiles import check_file

from yeebench import acceptance_check as rfm

REPO = Path(__file__).resolve().parents[3]


def dry_run(tmp_path, names, *files):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = {'HOME': str(tmp_path), 'PATH': str(tmp_path / 'empty'), 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm')}
    out = subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'generic-slurm',
                          '-p', 'host', *[a for f in files for a in ('-c', str(check_file(f)))], '-n', names,
                          '--dry-run', '--flex-alloc-nodes=2'],
                         capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert out.returncode == 0 and 'FAIL' not in out.stdout, out.stdout + out.stderr
    return tmp_path / 'rfm'


def test_the_multicast_probe_is_a_build_fixture_run_as_the_executable(tmp_path):
    rfm_dir = dry_run(tmp_path, 'AcceptanceMulticast', 'acceptance_multicast.py')
    (build,) = [p.read_text() for p in rfm_dir.rglob('McastProbe*/rfm_build.sh')]
    assert '#SBATCH' in build                                  # a job on a node, not the launch host
    assert 'mpicc -O2 mcast.c -o mcast' in build                # ReFrame's SingleSource line
    # the ERR trap lifted, the guard, the compile, then the reason when the compile left no program
    assert build.index('trap _onerror ERR') < build.index('trap - ERR') < build.index('command -v mpicc')
    assert build.index('command -v mpicc') < build.index('mpicc -O2 mcast.c') < build.index('[ -x mcast ] ||')
    assert f'> {rfm.PROBE_NOT_BUILT}' in build
    (job,) = [p.read_text() for p in rfm_dir.rglob('AcceptanceMulticast*/rfm_job.sh')]
    assert '/McastProbe' in job and '/mcast --count' in job and 'mpicc' not in job


def test_sweeps_are_the_jobs_program(tmp_path):
    rfm_dir = dry_run(tmp_path, 'AcceptanceScaling|AcceptanceStorage%tool=dd', 'acceptance_scaling.py',
                     'acceptance_storage.py')
    jobs = {p.parent.name: p for p in rfm_dir.rglob('rfm_job.sh') if p.parent.name.startswith('Acceptance')}
    assert len(jobs) == 3, sorted(jobs)                        # scaling yee and triad, storage dd
    for name, path in jobs.items():
        script = path.read_text()
        assert 'bash sweep.sh' in script and '\ntrue' not in script, script
        sweep = (path.parent / 'sweep.sh').read_text()
        runs = {'triad': 'triad_mpi --bytes', 'yee': '/bin/yee --nx', 'dd': 'dd if=/dev/zero'}
        assert any(run in sweep for run in runs.values()), sweep
    sweeps = [(p.parent / 'sweep.sh').read_text() for p in jobs.values()]
    (triad,) = [s for s in sweeps if 'triad_mpi --bytes' in s]
    assert triad.startswith('mpicc -O2 -fopenmp -o triad_mpi triad_mpi.c\n')
    assert sum('/bin/yee --nx' in s for s in sweeps) == 1 and sum('dd if=/dev/zero' in s for s in sweeps) == 1


def test_run_sweep_writes_the_script_and_keeps_it(tmp_path):
    from types import SimpleNamespace
    from yeebench import sweeps
    test = SimpleNamespace(stagedir=str(tmp_path), keep_files=['x.json'], executable=None, executable_opts=[],
                           job=SimpleNamespace(launcher=None))
    sweeps.run_sweep(test, ['echo a', 'echo b'])
    assert (tmp_path / 'sweep.sh').read_text() == 'echo a\necho b\n'
    assert (test.executable, test.executable_opts, test.keep_files) == ('bash', ['sweep.sh'], ['x.json', 'sweep.sh'])
    assert test.job.launcher.registered_name == 'local'  # each line launches itself


@pytest.mark.parametrize('memory, sized', [('24Gi', True), ('4Gi', False)])
def test_triad_arrays_of_four_times_a_260_mib_cache_need_the_memory_to_hold_them(tmp_path, memory, sized):
    """A VM reporting a big host's last-level cache sizes the arrays from it only where the node's memory
    holds them with room to spare; else the case skips, naming the variable that sizes them."""
    import json
    from test_suite_checks import run_reframe
    report = tmp_path / 'report.json'
    run_reframe('-c', str(check_file('acceptance_scaling.py')), '-n', 'AcceptanceScaling%program=triad',
                '-p', 'host', '--dry-run', '--report-file', str(report), tmp_path=tmp_path / 'rfm',
                env_extra={'YEEBENCH_SIMULATE_HW': f'llc=260Mi,cores=2,numa=1,mem={memory}'})
    (case,) = [c for run in json.loads(report.read_text())['runs'] for c in run['testcases']
               if c['display_name'].startswith('AcceptanceScaling')]
    if sized:
        assert case['result'] != 'skip', case.get('fail_reason')
        (sweep,) = (tmp_path / 'rfm').rglob('AcceptanceScaling*/sweep.sh')
        assert f'--bytes {4 * 260 * 2**20}' in sweep.read_text()
    else:
        reason = (case.get('observations') or {}).get('skip_reason') or case.get('fail_reason') or ''
        assert case['result'] == 'skip' and '3 arrays of 4 x last-level cache' in reason, reason
        assert 'need 3.0 GiB, more than 50% of the node\'s 4.0 GiB' in reason and 'triad_bytes=BYTES' in reason, reason
