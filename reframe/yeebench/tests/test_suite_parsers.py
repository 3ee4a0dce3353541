"""Parsers on output recorded from real runs (tests/data): OSU 5.3 and 7.4, NetPIPE, yee, probes, numactl."""
import json
import math
from pathlib import Path

import pytest

from yeebench.parsers import ParseError, jsonreport, netpipe, numactl, osu

DATA = Path(__file__).parent / 'data'
OSU_FILES = sorted((DATA / 'osu').glob('*.txt'))


def test_fixtures_present():
    assert len(OSU_FILES) >= 23


@pytest.mark.parametrize('path', OSU_FILES, ids=lambda p: p.name)
def test_every_recorded_osu_output_parses(path):
    for table in osu.parse_all(path.read_text()):
        assert table.version.split('-')[0] in ('5.3', '7.0', '7.2', '7.4')   # 7.0: a fork build '7.0-lrbison2'
        assert table.columns[0] == 'size'
        assert table.columns[1] in ('latency_us', 'bandwidth_MBs')
        assert all(isinstance(r[table.columns[1]], float) and r[table.columns[1]] > 0 for r in table.rows)
        sizes = [r['size'] for r in table.rows]
        if 'barrier' in path.name:
            assert not table.sized and sizes == [0]
        else:
            assert sizes == sorted(sizes) and len(sizes) >= 9


def test_osu_5x_latency_layout():
    table = osu.parse((DATA / 'osu' / '5.3-osu_latency.txt').read_text())
    assert table.title == 'OSU MPI Latency Test' and table.datatype == ''
    assert table.columns == ['size', 'latency_us']
    assert table.rows[0] == {'size': 0, 'latency_us': 0.23}


def test_osu_70_pt2pt_keeps_the_5x_header():
    table = osu.parse((DATA / 'osu' / '7.0-osu_latency.txt').read_text())
    assert table.version == '7.0-lrbison2' and table.datatype == ''
    assert table.columns == ['size', 'latency_us'] and table.rows[0]['size'] == 1


def test_osu_7x_latency_layout_with_datatype():
    table = osu.parse((DATA / 'osu' / '7.4-osu_latency.txt').read_text())
    assert table.datatype == 'MPI_CHAR'
    sizes, lat = table.column('latency_us')
    assert sizes[0] == 1 and lat[0] == pytest.approx(0.29)
    assert sizes[-1] == 65536 and lat[-1] == pytest.approx(7.44)


def test_osu_full_statistics_columns():
    for name in ('5.3-osu_allreduce-f.txt', '7.0-osu_allreduce-f.txt', '7.4-osu_allreduce-f.txt'):
        table = osu.parse((DATA / 'osu' / name).read_text())
        assert table.columns == ['size', 'latency_us', 'min_latency_us', 'max_latency_us', 'iterations']
        assert all(r['iterations'] == 50 and r['min_latency_us'] <= r['max_latency_us'] for r in table.rows)


def test_osu_tail_latency_and_validation_columns():
    tail = osu.parse((DATA / 'osu' / '7.4-osu_latency-z.txt').read_text())
    assert tail.columns[2:] == ['p50_latency_us', 'p90_latency_us', 'p99_latency_us']
    valid = osu.parse((DATA / 'osu' / '7.4-osu_latency-c.txt').read_text())
    assert valid.columns == ['size', 'latency_us', 'validation'] and valid.validation_failed == []
    failed = (DATA / 'osu' / '7.4-osu_latency-c.txt').read_text().replace('Pass', 'Fail', 1)
    assert osu.parse(failed).validation_failed == [1]


def test_osu_bandwidth_and_launcher_noise():
    text = 'Warning: something from the launcher\n' + (DATA / 'osu' / '7.4-osu_bw.txt').read_text() + '\n[vm:123] noise\n'
    table = osu.parse(text)
    assert table.columns == ['size', 'bandwidth_MBs'] and len(table.rows) == 17


def test_osu_mbw_mr_layout():
    text = '# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# Size                  MB/s        Messages/s\n1                       2.0        2000000.0\n'
    assert osu.parse(text).columns == ['size', 'bandwidth_MBs', 'messages_per_s']


@pytest.mark.parametrize('text, message', [
    ('', 'no OSU header'),
    ('# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n', 'no data rows'),
    ('hello\nworld\n', 'no OSU header'),
])
def test_osu_bad_input(text, message):
    with pytest.raises(ParseError, match=message):
        osu.parse(text)


def test_osu_missing_column_is_named():
    table = osu.parse((DATA / 'osu' / '7.4-osu_bw.txt').read_text())
    with pytest.raises(ParseError, match="no column 'latency_us'"):
        table.column('latency_us')


def test_netpipe_np_out_and_stderr_agree():
    rows = netpipe.parse_np_out((DATA / 'netpipe' / 'np-default.out').read_text())
    progress = netpipe.parse_stderr((DATA / 'netpipe' / 'np-default.stderr').read_text())
    assert len(rows) == len(progress) == 32
    for a, b in zip(rows, progress):
        assert a['bytes'] == b['bytes']
        assert a['bandwidth_MBs'] == pytest.approx(b['bandwidth_MBs'], rel=1e-3)
        assert a['latency_us'] == pytest.approx(b['latency_us'], abs=0.006)


