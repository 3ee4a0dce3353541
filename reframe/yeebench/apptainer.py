"""Apptainer on this host: where it is, the options a root without all capabilities needs, what an image is.

  * `find()`: `apptainer` on PATH, else the one containers/apptainer.sh unpacked into the checkout's build/apptainer/.
  * `exec_options()`: as root, Apptainer asks for its default capability set; where the bounding set
    lacks some of them (containers without CAP_SYS_RESOURCE) `apptainer exec` fails with "Requesting
    capability set ...", so those are dropped with --drop-caps. Normal hosts get no option.
  * `sif_problem()`: is a file an image at all (its digest is taken on the node, by image_probe).
  * `parse_mpirun_version()` and `abi_problem()`: the hybrid-run MPI rule, applied to what the job asked
    on the node (image_probe).
"""
import glob
import os
import re
import shutil
from typing import List, Optional

from yeebench import launch, package_data

# Linux capability numbers (include/uapi/linux/capability.h) that Apptainer's root default set holds.
CAPABILITIES = (
    'CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH', 'CAP_FOWNER', 'CAP_FSETID', 'CAP_KILL',
    'CAP_SETGID', 'CAP_SETUID', 'CAP_SETPCAP', 'CAP_LINUX_IMMUTABLE', 'CAP_NET_BIND_SERVICE',
    'CAP_NET_BROADCAST', 'CAP_NET_ADMIN', 'CAP_NET_RAW', 'CAP_IPC_LOCK', 'CAP_IPC_OWNER', 'CAP_SYS_MODULE',
    'CAP_SYS_RAWIO', 'CAP_SYS_CHROOT', 'CAP_SYS_PTRACE', 'CAP_SYS_PACCT', 'CAP_SYS_ADMIN', 'CAP_SYS_BOOT',
    'CAP_SYS_NICE', 'CAP_SYS_RESOURCE', 'CAP_SYS_TIME', 'CAP_SYS_TTY_CONFIG', 'CAP_MKNOD', 'CAP_LEASE',
    'CAP_AUDIT_WRITE', 'CAP_AUDIT_CONTROL', 'CAP_SETFCAP', 'CAP_MAC_OVERRIDE', 'CAP_MAC_ADMIN',
    'CAP_SYSLOG', 'CAP_WAKE_ALARM', 'CAP_BLOCK_SUSPEND', 'CAP_AUDIT_READ',
)

SIF_MAGIC = b'SIF_MAGIC'
SIF_MAGIC_OFFSET = 32          # after the 32-byte launch script line "#!/usr/bin/env run-singularity"


def find() -> Optional[str]:
    exe = shutil.which('apptainer')
    if exe:
        return exe
    root = package_data.checkout_root()   # an installed package has no build/ of its own
    if root is None:
        return None
    unpacked = sorted(glob.glob(os.path.join(root, 'build', 'apptainer', 'apptainer-*', 'bin', 'apptainer')))
    return unpacked[-1] if unpacked and os.access(unpacked[-1], os.X_OK) else None


def missing_capabilities(status_text: Optional[str] = None, euid: Optional[int] = None) -> List[str]:
    '''Capabilities Apptainer would request as root that this process's bounding set lacks.'''
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return []
    if status_text is None:
        try:
            with open('/proc/self/status') as f:
                status_text = f.read()
        except OSError:
            return []
    match = re.search(r'^CapBnd:\s*([0-9a-fA-F]+)$', status_text, re.M)
    if not match:
        return []
    bounding = int(match.group(1), 16)
    return [name for bit, name in enumerate(CAPABILITIES) if not bounding & (1 << bit)]


def exec_options(status_text: Optional[str] = None, euid: Optional[int] = None) -> List[str]:
    missing = missing_capabilities(status_text, euid)
    return ['--drop-caps', ','.join(missing)] if missing else []


def sif_problem(path: str) -> Optional[str]:
    '''Why `path` is not a usable SIF image, or None.'''
    try:
        with open(path, 'rb') as f:
            head = f.read(SIF_MAGIC_OFFSET + len(SIF_MAGIC))
    except OSError as err:
        return f'{path}: cannot read the image ({err.strerror})'
    if head[SIF_MAGIC_OFFSET:] != SIF_MAGIC:
        return f'{path}: not a SIF image (no SIF magic at byte {SIF_MAGIC_OFFSET})'
    return None


_OMPI_VERSION = re.compile(r'\(Open MPI\)\s+(\d+)\.(\d+)(?:\.(\d+))?')


def parse_mpirun_version(text: str) -> Optional[tuple]:
    '''"mpirun (Open MPI) 4.1.4" -> ('openmpi', 4, 1, 4); None for anything else.'''
    match = _OMPI_VERSION.search(text)
    return ('openmpi', *(int(g or 0) for g in match.groups())) if match else None


def abi_problem(host: Optional[tuple], image: Optional[tuple]) -> Optional[str]:
    '''Why a hybrid run (host mpirun/srun starting ranks of the image's MPI) cannot work, or None.
    Open MPI keeps its ABI and runtime protocol within one major series (4.0.x-4.1.x).'''
    if host is None:
        return f'the host has no Open MPI ({" ".join(launch.OPENMPI_VERSION_COMMAND)} names no Open MPI)'
    if image is None:
        return (f'the image has no Open MPI ({" ".join(launch.OPENMPI_VERSION_COMMAND)} inside it names '
                'no Open MPI)')
    if host[:2] != image[:2]:
        return (f'host Open MPI {".".join(map(str, host[1:]))} and image Open MPI '
                f'{".".join(map(str, image[1:]))} are different major series')
    return None
