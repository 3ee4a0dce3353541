"""NetPIPEPt2Pt through ReFrame with a stand-in NetPIPE (needs mpirun): the single-copy probe is refused
and prints its recorded output, the measured run prints recorded progress with other output between
the pieces of its lines. The case passes when the measured run is whole and fails, naming the sizes,
when it was cut short; the job marks where the measured run starts, after every other line."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_netpipe_measured_run import HELP, first_results, interleave, pieces
from yeebench import single_copy
from yeebench.parsers.measured_run import MARKER

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parent / 'data' / 'netpipe'
CASE = 'NetPIPEPt2Pt%transport=ob1-vader%locality=intra'
# the recorded run of NetPIPE's defaults, up to 64 KiB: the smoke case's largest size
NP_OUT = (DATA / 'np-default.out').read_text()
STDERR = (DATA / 'np-default.stderr').read_text()


def stand_in(home, np_out, stderr):
    '''NETPIPE_HOME with a bin/NPopenmpi: as the probe (-o single-copy-probe.np) it prints the recorded
    refused probe; as the measured run, rank 0 writes `np_out` to its -o file and `stderr` to stderr.'''
    (home / 'bin').mkdir(parents=True)
    (home / 'np.out').write_text(np_out)
    (home / 'stderr').write_text(stderr)
    program = home / 'bin' / 'NPopenmpi'
    program.write_text(f'''#!/bin/sh
[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0
if [ "$2" = single-copy-probe.np ]; then cat '{DATA / 'probe-refused.out'}'; exit 0; fi
cp '{home / 'np.out'}' "$2"
cat '{home / 'stderr'}' >&2
''')
    program.chmod(0o755)
    return home


def run_case(tmp_path, np_out, stderr):
    if not shutil.which('mpirun'):
        pytest.skip('needs mpirun (Open MPI)')
    home = stand_in(tmp_path / 'netpipe', np_out, stderr)
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), NETPIPE_HOME=str(home),
               YEEBENCH_PREFIX=str(tmp_path / 'prefix'))
    out = subprocess.run([str(Path(sys.executable).parent / 'reframe'), '-C', 'reframe/config/settings.py',
                          '--system', 'local', '-c', 'reframe/yeebench/checks/pt2pt/pt2pt.py', '--mode', 'smoke',
                          '-n', CASE, '-r'], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return out.returncode, out.stdout + out.stderr, next((tmp_path / 'rfm').rglob('rfm_job.sh')).read_text()


def test_a_whole_measured_run_passes_whatever_shares_its_stderr(tmp_path):
    # mpirun's help message between a size's head and its result, at the first, a middle and the last size
    stderr = interleave(STDERR, {i: HELP for i in first_results(STDERR)})
    rc, text, script = run_case(tmp_path, NP_OUT, stderr)
    assert rc == 0, text[-3000:]
    refusal = single_copy.first_error_line((DATA / 'probe-refused.out').read_text())
    assert f'single-copy none (probe refused: {refusal})' in text, text[-3000:]
    lines = script.splitlines()
    program = next(i for i, line in enumerate(lines) if 'bin/NPopenmpi -o np.out' in line)
    assert lines[program - 1] == single_copy.measured_run_marker() and MARKER in lines[program - 1]
    assert f'< /dev/null > {single_copy.PROBE_OUTPUT} 2>&1' in script


def test_a_measured_run_cut_short_fails_naming_where(tmp_path):
    # the measured run stopped while measuring its 21st size (its head is the last thing on stderr) beside
    # an np.out that reaches the largest size: the sizes disagree, whatever else is on stderr
    cut = pieces(STDERR)
    heads = [i for i, p in enumerate(cut) if p.endswith('--> ')]
    stderr = interleave(''.join(cut[:heads[20] + 1]), {first_results(STDERR)[0]: HELP})
    rc, text, _ = run_case(tmp_path, NP_OUT, stderr)
    assert rc != 0, text[-3000:]
    size = int(STDERR.splitlines()[21].split()[1])
    assert (f"np.out and the progress lines disagree: np.out holds 32 sizes up to 65536 B, the measured run's "
            f"progress lines 21 up to {size} B (first difference at row 22: np.out ") in text, text[-3000:]