def test_netpipe_units_are_2_pow_20_bits():
    rows = netpipe.parse_np_out('       8 170.226882   0.00000036\n')
    # 170.226882 * 2^20 bit/s / 8 = 22.31 MB/s (10^6 B/s)
    assert rows[0]['bandwidth_MBs'] == pytest.approx(170.226882 * 1048576 / 8 / 1e6)
    assert rows[0]['latency_us'] == pytest.approx(0.36)
    # consistency of NetPIPE's own numbers: 8 B in 0.36 us is ~170 of its Mbps
    assert 8 / 0.36e-6 / 1e6 == pytest.approx(rows[0]['bandwidth_MBs'], rel=0.02)


def test_netpipe_fixed_repeats_run_with_perturbations():
    rows = netpipe.parse_np_out((DATA / 'netpipe' / 'np-n200.out').read_text())
    assert [r['bytes'] for r in rows[-3:]] == [4093, 4096, 4099]
    assert all(r['repeats'] == 200 for r in netpipe.parse_stderr((DATA / 'netpipe' / 'np-n200.stderr').read_text()))


@pytest.mark.parametrize('text', ['', '1 2\n', 'a b c\n'])
def test_netpipe_bad_np_out(text):
    with pytest.raises(ParseError):
        netpipe.parse_np_out(text)


def test_netpipe_stderr_without_progress():
    with pytest.raises(ParseError, match='no NetPIPE progress lines'):
        netpipe.parse_stderr('Now starting the main loop\n')


def yee_text():
    return (DATA / 'json' / 'yee-2ranks.json').read_text()


def test_yee_report_recorded_is_sane():
    report = jsonreport.parse_yee('mpirun noise\n' + yee_text() + '\ntrailing\n')
    assert report['ranks'] == 2 and report['cells'] == 32 ** 3
    assert jsonreport.yee_problems(report) == []
    share = jsonreport.yee_halo_share(report)
    assert 0 <= share <= 100
    assert share == pytest.approx(100 * report['seconds']['halo'] / report['seconds']['total'])


@pytest.mark.parametrize('field, value, problem', [
    ('valid', False, 'not valid'),
    ('energy', float('nan'), 'energy is not finite'),
    ('energy', float('inf'), 'energy is not finite'),
    ('checksum', 'xyz', 'checksum'),
    ('mcells_per_s', 0, 'Mcells/s'),
])
def test_yee_problems_detected(field, value, problem):
    report = json.loads(yee_text())
    report[field] = value
    problems = jsonreport.yee_problems(report)
    assert any(problem in p for p in problems)


def test_yee_report_missing_or_incomplete():
    with pytest.raises(ParseError, match='no yee-report'):
        jsonreport.parse_yee('{"schema": "other"}')
    with pytest.raises(ParseError, match='lacks field'):
        jsonreport.parse_yee('{"schema": "yee-report", "valid": true}')


def test_probe_reports():
    bw = jsonreport.parse_probe((DATA / 'json' / 'numa-bw.json').read_text(), 'numa-bw')
    assert jsonreport.numa_bw_triad(bw) > 0 and math.isfinite(jsonreport.numa_bw_triad(bw))
    halo = jsonreport.parse_probe((DATA / 'json' / 'halo.json').read_text(), 'halo')
    assert halo['ranks'] == 2 and halo['valid'] is True
    aff = jsonreport.parse_probe((DATA / 'json' / 'affinity-per-core.json').read_text(), 'affinity')
    assert [p['cpus'] for p in aff['placement']] == [[0], [1]]
    with pytest.raises(ParseError, match='no halo report'):
        jsonreport.parse_probe((DATA / 'json' / 'numa-bw.json').read_text(), 'halo')
    with pytest.raises(ParseError, match='triad'):
        jsonreport.numa_bw_triad({'kernels': {}})


TWO_NODES = """available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3
node 0 size: 32000 MB
node 0 free: 30000 MB
node 1 cpus: 4 5 6 7
node 1 size: 32768 MB
node 1 free: 31000 MB
node distances:
node   0   1
  0:  10  21
  1:  21  10
"""


def test_numactl_hardware():
    one = numactl.parse_hardware((DATA / 'numactl-1node.txt').read_text())
    assert one['nodes'] == [0] and one['distances'] == [[10]]
    two = numactl.parse_hardware(TWO_NODES)
    assert two['nodes'] == [0, 1] and two['cpus'][1] == [4, 5, 6, 7]
    assert two['distances'] == [[10, 21], [21, 10]] and two['size_mb'] == {0: 32000, 1: 32768}
    with pytest.raises(ParseError, match='distance matrix'):
        numactl.parse_hardware(TWO_NODES.replace('  1:  21  10\n', ''))
    with pytest.raises(ParseError, match='available'):
        numactl.parse_hardware('nothing here')
