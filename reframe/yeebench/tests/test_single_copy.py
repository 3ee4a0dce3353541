"""Single-copy (CMA) decided inside the job, and MPI error lines failing a case (yeebench.single_copy)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench import single_copy

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).parent / 'data'
# what Open MPI 4.1's vader printed per message inside `docker run` (no CAP_SYS_PTRACE)
REFUSED = 'Read -1, expected 65539, errno = 1'


def test_mpi_error_lines_are_found_and_clean_output_passes():
    assert single_copy.first_error_line(f'# OSU MPI Latency Test\n{REFUSED}\n{REFUSED}\n') == REFUSED
    ucx = '[1732581234.1] cma_ep.c:81 UCX ERROR process_vm_readv(pid=1234 length=65536) returned -1: Operation not permitted'
    assert single_copy.first_error_line(ucx) == ucx
    assert single_copy.first_error_line('PML ucx cannot be selected') == 'PML ucx cannot be selected'
    tcp = '[vm][[1,0],1][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier'
    assert single_copy.first_error_line(tcp) is None     # a BTL message that is not an error report
    assert single_copy.first_error_line('[vm] mca_btl_tcp_endpoint_complete_connect] connect() failed') is not None
    for recorded in (DATA / 'netpipe').glob('*.stderr'):
        assert single_copy.first_error_line(recorded.read_text()) is None, recorded


def test_grep_reads_the_patterns_as_python_does(tmp_path):
    lines = [REFUSED, 'Write -1, expected 4, errno = 14', 'process_vm_writev failed', 'PML cm cannot be selected',
             'btl_vader_get: error', '1 2 3 latency', '# Size Latency (us)', 'pml selected ob1 ok']
    sample = tmp_path / 'sample'
    sample.write_text('\n'.join(lines) + '\n')
    grep = subprocess.run(['grep', '-E', '|'.join(single_copy.MPI_ERROR_PATTERNS), str(sample)],
                          capture_output=True, text=True)
    assert grep.stdout.splitlines() == [line for line in lines if single_copy.first_error_line(line)]
    assert len(grep.stdout.splitlines()) == 5


def _run_probe(tmp_path, program_lines, transport, environ=None):
    program = tmp_path / 'program'
    program.write_text('#!/bin/sh\n' + program_lines + '\n')
    program.chmod(0o755)
    lines = single_copy.probe_commands('env', [program, 'arg with space'], transport)
    script = '\n'.join(lines + ['echo "vader=${OMPI_MCA_btl_vader_single_copy_mechanism-unset} ucx=${UCX_TLS-unset}"'])
    env = dict(os.environ, **(environ or {}))
    env.pop('OMPI_MCA_btl_vader_single_copy_mechanism', None)
    out = subprocess.run(['bash', '-c', script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip(), single_copy.decision(str(tmp_path))


def test_the_probe_turns_single_copy_off_naming_the_refusal(tmp_path):
    exports, decided = _run_probe(tmp_path, f'echo "{REFUSED}" >&2; echo "65536 95.2"', 'ob1-vader')
    assert exports == 'vader=none ucx=unset'
    assert decided == ('none', f'probe refused: {REFUSED}')
    exports, decided = _run_probe(tmp_path, f'echo "{REFUSED}" >&2', 'ucx')
    assert exports == 'vader=unset ucx=^cma' and decided[0] == 'none'
    _, decided = _run_probe(tmp_path, 'echo "mpirun was unable to launch" >&2; exit 3', None)
    assert decided == ('none', 'probe refused: exit 3: mpirun was unable to launch')


def test_the_probe_keeps_single_copy_where_it_works(tmp_path):
    exports, decided = _run_probe(tmp_path, '[ "$OMPI_MCA_btl_vader_single_copy_mechanism" = cma ] || exit 9; '
                                            '[ "$1" = "arg with space" ] || exit 8; echo "65536 3.1"',
                                  'ucx', environ={'UCX_TLS': '^cma'})
    assert decided[0] == 'cma' and 'no MPI error' in decided[1]
    assert exports == 'vader=unset ucx=unset'
    exports, _ = _run_probe(tmp_path, 'echo ok', 'ob1-vader')
    assert exports == 'vader=cma ucx=unset'


def test_a_missing_or_garbled_decision_is_no_decision(tmp_path):
    assert single_copy.decision(str(tmp_path))[0] is None
    (tmp_path / single_copy.DECISION_FILE).write_text('single-copy: maybe\n')
    assert single_copy.decision(str(tmp_path)) == (None, "single-copy.txt holds no decision: 'single-copy: maybe'")
    with pytest.raises(ValueError):
        single_copy.probe_commands('mpirun -np 2', ['x'], 'ob1-tcp')


def test_a_netpipe_run_with_mpi_errors_fails_naming_the_line_and_runs_without_single_copy(tmp_path):
    # NetPIPE as inside a default container: every rank prints vader's refusal, the run itself goes on
    real = shutil.which('NPopenmpi')
    if not real or not shutil.which('mpirun'):
        pytest.skip('needs NPopenmpi and mpirun (apt-get install netpipe-openmpi)')
    fake = tmp_path / 'bin'
    fake.mkdir()
    (fake / 'NPopenmpi').write_text(f'#!/bin/sh\necho "{REFUSED}" >&2\nexec {real} "$@"\n')
    (fake / 'NPopenmpi').chmod(0o755)
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'), PATH=f'{fake}:{os.environ["PATH"]}',
               YEEBENCH_PREFIX=str(REPO / 'build/install'))
    out = subprocess.run([str(Path(sys.executable).parent / 'reframe'), '-C', 'reframe/config/settings.py',
                          '--system', 'local', '-c', 'reframe/yeebench/checks/pt2pt/pt2pt.py', '--mode', 'smoke',
                          '-n', 'NetPIPEPt2Pt', '-r'], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text[-3000:]
    assert f'MPI error on stderr: {REFUSED}' in text, text[-3000:]
    assert f'single-copy none (probe refused: {REFUSED})' in text, text[-3000:]
    script = next((tmp_path / 'rfm').rglob('rfm_job.sh')).read_text()
    assert 'OMPI_MCA_btl_vader_single_copy_mechanism=none' in script


def test_the_configuration_probe_agrees_with_an_mpi_run(tmp_path):
    # refused_here() (process_vm_readv from Python, at configuration load) against NetPIPE over vader
    real = shutil.which('NPopenmpi')
    if not real or not shutil.which('mpirun'):
        pytest.skip('needs NPopenmpi and mpirun (apt-get install netpipe-openmpi)')
    size = str(single_copy.PROBE_BYTES)
    prefix = 'mpirun -np 2 --oversubscribe --bind-to none'
    lines = single_copy.probe_commands(prefix, [real, '-o', 'np.out', '-l', size, '-u', size, '-n', '2', '-p', '0'])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    subprocess.run(['bash', '-c', '\n'.join(lines)], cwd=tmp_path, env=env, timeout=120, check=True)
    mechanism, reason = single_copy.decision(str(tmp_path))
    refused = single_copy.refused_here()
    assert (mechanism == 'none') == bool(refused), (mechanism, reason, refused)
