"""NetPIPE's sanity compares np.out with the measured run only, whatever else shares the job's stderr:
the single-copy probe's run before it (a refused transfer prints an error line inside a progress
line), a line cut short and glued to the next, other output between the two pieces NetPIPE writes
per size. It still fails when the measured run itself is cut short."""
import subprocess
from pathlib import Path

from yeebench import single_copy
from yeebench.parsers import netpipe
from yeebench.parsers.measured_run import MARKER, after_marker

DATA = Path(__file__).parent / 'data' / 'netpipe'
NP_OUT = (DATA / 'np-n200.out').read_text()
STDERR = (DATA / 'np-n200.stderr').read_text()
# the refused probe's own output file (stdout and stderr), recorded: an error line per message, one inside
# NetPIPE's progress line
PROBE = (DATA / 'probe-refused.out').read_text()
# what mpirun prints on its stderr whenever its timer fires (Open MPI's help-message aggregation)
HELP = '[vm:04711] 1 more process has sent help message help-mpi-btl-vader.txt / cma-permission-denied\n'
# what the job prints before the measured program (yeebench.single_copy.measured_run_marker)
MARK = f'\n{MARKER}\n'
SIZES = tuple(int(line.split()[0]) for line in NP_OUT.splitlines())


def pieces(stderr):
    '''NetPIPE's writes to stderr, as it makes them: each line up to its head ('N: B bytes R times --> ')
    then, once the size is measured, the result ('X Mbps in T usec').'''
    out = []
    for line in stderr.splitlines(keepends=True):
        head, arrow, result = line.partition('--> ')
        out += [head + arrow, result] if arrow else [line]
    return out


def interleave(stderr, extra):
    '''`stderr` with extra[i] written before NetPIPE's i-th write.'''
    return ''.join(extra.get(i, '') + piece for i, piece in enumerate(pieces(stderr)))


