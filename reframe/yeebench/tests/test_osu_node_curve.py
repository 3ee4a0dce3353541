"""OsuCollectiveNodeCurve: the job it plans per node count, the figures it forms from OSU's tables, and
its skips, with stand-in OSU programs under the real launcher of the `local` system."""
import math
import os
import re
from pathlib import Path

import pytest
from checkfiles import check_file
from test_osu_checks import osu_home, osu_table, reframe, stand_in
from test_paper_checks import _check_module
from yeebench import sweeps

SIZES = [2 ** k for k in range(0, 13)]
HAN = 'OsuCollectiveNodeCurve%case=allreduce:han'


@pytest.fixture(scope='module')
def curve():
    return _check_module('osu_node_curve')


def _table(times):
    return osu_table('Allreduce Latency Test', list(zip(SIZES, times)))


def test_each_size_keeps_its_lowest_latency_over_the_rounds(curve):
    assert curve.best_curve([([1, 2], [5.0, 9.0]), ([1, 2], [6.0, 7.0])]) == {1: 5.0, 2: 7.0}


def test_two_counts_give_two_suffixed_sets_and_the_plain_names_on_all_nodes(curve):
    from yeebench.parsers import osu as parser
    impl = parser.parse(_table([2.0 * (1 + k) for k in range(13)])).column('latency_us')
    tuned = parser.parse(_table([1.0 * (1 + k) for k in range(13)])).column('latency_us')
    faster = parser.parse(_table([0.5 * (1 + k) for k in range(13)])).column('latency_us')
    foms = {}
    for count, curves in ((1, {'impl': curve.best_curve([impl]), 'tuned': curve.best_curve([tuned])}),
                          (2, {'impl': curve.best_curve([faster]), 'tuned': curve.best_curve([tuned])})):
        for suffix in sweeps.count_suffixes(count, 2, [1, 2]):
            foms.update({n: v for n, v, _, _ in curve.count_foms('han', curves, suffix)})
    assert set(foms) == {f'{f}{s}' for f in ('latency_1B', 'latency_4096B', 'latency_1B_over_tuned',
                                             'latency_4096B_over_tuned', 'over_tuned')
                         for s in ('_1_nodes', '_2_nodes', '')}
    assert foms['over_tuned_1_nodes'] == pytest.approx(2.0) and foms['over_tuned_2_nodes'] == pytest.approx(0.5)
    assert foms['over_tuned'] == foms['over_tuned_2_nodes'] and foms['latency_4096B_1_nodes'] == 26.0


def test_over_tuned_is_the_geometric_mean_of_the_ratios_over_every_size(curve):
    ratios = [1.0, 4.0] + [2.0] * 11
    foms = {n: v for n, v, _, _ in curve.count_foms(
        'han', {'impl': dict(zip(SIZES, ratios)), 'tuned': dict.fromkeys(SIZES, 1.0)}, '')}
    assert foms['over_tuned'] == pytest.approx(math.exp(sum(map(math.log, ratios)) / 13))
    assert foms['latency_1B_over_tuned'] == 1.0 and foms['latency_4096B_over_tuned'] == 2.0


def test_the_tuned_case_records_latencies_only(curve):
    foms = curve.count_foms('tuned', {'impl': {1: 1.0, 64: 3.0}}, '_2_nodes')
    assert [f[0] for f in foms] == ['latency_1B_2_nodes', 'latency_64B_2_nodes']
    assert sweeps.count_suffixes(1, 1, [1]) == ['']      # one node: one count, the plain names


def _scripts(tmp_path):
    return {p.parent.name: p for p in (tmp_path / 'rfm').rglob('sweep.sh')}


def test_the_job_runs_each_count_and_its_tuned_twin_interleaved_over_rounds(tmp_path):
    out = reframe(tmp_path, '-c', str(check_file('osu_node_curve')), '-n', HAN, '-S', 'max_nodes=4',
                  '-S', 'rounds=2', '--dry-run', env_extra={'OSU_HOME': str(osu_home(tmp_path))})
    (script,) = _scripts(tmp_path).values()
    lines = [line for line in script.read_text().splitlines() if line != 'set -e']
    cores = int(re.search(r'-np (\d+) ', lines[0]).group(1))
    assert [re.search(r'-np (\d+) ', line).group(1) for line in lines[:3]] == [str(cores * n) for n in (1, 2, 4)]
    assert [line.rsplit('> ', 1)[1] for line in lines[:3]] == [f'hosts-{n}-nodes.txt' for n in (1, 2, 4)]
    runs = [line.rsplit('> ', 1)[1] for line in lines[3:]]
    assert runs == [f'osu-{v}-{n}-nodes-r{r}.txt' for r in (0, 1) for n in (1, 2, 4) for v in ('han', 'tuned')]
    for line in lines[3:]:
        count = int(re.search(r'-(\d+)-nodes-r', line).group(1))
        assert f'-np {cores * count} ' in line, line    # a rank per core on the count's nodes
        if '-tuned-' in line:   # the twin: han's priority unset, tuned selected
            assert line.startswith('env -u OMPI_MCA_coll_han_priority OMPI_MCA_coll=self,basic,libnbc,tuned ')
        else:
            assert 'OMPI_MCA_coll=self,basic,libnbc,tuned,sm,han OMPI_MCA_coll_han_priority=100 ' in line
    assert out.returncode == 0, out.stdout


