"""What the Spack stage checks after each step (spack/stage_facts.py), on recorded and synthetic inputs,
and that a run is given spack.lock's hash in its provenance only when it used the Spack binaries."""
import copy
import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage_facts  # noqa: E402
from stage_facts import FactError  # noqa: E402

from yeebench.results.ingest import ingest  # noqa: E402

FIXTURE_REPORT = (Path(__file__).resolve().parents[2] / 'reframe' / 'yeebench' / 'results' / 'tests' /
                  'fixtures' / 'reports' / 'fixture_run_a.json')

CTEST_OK = '''    Start 7: io_equality
7/9 Test #7: io_equality ......................***Skipped   0.39 sec
9/9 Test #9: io_check .........................***Skipped   0.39 sec
8/9 Test #8: io_errors ........................***Skipped   0.32 sec

100% tests passed, 0 tests failed out of 9

The following tests did not run:
\t  7 - io_equality (Skipped)
'''


def test_ctest_counts_passed_skipped_and_failed(tmp_path):
    log = tmp_path / 'log'
    log.write_text(CTEST_OK)
    assert stage_facts.ctest_counts('yee', log).startswith('yee: ctest 9 tests, 6 passed, 3 skipped, 0 failed (build of ')
    log.write_text('89% tests passed, 1 tests failed out of 9\n')
    with pytest.raises(FactError, match='1 failed'):
        stage_facts.ctest_counts('yee', log)
    log.write_text('No tests were found!!!\n')
    with pytest.raises(FactError, match='no ctest summary'):
        stage_facts.ctest_counts('yee', log)
    with pytest.raises(FactError, match='--overwrite yee'):
        stage_facts.ctest_counts('yee', tmp_path / 'missing')


def test_spack_test_run_needs_passes_and_no_failure(tmp_path):
    log = tmp_path / 'log'
    log.write_text('PASSED: Yee::test_small_cavity\nSKIPPED: Yee::test_gpu\nPASSED: YeebenchMicrobench::test_halo\n')
    assert stage_facts.test_run_counts(log).startswith('spack test run: 2 passed, 1 skipped, 0 failed')
    log.write_text(log.read_text() + 'FAILED: YeebenchMicrobench::test_affinity\n')
    with pytest.raises(FactError, match='test_affinity'):
        stage_facts.test_run_counts(log)
    log.write_text('==> No installed packages match spec yee\n')
    with pytest.raises(FactError):
        stage_facts.test_run_counts(log)


def test_lock_summary_counts_externals(tmp_path):
    lock = tmp_path / 'spack.lock'
    lock.write_text(json.dumps({'concrete_specs': {
        'a': {'name': 'yee'}, 'b': {'name': 'openmpi', 'external': {'path': '/usr'}},
        'c': {'name': 'gcc', 'external': {'path': '/usr'}}}}))
    assert stage_facts.lock_summary(lock) == '3 specs: 2 external, 1 from source (yee)'


def fake_report(tmp_path, cases):
    '''A report holding the fixture report's first case once per (environ, executable, opts, mcells, name);
    mcells is also the 1-core baseline the solver checks record.'''
    report = json.loads(FIXTURE_REPORT.read_text())
    template = report['runs'][0]['testcases'][0]
    report['runs'][0]['testcases'] = []
    for environ, exe, opts, mcells, name in cases:
        case = copy.deepcopy(template)
        case.update(environ=environ, executable=exe, executable_opts=opts, name=name, display_name=name,
                    unique_name=name.split()[0], result='pass', fixture=False,
                    perfvalues={'local:default:mcells_per_s': [mcells, 0, None, None, 'Mcells/s', 'pass']},
                    observations={'layout': {'baseline_mcells_per_s': mcells}})
        report['runs'][0]['testcases'].append(case)
    path = tmp_path / 'report.json'
    path.write_text(json.dumps(report))
    return path


