"""The OSU checks read the measured run's table only: the single-copy probe's table before the job's
marker is not it, and a line of other output between its rows is not a row."""
from pathlib import Path

from yeebench.parsers import osu
from yeebench.parsers.measured_run import MARKER

DATA = Path(__file__).parent / 'data' / 'osu'
MARK = f'\n{MARKER}\n'


def test_the_probes_table_before_the_marker_is_not_the_measured_one():
    probe = '# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n65536    98.12\n'
    for name in ('7.4-osu_latency.txt', '5.3-osu_allreduce.txt', '7.4-osu_latency-c.txt'):
        measured = (DATA / name).read_text()
        assert osu.parse(probe + MARK + measured) == osu.parse(measured), name
        # and a probe cut short, no newline
        assert osu.parse(probe[:-8] + MARK + measured) == osu.parse(measured), name


def test_other_output_between_the_rows_is_no_row():
    measured = (DATA / '7.4-osu_latency.txt').read_text()
    lines = measured.splitlines(keepends=True)
    noisy = ''.join(lines[:6] + ['1 more process has sent help message help-mpi-btl-vader.txt / cma-permission-denied\n',
                                 '[vm:19520] Read -1, expected 65536, errno = 1\n'] + lines[6:])
    table = osu.parse(noisy)
    assert table.rows == osu.parse(measured).rows
    sizes, latency = table.column('latency_us')
    assert all(isinstance(t, float) for t in latency) and sizes == sorted(sizes)


def test_a_row_cut_short_is_no_row():
    measured = (DATA / '7.4-osu_latency-c.txt').read_text()   # size, latency, validation
    lines = measured.rstrip('\n').splitlines(keepends=True)
    cut = ''.join(lines[:-1]) + lines[-1].split()[0] + '   0.2'
    table = osu.parse(cut)
    assert table.rows == osu.parse(measured).rows[:-1]
    assert not table.validation_failed