def _han_aware_allreduce(home, han_times, tuned_times, sizes=SIZES):
    '''osu_allreduce printing `han_times` under han's selection and `tuned_times` otherwise.'''
    folder = home / 'libexec/osu-micro-benchmarks/mpi/collective'
    han = osu_table('Allreduce Latency Test', list(zip(sizes, han_times)))
    tuned = osu_table('Allreduce Latency Test', list(zip(sizes, tuned_times)))
    path = folder / 'osu_allreduce'
    path.write_text('#!/bin/sh\n[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0\n'
                    'case "$OMPI_MCA_coll" in *han*) cat <<\'EOF\'\n' + han + 'EOF\n;; *) cat <<\'EOF\'\n'
                    + tuned + 'EOF\n;; esac\n')


def _text(out):
    return re.sub(r'\x1b\[[0-9;]*m', '', out.stdout)


def test_a_run_records_the_ratio_to_tuned_and_keeps_every_output(tmp_path):
    home = osu_home(tmp_path)
    _han_aware_allreduce(home, [3.0] * 13, [1.5] * 13)
    out = reframe(tmp_path, '-c', str(check_file('osu_node_curve')), '-n', HAN, '-S', 'max_size=4096',
                  '-r', env_extra={'OSU_HOME': str(home)})
    text = _text(out)
    assert re.search(r'\[\s*OK\s*\]', text), text
    assert 'P: over_tuned: 2.0 x' in text and 'P: latency_4096B_over_tuned: 2.0 x' in text, text
    (output,) = {p.parent for p in (tmp_path / 'rfm').rglob('output/**/sweep.sh')}
    kept = {p.name for p in output.iterdir()}
    assert {f'osu-{v}-1-nodes-r{r}.txt' for v in ('han', 'tuned') for r in (0, 1)} | {'hosts-1-nodes.txt'} <= kept


def test_an_output_short_of_the_largest_size_fails_naming_the_file(tmp_path):
    home = osu_home(tmp_path)
    _han_aware_allreduce(home, [3.0] * 5, [1.5] * 13, sizes=SIZES[:5])
    out = reframe(tmp_path, '-c', str(check_file('osu_node_curve')), '-n', HAN, '-S', 'max_size=4096',
                  '-r', env_extra={'OSU_HOME': str(home)})
    text = _text(out)
    assert re.search(r'\[\s*FAIL\s*\]', text), text
    assert 'osu-han-1-nodes-r0.txt: OSU output stops at 16 B, before the largest size 4096 B' in text, text


def test_no_component_on_the_node_skips_the_case_with_the_reason_the_job_wrote(tmp_path):
    home = osu_home(tmp_path)
    stand_in(tmp_path / 'bin', 'ompi_info', 'mca:coll:tuned:version:mca:2.1.0\n')   # an Open MPI without ucc
    out = reframe(tmp_path, '-c', str(check_file('osu_node_curve')), '-n', 'OsuCollectiveNodeCurve%case=allreduce:ucc',
                  '-S', 'max_size=4096', '-r',
                  env_extra={'OSU_HOME': str(home), 'PATH': f'{tmp_path}/bin{os.pathsep}{os.environ["PATH"]}'})
    text = _text(out)
    assert re.search(r'SKIP .*this Open MPI has no coll/ucc component \(ompi_info\)', text), text
    assert not list(Path(tmp_path / 'rfm').rglob('stage/**/osu-ucc-*.txt'))   # nothing ran


def test_no_osu_skips_with_the_places_searched(tmp_path):
    out = reframe(tmp_path, '-c', str(check_file('osu_node_curve')), '-n', HAN, '-r',
                  env_extra={'PATH': f'{tmp_path}/empty:/usr/bin:/bin'})
    assert re.search(r'SKIP .*OSU Micro-Benchmarks not found: searched OSU_HOME \(not set\)', _text(out)), out.stdout
