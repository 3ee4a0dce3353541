'''containers/base-tarball.sh stopped half-way leaves nothing mounted and nothing behind: debootstrap
mounts /proc and /sys inside its target (and may bind the host's /dev), and the temporary root file system
must be unmounted before it is removed, never walked into. A stand-in debootstrap mounts a tmpfs in the
target and waits; the script is sent SIGTERM as a stage runner sends it (to its process group).'''
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

CONTAINERS = Path(__file__).resolve().parents[1]

STAND_IN = '''#!/bin/sh
target=$3
mkdir -p "$target/proc" && mount -t tmpfs yeebench-test "$target/proc" || exit 9
echo kept > "$target/proc/host-file"
touch "$target/mounted"
exec sleep 60
'''


def _mounts_below(path):
    with open('/proc/self/mounts') as mounts:
        return [line.split()[1] for line in mounts if line.split()[1].startswith(f'{path}/')]


@pytest.mark.skipif(os.geteuid() != 0, reason='mounting needs root (the stand-in mounts a tmpfs like debootstrap)')
def test_a_stopped_debootstrap_leaves_no_mount_and_no_temporary_root():
    where = Path(tempfile.mkdtemp(prefix='yeebench-base-tarball-'))
    try:
        bin_dir = where / 'bin'
        bin_dir.mkdir()
        (bin_dir / 'debootstrap').write_text(STAND_IN)
        (bin_dir / 'debootstrap').chmod(0o755)
        cache = where / 'cache'
        env = {**os.environ, 'YEEBENCH_CACHE': str(cache), 'PATH': f'{bin_dir}:{os.environ["PATH"]}'}
        proc = subprocess.Popen(['bash', str(CONTAINERS / 'base-tarball.sh')], env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not list(cache.glob('rootfs.*/mounted')) and time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.skip(f'the stand-in could not mount a tmpfs here: {proc.stderr.read().strip()[-200:]}')
            time.sleep(0.05)
        assert _mounts_below(cache), 'the stand-in debootstrap did not get to mount'
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        assert _mounts_below(cache) == []
        assert list(cache.glob('rootfs.*')) == [] and not (cache / 'debian-bookworm-minbase.tar').exists()
    finally:
        for point in _mounts_below(where):
            subprocess.run(['umount', '-l', point], check=False)
        shutil.rmtree(where, ignore_errors=True)
