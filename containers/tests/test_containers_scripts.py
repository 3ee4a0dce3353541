"""The container scripts: entry point behaviour, build context contents, shell syntax."""
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTAINERS = REPO_ROOT / 'containers'
ENTRYPOINT = CONTAINERS / 'entrypoint.sh'


@pytest.mark.parametrize('script,shell', [('entrypoint.sh', 'sh'), ('ci-build.sh', 'bash'),
                                          ('build-context.sh', 'bash'), ('charliecloud-run.sh', 'bash'),
                                          ('build-image.sh', 'bash'), ('apptainer.sh', 'bash'),
                                          ('apptainer-ci.sh', 'bash'), ('vcluster-apptainer.sh', 'bash'),
                                          ('lab-file.sh', 'bash'), ('lib/run-state.sh', 'bash')])
def test_scripts_have_valid_syntax(script, shell):
    subprocess.run([shell, '-n', str(CONTAINERS / script)], check=True)


def run_entrypoint(*args, env=None):
    return subprocess.run(['sh', str(ENTRYPOINT), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=30)


def test_entrypoint_runs_a_given_command():
    out = run_entrypoint('echo', 'hello from the image')
    assert out.returncode == 0 and out.stdout == 'hello from the image\n'


def test_entrypoint_help_lists_the_commands():
    out = run_entrypoint('help')
    assert out.returncode == 0
    for word in ('smoke', 'selftest', 'anything else'):
        assert word in out.stdout


def test_entrypoint_smoke_without_reframe_files_fails_with_one_line(tmp_path):
    out = run_entrypoint('smoke', env={'YEEBENCH_PREFIX': str(tmp_path)})
    assert out.returncode == 2
    assert out.stderr.strip().count('\n') == 0 and 'no ReFrame configuration' in out.stderr


def test_entrypoint_passes_the_exit_code_through():
    assert run_entrypoint('sh', '-c', 'exit 7').returncode == 7


def test_build_context_holds_sources_and_wheels_but_no_build_outputs(tmp_path):
    wheels = tmp_path / 'wheels'
    wheels.mkdir()
    (wheels / 'demo-1.0-py3-none-any.whl').write_bytes(b'not a real wheel')
    tar_path = tmp_path / 'context.tar'
    with open(tar_path, 'wb') as out:
        subprocess.run(['bash', str(CONTAINERS / 'build-context.sh'), str(wheels)], stdout=out, check=True)
    with tarfile.open(tar_path) as tar:
        names = tar.getnames()
    assert 'solver/CMakeLists.txt' in names and 'microbench/CMakeLists.txt' in names
    assert 'reframe/pyproject.toml' in names and 'containers/entrypoint.sh' in names
    assert 'containers/wheels/demo-1.0-py3-none-any.whl' in names
    assert not [n for n in names if '__pycache__' in n or n.startswith(('.venv', 'build/'))
                or '/build/' in n or n.endswith('.pyc')]


def test_build_context_rejects_a_missing_wheelhouse(tmp_path):
    out = subprocess.run(['bash', str(CONTAINERS / 'build-context.sh'), str(tmp_path / 'nope')],
                         capture_output=True, text=True)
    assert out.returncode == 2 and 'wheelhouse' in out.stderr


def test_ci_build_skips_with_a_reason_when_not_root():
    # As an unprivileged user the script must say why it skips and exit 0 (nothing started). It runs
    # from a world-readable copy: the checkout itself may sit under a private home directory.
    if os.geteuid() != 0:
        out = subprocess.run(['bash', str(CONTAINERS / 'ci-build.sh')], capture_output=True, text=True)
    else:
        import shutil
        import tempfile
        top = tempfile.mkdtemp(prefix='yeebench-ci-skip-', dir='/tmp')
        try:
            os.chmod(top, 0o755)
            os.mkdir(os.path.join(top, 'containers'), 0o755)
            script = shutil.copy(CONTAINERS / 'ci-build.sh', os.path.join(top, 'containers'))
            os.chmod(script, 0o755)
            out = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
                                  'bash', script], capture_output=True, text=True, cwd='/')
        except FileNotFoundError:
            pytest.skip('setpriv is not available')
        finally:
            shutil.rmtree(top, ignore_errors=True)
    assert out.returncode == 0, out.stderr
    assert 'SKIPPED: needs root' in out.stdout

def test_build_image_help_and_missing_engine():
    help_out = subprocess.run(['bash', str(CONTAINERS / 'build-image.sh'), '--help'], capture_output=True, text=True)
    assert help_out.returncode == 0 and 'build-image.sh [IMAGE]' in help_out.stdout
    out = subprocess.run(['bash', str(CONTAINERS / 'build-image.sh')], capture_output=True, text=True,
                         env={**os.environ, 'ENGINE': 'no-such-engine'})
    assert out.returncode == 2 and 'no-such-engine not found' in out.stderr


def test_every_shell_script_is_executable_in_git():
    """The READMEs run the scripts directly (`containers/build-image.sh`), so git must carry +x
    (libraries under a lib/ folder are sourced, not run)."""
    out = subprocess.run(['git', 'ls-files', '-s', '--', '*.sh'], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True).stdout
    modes = {line.split('\t')[1]: line.split()[0] for line in out.splitlines() if '/lib/' not in line}
    assert 'containers/build-image.sh' in modes
    assert not [path for path, mode in modes.items() if mode != '100755']


