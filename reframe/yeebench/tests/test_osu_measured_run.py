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


def test_every_probing_check_marks_its_measured_run_last(tmp_path):
    # the marker is the job's last line before its program, after the probe and every other run
    # (the ping-pongs and the tuned twin of a collective), so what the parsers read is the program's
    from checkfiles import check_file
    from test_osu_checks import job_scripts, osu_home, reframe

    from yeebench import single_copy
    cases = {'OsuPt2Pt_': ('pt2pt.py', 'OsuPt2Pt%transport=ob1-vader%locality=intra%benchmark=osu_latency%buffers=host'),
             'OsuCollective_': ('collectives.py', 'OsuCollective%case=allreduce:han%num_procs=2%buffers=host'),
             'OsuCollectiveNodeCurve_': ('osu_node_curve.py', 'OsuCollectiveNodeCurve%case=allreduce:han'),
             'NetPIPEPt2Pt_': ('pt2pt.py', 'NetPIPEPt2Pt%transport=ob1-vader%locality=intra')}
    args = [a for check, name in cases.values() for a in ('-c', str(check_file(check)), '-n', name)]
    out = reframe(tmp_path, *args, '--dry-run', env_extra={'OSU_HOME': str(osu_home(tmp_path))})
    scripts = job_scripts(tmp_path)
    assert out.returncode == 0 and len(scripts) == len(cases), out.stdout + out.stderr
    for stage, script in scripts.items():
        lines = [line for line in script.splitlines() if line.strip()]
        marker = lines.index(single_copy.measured_run_marker())
        assert marker == len(lines) - 2, (stage, lines[marker:])
        assert f'> {single_copy.PROBE_OUTPUT} 2>&1' in script.split(single_copy.measured_run_marker())[0], stage
        program = lines[-1]
        assert 'mpirun' in program or program == 'bash sweep.sh', (stage, program)
    assert sorted(next(p for p in cases if s.startswith(p)) for s in scripts) == sorted(cases)
