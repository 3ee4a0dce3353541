"""The GPU acceptance checks run for real through ReFrame on `local`, with stand-ins for the GPU side:
an nvidia-smi that lists two GPUs and an nvcc whose "programs" print what the CUDA probes print,
per GPU (CUDA_VISIBLE_DEVICES).  Every GPU is measured, the figure is the weakest GPU's, the GPU
model's reference judges it, and a node that shows fewer GPUs than declared fails."""
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SMI = 'case "$1" in --query-gpu=name,compute_cap) printf "NVIDIA H200, 9.0\\nNVIDIA H200, 9.0\\n";; *) exit 9;; esac'

# nvcc stand-in: `nvcc ... -o NAME NAME.cu` writes NAME, a script printing that probe's lines.
# GFLOPS_<device> / COPY_<device> choose each GPU's figures; SHOWN is how many GPUs the query sees.
NVCC = r'''
out=; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
cat > "$out" <<'PROBE'
#!/bin/sh
dev=${CUDA_VISIBLE_DEVICES:-all}
case "$0" in
*nbody) eval g=\${GFLOPS_$dev:-28000}
        echo "device_name NVIDIA H200"; echo "gflops $g"
        echo "nbody bodies 65536 steps 10 max_rel_error 1.0e-06 VALID";;
*bandwidth) eval c=\${COPY_$dev:-3950}
        echo "device_name NVIDIA H200"; echo "copy_GBs $c"; echo "triad_GBs 4100"
        echo "bandwidth array_MiB 1024 repeats 20 VALID";;
*devicequery) echo "devices ${SHOWN:-2} driver 13000 runtime 13000"
        i=0; while [ $i -lt ${SHOWN:-2} ]; do echo "device $i name \"NVIDIA H200\" cc 9.0 sms 132"; i=$((i+1)); done
        echo "devicequery VALID";;
esac
PROBE
chmod +x "$out"
'''


def tool(folder, name, script):
    path = folder / name
    path.write_text('#!/bin/sh\n' + script + '\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_checks(tmp_path, **env_extra):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    tool(bin_dir, 'nvidia-smi', SMI)
    tool(bin_dir, 'nvcc', NVCC)
    env = dict(os.environ, PATH=f'{bin_dir}:{os.environ["PATH"]}', YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'),
               RFM_ENABLE_RESULTS_STORAGE='0', **env_extra)
    report = tmp_path / 'report.json'
    subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local',
                    '-c', str(REPO / 'reframe/yeebench/checks/gpu/acceptance_gpu.py'), '-n', 'AcceptanceGPU', '-r',
                    '--report-file', str(report)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    cases = {c['name'].split('=')[-1]: c for run in json.loads(report.read_text())['runs'] for c in run['testcases']}
    return cases


def figure(case, name):
    (value,) = [v[0] for k, v in case['perfvalues'].items() if k.endswith(':' + name)]
    return value


def test_every_gpu_is_measured_and_the_weakest_is_the_figure(tmp_path):
    cases = run_checks(tmp_path, GFLOPS_0='28500', GFLOPS_1='27900', COPY_1='3900')
    assert {k: c['result'] for k, c in cases.items()} == {'devicequery': 'pass', 'bandwidth': 'pass', 'nbody': 'pass'}
    assert figure(cases['nbody'], 'nbody_gflops') == 27900.0
    assert figure(cases['bandwidth'], 'copy_bandwidth') == 3900.0
    details = cases['nbody']['acceptance_details']
    host = socket.gethostname()                              # every node of the partition: here the one host
    assert [d.split(':')[0] for d in details] == [f'{host} GPU 0 (NVIDIA H200)', f'{host} GPU 1 (NVIDIA H200)']
    assert 'on each of 1 node(s)' in cases['nbody']['acceptance_reason']
    # the GPU model's reference is the one applied
    ref = cases['nbody']['perfvalues']['local:default:nbody_gflops']
    assert ref[1] == 28387.0 and ref[2] == -0.15
    assert cases['nbody']['num_gpus_per_node'] == 2          # the scheduler is asked for every GPU


def test_one_slow_gpu_fails_against_the_models_reference(tmp_path):
    cases = run_checks(tmp_path, GFLOPS_1='20000')        # 30 % below the H200's reference
    assert cases['nbody']['result'] == 'fail'
    assert cases['nbody']['fail_phase'] == 'performance'
    assert figure(cases['nbody'], 'nbody_gflops') == 20000.0


def test_a_node_showing_fewer_gpus_than_declared_fails(tmp_path):
    cases = run_checks(tmp_path, SHOWN='1')
    assert cases['devicequery']['result'] == 'fail'
    assert 'declares 2 GPU(s) per node, the node shows 1' in cases['devicequery']['fail_reason']


def test_each_gpu_prefixes_every_line_with_the_node_and_the_gpu(tmp_path):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    tool(bin_dir, 'hostname', 'echo n7')
    tool(bin_dir, 'probe', 'echo "dev ${CUDA_VISIBLE_DEVICES:-all}"')
    script = REPO / 'reframe/yeebench/checks/gpu/src/each_gpu.sh'
    env = dict(os.environ, PATH=f'{bin_dir}:{os.environ["PATH"]}', CUDA_VISIBLE_DEVICES='2,3')
    run = lambda *args: subprocess.run(['bash', str(script), *args], capture_output=True, text=True,  # noqa: E731
                                       env=env, check=True).stdout.splitlines()
    assert run('2', 'probe') == ['n7 gpu0 dev 2', 'n7 gpu1 dev 3']
    assert run('all', 'probe') == ['n7 node dev 2,3']