def test_build_image_stops_before_any_work_when_no_daemon_answers(tmp_path):
    """The daemon is asked before the wheelhouse is built: a missing daemon costs no build time."""
    engine = tmp_path / 'fake-docker'
    engine.write_text('#!/bin/sh\necho "Cannot connect to the Docker daemon" >&2\nexit 1\n')
    engine.chmod(0o755)
    out_dir = tmp_path / 'out'
    proc = subprocess.run(['bash', str(CONTAINERS / 'build-image.sh')], capture_output=True, text=True,
                          timeout=30, env={**os.environ, 'ENGINE': str(engine), 'OUT': str(out_dir),
                                           'PY': '/bin/true'})
    assert proc.returncode == 2
    assert 'no' in proc.stderr and 'daemon answers' in proc.stderr
    assert proc.stderr.strip().count('\n') == 0
    assert not (out_dir / 'wheels').exists()


def test_build_context_carries_an_osu_tarball_and_rejects_other_files(tmp_path):
    wheels = tmp_path / 'wheels'
    wheels.mkdir()
    osu = tmp_path / 'osu-micro-benchmarks-7.4.tar.gz'
    osu.write_bytes(b'stand-in')
    with open(tmp_path / 'with.tar', 'wb') as out:
        subprocess.run(['bash', str(CONTAINERS / 'build-context.sh'), str(wheels), str(osu)], stdout=out, check=True)
    with tarfile.open(tmp_path / 'with.tar') as tar:
        assert 'containers/osu/osu-micro-benchmarks-7.4.tar.gz' in tar.getnames()
    with open(tmp_path / 'without.tar', 'wb') as out:
        subprocess.run(['bash', str(CONTAINERS / 'build-context.sh'), str(wheels)], stdout=out, check=True)
    with tarfile.open(tmp_path / 'without.tar') as tar:
        names = tar.getnames()
        assert 'containers/osu' in names and not [n for n in names if n.startswith('containers/osu/')]
    bad = subprocess.run(['bash', str(CONTAINERS / 'build-context.sh'), str(wheels), str(tmp_path / 'x.tar.gz')],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and 'is not an osu-micro-benchmarks-<version>.tar.gz' in bad.stderr


def test_lab_file_checks_the_checksum_and_names_a_missing_lab(tmp_path):
    lab = tmp_path / 'lab'
    (lab / 'mirror').mkdir(parents=True)
    (lab / 'mirror' / 'osu-micro-benchmarks-7.4.tar.gz').write_bytes(b'tampered')
    (lab / 'SHA256SUMS').write_text('0' * 64 + '  ./mirror/osu-micro-benchmarks-7.4.tar.gz\n')
    def run(env):
        return subprocess.run(['bash', str(CONTAINERS / 'lab-file.sh'), 'mirror/osu-micro-benchmarks-7.4.tar.gz'],
                              capture_output=True, text=True, env={**os.environ, **env})
    bad = run({'YEEBENCH_LAB': str(lab)})
    assert bad.returncode == 1 and 'does not match its sha256' in bad.stderr and not bad.stdout
    missing = run({'YEEBENCH_LAB': str(tmp_path / 'none')})
    assert missing.returncode == 3 and 'not found (YEEBENCH_LAB=' in missing.stderr


def test_vcluster_apptainer_fails_on_a_missing_image_unless_its_build_recorded_a_skip(tmp_path):
    sif = tmp_path / 'none.sif'
    def run():
        return subprocess.run(['bash', str(CONTAINERS / 'vcluster-apptainer.sh'), str(sif)],
                              capture_output=True, text=True, timeout=60)
    missing = run()
    assert missing.returncode == 1
    assert f'error: no image {sif}, and no record that its build was skipped' in missing.stdout
    (tmp_path / 'none.sif.skipped').write_text('no apptainer on PATH and no lab copy\n')
    skipped = run()
    assert skipped.returncode == 0
    assert f'SKIPPED: no image {sif}: its build was skipped: no apptainer on PATH and no lab copy' in skipped.stdout


def test_the_spack_image_build_records_why_it_skipped(tmp_path):
    path = ':'.join(d for d in os.environ['PATH'].split(':') if not os.path.exists(os.path.join(d, 'apptainer')))
    out = subprocess.run(['bash', str(CONTAINERS / 'spack-sif.sh')], capture_output=True, text=True, timeout=60,
                         env={**os.environ, 'PATH': path, 'YEEBENCH_LAB': str(tmp_path / 'nolab'),
                              'YEEBENCH_APPTAINER_DIR': str(tmp_path / 'none'), 'OUT': str(tmp_path / 'out'),
                              'PY': sys.executable})
    assert out.returncode == 0 and 'SKIPPED' in out.stdout, out.stdout + out.stderr
    assert 'no apptainer' in (tmp_path / 'out' / 'yeebench-spack.sif.skipped').read_text()


def test_apptainer_stage_skips_with_exit_3_when_no_apptainer_is_found(tmp_path):
    path = ':'.join(d for d in os.environ['PATH'].split(':') if not os.path.exists(os.path.join(d, 'apptainer')))
    out = subprocess.run(['bash', str(CONTAINERS / 'apptainer-ci.sh')], capture_output=True, text=True, timeout=60,
                         env={**os.environ, 'PATH': path, 'YEEBENCH_LAB': str(tmp_path / 'nolab'),
                              'YEEBENCH_APPTAINER_DIR': str(tmp_path / 'none'), 'OUT': str(tmp_path / 'out')})
    assert out.returncode == 3
    assert 'no apptainer on PATH' in out.stderr and 'SKIPPED' in out.stdout
