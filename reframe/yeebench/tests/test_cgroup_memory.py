"""A cgroup memory limit (a container, a Slurm job step) bounds the memory a problem is sized
from, read from stand-in trees laid out as the kernel lays them out."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench import topology
from yeebench.cgroup_memory import cgroup_mounts, cgroup_room_bytes

MiB = 2**20
V2_MOUNT = '30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n'
V1_MOUNT = '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n'
HYBRID = ('31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n' + V1_MOUNT +
          '41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n')


def tree(tmp_path, mountinfo, cgroup, files):
    (tmp_path / 'proc/self').mkdir(parents=True)
    (tmp_path / 'proc/self/mountinfo').write_text(mountinfo)
    (tmp_path / 'proc/self/cgroup').write_text(cgroup)
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / 'meminfo').write_text('MemTotal: 25165824 kB\nMemAvailable: 20971520 kB\n')
    return tmp_path


def test_a_v2_container_limit_less_its_usage(tmp_path):
    root = tree(tmp_path, V2_MOUNT, '0::/\n', {'sys/fs/cgroup/memory.max': f'{512 * MiB}\n',
                                                'sys/fs/cgroup/memory.current': f'{100 * MiB}\n'})
    assert cgroup_room_bytes(root) == (412 * MiB, str(root / 'sys/fs/cgroup/memory.max'))
    assert topology.available_memory(root / 'meminfo', root) == \
        (412 * MiB, f"cgroup limit less usage ({root / 'sys/fs/cgroup/memory.max'})")


def test_the_tightest_level_wins_and_an_unlimited_one_is_skipped(tmp_path):
    root = tree(tmp_path, V2_MOUNT, '0::/job_7/step_0\n', {
        'sys/fs/cgroup/job_7/memory.max': f'{256 * MiB}\n', 'sys/fs/cgroup/job_7/memory.current': '0\n',
        'sys/fs/cgroup/job_7/step_0/memory.max': 'max\n', 'sys/fs/cgroup/memory.max': f'{2**40}\n'})
    assert cgroup_room_bytes(root) == (256 * MiB, str(root / 'sys/fs/cgroup/job_7/memory.max'))


def test_v1_memory_controller_on_a_hybrid_host(tmp_path):
    root = tree(tmp_path, HYBRID, '4:memory:/slurm/uid_0/job_3\n0::/\n', {
        'sys/fs/cgroup/memory/slurm/uid_0/job_3/memory.limit_in_bytes': f'{300 * MiB}\n',
        'sys/fs/cgroup/memory/slurm/uid_0/job_3/memory.usage_in_bytes': f'{500 * MiB}\n',
        'sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n'})
    assert cgroup_room_bytes(root)[0] == 0  # over its limit already: no room, not a negative figure
    assert topology.available_memory_bytes(root / 'meminfo', root) == 0


@pytest.mark.parametrize('limit', ['max', '9223372036854771712', '', 'lots', '-5', '1e9'])
def test_no_readable_limit_leaves_memavailable(tmp_path, limit):
    root = tree(tmp_path, V2_MOUNT, '0::/\n', {'sys/fs/cgroup/memory.max': limit})
    assert cgroup_room_bytes(root) == (None, None)
    assert topology.available_memory(root / 'meminfo', root) == (20 * 2**30, 'MemAvailable')


def test_a_limit_above_memavailable_leaves_memavailable(tmp_path):
    root = tree(tmp_path, V2_MOUNT, '0::/\n', {'sys/fs/cgroup/memory.max': f'{2**40}\n'})
    assert topology.available_memory(root / 'meminfo', root) == (20 * 2**30, 'MemAvailable')


def test_no_cgroup_files_at_all(tmp_path):
    assert cgroup_room_bytes(tmp_path) == (None, None)
    (tmp_path / 'meminfo').write_text('MemAvailable: 1024 kB\n')
    assert topology.available_memory_bytes(tmp_path / 'meminfo', tmp_path) == 2**20
    assert topology.available_memory_bytes(tmp_path / 'absent', tmp_path) is None


def test_a_cgroup_path_cannot_climb_out_of_its_mount(tmp_path):
    root = tree(tmp_path, V2_MOUNT, '0::/../../etc\n', {'sys/fs/cgroup/memory.max': f'{64 * MiB}\n'})
    assert cgroup_room_bytes(root) == (64 * MiB, str(root / 'sys/fs/cgroup/memory.max'))


def test_a_simulated_memory_size_still_wins(tmp_path, monkeypatch):
    monkeypatch.setenv('YEEBENCH_SIMULATE_HW', 'mem=8Gi')
    root = tree(tmp_path, V2_MOUNT, '0::/\n', {'sys/fs/cgroup/memory.max': f'{64 * MiB}\n'})
    assert topology.available_memory(root / 'meminfo', root) == (8 * 2**30, 'YEEBENCH_SIMULATE_HW mem')


def test_a_real_cgroup_limit_is_seen_from_inside(tmp_path):
    """Where this machine lets us make a memory cgroup: a process moved into one of 300 MiB
    reads at most 300 MiB of room."""
    v2, v1 = cgroup_mounts(Path('/'))
    own = {c: p for _, c, p in (e.split(':', 2) for e in Path('/proc/self/cgroup').read_text().splitlines())}
    if v1 and any('memory' in c.split(',') for c in own):
        rel = next(p for c, p in own.items() if 'memory' in c.split(','))
        parent, limit_file = Path(v1 + rel), 'memory.limit_in_bytes'
    elif v2 and '' in own and (Path(v2 + own['']) / 'memory.max').exists():
        parent, limit_file = Path(v2 + own['']), 'memory.max'
    else:
        pytest.skip('no memory cgroup controller mounted here')
    group = parent / f'yeebench-test-{os.getpid()}'
    try:
        group.mkdir()
        (group / limit_file).write_text(str(300 * MiB))
    except OSError as e:
        pytest.skip(f'cannot make a memory cgroup under {parent}: {e}')
    try:
        code = 'from yeebench.cgroup_memory import cgroup_room_bytes; print(cgroup_room_bytes()[0])'
        p = subprocess.run(['sh', '-c', 'echo $$ > "$1/cgroup.procs" || exit 99; shift; exec "$@"', 'sh',
                            str(group), sys.executable, '-c', code], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        if p.returncode == 99:
            pytest.skip(f'cannot move a process into {group}: {p.stderr.strip()}')
        assert p.returncode == 0, p.stderr
        assert 0 < int(p.stdout) <= 300 * MiB
    finally:
        try:
            group.rmdir()
        except OSError:
            pass
