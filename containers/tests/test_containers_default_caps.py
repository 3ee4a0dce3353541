"""containers/default_caps_verdict.py and the default-capability stage's entry (make test-containers-default-caps)."""
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERDICT = REPO / 'containers' / 'default_caps_verdict.py'
REFUSED = {'mechanism': 'none', 'reason': 'probe refused: Read -1, expected 65539, errno = 1'}


def run_verdict(tmp_path, cases):
    path = tmp_path / 'report.json'
    path.write_text(json.dumps({'runs': [{'testcases': cases}]}))
    return subprocess.run([sys.executable, str(VERDICT), str(path)], capture_output=True, text=True)


def test_passed_and_reasoned_skips_pass_and_each_decision_is_printed(tmp_path):
    proc = run_verdict(tmp_path, [
        {'display_name': 'NetPIPEPt2Pt %transport=ob1-vader', 'result': 'pass',
         'observations': {'single_copy': REFUSED}},
        {'display_name': 'NumaBandwidth %policy=localalloc', 'result': 'skip',
         'observations': {'skip_reason': 'set_mempolicy: Operation not permitted'}}])
    assert proc.returncode == 0, proc.stderr
    assert ('default-caps: single-copy none for NetPIPEPt2Pt %transport=ob1-vader '
            '(probe refused: Read -1, expected 65539, errno = 1)') in proc.stdout
    assert 'skipped NumaBandwidth %policy=localalloc: set_mempolicy: Operation not permitted' in proc.stdout


def test_a_failure_a_silent_skip_or_an_undecided_probe_fails_the_stage(tmp_path):
    for case, why in (({'display_name': 'A', 'result': 'fail', 'fail_reason': 'MPI error on stderr: Read -1'},
                       'A: fail: MPI error on stderr'),
                      ({'display_name': 'B', 'result': 'skip'}, 'B skipped without a reason'),
                      ({'display_name': 'C', 'result': 'pass', 'observations': {'single_copy': {'mechanism': None}}},
                       'C: single-copy undecided'),
                      ({'display_name': 'NetPIPEPt2Pt %transport=ob1-vader %locality=intra', 'result': 'pass'},
                       'ran without a single-copy decision')):
        proc = run_verdict(tmp_path, [case, {'display_name': 'D', 'result': 'pass'}])
        assert proc.returncode == 1 and why in proc.stderr, (why, proc.stderr)
    assert 'no case passed' in run_verdict(tmp_path, []).stderr
    bad = subprocess.run([sys.executable, str(VERDICT), str(tmp_path / 'missing.json')], capture_output=True, text=True)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1


def test_the_stage_rejects_an_unknown_step_list_in_one_line():
    proc = subprocess.run(['bash', 'containers/ci-build.sh'], cwd=REPO, capture_output=True, text=True,
                          env={'PATH': '/usr/bin:/bin', 'CI_BUILD_STEPS': 'everything'})
    assert proc.returncode == 2 and proc.stdout.strip().splitlines() == [
        'ci-build: error: CI_BUILD_STEPS=everything: expected all, default-caps or images']


def test_make_runs_it_after_the_image_stage():
    text = (REPO / 'containers' / 'containers.mk').read_text()
    assert 'TEST_TARGETS += test-containers test-containers-default-caps' in text
    assert 'CI_BUILD_STEPS=default-caps' in text


def test_the_container_runs_make_run_on_a_copy_of_a_read_only_checkout_with_default_capabilities():
    script = (REPO / 'containers' / 'default-caps-run.sh').read_text()
    command = re.search(r'^timeout \d+ docker run (.*?)> "\$log"', script, re.S | re.M).group(1)
    assert '--cap-add' not in command and '--privileged' not in command and '--security-opt' not in command
    assert '-u OMPI_MCA_btl_vader_single_copy_mechanism -u UCX_TLS' in command
    assert '"$repo:/checkout:ro"' in script
    inside = script.split("inside='", 1)[1].split("'\n", 1)[0]
    assert '\nrc=0; make run || rc=$?\n' in inside and 'tar -C /checkout' in inside


def test_the_run_script_rejects_a_wrong_argument_count_in_one_line():
    proc = subprocess.run(['bash', 'containers/default-caps-run.sh', 'only-an-image'], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and 'usage:' in proc.stderr
