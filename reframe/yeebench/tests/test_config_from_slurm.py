"""`yeebench config from-slurm`: a ReFrame system file from sinfo / scontrol output (fake programs on PATH
print the files in data/slurm/); without Slurm or with unreadable answers: one line, exit 2, nothing written."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from yeebench.siteconfig import slurm

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).resolve().parent / 'data' / 'slurm'

FAKE = {
    'sinfo': 'cat "$YB_SLURM/sinfo-nodes.txt"',
    'scontrol': 'case "$*" in *"show node"*) cat "$YB_SLURM/scontrol-show-node.txt";; '
                '*"show config"*) cat "$YB_SLURM/scontrol-show-config.txt";; *) exit 1;; esac',
    'srun': 'cat "$YB_SLURM/srun-mpi-list.txt"',
}


def fake_slurm(tmp_path, data=DATA, **override):
    '''A bin directory of sinfo/scontrol/srun printing `data`'s files (override: program -> script body).'''
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir(exist_ok=True)
    for name, body in {**FAKE, **override}.items():
        if body is None:
            continue
        (bin_dir / name).write_text(f'#!/bin/sh\n{body}\n')
        (bin_dir / name).chmod(0o755)
    return {'PATH': f'{bin_dir}:/usr/bin:/bin', 'YB_SLURM': str(data)}


def yeebench(env, *args, cwd):
    out = subprocess.run([sys.executable, '-m', 'yeebench', 'config', 'from-slurm', *args], capture_output=True,
                         text=True, timeout=120, env={**env, 'HOME': str(cwd)}, cwd=cwd)
    return out.returncode, out.stdout, out.stderr


def load(path):
    scope = {}
    exec(compile(Path(path).read_text(), str(path), 'exec'), scope)
    return scope['site_configuration']


def test_a_system_file_from_sinfo_and_scontrol(tmp_path):
    rc, out, err = yeebench(fake_slurm(tmp_path), '-o', 'site.py', cwd=tmp_path)
    assert rc == 0, err
    config = load(tmp_path / 'site.py')
    system = config['systems'][0]
    assert system['name'] == 'testcluster'
    parts = {p['name']: p for p in system['partitions']}
    assert list(parts) == ['cpu', 'gpu', 'all']
    cpu, gpu = parts['cpu'], parts['gpu']
    # the most common shape describes the partition; the odd node is named in the description
    assert cpu['processor'] == {'num_cpus': 128, 'num_sockets': 2, 'num_cpus_per_socket': 64, 'num_cpus_per_core': 2,
                                'platform': 'x86_64'}
    assert '1 differ' in cpu['descr'] and cpu['extras'] == {'num_nodes': 3, 'mem_per_node_mib': 257000}
    assert cpu['access'] == ['--partition=cpu'] and cpu['launcher'] == 'srun'
    # no accounting database: squeue; srun's MPI plugin: pmix
    assert cpu['scheduler'] == 'squeue' and cpu['env_vars'] == [['SLURM_MPI_TYPE', 'pmix']]
    assert 'devices' not in cpu and 'features' not in cpu
    assert gpu['devices'] == [{'type': 'gpu', 'num_devices': 4}] and gpu['features'] == ['gpu']
    assert {'name': '_rfm_gpu', 'options': ['--gres=gpu:{num_gpus_per_node}']} in gpu['resources']
    assert gpu['extras']['num_nodes'] == 2
    assert 'wrote site.py' in err


def test_the_file_is_a_configuration_reframe_loads_and_lists_every_check(tmp_path):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    rc, _, err = yeebench(fake_slurm(tmp_path), '--partition', 'cpu', '-o', 'site.py', cwd=tmp_path)
    assert rc == 0, err
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'))

    def listing(config, *args):
        out = subprocess.run([str(exe), '-C', str(config), '-c', str(REPO / 'reframe/yeebench/checks'), '-R',
                              '-l', *args], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        found = re.search(r'Found (\d+) check', out.stdout)
        assert out.returncode == 0 and found, out.stdout + out.stderr
        return int(found.group(1))
    assert listing(tmp_path / 'site.py') == listing(REPO / 'reframe/config/settings.py', '--system', 'local')


def test_one_partition(tmp_path):
    rc, out, err = yeebench(fake_slurm(tmp_path), '--partition', 'gpu', cwd=tmp_path)
    assert rc == 0, err
    scope = {}
    exec(out, scope)
    assert [p['name'] for p in scope['site_configuration']['systems'][0]['partitions']] == ['gpu']


def assert_refused(rc, out, err, tmp_path, written='site.py'):
    assert rc == 2 and out == '', (rc, out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith('yeebench config: error: '), err
    assert not (tmp_path / written).exists() and not list(tmp_path.glob('.*.tmp'))


def test_without_slurm(tmp_path):
    env = dict(fake_slurm(tmp_path, sinfo=None, scontrol=None, srun=None), PATH=str(tmp_path / 'bin'))
    rc, out, err = yeebench(env, '-o', 'site.py', cwd=tmp_path)
    assert_refused(rc, out, err, tmp_path)
    assert 'sinfo not found on PATH' in err


@pytest.mark.skipif(not shutil.which('sinfo'), reason='no sinfo installed')
def test_with_a_slurm_that_cannot_be_read(tmp_path):
    # this machine's own Slurm client has no controller to ask
    if subprocess.run(['sinfo'], capture_output=True).returncode == 0:
        pytest.skip('a Slurm controller answers here')
    rc, out, err = yeebench({'PATH': os.environ['PATH']}, '-o', 'site.py', cwd=tmp_path)
    assert_refused(rc, out, err, tmp_path)


@pytest.mark.parametrize('program, body, says', [
    ('sinfo', 'echo "sinfo: error: Unable to contact slurm controller" >&2; exit 1', 'Unable to contact'),
    ('sinfo', 'echo "garbage without a separator"', 'cannot read the line'),
    ('sinfo', 'true', 'no partitions'),
    ('scontrol', 'echo "Nodes=cn01 junk"', 'without NodeName='),
    ('scontrol', 'echo "NodeName=cn01 CPUTot=many Sockets=1 CoresPerSocket=1 ThreadsPerCore=1"', 'CPUTot=many'),
    ('scontrol', 'echo "NodeName=cn01 CPUTot=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1"',
     'scontrol show node does not list it'),
    ('scontrol', 'echo "NodeName=cn01 CPUTot=8 Sockets=1 Boards=abc CoresPerSocket=8 ThreadsPerCore=1"', 'Boards=abc'),
    ('scontrol', 'echo "NodeName=cn01 CPUTot=\u00b2 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1"', 'CPUTot=\u00b2'),
    ('sinfo', 'echo "cn01|*"', 'cannot read the line'),
])
def test_unreadable_answers(tmp_path, program, body, says):
    (tmp_path / 'site.py').write_text('# the site file before\n')
    rc, out, err = yeebench(fake_slurm(tmp_path, **{program: body}), '-o', 'site.py', cwd=tmp_path)
    assert rc == 2 and out == '' and len(err.strip().splitlines()) == 1 and says in err, err
    assert (tmp_path / 'site.py').read_text() == '# the site file before\n'   # left as it was


def test_an_unknown_partition(tmp_path):
    rc, out, err = yeebench(fake_slurm(tmp_path), '--partition', 'nope', '-o', 'site.py', cwd=tmp_path)
    assert_refused(rc, out, err, tmp_path)
    assert "no Slurm partition 'nope' (sinfo lists: cpu, gpu, all)" in err


def test_gres_and_plugins():
    assert slurm.gpus_of('gpu:a100:4(S:0-1)') == 4
    assert slurm.gpus_of('gpu:2,shard:8') == 2
    assert slurm.gpus_of('gpu:a100:2,gpu:v100:1') == 3
    assert slurm.gpus_of('(null)') == 0 and slurm.gpus_of('') == 0
    assert slurm.mpi_plugin('MPI plugin types are...\n\tnone\n\tpmi2\n') == 'pmi2'
    assert slurm.mpi_plugin('') is None


def test_a_slurm_that_does_not_bind_says_so():
    sinfo, nodes = (DATA / 'sinfo-nodes.txt').read_text(), (DATA / 'scontrol-show-node.txt').read_text()
    config = (DATA / 'scontrol-show-config.txt').read_text()

    def extras(task_plugin):
        text = config + (f'TaskPlugin              = {task_plugin}\n' if task_plugin else '')
        return [p['extras'] for p in slurm.system_config(sinfo, nodes, text, hostname='login')['systems'][0]['partitions']]

    # task/none (the virtual cluster's Slurm): srun's --cpu-bind does nothing, the binding checks skip
    assert all(e.get('cpu_binding') is False for e in extras('task/none'))
    assert all('cpu_binding' not in e for e in extras('task/affinity,task/cgroup'))
    assert all('cpu_binding' not in e for e in extras(None))   # not stated: nothing assumed


def test_answers_that_are_not_utf8_are_read(tmp_path):
    # a node's free text (OS=, Reason=) in Latin-1: read with replacement characters, not refused
    (tmp_path / 'data').mkdir()
    for name in ('sinfo-nodes.txt', 'scontrol-show-config.txt', 'srun-mpi-list.txt'):
        shutil.copy(DATA / name, tmp_path / 'data' / name)
    nodes = (DATA / 'scontrol-show-node.txt').read_bytes().replace(b'Not responding', b'Ventilateur d\xe9faillant')
    (tmp_path / 'data' / 'scontrol-show-node.txt').write_bytes(nodes.replace(b'OS=Linux', b'OS=\xff\xfeLinux'))
    rc, out, err = yeebench(fake_slurm(tmp_path, data=tmp_path / 'data'), '-o', 'site.py', cwd=tmp_path)
    assert rc == 0 and 'Traceback' not in err, err
    assert [p['name'] for p in load(tmp_path / 'site.py')['systems'][0]['partitions']] == ['cpu', 'gpu', 'all']


def test_partition_names_are_distinct_and_never_empty():
    nodes = (DATA / 'scontrol-show-node.txt').read_text()
    sinfo = 'cn01|a.b*\ncn02|a_b\ngn01|a-b\ngn02|a b\n'
    parts = slurm.system_config(sinfo, nodes, hostname='login')['systems'][0]['partitions']
    assert [p['name'] for p in parts] == ['a_b', 'a_b_2', 'a-b', 'a_b_3']
    assert [p['access'] for p in parts] == [['--partition=a.b'], ['--partition=a_b'], ['--partition=a-b'],
                                             ['--partition=a b']]


def test_the_file_is_readable_as_open_would_make_it(tmp_path):
    mask = os.umask(0o022)
    try:
        rc, _, err = yeebench(fake_slurm(tmp_path), '-o', 'site.py', cwd=tmp_path)
    finally:
        os.umask(mask)
    assert rc == 0, err
    assert (tmp_path / 'site.py').stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize('kind', ['symlink', 'fifo', 'directory'])
def test_an_output_that_is_not_a_regular_file_is_left_as_it_was(tmp_path, kind):
    target, victim = tmp_path / 'site.py', tmp_path / 'victim.py'
    victim.write_text('# mine\n')
    if kind == 'symlink':
        target.symlink_to(victim)
    elif kind == 'fifo':
        os.mkfifo(target)
    else:
        target.mkdir()
    before = os.lstat(target)
    rc, out, err = yeebench(fake_slurm(tmp_path), '-o', 'site.py', cwd=tmp_path)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and 'site.py' in err, err
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode) and victim.read_text() == '# mine\n'
