"""The Spack-built SIF's scripts: bad input gives one line naming the file and the step, and records nothing.

The tests that build run the real `apptainer build` (yours on PATH, else the lab's, as the CI stage does)
on small definition files; they skip, saying why, where neither is available.
"""
import importlib.util
import os
import re
import shutil
import tempfile
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTAINERS = REPO_ROOT / 'containers'
PY = REPO_ROOT / '.venv' / 'bin' / 'python'

spec = importlib.util.spec_from_file_location('containers_build_step', CONTAINERS / 'build_step.py')
build_step = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_step)


@pytest.mark.parametrize('script', ['spack-sif.sh', 'sif-build.sh', 'base-tarball.sh'])
def test_scripts_have_valid_syntax_and_help(script):
    subprocess.run(['bash', '-n', str(CONTAINERS / script)], check=True)
    out = subprocess.run(['bash', str(CONTAINERS / script), '--help'], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and len(out.stdout.splitlines()) >= 3 and not out.stdout.startswith('#')


# -- build_step.py: which step an apptainer build log stopped in --------------------------------------
BOOTSTRAP_FAILED = '''INFO:    Starting build...
FATAL:   While performing build: conveyor failed to get: while getting local image: stat /nope: no such file
'''
POST_FAILED_IN_FINAL = '''INFO:    Starting build...
INFO:    Extracting local image...
INFO:    Running setup scriptlet
INFO:    Copying spack to /opt/yeebench-src/spack
INFO:    Running post scriptlet
INFO:    Extracting local image...
INFO:    Copying /opt/software to /opt
INFO:    Running post scriptlet
+ apt-get -yqq install openmpi-bin
FATAL:   While performing build: while running engine: while running %post section: exit status 100
'''


def test_build_step_names_the_bootstrap_the_section_and_the_stage(tmp_path):
    defn = tmp_path / 'two.def'
    defn.write_text('Bootstrap: localimage\nFrom: x\nStage: build\n\n%post\n  true\n\n'
                    'Bootstrap: localimage\nFrom: x\nStage: final\n\n%post\n  true\n')
    assert build_step.failed_step(BOOTSTRAP_FAILED).startswith('the bootstrap')
    assert build_step.failed_step(POST_FAILED_IN_FINAL, defn.read_text()) == 'the %post section of stage final'
    first = POST_FAILED_IN_FINAL.split('INFO:    Extracting local image...\nINFO:    Copying /opt')[0]
    assert build_step.failed_step(first, defn.read_text()) == 'the %post section of stage build'
    assert build_step.failed_step(POST_FAILED_IN_FINAL) == 'the %post section'


COPY_FAILED_IN_FINAL_DISK_FULL = '''INFO:    Starting build...
INFO:    Extracting local image...
INFO:    Running post scriptlet
INFO:    Extracting local image...
INFO:    Copying /opt/views to /opt
FATAL:   While performing build: unable to copy files from host to container fs: while copying [/tmp/b/opt/views] \
to /tmp/c/rootfs/opt: [-fLr /tmp/b/opt/views /tmp/c/rootfs/opt]: /usr/bin/cp: error writing \
'/tmp/c/rootfs/opt/views/view/bin/yee': No space left on device
'''.replace('\\\n', '')


def test_build_step_names_the_cause_after_the_step(tmp_path):
    defn = tmp_path / 'two.def'
    defn.write_text('Bootstrap: localimage\nStage: build\n\nBootstrap: localimage\nStage: final\n')
    log = tmp_path / 'build.log'
    log.write_text(COPY_FAILED_IN_FINAL_DISK_FULL)
    out = subprocess.run([str(PY), str(CONTAINERS / 'build_step.py'), str(log), str(defn)],
                         capture_output=True, text=True)
    assert out.stdout == 'copying %files of stage final: no space left on device\n', out.stdout
    assert build_step.failure_cause(POST_FAILED_IN_FINAL) == 'while running engine: while running %post section: exit status 100'
    assert build_step.failure_cause('INFO:    Starting build...\n') is None
    assert len(build_step.failure_cause('FATAL: ' + 'x' * 500)) == 200


def test_build_step_refuses_an_unreadable_log(tmp_path):
    out = subprocess.run([str(PY), str(CONTAINERS / 'build_step.py'), str(tmp_path / 'none.log')],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count('\n') == 1 and 'none.log' in out.stderr


# -- real builds of small definition files -------------------------------------------------------------
@pytest.fixture(scope='module')
def apptainer():
    out = subprocess.run(['bash', str(CONTAINERS / 'apptainer.sh')], capture_output=True, text=True, cwd=REPO_ROOT)
    if out.returncode != 0:
        pytest.skip(f'no apptainer: {out.stderr.strip()}')
    return out.stdout.strip()


def sif_build(apptainer, tmp_path, text):
    defn = tmp_path / 'bad.def'
    defn.write_text(text)
    sif = tmp_path / 'bad.sif'
    sif.write_text('an older image')                # a failed build must not leave it (or a new one) behind
    out = subprocess.run(['bash', str(CONTAINERS / 'sif-build.sh'), apptainer, str(defn), str(sif),
                          str(tmp_path / 'build.log')], capture_output=True, text=True, timeout=120)
    return out, defn, sif


def test_a_missing_base_image_is_one_line_naming_the_def_and_the_bootstrap(apptainer, tmp_path):
    out, defn, sif = sif_build(apptainer, tmp_path, f'Bootstrap: localimage\nFrom: {tmp_path}/no-rootfs\n')
    assert out.returncode == 1
    assert out.stderr.count('\n') == 1, out.stderr
    assert f'{defn}: apptainer build failed in the bootstrap' in out.stderr
    assert not sif.exists() and not Path(f'{sif}.tmp').exists()


def test_a_def_that_fails_to_build_is_one_line_naming_the_def_and_the_section(apptainer, tmp_path):
    rootfs = tmp_path / 'rootfs'
    (rootfs / 'bin').mkdir(parents=True)
    # %files of a source that does not exist: fails after the bootstrap, as plain root or not.
    out, defn, sif = sif_build(apptainer, tmp_path, f'Bootstrap: localimage\nFrom: {rootfs}\n\n'
                                                    f'%files\n  {tmp_path}/no-such-file /opt/x\n')
    assert out.returncode == 1 and out.stderr.count('\n') == 1, out.stderr
    assert f'{defn}: apptainer build failed in copying %files' in out.stderr
    assert f"cannot stat '{tmp_path}/no-such-file': No such file or directory" in out.stderr   # the cause
    assert not sif.exists()


def test_sif_build_refuses_to_start_without_the_room_it_needs(tmp_path):
    defn = tmp_path / 'x.def'
    defn.write_text('Bootstrap: localimage\nFrom: /nowhere\n')
    sif = tmp_path / 'x.sif'
    sif.write_text('an older image')
    args = ['bash', str(CONTAINERS / 'sif-build.sh'), 'no-apptainer-needed', str(defn), str(sif), str(tmp_path / 'log')]
    env = {**os.environ, 'APPTAINER_TMPDIR': str(tmp_path), 'SIF_BUILD_NEED_MIB': str(2 ** 40)}
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    assert out.returncode == 1 and out.stderr.count('\n') == 1, out.stderr
    assert f'{tmp_path} has ' in out.stderr and f'needs about {2 ** 40} MiB there' in out.stderr
    assert sif.read_text() == 'an older image'          # nothing started, nothing removed
    out = subprocess.run(args, capture_output=True, text=True, env={**env, 'SIF_BUILD_NEED_MIB': '4G'})
    assert out.returncode == 2 and 'SIF_BUILD_NEED_MIB=4G: expected a number of MiB' in out.stderr


def test_sif_build_names_a_missing_definition_file(tmp_path):
    out = subprocess.run(['bash', str(CONTAINERS / 'sif-build.sh'), 'apptainer', str(tmp_path / 'x.def'),
                          str(tmp_path / 'x.sif'), str(tmp_path / 'log')], capture_output=True, text=True)
    assert out.returncode == 2 and f'{tmp_path / "x.def"}: no such definition file' in out.stderr


# -- spack-sif.sh: bad base image, nothing recorded ----------------------------------------------------
def test_a_base_tarball_that_is_not_a_root_filesystem_stops_before_any_build(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir()
    with tarfile.open(cache / 'debian-bookworm-minbase.tar', 'w') as tar:
        (tmp_path / 'README').write_text('not a root filesystem')
        tar.add(tmp_path / 'README', arcname='./README')
    out_dir = tmp_path / 'out'
    out_dir.mkdir()
    (out_dir / 'ci-apptainer-spack.json').write_text('{"from": "an earlier run"}')
    out = subprocess.run(['bash', str(CONTAINERS / 'spack-sif.sh')], capture_output=True, text=True, timeout=120,
                         env={**os.environ, 'YEEBENCH_CACHE': str(cache), 'OUT': str(out_dir), 'PY': str(PY)})
    if 'SKIPPED' in out.stdout:        # no apptainer or no Spack here: the stage stops before the base
        pytest.skip(out.stdout.strip().splitlines()[-1])
    assert out.returncode == 1
    errors = [line for line in out.stdout.splitlines() if 'error' in line]
    assert errors == [f'spack-sif: error: {cache}/debian-bookworm-minbase.tar: not a root-filesystem tarball '
                      '(no ./etc/debian_version); remove it to have it made again']
    assert not (out_dir / 'ci-apptainer-spack.json').exists()
    assert not (out_dir / 'base-rootfs').exists()


def test_spack_sif_refuses_unknown_arguments():
    out = subprocess.run(['bash', str(CONTAINERS / 'spack-sif.sh'), '--warm'], capture_output=True, text=True)
    assert out.returncode == 2 and 'unknown argument --warm' in out.stderr


def test_vcluster_run_refuses_a_file_that_is_not_a_sif_before_starting_a_cluster(tmp_path):
    bad = tmp_path / 'yeebench-spack.sif'
    bad.write_text('#!/bin/sh\necho not an image\n')
    out = subprocess.run(['bash', str(CONTAINERS / 'vcluster-apptainer.sh'), str(bad)], capture_output=True,
                         text=True, timeout=60, env={**os.environ, 'OUT': str(tmp_path / 'out')})
    if 'SKIPPED: no apptainer' in out.stdout:
        pytest.skip('no apptainer here')
    assert out.returncode == 1
    assert out.stdout.strip() == f'vcluster-apptainer: error: before starting the cluster: {bad}: not a SIF image ' \
                                 '(no SIF magic at byte 32)'
    assert not (tmp_path / 'out').exists()


def test_base_tarball_without_root_names_the_missing_file():
    # What a user without root sees (as root the script would run debootstrap): the script is copied to
    # a folder anyone may read, since the checkout may not be (a CI clone under /root).
    where = Path(tempfile.mkdtemp(prefix='yeebench-base-tarball-'))
    try:
        where.chmod(0o755)
        script = where / 'base-tarball.sh'
        shutil.copy(CONTAINERS / 'base-tarball.sh', script)
        script.chmod(0o755)
        command = ['bash', str(script)]
        if os.geteuid() == 0:
            command = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', *command]
        out = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=where,
                             env={**os.environ, 'YEEBENCH_CACHE': str(where / 'cache')})
        assert out.returncode == 2 and not out.stdout
        assert out.stderr.strip() == (f'base-tarball: {where}/cache/debian-bookworm-minbase.tar is missing '
                                      f'and debootstrap needs root (run: sudo {script})')
    finally:
        shutil.rmtree(where)


# -- the generated recipe is what `spack -e . containerize` writes from spack.yaml now ------------------
def test_the_generated_def_is_what_spack_containerize_writes_now():
    '''Runs the README's `spack -e . containerize > containers/yeebench-spack.def` (into a pipe) with the
    Spack the Spack stage uses (yours, else the lab's), in the stage's isolated state.'''
    script = '''set -eu; REPO=$PWD STATE=${SPACK_STATE:-$PWD/build/spack} VENV=.venv
        source spack/find-spack.sh > /dev/null; [ -n "$SPACK_HOME" ] || { echo "no Spack ($SPACK_LOOKED_AT)"; exit 3; }
        source spack/isolate.sh; set +u; source "$SPACK_HOME/share/spack/setup-env.sh"; set -u
        spack -e . containerize'''
    out = subprocess.run(['bash', '-c', script], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    if out.returncode == 3:
        pytest.skip(out.stdout.strip())
    assert out.returncode == 0, out.stderr
    assert out.stdout == (CONTAINERS / 'yeebench-spack.def').read_text(), \
        'containers/yeebench-spack.def is out of date: run `spack -e . containerize > containers/yeebench-spack.def`'


# -- containers/README.md: the Spack image's commands are the ones `make test` runs ---------------------
def readme_block_with(marker):
    blocks = re.findall(r'^```\n(.*?)^```', (CONTAINERS / 'README.md').read_text(), re.S | re.M)
    (block,) = [b for b in blocks if marker in b]
    return [line.split('#')[0].strip() for line in block.splitlines() if line.split('#')[0].strip()]


def make_test_targets():
    '''TEST_TARGETS of the Makefile and its fragments, in the order `make test` runs them.'''
    out = subprocess.run(['make', '-s', '--no-print-directory', '-pn', 'test'], capture_output=True, text=True,
                         cwd=REPO_ROOT, timeout=60)
    m = re.search(r'^TEST_TARGETS :?= (.*)$', out.stdout, re.M)
    assert m, 'no TEST_TARGETS in make -p output'
    return m.group(1).split()


def test_the_readme_spack_image_commands_are_make_test_stages_in_order():
    commands = readme_block_with('make test-containers-spack')
    assert all(c.startswith('make ') for c in commands), commands
    targets = make_test_targets()
    shown = [c.split()[1] for c in commands]
    assert set(shown) <= set(targets), sorted(set(shown) - set(targets))
    # Each stage uses what the one before it made: the SIF comes from test-spack's installs.
    assert [targets.index(t) for t in shown] == sorted(targets.index(t) for t in shown)
    recipe = subprocess.run(['make', '-n', 'test-containers-spack'], capture_output=True, text=True, cwd=REPO_ROOT,
                            timeout=60, env={**os.environ, 'MAKEFLAGS': ''})
    assert 'bash containers/spack-sif.sh' in recipe.stdout
