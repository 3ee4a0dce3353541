"""Single-copy (CMA) between ranks of one node: decided inside the job, by a real probe.

Open MPI's vader BTL and UCX's cma transport move large intra-node messages with one
process_vm_readv/writev. A container without CAP_SYS_PTRACE (Docker's default seccomp profile) or a
host with Yama's ptrace_scope at 2 or 3 refuses that call: vader prints `Read -1, expected N,
errno = 1` per message and the run crawls on, so a latency "passes" at 100 us. The probe runs the
check's own program with 2 ranks and one message above vader's single-copy threshold over ob1+vader
with CMA forced on, and reads its output for MPI error lines. The job then runs with single-copy on
(`cma`) or off (`none`: vader copies through shared memory, UCX drops its cma transport) and writes
its decision with the reason to DECISION_FILE; the check records it as the `single_copy` parameter,
so figures measured with and without single-copy stay apart.
The probe's output (a refused run prints an error line per message, and cuts its own progress lines)
goes to PROBE_OUTPUT only; `measured_run_marker` then marks, on stdout and stderr, where the measured
program starts, and the parsers read only what follows (yeebench.parsers.measured_run).
"""
import ctypes
import os
import re
import shlex
import subprocess
import sys

from yeebench.parsers.measured_run import MARKER

DECISION_FILE = 'single-copy.txt'
PROBE_OUTPUT = 'single-copy-probe.out'
#: One message this size takes vader's single-copy path (its eager limit is 4 KiB).
PROBE_BYTES = 65536

# Lines an MPI library prints when a transport failed under it. Written in the subset of regular
# expressions Python and `grep -E` read alike, because the job's probe greps with them too.
MPI_ERROR_PATTERNS = (
    'Read -1, expected [0-9]+, errno = [0-9]+',     # vader: CMA read refused (process_vm_readv)
    'Write -1, expected [0-9]+, errno = [0-9]+',    # vader: CMA write refused
    'process_vm_(readv|writev)',                    # UCX cma (and anything naming the call)
    'PML [a-z0-9]+ cannot be selected',
    '(btl|pml)_[a-z0-9_]+.*(error|failed)',         # a BTL or PML component reporting its failure
)
_ERRORS = re.compile('|'.join(f'(?:{p})' for p in MPI_ERROR_PATTERNS))

# What each transport runs with, single-copy on / off (shell statements, after the probe).
_ON = {'ob1-vader': 'export OMPI_MCA_btl_vader_single_copy_mechanism=cma',
       'ucx': 'unset UCX_TLS',
       None: 'export OMPI_MCA_btl_vader_single_copy_mechanism=cma'}
_OFF = {'ob1-vader': 'export OMPI_MCA_btl_vader_single_copy_mechanism=none',
        'ucx': 'export UCX_TLS=^cma',
        None: 'export OMPI_MCA_btl_vader_single_copy_mechanism=none UCX_TLS=^cma'}
#: Transports whose ranks on one node can use CMA (None: whatever Open MPI picks, e.g. collectives).
USES_SINGLE_COPY = {'ob1-vader', 'ucx', None}


def first_error_line(text):
    """The first MPI error line in `text` (stripped), or None."""
    for line in text.splitlines():
        if _ERRORS.search(line):
            return line.strip()
    return None


def probe_commands(launch_prefix, probe_argv, transport=None):
    """Shell lines for a job's prerun: the probe, then the exports and DECISION_FILE.

    launch_prefix: the launcher placing 2 ranks on one node; probe_argv: the check's program with
    arguments sending one PROBE_BYTES message; transport: a key of yeebench.mpi.TRANSPORTS or None."""
    if transport not in USES_SINGLE_COPY:
        raise ValueError(f'transport {transport!r} has no single-copy path')
    pattern = shlex.quote('|'.join(MPI_ERROR_PATTERNS))
    program = ' '.join(shlex.quote(str(a)) for a in probe_argv)
    return [
        f'OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=cma '
        f'{launch_prefix} {program} < /dev/null > {PROBE_OUTPUT} 2>&1; yb_probe_rc=$?',
        f'yb_probe_err=$(grep -m1 -E {pattern} {PROBE_OUTPUT})',
        f'if [ "$yb_probe_rc" = 0 ] && [ -z "$yb_probe_err" ]; then {_ON[transport]}; '
        f'echo "single-copy: cma (probe: 2 ranks, {PROBE_BYTES} B over vader with CMA, no MPI error)" '
        f'> {DECISION_FILE}; '
        f'else {_OFF[transport]}; '
        f'echo "single-copy: none (probe refused: ${{yb_probe_err:-exit $yb_probe_rc: '
        f'$(tail -n 1 {PROBE_OUTPUT})}})" > {DECISION_FILE}; fi',
    ]


def measured_run_marker():
    """The shell line that prints the measured-run marker on stdout and on stderr, each on a line of its
    own (the newline before it ends any line left unfinished): the job's last line before its program."""
    marker = shlex.quote(MARKER)
    return f"printf '\\n%s\\n' {marker}; printf '\\n%s\\n' {marker} >&2"


def decision(stagedir):
    """(mechanism, reason) the job wrote: ('cma' | 'none', 'probe: ...'); (None, why) without one."""
    path = os.path.join(stagedir, DECISION_FILE)
    try:
        with open(path) as fh:
            line = fh.readline().strip()
    except OSError:
        return None, f'no {DECISION_FILE}: the single-copy probe did not run'
    match = re.match(r'^single-copy: (cma|none) \((.*)\)$', line)
    if not match:
        return None, f'{DECISION_FILE} holds no decision: {line[:200]!r}'
    return match.group(1), match.group(2)


# A process that lets any process of its user read it (Yama ptrace_scope 1, as Open MPI's vader does),
# prints where its bytes are and waits for stdin to close.
_TARGET = r'''
import ctypes, sys
libc = ctypes.CDLL(None)
libc.prctl(0x59616d61, ctypes.c_ulong(2**64 - 1), 0, 0, 0)   # PR_SET_PTRACER, PR_SET_PTRACER_ANY
data = ctypes.create_string_buffer(b"yeebench single-copy probe")
print(ctypes.addressof(data), len(data.raw), flush=True)
sys.stdin.read()
'''


class _IoVec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]


def refused_here():
    """Why this machine refuses process_vm_readv into another process (the call CMA makes), or None.

    For a system file whose launch host is the compute node (`local`), when the configuration loads:
    it sets every job's default (extras.single_copy_refused, env_vars); checks with a single-copy probe
    decide again inside their job."""
    try:
        target = subprocess.Popen([sys.executable, '-c', _TARGET], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
    except OSError as err:
        return f'cannot start the probe process: {err}'
    try:
        address, size = (int(x) for x in target.stdout.readline().split())
        libc = ctypes.CDLL(None, use_errno=True)
        local = ctypes.create_string_buffer(size)
        got = libc.process_vm_readv(target.pid, ctypes.byref(_IoVec(ctypes.addressof(local), size)), 1,
                                    ctypes.byref(_IoVec(address, size)), 1, 0)
        if got != size:
            return f'process_vm_readv: {os.strerror(ctypes.get_errno())}'
        return None if local.raw.startswith(b'yeebench single-copy probe') else 'process_vm_readv read other bytes'
    except (ValueError, AttributeError, OSError) as err:
        return f'probe failed: {err}'
    finally:
        target.stdin.close()
        target.wait(timeout=10)
