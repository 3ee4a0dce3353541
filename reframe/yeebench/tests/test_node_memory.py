"""A node's memory for sizing a problem comes from the partition's description first
(extras.mem_per_node_mib, EESSI's extras.mem_per_node), and says where it came from."""
import json
from types import SimpleNamespace

import pytest

from test_site_configs import EESSI_LIKE, reframe, site_config
from yeebench import topology


def partition(extras, scheduler='slurm'):
    return SimpleNamespace(extras=extras, fullname='site:cpu', scheduler=SimpleNamespace(registered_name=scheduler))


def test_the_partition_description_wins_over_the_planning_host(monkeypatch):
    monkeypatch.setattr(topology, 'available_memory', lambda: (7 * 2**30, 'MemAvailable'))
    assert topology.partition_memory_bytes(partition({'mem_per_node_mib': 1024})) == \
        (2**30, 'extras.mem_per_node_mib = 1024 MiB')
    assert topology.partition_memory_bytes(partition({'mem_per_node': 512.5})) == \
        (int(512.5 * 2**20), 'extras.mem_per_node = 512.5 MiB')
    mem, source = topology.partition_memory_bytes(partition({}, 'local'))
    assert (mem, source) == (7 * 2**30, 'MemAvailable of this node (local scheduler)')
    mem, source = topology.partition_memory_bytes(partition({}, 'slurm'))
    assert mem == 7 * 2**30 and '(MemAvailable)' in source and 'assumed' in source and 'extras.mem_per_node_mib' in source
    monkeypatch.setattr(topology, 'available_memory', lambda: (None, None))
    assert topology.partition_memory_bytes(partition({}, 'slurm'))[0] is None


@pytest.mark.parametrize('value', ['lots', -5, 0, True, None, '1; rm -rf /'])
def test_a_bad_memory_value_is_refused_naming_the_key(value):
    with pytest.raises(ValueError, match=r'^partition site:cpu: extras\.mem_per_node_mib = .* is not a positive number'):
        topology.partition_memory_bytes(partition({'mem_per_node_mib': value}))


def _node_scaling(tmp_path, extras):
    config = site_config(tmp_path, EESSI_LIKE.replace("'extras': {'mem_per_node': 256000}", f"'extras': {extras!r}"))
    report = tmp_path / 'report.json'
    rc, out = reframe(config, '-n', 'FdtdNodeScaling', '--system', 'example:cpu', '--dry-run',
                      '--report-file', str(report), tmp_path=tmp_path)
    (case,) = [c for run in json.loads(report.read_text())['runs'] for c in run['testcases']
               if c['name'].startswith('FdtdNodeScaling')]
    return rc, out, case


def test_node_scaling_sizes_its_grid_from_the_partitions_memory(tmp_path):
    rc, out, case = _node_scaling(tmp_path, {'mem_per_node_mib': 64})
    assert rc == 0, out
    assert case['observations']['node_memory'] == 'extras.mem_per_node_mib = 64 MiB'
    # a quarter of 64 MiB at 96 B per cell: 174762 cells on the one node, 55^3
    assert case['observations']['grid'].startswith('55^3 = 166375 cells'), case['observations']


def test_node_scaling_skips_naming_a_bad_memory_value(tmp_path):
    rc, out, case = _node_scaling(tmp_path, {'mem_per_node_mib': 'lots'})
    assert rc == 0 and case['result'] == 'skip', out
    assert "extras.mem_per_node_mib = 'lots' is not a positive number" in case['observations']['skip_reason']
