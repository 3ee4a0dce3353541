"""The check files load cleanly and every experiment family has a smoke case (listing only, no runs)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FAMILIES = ('pt2pt', 'collectives', 'binding', 'numa', 'fdtd')


def run_reframe(*args, tmp_path):
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path))
    cmd = [str(reframe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local', *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def list_checks(*args, tmp_path):
    out = run_reframe('-l', *args, tmp_path=tmp_path)
    return out.stdout + out.stderr


def describe(*args, tmp_path):
    '''The checks' variables after their init hooks (reframe --describe), as a list of dicts.'''
    return json.loads(run_reframe('--describe', *args, tmp_path=tmp_path).stdout)


def test_every_family_loads_and_has_smoke_checks(tmp_path):
    files = [arg for f in FAMILIES for arg in ('-c', str(REPO / 'reframe/checks' / f'{f}.py'))]
    text = list_checks(*files, '-t', 'smoke', tmp_path=tmp_path)
    assert 'WARNING' not in text and 'skipping test file' not in text, text
    listed = [line for line in text.splitlines() if line.startswith('- ')]
    for prefix in ('NetPIPEPt2Pt', 'OsuPt2Pt', 'OsuCollective', 'AffinityPlacement', 'SolverPlacement',
                   'NumaBandwidth', 'NumaSolver', 'FdtdStrongScaling', 'FdtdWeakScaling'):
        assert any(line.startswith(f'- {prefix} ') for line in listed), f'no smoke case of {prefix}'
    assert len(listed) <= 16, 'the smoke set grew: keep it within 5 minutes on 2 cores'


def test_full_set_is_parameterised(tmp_path):
    text = list_checks('-c', str(REPO / 'reframe/checks/pt2pt.py'), '-t', 'full', tmp_path=tmp_path)
    listed = [line for line in text.splitlines() if line.startswith('- ')]
    # NetPIPE + 3 OSU benchmarks, x 3 transports x 2 localities
    assert len(listed) == (1 + 3) * 3 * 2


# (check file, check name, files each of its cases must keep in the output directory)
KEPT_REPORTS = [
    ('fdtd.py', 'FdtdStrongScaling', {'yee-report.json', 'yee-baseline.json'}),
    ('binding.py', 'SolverPlacement', {'yee-report.json', 'affinity.json'}),
    ('binding.py', 'AffinityPlacement', {'affinity.json'}),
    ('numa.py', 'NumaSolver', {'yee-report.json'}),
    ('numa.py', 'NumaBandwidth', {'numa-bw.json'}),
]


@pytest.mark.parametrize('check_file,name,files', KEPT_REPORTS, ids=[k[1] for k in KEPT_REPORTS])
def test_json_reports_are_kept_for_provenance(check_file, name, files, tmp_path):
    # ReFrame deletes a passing test's stage directory: only keep_files reach the output directory,
    # where `yeebench results ingest` looks for build info and observed bindings.
    cases = describe('-c', str(REPO / 'reframe/checks' / check_file), '-n', f'^{name}',
                     '-t', 'smoke', tmp_path=tmp_path)
    assert cases, f'no smoke case of {name}'
    for case in cases:
        assert files <= set(case['keep_files']), (case['display_name'], case['keep_files'])
