"""The native-vs-container checks ask about their image on the node, in the job: the probe lines run
in a shell with stand-in docker/apptainer/mpirun and their files are judged as the checks judge
them; ReFrame generates the checks on a launch host whose PATH has no real Docker, Apptainer or MPI
and where starting a program from a check is refused."""
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench.checks.containers import image_probe

REPO = Path(__file__).resolve().parents[3]
LOCK = '{"roots": ["yee"]}\n'
SIF_HEAD = b'#!/usr/bin/env run-singularity\n'.ljust(32, b'\n') + b'SIF_MAGIC' + b'\0' * 64


def stand_ins(bin_dir, log, docker_has_image=True, host_mpi='4.1.4', image_mpi='4.1.6'):
    '''docker, apptainer and mpirun that log each call and answer like the real ones.'''
    bin_dir.mkdir(parents=True, exist_ok=True)
    scripts = {
        'docker': f'''echo "docker $*" >> {log}
case "$1 $2" in
  "image inspect") {'echo sha256:' + 'ab' * 32 if docker_has_image else 'echo "No such image" >&2; exit 1'} ;;
  "run --rm") printf '%s' '{LOCK}' ;;
esac''',
        'apptainer': f'''echo "apptainer $*" >> {log}
case "$*" in
  *spack.lock*) printf '%s' '{LOCK}' ;;
  *--version*) echo "mpirun (Open MPI) {image_mpi}" ;;
esac''',
        'mpirun': f'echo "mpirun $*" >> {log}; echo "mpirun (Open MPI) {host_mpi}"',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text('#!/bin/sh\n' + body + '\n')
        path.chmod(0o755)
    return bin_dir


def run_probe(tmp_path, platform, image, container_leg, hybrid, **stand_in):
    '''The probe lines, then a marker for the benchmark launch, in a job-like shell in a stage dir.'''
    stage = tmp_path / 'stage'
    stage.mkdir()
    bin_dir = stand_ins(tmp_path / 'bin', tmp_path / 'calls.log', **stand_in)
    script = '\n'.join(image_probe.commands(platform, image, container_leg, hybrid) + ['echo LAUNCHED'])
    out = subprocess.run(['bash', '-c', script], cwd=stage, capture_output=True, text=True, timeout=60,
                         env={'PATH': f'{bin_dir}:/usr/bin:/bin'})
    findings = image_probe.Findings(str(stage), image, hybrid and container_leg)
    return out, findings


def test_docker_container_leg_records_the_image_id_and_its_spack_lock(tmp_path):
    out, found = run_probe(tmp_path, 'Docker', 'yeebench:latest', container_leg=True, hybrid=False)
    assert out.returncode == 0 and 'LAUNCHED' in out.stdout, out.stderr
    assert found.missing_reason() is None and found.abi_problem() is None
    facts = found.provenance()
    assert facts == {'image': 'yeebench:latest', 'image_sha256': 'ab' * 32,
                     'image_spack_lock_sha256': hashlib.sha256(LOCK.encode()).hexdigest()}


def test_a_node_without_the_image_stops_before_the_benchmark_and_says_why(tmp_path):
    out, found = run_probe(tmp_path, 'Docker', 'yeebench:nope', container_leg=False, hybrid=False,
                           docker_has_image=False)
    assert out.returncode == 0 and 'LAUNCHED' not in out.stdout
    reason = found.missing_reason()
    assert reason.startswith('image yeebench:nope is not available from the Docker daemon (DOCKER_HOST=default) on ')
    assert 'containers/build-image.sh' in reason


def test_a_sif_the_node_cannot_see_skips_naming_the_path(tmp_path):
    out, found = run_probe(tmp_path, 'Apptainer', str(tmp_path / 'absent.sif'), container_leg=True, hybrid=True)
    assert 'LAUNCHED' not in out.stdout
    assert f'image {tmp_path / "absent.sif"} not found on ' in found.missing_reason()
    assert not (tmp_path / 'calls.log').exists()        # nothing else was asked


def test_hybrid_leg_records_sif_sha_lock_and_both_mpis_and_launches_on_one_series(tmp_path):
    sif = tmp_path / 'yeebench.sif'
    sif.write_bytes(SIF_HEAD)
    out, found = run_probe(tmp_path, 'Apptainer', str(sif), container_leg=True, hybrid=True)
    assert 'LAUNCHED' in out.stdout, out.stderr
    facts = found.provenance()
    assert facts['image_sha256'] == hashlib.sha256(SIF_HEAD).hexdigest()
    assert facts['image_spack_lock_sha256'] == hashlib.sha256(LOCK.encode()).hexdigest()
    assert (facts['host_mpi'], facts['image_mpi']) == ('4.1.4', '4.1.6')
    assert found.abi_problem() is None
    calls = (tmp_path / 'calls.log').read_text().splitlines()
    assert 'mpirun --version' in calls                                          # on the node
    assert any(c.startswith('apptainer exec') and c.endswith(f'{sif} mpirun --version') for c in calls), calls


def test_hybrid_leg_with_another_mpi_series_never_launches_and_fails_naming_both(tmp_path):
    sif = tmp_path / 'yeebench.sif'
    sif.write_bytes(SIF_HEAD)
    out, found = run_probe(tmp_path, 'Apptainer', str(sif), container_leg=True, hybrid=True, image_mpi='5.0.3')
    assert 'LAUNCHED' not in out.stdout
    assert found.abi_problem() == (f'container check, MPI ABI check before the hybrid run of {sif}: host Open '
                                   'MPI 4.1.4 and image Open MPI 5.0.3 are different major series')


def test_hybrid_leg_on_a_node_without_mpi_never_launches(tmp_path):
    sif = tmp_path / 'yeebench.sif'
    sif.write_bytes(SIF_HEAD)
    stage = tmp_path / 'stage'
    stage.mkdir()
    bin_dir = stand_ins(tmp_path / 'bin', tmp_path / 'calls.log')
    (bin_dir / 'mpirun').write_text('#!/bin/sh\necho "mpirun: not found" >&2; exit 127\n')
    script = '\n'.join(image_probe.commands('Apptainer', str(sif), True, True) + ['echo LAUNCHED'])
    out = subprocess.run(['bash', '-c', script], cwd=stage, capture_output=True, text=True, timeout=60,
                         env={'PATH': f'{bin_dir}:/usr/bin:/bin'})
    assert out.returncode == 0, out.stderr
    assert 'LAUNCHED' not in out.stdout
    assert 'the host has no Open MPI' in image_probe.Findings(str(stage), str(sif), True).abi_problem()


# -- the checks, generated by ReFrame on a launch host that must not run anything ------------------
#: Runs ReFrame with subprocess refusing any program started while a check's code is on the stack
#: (configuration loading, which describes this machine, may still run lstopo and friends).
GUARD = '''
import os, subprocess, sys, traceback
_popen = subprocess.Popen.__init__
def guarded(self, args, *a, **k):
    stack = [f.filename for f in traceback.extract_stack()]
    if any('/reframe/checks/' in f or '/reframe/yeebench/' in f for f in stack) and \\
            not any('/reframe/config/' in f for f in stack):
        with open(os.environ['REFUSED_LOG'], 'a') as log:
            log.write(f'{args!r}\\n')
        raise RuntimeError(f'a check started {args!r} on the launch host')
    return _popen(self, args, *a, **k)
subprocess.Popen.__init__ = guarded
from reframe.frontend.cli import main
sys.argv[0] = 'reframe'
sys.exit(main())
'''


def generate(tmp_path, *args):
    if not (Path(sys.executable).parent / 'reframe').exists():
        pytest.skip('reframe is not installed next to this Python')
    bin_dir = stand_ins(tmp_path / 'bin', tmp_path / 'calls.log')
    (bin_dir / 'mpirun').unlink()            # no MPI on the launch host (local declares mpirun anyway)
    (bin_dir / 'NPopenmpi').write_text('#!/bin/sh\nexit 1\n')   # found on PATH by `local`, never run here
    (bin_dir / 'NPopenmpi').chmod(0o755)
    guard = tmp_path / 'guarded_reframe.py'
    guard.write_text(GUARD)
    env = {'HOME': str(tmp_path), 'PATH': str(bin_dir), 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm'),
           'YEEBENCH_PREFIX': str(tmp_path / 'no-prefix'), 'REFUSED_LOG': str(tmp_path / 'refused.log')}
    out = subprocess.run([sys.executable, str(guard), '-C', str(REPO / 'reframe/config/settings.py'),
                          '--system', 'local', '-c', str(REPO / 'reframe/yeebench/checks/containers/container.py'), *args,
                          '--dry-run'], capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    text = out.stdout + out.stderr
    refused = tmp_path / 'refused.log'
    assert not refused.exists(), f'programs started by the checks on the launch host: {refused.read_text()}'
    assert not (tmp_path / 'calls.log').exists(), (tmp_path / 'calls.log').read_text()
    assert out.returncode == 0 and 'FAIL' not in text, text
    return {p.parent.name: p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_job.sh')}


def test_docker_checks_generate_with_the_probe_in_the_job_and_nothing_run_here(tmp_path):
    scripts = generate(tmp_path, '-S', 'platform=Docker', '-S', 'image=yeebench:probe-test')
    legs = {name: s for name, s in scripts.items() if name.startswith(('SolverRun', 'NetpipeRun'))}
    assert len(legs) == 4, sorted(scripts)
    for name, script in legs.items():
        assert "docker image inspect -f '{{.Id}}' yeebench:probe-test > image-id.txt" in script, script
        container = 'docker run --rm' in script.split('image-id.txt', 1)[1]
        assert ('/opt/spack-environment/spack.lock > image-spack.lock' in script) == container, name
        # the probe comes before the benchmark
        assert script.index('image inspect') < script.index('seq 5'), script


def test_hybrid_checks_generate_with_the_abi_probe_in_the_job_and_nothing_run_here(tmp_path):
    sif = tmp_path / 'stand-in.sif'
    sif.write_bytes(SIF_HEAD)
    scripts = generate(tmp_path, '-S', 'platform=Apptainer', '-S', f'image={sif}')
    legs = [s for name, s in scripts.items() if name.startswith(('SolverRun', 'NetpipeRun'))]
    assert len(legs) == 4
    with_abi = [s for s in legs if f'mpirun --version > {image_probe.HOST_MPI}' in s]
    assert len(with_abi) == 2, legs                    # the two container legs, not the native ones
    for script in with_abi:
        assert f'sha256sum {sif} > image-sha256.txt' in script
        assert script.index(image_probe.IMAGE_MPI) < script.index('for i in $(seq 4)')
    assert all(f'test -f {sif}' in s for s in legs)


def test_an_image_name_with_shell_characters_is_named_as_given(tmp_path):
    image = 'odd"$name`x'
    out, found = run_probe(tmp_path, 'Docker', image, container_leg=False, hybrid=False, docker_has_image=False)
    assert 'LAUNCHED' not in out.stdout
    assert found.missing_reason().startswith(f'image {image} is not available from the Docker daemon')


@pytest.mark.parametrize('platform', ['Docker', 'Apptainer'])
def test_netpipe_legs_write_only_into_their_own_stage_directory(tmp_path, platform):
    image = tmp_path / 'stand-in.sif'
    image.write_bytes(SIF_HEAD)
    scripts = generate(tmp_path, '-S', f'platform={platform}', '-S',
                       f'image={image if platform == "Apptainer" else "yeebench:np-test"}')
    legs = {name: s for name, s in scripts.items() if name.startswith('NetpipeRun')}
    assert len(legs) == 2, sorted(scripts)
    for name, script in legs.items():
        # NetPIPE's file: this job's own stage directory, or nowhere; never a path every job shares
        written = re.findall(r"-o (\S+?)'? ", script)
        assert written and all(w.endswith(f'/{name}/np.out') or w == '/dev/null' for w in written), script


@pytest.mark.parametrize('platform', ['Docker', 'Apptainer'])
def test_a_hostile_image_name_is_one_word_in_every_leg(tmp_path, platform):
    from test_job_script_quoting import hostile, leaks
    payloads = {'image': hostile('image')}
    scripts = generate(tmp_path, '-S', f'platform={platform}', '-S', f'image={payloads["image"]}')
    legs = {name: s for name, s in scripts.items() if name.startswith(('SolverRun', 'NetpipeRun'))}
    assert len(legs) == 4 and all('@@image@@' in s for s in legs.values()), sorted(scripts)
    found = [leak for name, s in legs.items() for leak in leaks(s, payloads, name)]
    assert not found, found
