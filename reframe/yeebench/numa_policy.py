"""Memory policies of the NUMA checks and whether this machine's kernel lets numactl apply them.

`refused_here()` runs numactl, so only a system file whose launch host is the compute node calls it
when the configuration loads (`local`); the checks read the answer from extras.numa_policy_refused.
"""
import os
import shutil
import subprocess

# numactl arguments per policy; node 0 holds the CPUs.  (expected page nodes, for numa-bw)
POLICIES = {
    'none': ([], None),
    'localalloc': (['--cpunodebind=0', '--localalloc'], '0'),
    'interleave': (['--cpunodebind=0', '--interleave=all'], None),
    'remote': (['--cpunodebind=0', '--membind=1'], '1'),
}
DOCKER_HINT = ' (in Docker: docker run --cap-add SYS_NICE)'

# What numactl writes when the kernel refuses a policy or binding (e.g. "set_mempolicy: Operation not
# permitted", "sched_setaffinity: Invalid argument").
_NUMACTL_ERRORS = ('set_mempolicy', 'mbind', 'sched_setaffinity', 'numa_sched_setaffinity', 'libnuma:')


def numactl_failure(stderr):
    '''The first line of `stderr` in which numactl reports a refused policy call, or None.'''
    for line in stderr.splitlines():
        if line.strip().startswith(_NUMACTL_ERRORS):
            return line.strip()
    return None


def policy_refused(args):
    '''Why `numactl ARGS true` fails on this host, or None when the policy can be applied (or is empty).'''
    if not args:
        return None
    try:
        proc = subprocess.run(['numactl', *args, 'true'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f'numactl {" ".join(args)} true: {err}'
    if proc.returncode == 0:
        return None
    return numactl_failure(proc.stderr) or (proc.stderr.strip().splitlines() or [f'exit {proc.returncode}'])[0]


def refused_here():
    """{policy: why numactl cannot apply it on this machine} (empty without numactl)."""
    if not shutil.which('numactl'):
        return {}
    hint = DOCKER_HINT if os.path.exists('/.dockerenv') else ''
    refused = {}
    for policy, (args, _) in POLICIES.items():
        why = policy_refused(args)
        if why:
            refused[policy] = why + hint
    return refused
