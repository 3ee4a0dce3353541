"""GPU support: nvidia-smi detection (stand-in nvidia-smi scripts) and OSU's CUDA device-buffer option."""
import stat
from pathlib import Path

import pytest

from yeebench import gpus, osu

DATA = Path(__file__).parent / 'data'

# The accelerator option of CUDA-enabled OSU builds, as their help prints it (text from the OSU
# 5.3 and 7.4 sources: osu_pt2pt.c usage(), osu_coll.c print_help_message(), osu_util_options.h).
CUDA_HELP_LINES = [
    "  -d TYPE       accelerator device buffers can be of TYPE `cuda' or `openacc'",
    "  -d TYPE       use accelerator device buffers which can be of TYPE `cuda' or",
    "  -d, --accelerator         TYPE - use accelerator device buffers, which can be of TYPE `cuda',",
]


def fake_smi(tmp_path, script):
    '''An executable nvidia-smi stand-in running `script` (sh); returns its folder.'''
    folder = tmp_path / 'smi'
    folder.mkdir(exist_ok=True)
    path = folder / 'nvidia-smi'
    path.write_text('#!/bin/sh\n' + script + '\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


TWO_H100 = ('case "$1" in --query-gpu=name,compute_cap) '
            'printf "NVIDIA H100 80GB HBM3, 9.0\\nNVIDIA H100 80GB HBM3, 9.0\\n";; *) exit 9;; esac')


@pytest.mark.parametrize('path', sorted((DATA / 'osu-help').glob('*.txt')), ids=lambda p: p.name)
def test_recorded_host_only_osu_builds_have_no_cuda(path):
    # recorded `-h` of the hand-built OSU 5.3 / 7.4 (no CUDA); 7.4's help says "CUDA" and has -D
    text = path.read_text()
    assert text.startswith('Usage: osu_')
    assert not osu.help_lists_cuda(text)


@pytest.mark.parametrize('line', CUDA_HELP_LINES)
def test_cuda_builds_are_recognised(line):
    host_only = (DATA / 'osu-help' / '7.4-osu_bw.txt').read_text()
    assert osu.help_lists_cuda(host_only + line + '\n')
    assert not osu.help_lists_cuda(host_only + line.replace('cuda', 'openacc_only') + '\n')


def test_has_cuda_reads_the_program_without_running_it(tmp_path):
    # a CUDA build links the CUDA runtime; every build says "CUDA Support Not Enabled" somewhere
    program = tmp_path / 'osu_bw'
    program.write_bytes(b'\x7fELF...libcudart.so.12\x00cudaMalloc\x00')
    program.chmod(0o644)          # not executable: it must be read, never run
    assert osu.has_cuda(str(program))
    host_only = tmp_path / 'osu_latency'
    host_only.write_bytes(b'\x7fELF...CUDA Support Not Enabled\x00Please recompile with CUDA support')
    assert not osu.has_cuda(str(host_only))
    assert not osu.has_cuda(str(tmp_path / 'missing'))


def test_device_buffer_options():
    assert osu.device_buffer_options(['-m', '64'], pt2pt=True) == ['-d', 'cuda', '-m', '64', 'D', 'D']
    assert osu.device_buffer_options(['-m', '64'], pt2pt=False) == ['-d', 'cuda', '-m', '64']


def test_parse_nvidia_smi_query():
    found = gpus.parse_query('NVIDIA H100 80GB HBM3, 9.0\nNVIDIA H200, 9.0\n\n')
    assert [g.name for g in found] == ['NVIDIA H100 80GB HBM3', 'NVIDIA H200']
    assert found[0].arch == 'sm_90'
    assert gpus.parse_query('Tesla K80, [N/A]\n')[0].arch is None
    assert gpus.parse_query('') == []


def test_detect_with_a_stand_in_nvidia_smi(tmp_path):
    found = gpus.detect_nvidia(str(fake_smi(tmp_path, TWO_H100) / 'nvidia-smi'))
    assert len(found) == 2 and found[0].compute_cap == '9.0'
    assert gpus.reframe_devices(found) == [{'type': 'gpu', 'num_devices': 2, 'arch': 'sm_90'}]


def test_detect_old_driver_without_compute_cap(tmp_path):
    script = 'case "$1" in --query-gpu=name) echo "Tesla V100-SXM2-16GB";; *) exit 2;; esac'
    found = gpus.detect_nvidia(str(fake_smi(tmp_path, script) / 'nvidia-smi'))
    assert found == [gpus.Gpu('Tesla V100-SXM2-16GB', None)]
    assert gpus.reframe_devices(found) == [{'type': 'gpu', 'num_devices': 1}]


@pytest.mark.parametrize('script', ['echo "NVIDIA-SMI has failed: no driver" >&2; exit 9', 'exit 0'])
def test_no_usable_gpu_means_none(tmp_path, script):
    assert gpus.detect_nvidia(str(fake_smi(tmp_path, script) / 'nvidia-smi')) == []
    assert gpus.reframe_devices([]) == []


def test_no_nvidia_smi_means_none(tmp_path, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    assert gpus.detect_nvidia() == []
