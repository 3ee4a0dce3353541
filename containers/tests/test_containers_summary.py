"""containers/ci_summary.py: the figures ci-build.sh records, and its refusal of skipped comparisons."""
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / 'ci_summary.py'
spec = importlib.util.spec_from_file_location('containers_ci_summary', SCRIPT)
ci_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci_summary)

SMOKE_LOG = ('[ \x1b[32m PASSED \x1b[0m ] Ran 14/16 test case(s) from 16 check(s) '
             '(0 failure(s), 0 expected failure(s), 2 skipped, 0 aborted)\n')


def report(results, ratio=97.5):
    cases = []
    for name, result in results.items():
        cases.append({'name': f'{name} %container.where=container %native.where=native', 'result': result,
                      'perfvalues': {'local:default:ratio_mcells': [ratio, 0, None, None, '%', 'pass'],
                                     'local:default:native_mcells': [315.1, 0, None, None, 'Mcells/s', 'pass']},
                      'perf_directions': {'ratio_mcells': 'higher', 'native_mcells': 'higher'},
                      'system': 'local', 'partition': 'default', 'environ': 'host'})
    cases.append({'name': 'SolverRun %where=native', 'result': 'pass', 'perfvalues': {}})
    return {'session_info': {}, 'runs': [{'testcases': cases}]}


def run(tmp_path, results=None, smoke=SMOKE_LOG, extra=(), ratio=97.5):
    out = tmp_path / 'ci.json'
    argv = ['--out', str(out), '--image', 'yeebench:latest', '--size', '760000000',
            '--timing', 'build=268', '--timing', 'smoke=80', *extra]
    if smoke is not None:
        (tmp_path / 'smoke.log').write_text(smoke)
        argv += ['--smoke-log', str(tmp_path / 'smoke.log')]
    if results is not None:
        (tmp_path / 'report.json').write_text(json.dumps(report(results, ratio)))
        argv += ['--reframe-report', str(tmp_path / 'report.json')]
    code = ci_summary.main(argv)
    return code, (json.loads(out.read_text()) if out.exists() else None)


def test_passing_run_records_smoke_timings_and_ratios(tmp_path):
    code, doc = run(tmp_path, {'SolverContainerVsNative': 'pass', 'NetpipeContainerVsNative': 'pass'})
    assert code == 0
    assert doc['smoke'] == {'ran': 14, 'total': 16, 'failures': 0}
    assert doc['seconds'] == {'build': 268, 'smoke': 80}
    assert doc['native_vs_container']['SolverContainerVsNative']['ratio_mcells'] == [97.5, '%']
    assert not (tmp_path / 'ci.json.tmp').exists()
    assert doc['plausibility'] == []


def test_a_container_leg_far_from_the_native_one_is_a_warning_not_a_failure(tmp_path, capsys):
    # 510.5 %: recorded by make test-containers-spack at load 2 to 4 (containers/README.md)
    code, doc = run(tmp_path, {'SolverContainerVsNative': 'pass', 'NetpipeContainerVsNative': 'pass'}, ratio=510.5)
    assert code == 0
    assert len(doc['plausibility']) == 2 and 'x5.1 faster than natively' in doc['plausibility'][0]
    assert 'ci_summary: warning: SolverContainerVsNative: ratio_mcells 510.5%' in capsys.readouterr().err


@pytest.mark.parametrize('results', [{'SolverContainerVsNative': 'pass', 'NetpipeContainerVsNative': 'skip'},
                                     {'SolverContainerVsNative': 'pass'}])
def test_a_skipped_or_missing_comparison_fails_the_run(tmp_path, results, capsys):
    code, _ = run(tmp_path, results)
    assert code == 1 and 'NetpipeContainerVsNative' in capsys.readouterr().err


def test_smoke_failures_fail_the_run(tmp_path):
    log = SMOKE_LOG.replace('(0 failure(s)', '(2 failure(s)')
    assert run(tmp_path, smoke=log)[0] == 1


@pytest.mark.parametrize('smoke,extra', [('no summary here\n', ()), (SMOKE_LOG, ('--timing', 'build'))])
def test_bad_input_is_a_one_line_error_with_exit_2(tmp_path, smoke, extra, capsys):
    code, doc = run(tmp_path, smoke=smoke, extra=extra)
    err = capsys.readouterr().err
    assert code == 2 and doc is None and err.startswith('ci_summary: error:') and err.count('\n') == 1


def test_unreadable_report_is_exit_2(tmp_path, capsys):
    code = ci_summary.main(['--out', str(tmp_path / 'x.json'), '--image', 'i', '--size', '1',
                            '--reframe-report', str(tmp_path / 'missing.json')])
    assert code == 2 and 'cannot read' in capsys.readouterr().err


def test_cluster_partitions_get_one_entry_each_and_all_must_pass():
    def case(name, system, result):
        return {'name': f'{name} %x', 'system': system.split(':')[0],
                'partition': system.split(':')[1], 'result': result,
                'perfvalues': {f'{system}:ratio_mcells': [99.0, None, None, None, '%']}}
    report = {'runs': [{'testcases': [case('SolverContainerVsNative', 'vcluster:srun', 'pass'),
                                      case('SolverContainerVsNative', 'vcluster:mpirun', 'fail'),
                                      case('NetpipeContainerVsNative', 'vcluster:srun', 'pass')]}]}
    found = ci_summary.comparisons(report)
    assert set(found) == {'SolverContainerVsNative@vcluster:srun', 'SolverContainerVsNative@vcluster:mpirun',
                          'NetpipeContainerVsNative@vcluster:srun'}
    assert found['SolverContainerVsNative@vcluster:srun']['ratio_mcells'] == [99.0, '%']
    assert ci_summary.not_passed(found) == ['SolverContainerVsNative@vcluster:mpirun']


def test_a_spack_built_image_records_its_baked_lock_and_a_malformed_hash_is_refused(tmp_path, capsys):
    lock = 'e2' * 32
    code, doc = run(tmp_path, results={'SolverContainerVsNative': 'pass', 'NetpipeContainerVsNative': 'pass'},
                    extra=['--sha256', 'ab' * 32, '--spack-lock-sha256', lock])
    assert code == 0 and doc['image_spack_lock_sha256'] == lock and doc['image_sha256'] == 'ab' * 32
    (tmp_path / 'ci.json').unlink()
    code, doc = run(tmp_path, extra=['--spack-lock-sha256', 'e3b0c442 -'])
    assert code == 2 and doc is None
    assert "image_spack_lock_sha256 must be 64 hex digits, got 'e3b0c442 -'" in capsys.readouterr().err
