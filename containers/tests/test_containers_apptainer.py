"""Apptainer helpers: capability detection, SIF recognition, MPI ABI rule, finding apptainer, bad images."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / 'reframe'))
from yeebench import apptainer  # noqa: E402

# /proc/self/status lines: a full bounding set, and one without CAP_SYS_RESOURCE (bit 24), as here.
FULL = 'CapBnd:\t000001ffffffffff\n'
NO_SYS_RESOURCE = 'CapBnd:\t000001fffeffffff\n'


def test_root_without_cap_sys_resource_drops_it_and_normal_hosts_need_nothing():
    assert apptainer.exec_options(NO_SYS_RESOURCE, euid=0) == ['--drop-caps', 'CAP_SYS_RESOURCE']
    assert apptainer.exec_options(FULL, euid=0) == []
    assert apptainer.exec_options(NO_SYS_RESOURCE, euid=1000) == []      # users get no capabilities anyway


def test_sif_problem_names_the_file(tmp_path):
    fake = tmp_path / 'yeebench.sif'
    fake.write_text('#!/bin/sh\necho not an image\n')
    assert apptainer.sif_problem(str(fake)) == f'{fake}: not a SIF image (no SIF magic at byte 32)'
    assert 'cannot read the image' in apptainer.sif_problem(str(tmp_path / 'absent.sif'))
    real = tmp_path / 'real.sif'
    real.write_bytes(b'#!/usr/bin/env run-singularity\n'.ljust(32, b'\n') + b'SIF_MAGIC' + b'\0' * 64)
    assert apptainer.sif_problem(str(real)) is None


def test_mpi_abi_rule():
    v = apptainer.parse_mpirun_version
    assert v('mpirun (Open MPI) 4.1.4\n\nReport bugs to ...') == ('openmpi', 4, 1, 4)
    assert v('HYDRA build details:\n    Version: 4.1') is None                 # MPICH
    assert apptainer.abi_problem(('openmpi', 4, 1, 4), ('openmpi', 4, 1, 6)) is None
    assert 'different major series' in apptainer.abi_problem(('openmpi', 4, 1, 4), ('openmpi', 5, 0, 3))
    assert 'the image has no Open MPI' in apptainer.abi_problem(('openmpi', 4, 1, 4), None)
    assert 'the host has no Open MPI' in apptainer.abi_problem(None, ('openmpi', 4, 1, 4))


def run_finder(env):
    return subprocess.run(['bash', str(REPO_ROOT / 'containers/apptainer.sh')], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def test_apptainer_finder_skips_naming_where_it_looked(tmp_path):
    no_apptainer_path = ':'.join(d for d in os.environ['PATH'].split(':')
                                 if not os.path.exists(os.path.join(d, 'apptainer')))
    out = run_finder({'PATH': no_apptainer_path, 'YEEBENCH_LAB': str(tmp_path / 'nolab'),
                      'YEEBENCH_APPTAINER_DIR': str(tmp_path / 'unpacked')})
    assert out.returncode == 3
    assert 'no apptainer on PATH' in out.stderr and str(tmp_path / 'nolab') in out.stderr


def test_apptainer_finder_refuses_a_tarball_that_does_not_match_its_checksum(tmp_path):
    lab = tmp_path / 'lab'
    (lab / 'apptainer').mkdir(parents=True)
    (lab / 'apptainer' / 'apptainer-1.4.5-bookworm-amd64.tar.gz').write_bytes(b'tampered')
    (lab / 'SHA256SUMS').write_text('0' * 64 + '  ./apptainer/apptainer-1.4.5-bookworm-amd64.tar.gz\n')
    no_apptainer_path = ':'.join(d for d in os.environ['PATH'].split(':')
                                 if not os.path.exists(os.path.join(d, 'apptainer')))
    out = run_finder({'PATH': no_apptainer_path, 'YEEBENCH_LAB': str(lab),
                      'YEEBENCH_APPTAINER_DIR': str(tmp_path / 'unpacked')})
    assert out.returncode == 1 and 'does not match its sha256' in out.stderr
    assert not (tmp_path / 'unpacked').exists()


def test_container_check_fails_on_a_file_that_is_not_a_sif(tmp_path):
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists() or apptainer.find() is None:
        pytest.skip('needs reframe next to this Python and an apptainer (containers/apptainer.sh)')
    not_sif = tmp_path / 'broken.sif'
    not_sif.write_text('hello\n')
    out = subprocess.run([str(reframe), '-C', str(REPO_ROOT / 'reframe/config/settings.py'), '-c',
                          str(REPO_ROOT / 'reframe/yeebench/checks/containers/container.py'), '-n', 'SolverContainerVsNative', '-S', 'platform=Apptainer',
                          '-S', f'image={not_sif}', '--dry-run'], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm')}, cwd=REPO_ROOT)
    assert out.returncode != 0
    assert f'container check, setup: {not_sif}: not a SIF image' in out.stdout
    assert 'PASSED' not in out.stdout


def test_hybrid_native_leg_repeats_the_launcher_line_with_the_images_settings(tmp_path):
    """Best of `repeats` under the partition's launcher, with the same task count as the timed run, and
    the image's transport/thread settings (a CMA native leg made the image look 2x faster)."""
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists() or apptainer.find() is None:
        pytest.skip('needs reframe next to this Python and an apptainer (containers/apptainer.sh)')
    sif = tmp_path / 'stand-in.sif'
    sif.write_bytes(b'#!/usr/bin/env run-singularity\n'.ljust(32, b'\n') + b'SIF_MAGIC' + b'\0' * 64)
    out = subprocess.run([str(reframe), '-C', str(REPO_ROOT / 'reframe/config/settings.py'), '-c',
                          str(REPO_ROOT / 'reframe/yeebench/checks/containers/container.py'), '-n', 'NetpipeContainerVsNative',
                          '-S', 'platform=Apptainer', '-S', f'image={sif}', '--prefix', str(tmp_path / 'rfm'),
                          '--dry-run'], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm')}, cwd=REPO_ROOT)
    scripts = [p for p in (tmp_path / 'rfm').rglob('rfm_job.sh') if 'NetpipeRun' in str(p)]
    native = [p.read_text() for p in scripts if 'NPopenmpi -u' in p.read_text() and 'apptainer' not in p.read_text()]
    assert native, out.stdout
    script = native[0]
    assert 'for i in $(seq 4); do mpirun -np 2 ' in script
    assert script.count('mpirun -np 2 ') == 2
    for line in ('export OMPI_MCA_btl_vader_single_copy_mechanism=none', 'export OMP_NUM_THREADS=1'):
        assert line in script


def load_system(name, env):
    import importlib.util
    old = dict(os.environ)
    os.environ.update(env)
    try:
        spec = importlib.util.spec_from_file_location(f'sys_{name}', REPO_ROOT / f'reframe/config/systems/{name}.py')
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.system
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_apptainer_platform_on_local_and_both_vcluster_partitions_binding_the_pmix_directories(tmp_path):
    if apptainer.find() is None:
        pytest.skip('no apptainer (containers/apptainer.sh)')
    local = load_system('local', {})
    assert any(p['type'] == 'Apptainer' for p in local['partitions'][0]['container_platforms'])
    vcluster = load_system('vcluster', {'YEEBENCH_VCLUSTER_DIR': str(tmp_path / 'vc')})
    for part in vcluster['partitions']:
        (platform,) = part['container_platforms']
        assert platform['type'] == 'Apptainer'
        assert part['extras']['container_binds'] == [str(tmp_path / 'vc')]