SOLVER_1CORE = 'FdtdStrongScaling %backend=cpu %cores_used=1 %threads_per_rank=1'
WEAK_2CORES = 'FdtdWeakScaling %backend=cpu %cores_used=2 %threads_per_rank=1'


def test_origins_and_ratio_from_one_run(tmp_path):
    view, prefix = tmp_path / 'view', tmp_path / 'install'
    report = fake_report(tmp_path, [
        ('spack', f'{view}/bin/yee', [], 200.0, SOLVER_1CORE),
        ('spack', f'{view}/bin/yee', [], 120.0, WEAK_2CORES),
        ('host', f'{prefix}/bin/yee', [], 250.0, SOLVER_1CORE),
        ('host', f'{prefix}/bin/yee', [], 180.0, WEAK_2CORES),
        ('spack', 'numactl', ['--localalloc', f'{view}/bin/numa-bw'], 1.0, 'NumaBandwidth %policy=localalloc'),
    ])
    assert stage_facts.origins(report, view, prefix).startswith('programs: 3 -p spack cases from the view')
    line = stage_facts.write_ratio(report, tmp_path / 'ratio.json')
    assert 'Mcells/s = 0.800 (best of 2: 200.0 / best of 2: 250.0' in line
    doc = json.loads((tmp_path / 'ratio.json').read_text())
    assert doc['ratio'] == pytest.approx(0.8) and doc['samples'] == {'spack': [200.0, 120.0], 'cmake': [250.0, 180.0]}


def test_a_spack_case_running_a_program_outside_the_view_fails(tmp_path):
    view = tmp_path / 'view'
    report = fake_report(tmp_path, [('spack', '/usr/bin/NPopenmpi', ['-o', 'np.out'], 1.0, 'NetPIPEPt2Pt')])
    with pytest.raises(FactError, match='NPopenmpi'):
        stage_facts.origins(report, view, tmp_path)


def _sweep_case(tmp_path, program):
    """A `bash sweep.sh` case whose kept script launches `program` (an executable file)."""
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text('#!/bin/sh\n')
    program.chmod(0o755)
    out = tmp_path / 'output'
    out.mkdir(exist_ok=True)
    (out / 'sweep.sh').write_text(f'set -e\nenv OMP_NUM_THREADS=1 mpirun -np 1 {program} --report r.json\n')
    report = fake_report(tmp_path, [('spack', 'bash', ['sweep.sh'], 1.0, 'FdtdBindingSweep')])
    doc = json.loads(report.read_text())
    doc['runs'][0]['testcases'][0]['outputdir'] = str(out)
    report.write_text(json.dumps(doc))
    return report


def test_a_sweep_case_is_judged_by_the_programs_its_kept_script_runs(tmp_path):
    view = tmp_path / 'view'
    report = _sweep_case(tmp_path, view / 'bin' / 'yee')
    assert stage_facts.origins(report, view, tmp_path / 'install').startswith('programs: 1 -p spack case')
    outside = _sweep_case(tmp_path, tmp_path / 'install' / 'bin' / 'yee')
    with pytest.raises(FactError, match='install/bin/yee'):
        stage_facts.origins(outside, view, tmp_path / 'install')


