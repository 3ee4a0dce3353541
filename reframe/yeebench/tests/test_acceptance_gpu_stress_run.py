"""AcceptanceGPUStress through ReFrame on `local`: in the acceptance set (run.sh), skipped with the reason
where the partition has no GPU, and with stand-ins for the GPU side (an nvidia-smi listing two GPUs whose
ECC report changes once GPU 1 was loaded, an nvcc whose "nbody" marks the GPU it ran on) every GPU is
loaded and the GPU whose counter rose fails the check by its index."""
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CHECK = REPO / 'reframe/yeebench/checks/gpu/acceptance_gpu_stress.py'

LIST = ('0, 00000000:07:00.0, GPU-1b7e6c2a-0f3e-4a51-9c1d-1d2e3f4a5b6c, NVIDIA H200\\n'
        '1, 00000000:08:00.0, GPU-9a8b7c6d-5e4f-4321-8765-43210fedcba9, NVIDIA H200\\n')
ECC = '''GPU 00000000:07:00.0
    ECC Errors
        Volatile
            DRAM Uncorrectable            : 0
GPU 00000000:08:00.0
    ECC Errors
        Volatile
            DRAM Uncorrectable            : $dbe
'''
# nvidia-smi stand-in: the configuration's detection query, the GPU list, and the ECC report, whose
# GPU 1 counter reads 1 once a load ran on GPU 1 (a file in the stage directory says so) and RISE is set
SMI = f'''case "$1" in
--query-gpu=name,compute_cap) printf "NVIDIA H200, 9.0\\nNVIDIA H200, 9.0\\n";;
--query-gpu=index,*) printf "{LIST}";;
-q) dbe=0; [ -n "${{RISE:-}}" ] && ls loaded-*fedcba9 > /dev/null 2>&1 && dbe=1
    cat <<EOF
{ECC}EOF
;;
*) exit 9;; esac'''
NVCC = r'''out=; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '#!/bin/sh\ntouch "loaded-$CUDA_VISIBLE_DEVICES"\necho "nbody bodies 8 steps 1 max_rel_error 0 VALID"\n' > "$out"
chmod +x "$out"'''


def tool(folder, name, script):
    path = folder / name
    path.write_text('#!/bin/sh\n' + script + '\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run(tmp_path, smi, **env_extra):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    tool(bin_dir, 'nvidia-smi', smi)
    tool(bin_dir, 'nvcc', NVCC)
    env = dict(os.environ, PATH=f'{bin_dir}:{os.environ["PATH"]}', YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'),
               RFM_ENABLE_RESULTS_STORAGE='0', **env_extra)
    report = tmp_path / 'report.json'
    subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'local', '-c', str(CHECK),
                    '-t', 'acceptance', '-S', 'AcceptanceGPUStress.stress_seconds=0.2', '-r',
                    '--report-file', str(report)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    (case,) = [c for r in json.loads(report.read_text())['runs'] for c in r['testcases']]
    return case


def test_the_acceptance_run_includes_the_check():
    listed = re.findall(r'\bgpu/acceptance_gpu_stress\b', (REPO / 'reframe/yeebench/acceptance/run.sh').read_text())
    assert listed


def test_a_partition_without_gpus_skips_with_the_reason(tmp_path):
    case = run(tmp_path, 'echo "NVIDIA-SMI has failed: no driver" >&2; exit 9')
    assert case['name'] == 'AcceptanceGPUStress' and case['result'] == 'skip'
    assert case['acceptance_verdict'] == 'NOT MEASURED'
    assert case['acceptance_reason'].startswith("no GPU: partition local:default declares none")


def test_every_gpu_is_loaded_and_the_gpu_whose_counter_rose_fails_by_its_index(tmp_path):
    case = run(tmp_path, SMI, RISE='1')
    assert case['result'] == 'fail' and case['fail_phase'] == 'sanity'
    assert re.search(r'\S+ GPU 1 \(0000:08:00\): uncorrectable ECC errors rose: DRAM Uncorrectable 0 -> 1',
                     case['acceptance_reason'])
    assert 'GPU 0 (' not in case['acceptance_reason']
    stage = Path(case['stagedir'])
    assert sorted(p.name for p in stage.glob('loaded-*')) == [
        'loaded-GPU-1b7e6c2a-0f3e-4a51-9c1d-1d2e3f4a5b6c', 'loaded-GPU-9a8b7c6d-5e4f-4321-8765-43210fedcba9']
    assert case['num_gpus_per_node'] == 2


def test_a_quiet_node_passes_with_the_count_of_gpus(tmp_path):
    case = run(tmp_path, SMI)
    assert case['result'] == 'pass', case['acceptance_reason']
    assert case['acceptance_reason'].startswith('2 GPU(s) on 1 node(s) loaded together for 0.2 s')
    (value,) = [v[0] for k, v in case['perfvalues'].items() if k.endswith(':gpus_stressed')]
    assert value == 2


def test_corrected_ecc_errors_pass_and_are_said_in_the_verdict():
    from yeebench.checks.gpu import acceptance_gpu_stress, gpu_errors
    gpus = [[0, '0000:07:00', 'GPU-a', 'NVIDIA H200']]
    before = {'0000:07:00': {'Volatile/DRAM Correctable': 0, 'Aggregate/DRAM Correctable': 5,
                             'Volatile/DRAM Uncorrectable': 0, 'Aggregate/DRAM Uncorrectable': 0}}
    after = {'0000:07:00': {'Volatile/DRAM Correctable': 2, 'Aggregate/DRAM Correctable': 7,
                            'Volatile/DRAM Uncorrectable': 0, 'Aggregate/DRAM Uncorrectable': 0}}
    rec = {'host': 'n1', 'seconds': 30, 'gpus': gpus, 'gpus_after': gpus, 'ecc_before': before,
           'ecc_after': after, 'kernel_log': 'readable', 'kernel_new': [], 'runs': {'0': 'VALID 3 run(s)'}}
    reason, details, ok = acceptance_gpu_stress.stress_verdict({'n1': rec}, 1, 1)
    assert ok and 'no uncorrectable ECC error' in reason
    assert 'n1 GPU 0 (0000:07:00): corrected ECC errors rose: DRAM Correctable 0 -> 2' in reason
    after['0000:07:00']['Volatile/DRAM Uncorrectable'] = 1
    after['0000:07:00']['Aggregate/DRAM Uncorrectable'] = 1
    reason, _, ok = acceptance_gpu_stress.stress_verdict({'n1': rec}, 1, 1)
    assert not ok and reason == 'n1 GPU 0 (0000:07:00): uncorrectable ECC errors rose: DRAM Uncorrectable 0 -> 1'
    assert gpu_errors.CORRECTED in gpu_errors.node_problems(rec)[1][0]
