"""The ReFrame configuration: systems collected from files, local detection, references on disk."""
import importlib.util
import os
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / 'config'


def load_settings():
    spec = importlib.util.spec_from_file_location('yeebench_settings_under_test', CONFIG / 'settings.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.site_configuration


def test_systems_are_collected_and_local_is_last():
    config = load_settings()
    names = [s['name'] for s in config['systems']]
    assert 'local' in names and 'generic-slurm' in names
    assert names[-1] == 'local'
    assert {e['name'] for e in config['environments']} >= {'host', 'spack'}


def test_local_partition_matches_this_machine():
    local = [s for s in load_settings()['systems'] if s['name'] == 'local'][0]
    part = local['partitions'][0]
    assert part['scheduler'] == 'local' and part['launcher'] == 'mpirun'
    from yeebench import topology
    assert part['processor']['num_cpus'] == topology.detect().num_cpus
    root_vars = {k for k, _ in part['env_vars']}
    assert ('OMPI_ALLOW_RUN_AS_ROOT' in root_vars) == (os.geteuid() == 0)
    assert all('oversubscribe' not in str(v) for v in part['env_vars'])
    assert 'mpi' in part['features']


def test_generic_slurm_template():
    slurm = [s for s in load_settings()['systems'] if s['name'] == 'generic-slurm'][0]
    part = slurm['partitions'][0]
    assert part['scheduler'] in ('slurm', 'squeue') and part['launcher'] in ('srun', 'mpirun')
    assert part['max_jobs'] >= 1 and part['access']
    assert part['extras']['num_nodes'] >= 2


def test_output_goes_under_build(monkeypatch):
    config = load_settings()
    for system in config['systems']:
        assert '/build/reframe' in system['prefix'] or os.environ.get('YEEBENCH_RFM_DIR')


def _local_partition():
    return [s for s in load_settings()['systems'] if s['name'] == 'local'][0]['partitions'][0]


def test_local_gpus_come_from_nvidia_smi(tmp_path, monkeypatch):
    from test_suite_gpu import TWO_H100, fake_smi
    monkeypatch.setenv('PATH', f'{fake_smi(tmp_path, TWO_H100)}{os.pathsep}{os.environ["PATH"]}')
    part = _local_partition()
    assert 'gpu' in part['features']
    assert part['devices'] == [{'type': 'gpu', 'num_devices': 2, 'arch': 'sm_90'}]
    assert part['extras']['num_gpus'] == 2


def test_local_without_a_usable_gpu(tmp_path, monkeypatch):
    from test_suite_gpu import fake_smi
    monkeypatch.setenv('PATH', f'{fake_smi(tmp_path, "exit 9")}{os.pathsep}{os.environ["PATH"]}')
    part = _local_partition()
    assert 'gpu' not in part['features'] and part['devices'] == []
    assert 'num_gpus' not in part['extras']