def test_a_program_linked_by_the_solver_fixture_counts_where_its_link_points(tmp_path):
    prefix, stage_bin = tmp_path / 'install', tmp_path / 'stage' / 'SolverBinary' / 'bin'
    (prefix / 'bin').mkdir(parents=True)
    (prefix / 'bin' / 'yee').write_text('')
    stage_bin.mkdir(parents=True)
    (stage_bin / 'yee').symlink_to(prefix / 'bin' / 'yee')
    (stage_bin / 'own-yee').symlink_to('../install/bin/yee')     # a build of its own: not the prefix
    (tmp_path / 'view' / 'bin').mkdir(parents=True)        # a Spack view links into the install tree
    (tmp_path / 'view' / 'bin' / 'yee').symlink_to(tmp_path / 'opt' / 'yee-main-abc' / 'bin' / 'yee')
    report = fake_report(tmp_path, [('spack', f'{tmp_path}/view/bin/yee', [], 1.0, SOLVER_1CORE),
                                    ('host', str(stage_bin / 'yee'), [], 1.0, SOLVER_1CORE)])
    assert stage_facts.origins(report, tmp_path / 'view', prefix).endswith(f'1 -p host from {prefix}')
    report = fake_report(tmp_path, [('spack', f'{tmp_path}/view/bin/yee', [], 1.0, SOLVER_1CORE),
                                    ('host', str(stage_bin / 'own-yee'), [], 1.0, SOLVER_1CORE)])
    with pytest.raises(FactError, match='own-yee|install/bin/yee'):
        stage_facts.origins(report, tmp_path / 'view', prefix)


def test_no_ratio_without_both_environments(tmp_path):
    report = fake_report(tmp_path, [('spack', '/v/bin/yee', [], 200.0, SOLVER_1CORE)])
    with pytest.raises(FactError, match='-p host'):
        stage_facts.mcells_samples(report)


@pytest.mark.parametrize('environ, recorded', [('builtin', False), ('spack', True)])
def test_spack_lock_is_in_the_provenance_only_of_runs_on_spack_binaries(tmp_path, monkeypatch, environ,
                                                                        recorded):
    report = json.loads(FIXTURE_REPORT.read_text())
    for case in report['runs'][0]['testcases']:
        case['environ'] = environ
    (tmp_path / 'report.json').write_text(json.dumps(report))
    (tmp_path / 'spack.lock').write_text('{"concrete_specs": {}}')
    monkeypatch.chdir(tmp_path)
    run_dir = ingest(tmp_path / 'report.json', tmp_path / 'results')
    lock = json.loads((Path(run_dir) / 'provenance.json').read_text())['environment_image']['spack_lock_sha256']
    assert lock == (hashlib.sha256((tmp_path / 'spack.lock').read_bytes()).hexdigest() if recorded else None)


def test_a_case_whose_program_is_built_in_the_job_is_named_not_judged(tmp_path):
    view = tmp_path / 'view'
    report = fake_report(tmp_path, [('spack', f'{view}/bin/yee', [], 1.0, SOLVER_1CORE),
                                    ('spack', './mcast', ['--count', '200'], 1.0, 'AcceptanceMulticast')])
    with pytest.raises(FactError, match=r"AcceptanceMulticast in -p spack ran './mcast'"):
        stage_facts.origins(report, view, tmp_path / 'install')        # untagged: a program from nowhere
    doc = json.loads(report.read_text())
    doc['runs'][0]['testcases'][1]['tags'] = ['acceptance', 'smoke', 'built-in-job']
    report.write_text(json.dumps(doc))
    line = stage_facts.origins(report, view, tmp_path / 'install')
    assert line.startswith(f'programs: 1 -p spack cases from the view {view}')
    assert line.endswith('; not judged, their program is built in the job (tag built-in-job): AcceptanceMulticast')


def test_the_tag_is_the_check_librarys_and_the_stage_excludes_no_check_that_carries_it():
    import ast
    from yeebench.base import BUILT_IN_JOB
    assert stage_facts.BUILT_IN_JOB == BUILT_IN_JOB
    repo = Path(__file__).resolve().parents[2]
    tagged = {node.name for path in (repo / 'reframe' / 'yeebench' / 'checks').glob('*/*.py')
              for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)
              and any(isinstance(n, ast.Name) and n.id == 'BUILT_IN_JOB' for n in ast.walk(node))}
    assert 'AcceptanceMulticast' in tagged, tagged
    stage = (repo / 'spack' / 'stage.sh').read_text()
    assert [name for name in tagged if f'-x {name}' in stage] == []
