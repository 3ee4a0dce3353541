"""One table drives the OSU benchmarks: yeebench.osu.BENCHMARKS gives OsuPt2Pt and OsuCollective their
parameters and figure names, the OSU lookup its folders and `make test-osu` its iteration counts, so a
new point-to-point benchmark is one entry, and no consumer names a benchmark of its own."""
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_osu_checks import osu_home, stand_in

from yeebench import capabilities, osu

REPO = Path(__file__).resolve().parents[3]
PT2PT = REPO / 'reframe/yeebench/checks/pt2pt/pt2pt.py'
NEW = "osu.Benchmark('osu_example_bw', 'pt2pt', 'bandwidth_MBs', 'peak_example_bw', short_iterations=20)"
CASE = 'OsuPt2Pt%transport=ob1-vader%locality=intra%benchmark=osu_example_bw%buffers=host'

# ReFrame with one more entry in the table, the only change
WITH_ENTRY = f'''
import sys
from yeebench import osu
osu.BENCHMARKS += ({NEW},)
from reframe.frontend.cli import main
sys.argv[0] = 'reframe'
sys.exit(main())
'''


def reframe_with_entry(tmp_path, *args, env_extra=None):
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), YEEBENCH_PREFIX=str(tmp_path / 'prefix'))
    env.pop('OSU_HOME', None)
    env.update(env_extra or {})
    cmd = [sys.executable, '-c', WITH_ENTRY, '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local',
           '-c', str(PT2PT), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)


def test_the_table_is_what_the_checks_and_the_lookup_use():
    assert osu.names('pt2pt') == ['osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr']
    assert osu.collectives() == ['allreduce', 'bcast', 'alltoall']
    assert capabilities.OSU_KINDS == {'pt2pt': 'osu_latency', 'collective': 'osu_allreduce'}
    assert [osu.kind(b) for b in ('osu_multi_lat', 'osu_latency_mt', 'osu_bcast', 'osu_barrier')] == \
        ['pt2pt', 'pt2pt', 'collective', 'collective']
    assert osu.iterations_for() == 'osu_latency:1000,osu_bw:20,osu_bibw:20,osu_mbw_mr:20'
    assert osu.benchmark(osu.PINGPONG).column == 'latency_us'
    with pytest.raises(KeyError, match='not in yeebench.osu.BENCHMARKS'):
        osu.benchmark('osu_nothing')
    out = subprocess.run([sys.executable, '-m', 'yeebench.osu', 'iterations-for'], capture_output=True, text=True)
    assert out.stdout.strip() == osu.iterations_for(), out.stderr


def test_one_entry_is_a_new_osu_pt2pt_case(tmp_path):
    out = reframe_with_entry(tmp_path, '-n', '^OsuPt2Pt', '-l')
    assert out.returncode == 0, out.stdout + out.stderr
    listed = re.findall(r'^- OsuPt2Pt (.*?) /', out.stdout, re.M)
    assert len([c for c in listed if '%benchmark=osu_example_bw' in c]) == len(listed) // 5, listed


def test_one_entry_runs_with_its_figure_names(tmp_path):
    home = osu_home(tmp_path)
    bw = ''.join(f'{n:<10d}{n / 10:>18.2f}\n' for n in (1, 64, 1024, 2048, 4096))
    stand_in(home / 'libexec/osu-micro-benchmarks/mpi/pt2pt', 'osu_example_bw',
             '# OSU MPI Example Bandwidth Test v7.4\n# Datatype: MPI_CHAR.\n# Size      Bandwidth (MB/s)\n' + bw)
    report = tmp_path / 'report.json'
    out = reframe_with_entry(tmp_path, '-n', CASE, '-S', 'max_size=4096', '-r', '--report-file', str(report),
                             env_extra={'OSU_HOME': str(home)})
    cases = [c for run in json.loads(report.read_text())['runs'] for c in run['testcases']]
    assert [c['result'] for c in cases] == ['pass'], out.stdout + out.stderr
    figures = {key.rsplit(':', 1)[1]: value[0] for key, value in cases[0]['perfvalues'].items()}
    curve = {f'curve_bw_{n}B': n / 10 for n in (1, 64, 1024, 2048, 4096)}   # the curve itself, a figure a size
    assert set(figures) == {'peak_example_bw', 'example_bw_large', 'n_half'} | set(curve)
    assert figures['peak_example_bw'] == pytest.approx(409.6) and figures['example_bw_large'] == pytest.approx(409.6)
    assert {name: figures[name] for name in curve} == pytest.approx(curve)


# -- nothing but the table names a benchmark --------------------------------------------------------

KNOWN = {b.name for b in osu.BENCHMARKS}
CONSUMERS = ['reframe/yeebench/checks/pt2pt/pt2pt.py', 'reframe/yeebench/checks/collectives/collectives.py',
             'reframe/yeebench/capabilities.py', 'reframe/yeebench/osu.py']


def code_strings(path):
    '''String constants of a module's code, docstrings left out.'''
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


@pytest.mark.parametrize('consumer', CONSUMERS)
def test_no_consumer_names_a_benchmark(consumer):
    path = REPO / consumer
    named = {w for s in code_strings(path) for w in re.findall(r'osu_[a-z_]+', s) if w in KNOWN}
    if consumer == 'reframe/yeebench/osu.py':   # the table itself, and the ping-pong it points at
        assert named == KNOWN
        assert len(re.findall(r"^\s+Benchmark\('osu_", path.read_text(), re.M)) == len(KNOWN)
    else:
        assert not named, f'{consumer} names {sorted(named)}: take them from yeebench.osu.BENCHMARKS'


def test_make_test_osu_takes_the_iterations_from_the_table():
    text = (REPO / 'microbench/osu.mk').read_text()
    code = '\n'.join(line for line in text.splitlines() if not line.lstrip().startswith('#'))
    assert not {w for w in re.findall(r'osu_[a-z_]+', code) if w in KNOWN}
    assert 'iterations_for=$(OSU_ITERATIONS_FOR)' in code and '-m yeebench.osu iterations-for' in code
