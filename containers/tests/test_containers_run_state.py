"""containers/lib/run-state.sh: each run its own state directory; a held cache says whose it is."""
import subprocess
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LIB = REPO_ROOT / 'containers' / 'lib' / 'run-state.sh'


def bash(script, **kwargs):
    return subprocess.run(['bash', '-c', f'set -euo pipefail; . {LIB}; {script}'], capture_output=True,
                          text=True, timeout=30, **kwargs)


def test_two_runs_get_two_state_directories_each_with_its_owner(tmp_path):
    base = tmp_path / 'yeebench-docker'
    first = bash(f'new_state_dir {base}').stdout.strip()
    second = bash(f'new_state_dir {base}').stdout.strip()
    assert first != second
    for d in (first, second):
        assert Path(d).is_dir() and Path(d).name.startswith('yeebench-docker.')
        assert (Path(d) / 'owner').read_text().startswith('pid ')


def test_a_held_cache_names_its_holder_and_the_waiter_gives_up_after_its_timeout(tmp_path):
    cache = tmp_path / 'docker-data'
    holder = subprocess.Popen(['bash', '-c', f'. {LIB}; hold_lock {cache} 5 cache; echo held; sleep 30'],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        t0 = time.monotonic()
        waiter = bash(f'hold_lock {cache} 1 "the layer cache"')
        assert waiter.returncode != 0 and time.monotonic() - t0 < 10
        assert f'pid {holder.pid}' in waiter.stderr and 'in use by another run' in waiter.stderr
        assert 'still in use after 1 s' in waiter.stderr
    finally:
        holder.kill()
        holder.wait()
    # Released: the next run takes it at once and writes itself as the owner.
    taker = bash(f'hold_lock {cache} 1 cache; cat {cache}.owner')
    assert taker.returncode == 0 and taker.stdout.startswith('pid ')
