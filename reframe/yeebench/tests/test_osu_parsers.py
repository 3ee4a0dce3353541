"""OSU output recorded here from OSU 7.2 and 7.4 built by microbench/osu (data/capture-osu.sh): every
benchmark the checks run, -T with three datatypes, -f, barrier, mbw_mr; and the figures read from it."""
from pathlib import Path

import pytest

from yeebench import fits
from yeebench.checks.collectives import bounds as collective_bounds
from yeebench import curve_foms
from yeebench.parsers import ParseError, osu

DATA = Path(__file__).parent / 'data' / 'osu'
VERSIONS = ('7.2', '7.4')
BENCHMARKS = ('osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr', 'osu_allreduce', 'osu_bcast', 'osu_alltoall')


@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('benchmark', BENCHMARKS)
def test_every_benchmark_the_checks_use_was_recorded(version, benchmark):
    table = osu.parse((DATA / f'{version}-{benchmark}.txt').read_text())
    assert table.version == version and table.datatype == 'MPI_CHAR'
    column = 'latency_us' if benchmark in ('osu_latency', 'osu_allreduce', 'osu_bcast', 'osu_alltoall') \
        else 'bandwidth_MBs'
    sizes, values = table.column(column)
    assert sizes[0] in (1, 4) and sizes[-1] >= 4096 and all(v > 0 for v in values)


# -- defect: -T blocks were merged into one curve carrying the last datatype ----------------------

@pytest.mark.parametrize('name', ['7.2-osu_latency-T3.txt', '7.4-osu_latency-T3.txt', '7.2-osu_allreduce-T3.txt',
                                  '7.4-osu_allreduce-T3.txt'])
def test_one_table_per_datatype(name):
    text = (DATA / name).read_text()
    tables = osu.parse_all(text)
    assert [t.datatype for t in tables] == ['MPI_CHAR', 'MPI_INT', 'MPI_FLOAT']
    for table in tables:
        sizes, lat = table.column('latency_us')
        assert sizes == sorted(sizes) and sizes[-1] == 4096 and len(set(sizes)) == len(sizes)
    with pytest.raises(ParseError, match='holds 3 tables .*MPI_CHAR, MPI_INT, MPI_FLOAT'):
        osu.parse(text)
    assert osu.parse(text, datatype='mpi_int') is not None
    assert osu.parse(text, datatype='MPI_INT').datatype == 'MPI_INT'
    with pytest.raises(ParseError, match='no block for datatype MPI_DOUBLE'):
        osu.parse(text, datatype='MPI_DOUBLE')


def test_latency_1b_comes_from_the_chosen_datatype():
    text = (DATA / '7.4-osu_latency-T3.txt').read_text()
    char = osu.parse(text, datatype='MPI_CHAR')
    first_char = char.rows[0]
    foms = {name: value for name, value, *_ in curve_foms.curve_foms(*char.column('latency_us'))}
    assert first_char['size'] == 1 and foms['latency_1B'] == pytest.approx(first_char['latency_us'])
    # MPI_INT's smallest message is one int (4 B): its block has no 1-byte latency to report
    ints = osu.parse(text, datatype='MPI_INT')
    assert ints.rows[0]['size'] == 4
    assert 'latency_1B' not in {name for name, *_ in curve_foms.curve_foms(*ints.column('latency_us'))}


# -- defect: the barrier layout (no Size column) was rejected -------------------------------------

@pytest.mark.parametrize('version', VERSIONS)
def test_barrier_layouts(version):
    plain = osu.parse((DATA / f'{version}-osu_barrier.txt').read_text())
    assert plain.title == 'OSU MPI Barrier Latency Test' and not plain.sized
    assert plain.columns == ['size', 'latency_us'] and len(plain.rows) == 1 and plain.rows[0]['latency_us'] > 0
    full = osu.parse((DATA / f'{version}-osu_barrier-f.txt').read_text())
    assert full.columns == ['size', 'latency_us', 'min_latency_us', 'max_latency_us', 'iterations']
    row = full.rows[0]
    assert row['size'] == 0 and row['iterations'] == 100
    assert row['min_latency_us'] <= row['latency_us'] <= row['max_latency_us']


