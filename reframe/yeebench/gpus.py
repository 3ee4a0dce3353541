"""NVIDIA GPUs of this machine, from nvidia-smi (the `local` system's `gpu` feature and device entry).

No nvidia-smi, a failing one (no driver, no device) or an empty list all mean: no GPU, and the
partition gets neither the feature nor a device entry, so GPU cases are simply not valid there.
"""
import shutil
import subprocess
from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class Gpu:
    name: str                        # e.g. 'NVIDIA H100 80GB HBM3'
    compute_cap: Optional[str]       # e.g. '9.0'; None where the driver cannot report it

    @property
    def arch(self):
        '''ReFrame/nvcc architecture name: compute capability 9.0 -> sm_90.'''
        return 'sm_' + self.compute_cap.replace('.', '') if self.compute_cap else None


def parse_query(text):
    '''GPUs from `nvidia-smi --query-gpu=name[,compute_cap] --format=csv,noheader` output.'''
    gpus = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(',')]
        if not fields[0]:
            continue
        cap = fields[1] if len(fields) > 1 and _is_capability(fields[1]) else None
        gpus.append(Gpu(fields[0], cap))
    return gpus


def _is_capability(text):
    major, _, minor = text.partition('.')
    return major.isdigit() and minor.isdigit()


def _query(smi, fields):
    try:
        out = subprocess.run([smi, f'--query-gpu={fields}', '--format=csv,noheader'], capture_output=True,
                             text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def detect_nvidia(smi=None) -> List[Gpu]:
    '''The GPUs nvidia-smi lists ([] without a usable one).  Older drivers lack compute_cap: name only.'''
    smi = smi or shutil.which('nvidia-smi')
    if not smi:
        return []
    text = _query(smi, 'name,compute_cap')
    if text is None:
        text = _query(smi, 'name')
    return parse_query(text) if text else []


def reframe_devices(gpus):
    '''The partition's `devices` entry: one gpu entry with the count ([] without GPUs).'''
    if not gpus:
        return []
    device = {'type': 'gpu', 'num_devices': len(gpus)}
    if gpus[0].arch:
        device['arch'] = gpus[0].arch
    return [device]


def partition_gpus(partition):
    '''(GPUs per node, where the number came from) of a ReFrame partition: its `devices` of type gpu
    (ReFrame's description of them), else extras.num_gpus; (0, why) naming the key to add.'''
    declared = sum(d.num_devices or 1 for d in partition.select_devices('gpu'))
    if declared:
        return declared, 'devices'
    extra = int(partition.extras.get('num_gpus', 0) or 0)
    if extra:
        return extra, 'extras.num_gpus'
    return 0, (f"partition {partition.fullname} declares no GPUs: add devices [{{'type': 'gpu', "
               f"'num_devices': N}}] to it")