def first_results(stderr):
    '''Indices of the result pieces in pieces(stderr): the first, one in the middle, the last.'''
    results = [i for i, p in enumerate(pieces(stderr)) if 'Mbps' in p]
    return [results[0], results[len(results) // 2], results[-1]]


def agrees(stderr, np_out=NP_OUT):
    return netpipe.measured_run_problem(np_out, stderr) is None


def test_the_recorded_run_agrees_with_its_np_out():
    assert len(SIZES) == 58 and agrees(STDERR)
    assert ''.join(pieces(STDERR)) == STDERR


def test_output_between_the_pieces_of_a_progress_line_drops_no_size():
    # mpirun's help message, a line of the other rank, an MPI error line of the probe: each lands
    # between a size's head and its result
    for foreign in (HELP, '1: vm\n', '[vm:19520] Read -1, expected 65536, errno = 1\n'):
        stderr = interleave(STDERR, {i: foreign for i in first_results(STDERR)})
        assert netpipe.curve(stderr, 'stderr').sizes == SIZES, foreign
        assert netpipe.curve(stderr, 'stderr') == netpipe.curve(STDERR, 'stderr')
        assert agrees(stderr), foreign


def test_a_line_cut_short_before_a_head_drops_no_size():
    # a writer's line without its newline, glued to the front of NetPIPE's heads (and a result's)
    heads = [i for i, p in enumerate(pieces(STDERR)) if p.endswith('--> ')]
    stderr = interleave(STDERR, {heads[0]: '[vm:04711] 1 more pro', heads[30]: 'Read -1, exp',
                                 heads[-1] + 1: '[vm:04711] '})
    assert netpipe.curve(stderr, 'stderr').sizes == SIZES
    assert agrees(stderr)


def test_the_probe_before_the_measured_run_is_not_compared():
    # the probe's output in the job's stderr, with the marker after it (as the job writes it) and
    # without (a job script from before the marker): only the measured run is compared
    assert agrees(PROBE + MARK + STDERR)
    assert agrees(PROBE + STDERR)
    assert netpipe.curve(PROBE + MARK + STDERR, 'stderr').sizes == SIZES
    # a probe whose run completed (two runs on stderr): still only the last one, the measured run
    probe_ok = '  0:   65536 bytes      2 times -->  54120.05 Mbps in       9.24 usec\n'
    assert agrees(probe_ok + STDERR) and agrees(probe_ok + MARK + STDERR)


def test_the_probes_partial_line_glued_to_the_measured_runs_first_line():
    cut = PROBE[:PROBE.index('-->') + 4]          # the probe stopped inside its progress line, no newline
    assert cut.endswith('  0:   65536 bytes      2 times --> ')
    # glued to the banner, or straight to the measured run's first head
    for stderr in (cut + STDERR, cut + STDERR.split('\n', 1)[1], cut + MARK + STDERR):
        assert netpipe.curves(stderr, 'stderr')[-1].sizes == SIZES
        assert agrees(stderr)


def test_stderr_interleaved_every_way_at_once():
    stderr = interleave(PROBE[:PROBE.index('-->') + 4] + MARK + STDERR,
                        {i: HELP for i in first_results(STDERR)})
    assert agrees(stderr)


def test_a_measured_run_cut_short_fails():
    # killed while measuring the 41st size: np.out holds 40 rows, stderr ends in the 41st head
    cut = pieces(STDERR)
    heads = [i for i, p in enumerate(cut) if p.endswith('--> ')]
    stderr = ''.join(cut[:heads[40] + 1])
    np_out = ''.join(NP_OUT.splitlines(keepends=True)[:40])
    problem = netpipe.measured_run_problem(np_out, stderr)
    assert problem == (f'np.out holds 40 sizes up to {SIZES[39]} B, the measured run\'s progress lines 41 up to '
                       f'{SIZES[40]} B (first difference at row 41: np.out nothing, stderr {SIZES[40]} B)')
    # with the probe and other output around it, the cut still shows
    assert not agrees(PROBE + MARK + interleave(stderr, {i: HELP for i in first_results(stderr)}), np_out)
    # np.out of a complete run (left from another one) beside a measured run that stopped
    assert not agrees(stderr)
    assert 'progress lines 41 up to' in netpipe.measured_run_problem(NP_OUT, stderr)


def test_the_probes_complete_run_never_stands_in_for_the_measured_run():
    # the measured run printed nothing after the marker: the probe's sizes before it do not count
    problem = netpipe.measured_run_problem(NP_OUT, STDERR + MARK + 'mpirun noticed that process rank 0 exited\n')
    assert problem == f'np.out holds 58 sizes up to {SIZES[-1]} B, the measured run printed no progress line'
    half = ''.join(STDERR.splitlines(keepends=True)[:20])
    assert not agrees(STDERR + MARK + half)


def test_a_size_measured_twice_or_missing_in_np_out_fails():
    rows = NP_OUT.splitlines(keepends=True)
    assert not agrees(STDERR, ''.join(rows[:10] + rows[11:]))
    assert not agrees(STDERR, ''.join(rows[:10] + [rows[10]] + rows[10:]))


def test_the_marker_line_and_what_follows_it():
    assert after_marker('no marker\n') == 'no marker\n'
    assert after_marker(f'probe\n{MARKER}\nrun\n{MARKER}\nmeasured\n') == 'measured\n'
    assert after_marker(f'cut short{MARK}measured\n') == 'measured\n'
    assert after_marker(f'{MARKER}') == ''


def test_the_jobs_marker_line_ends_a_line_left_unfinished(tmp_path):
    # what the job runs: a probe leaving half a line on both streams, the marker, then the program
    script = (f"printf '  0:   65536 bytes      2 times --> '; printf 'Read -1, exp' >&2\n"
              f"{single_copy.measured_run_marker()}\n"
              f"printf '# Size Latency (us)\\n'; printf '  0:       1 bytes --> ' >&2\n")
    out = subprocess.run(['bash', '-c', script], capture_output=True, text=True, check=True)
    assert out.stdout.count(MARKER) == 1 and out.stderr.count(MARKER) == 1
    assert after_marker(out.stdout) == '# Size Latency (us)\n'
    assert after_marker(out.stderr) == '  0:       1 bytes --> '
    assert f'--> \n{MARKER}\n' in out.stdout and f'exp\n{MARKER}\n' in out.stderr