@pytest.mark.parametrize('version', VERSIONS)
def test_full_statistics_and_message_rate(version):
    full = osu.parse((DATA / f'{version}-osu_allreduce-f.txt').read_text())
    assert full.columns == ['size', 'latency_us', 'min_latency_us', 'max_latency_us', 'iterations']
    assert all(r['min_latency_us'] <= r['max_latency_us'] and r['iterations'] == 50 for r in full.rows)
    mbw = osu.parse((DATA / f'{version}-osu_mbw_mr.txt').read_text())
    assert mbw.columns == ['size', 'bandwidth_MBs', 'messages_per_s']
    for r in mbw.rows:   # MB/s = messages/s x size / 10^6 (OSU prints both from one measurement)
        assert r['bandwidth_MBs'] == pytest.approx(r['messages_per_s'] * r['size'] / 1e6, rel=0.01, abs=0.01)


def test_cuda_header():
    # The layout OSU 7.4's print_header() writes for -d cuda (osu_util_mpi.c); no CUDA build was
    # available to record one, so this text follows the source, not a run.
    text = ('# OSU MPI-CUDA Latency Test v7.4\n# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n'
            '# Rank 0 Memory on DEVICE (D) and Rank 1 Memory on DEVICE (D)\n# Datatype: MPI_CHAR.\n'
            '# Size       Avg Latency(us)\n1                      18.95\n2                      18.91\n')
    table = osu.parse(text)
    assert table.title == 'OSU MPI-CUDA Latency Test' and table.buffers == 'DEVICE (D) -> DEVICE (D)'
    assert table.column('latency_us') == ([1, 2], [18.95, 18.91])


# -- defect: a figure at a size the curve never reached was clamped to the last point -------------

def test_no_latency_4kb_from_a_curve_that_stops_at_2kb():
    sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    foms = {name: value for name, value, *_ in curve_foms.curve_foms(sizes, [1.0 + n / 1000 for n in sizes])}
    assert 'latency_4KB' not in foms and foms['latency_1B'] == pytest.approx(1.001)
    with pytest.raises(fits.FitError, match='outside the measured sizes'):
        fits.interpolate(sizes, sizes, 4096)
    assert fits.interpolate([1, 4096, 8192], [1.0, 5.0, 9.0], 4096) == pytest.approx(5.0)


# -- defect: collective "lower bound" that was no bound --------------------------------------------

def pingpong(alpha=2.0, beta=0.001, repeats=3, jitter=0.0):
    sizes = [2 ** k for k in range(0, 21)]
    return collective_bounds.PingPong([(sizes, [(alpha + beta * n) * (1 + jitter * r) for n in sizes])
                                       for r in range(repeats)])


def test_alpha_beta_from_several_sizes_and_the_fastest_repeat():
    alpha, beta = pingpong(jitter=0.5).alpha_beta()
    assert alpha == pytest.approx(2.0) and beta == pytest.approx(0.001)
    assert pingpong(jitter=0.5).noise(1024) == pytest.approx(1.0)    # max/min - 1 over the 3 repeats
    assert pingpong().noise(1024) == collective_bounds.NOISE_FLOOR


def test_bound_is_the_last_arrival_dependency():
    pp = pingpong()
    # p-1 of p ranks wait for one message of n bytes from the last rank to enter
    assert collective_bounds.lower_bound_us('allreduce', 2, 1000, pp) == pytest.approx(0.5 * 3.0)
    assert collective_bounds.lower_bound_us('alltoall', 4, 1000, pp) == pytest.approx(0.75 * 3.0)
    assert collective_bounds.lower_bound_us('bcast', 4, 1000, pp) is None
    with pytest.raises(ValueError):
        collective_bounds.lower_bound_us('scan', 4, 1, pp)


def test_recorded_osu_7_4_allreduce_stays_under_its_bound_with_recorded_pingpong():
    # both recorded with the same OSU 7.4 build, 2 ranks over vader (data/README.md)
    lat = osu.parse((DATA / '7.4-osu_latency.txt').read_text()).column('latency_us')
    sizes, t = osu.parse((DATA / '7.4-osu_allreduce.txt').read_text()).column('latency_us')
    found = collective_bounds.efficiencies('allreduce', 2, sizes, t, collective_bounds.PingPong([lat]))
    assert len(found) == len(sizes)
    assert not [e for e in found if e.beyond_noise], [(e.size, e.percent) for e in found if e.beyond_noise]


def test_beating_the_bound_beyond_noise_is_flagged_with_a_reason():
    pp = pingpong(jitter=0.05)          # 10% floor wins over a 10% spread
    found = collective_bounds.efficiencies('allreduce', 2, [1, 1024], [0.5, 1.6], pp)
    assert [round(e.percent) for e in found] == [200, 94]
    assert [e.beyond_noise for e in found] == [True, False]
    assert found[0].reason('allreduce').startswith('allreduce at 1 B took 0.50 us, below its lower bound 1.00 us')
    assert collective_bounds.efficiencies('bcast', 2, [1], [0.1], pp) == []
