"""The smoke set is declared once (`is_smoke_case` + `smoke_overrides`, applied by the base class):
a run without the `smoke` variable (`--mode smoke`, `-S smoke=true`) never gets smoke sizes, a run
with it always does, for every family; the tag only selects."""
import os
from pathlib import Path

import pytest

from checkfiles import check_file
from test_suite_checks import REPO, describe


@pytest.fixture(scope='module')
def described(tmp_path_factory):
    checks = str(REPO / 'reframe/yeebench/checks')
    full = describe('-c', checks, '-R', tmp_path=tmp_path_factory.mktemp('full'))
    smoke = describe('-c', checks, '-R', '--mode', 'smoke', tmp_path=tmp_path_factory.mktemp('smoke'))
    return {c['unique_name']: c for c in full}, {c['unique_name']: c for c in smoke}


def test_every_smoke_case_declares_its_overrides_and_gets_them_only_in_smoke_mode(described):
    full, smoke = described
    assert smoke, 'no smoke cases'
    for name, case in smoke.items():
        overrides = case['smoke_overrides']
        # every member of a solver or probe family runs smaller in a smoke run (acceptance and io
        # cases are small already)
        if any(name.startswith(p) for p in ('Fdtd', 'Solver', 'Numa', 'Osu', 'NetPIPE')):
            assert overrides, f'{name}: a smoke case without smoke overrides'
        for var, value in overrides.items():
            assert case[var] == value, f'{name}: --mode smoke did not apply {var}={value!r}'
            assert full[name][var] != value, f'{name}: a full run got the smoke value {var}={value!r}'
        assert case['observations'].get('smoke_overrides', {}) == overrides or not overrides


def test_full_run_members_of_the_smoke_set_keep_full_sizes(described):
    full, _ = described
    members = [c for c in full.values() if 'smoke' in c['tags']]
    assert members
    for case in members:
        assert 'smoke_overrides' not in case['observations'], case['unique_name']


NETPIPE = 'NetPIPEPt2Pt%transport=ob1-vader%locality={}'


@pytest.mark.parametrize('options, smoke', [
    ((), False),                                  # a full run
    (('-t', 'smoke'), False),                     # the tag selects the smoke cases, and nothing more
    (('--mode', 'smoke'), True),                  # the suite configuration's mode: -t smoke -S smoke=true
    (('-S', 'smoke=true'), True),                 # the variable alone, as under any site configuration
    (('-t', 'smoke', '-S', 'smoke=true'), True),  # what to write where the configuration has no such mode
])
def test_the_smoke_variable_is_what_applies_the_smoke_sizes(tmp_path, options, smoke):
    cases = describe('-c', str(check_file('pt2pt')), '-n', NETPIPE.format('intra'),
                     '-n', NETPIPE.format('inter'), *options, tmp_path=tmp_path)
    sizes = {c['display_name'].split('%locality=')[1]: (c['smoke'], c['max_size']) for c in cases}
    assert sizes['intra'] == (smoke, 65536 if smoke else 4194304)     # a member of the smoke set
    if 'smoke' not in options:                    # selected: the inter-node case, no member, keeps its size
        assert sizes['inter'] == (smoke, 4194304), 'smoke sizes applied outside the smoke set'


def test_job_balance_has_a_smoke_case(described):
    _, smoke = described
    assert [n for n in smoke if n.startswith('FdtdJobBalance')], 'FdtdJobBalance has no smoke case'


def test_smoke_numa_bw_arrays_are_four_times_the_last_level_cache(tmp_path):
    # a smoke run's memory figure must not be a cache figure: arrays of >= 4x the node's LLC
    import re
    import subprocess
    import sys

    from yeebench import scaling
    llc, _ = scaling.llc_from_sysfs()
    if not llc:
        pytest.skip('this machine reports no last-level cache in sysfs')
    exe = Path(sys.executable).parent / 'reframe'
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path), YEEBENCH_PREFIX=str(REPO / 'build/install'))
    out = subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local',
                          '-c', str(REPO / 'reframe/yeebench/checks/numa/numa.py'), '-n', 'NumaBandwidth%policy=none',
                          '--mode', 'smoke', '--dry-run'], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = [p.read_text() for p in tmp_path.rglob('rfm_job.sh') if 'NumaBandwidth' in str(p)]
    sizes = [int(m) for s in scripts for m in re.findall(r'numa-bw --size (\d+)', s)]
    assert sizes and all(size >= 4 * llc for size in sizes), (sizes, llc)
