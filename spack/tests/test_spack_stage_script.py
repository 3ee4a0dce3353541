"""spack/stage.sh before Spack runs: where it looks for Spack, and the lab's checksums."""
import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_stage(tmp_path, **env):
    base = {'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path), 'SPACK_STATE': str(tmp_path / 'state'),
            'VENV': os.path.relpath(Path(os.sys.executable).parents[1], REPO_ROOT)}
    return subprocess.run(['bash', 'spack/stage.sh'], cwd=REPO_ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


def test_no_spack_anywhere_skips_with_one_line_naming_where_it_looked(tmp_path):
    proc = run_stage(tmp_path, YEEBENCH_LAB=str(tmp_path / 'no-lab'), SPACK_ROOT=str(tmp_path / 'no-spack'))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith('test-spack: skipped: no Spack')
    for place in ('spack on PATH', str(tmp_path / 'no-spack'), str(tmp_path / 'no-lab')):
        assert place in lines[0]


def test_a_lab_tarball_that_does_not_match_its_checksum_is_refused(tmp_path):
    lab = tmp_path / 'lab'
    (lab / 'spack').mkdir(parents=True)
    for name in ('spack-1.1.0.tar.gz', 'spack-packages-2025.11.0.tar.gz'):
        (lab / 'spack' / name).write_bytes(b'not the release')
    (lab / 'SHA256SUMS').write_text('0' * 64 + '  ./spack/spack-1.1.0.tar.gz\n' +
                                    '0' * 64 + '  ./spack/spack-packages-2025.11.0.tar.gz\n')
    proc = run_stage(tmp_path, YEEBENCH_LAB=str(lab))
    assert proc.returncode == 1
    assert 'does not match' in proc.stderr and 'spack-1.1.0.tar.gz' in proc.stderr
    assert not (tmp_path / 'state' / 'lab' / 'spack-1.1.0').exists()


def test_a_failing_step_names_its_log_and_shows_the_error_and_reframe_never_runs(tmp_path):
    '''A stand-in `spack` on PATH whose concretizer fails (it touches nothing in the repository).'''
    home = tmp_path / 'fake-spack'
    (home / 'bin').mkdir(parents=True)
    (home / 'share' / 'spack').mkdir(parents=True)
    (home / 'share' / 'spack' / 'setup-env.sh').write_text('')
    fake = home / 'bin' / 'spack'
    fake.write_text('#!/bin/sh\necho "==> Concretizing"\n'
                    'echo "==> Error: yee: no version satisfies the constraint @9.9"\nexit 1\n')
    fake.chmod(0o755)
    proc = run_stage(tmp_path, PATH=f'{home / "bin"}:/usr/bin:/bin')
    assert proc.returncode == 1
    log = tmp_path / 'state' / 'logs' / 'concretize.log'
    assert '[concretize] FAILED after' in proc.stderr and f'log: {log}' in proc.stderr
    assert 'no version satisfies the constraint @9.9' in proc.stderr
    assert '[reframe]' not in proc.stdout + proc.stderr
    assert not (tmp_path / 'state' / 'ready').exists()
