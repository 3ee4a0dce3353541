"""What a native-vs-container case asks about its image, asked on the node in the job script.

The launch host may have no Docker, Apptainer or MPI at all (a cluster's login node), so nothing is
run there: `commands()` gives the job's pre-run lines, which write small files into the stage
directory, and `read()` turns those files into the case's verdict and provenance after the job:

  * `image-missing.txt`: the node cannot start the image (Docker: the daemon does not have it; a SIF
    path: no such file); the job stops before the benchmark and the case skips with that line;
  * `image-id.txt` (Docker's image id) or `image-sha256.txt` (sha256sum of the SIF file);
  * `image-spack.lock`: the lock file baked into a Spack-built image (absent in other images);
  * `host-mpi.txt`, `image-mpi.txt` (hybrid runs): the Open MPI version line on the node and inside
    the image; a different major series stops the job before the hybrid launch, and the case fails
    naming both versions (yeebench.apptainer.abi_problem is the rule).
"""
import hashlib
import shlex
from typing import List, Optional

from yeebench import apptainer, launch
from yeebench.stage_files import read_stage_file

MISSING = 'image-missing.txt'
DOCKER_ID = 'image-id.txt'
SIF_SHA256 = 'image-sha256.txt'
SPACK_LOCK = 'image-spack.lock'
HOST_MPI = 'host-mpi.txt'
IMAGE_MPI = 'image-mpi.txt'

#: Where a Spack-built image keeps the lock file of the environment it was built from.
IMAGE_SPACK_LOCK = '/opt/spack-environment/spack.lock'

#: The major version from an Open MPI version line (the shell twin of apptainer.parse_mpirun_version,
#: used only to avoid launching a hybrid run that the case will fail anyway).
_MAJOR_SED = r"sed -n 's/.*(Open MPI) \([0-9][0-9]*\)\..*/\1/p'"


def _is_remote(image: str) -> bool:
    return '://' in image          # docker://, library://, oras://: pulled by the runtime itself


def missing_reason_shell(platform: str, image: str) -> str:
    '''A shell word saying why the node cannot start `image` (the node's name and DOCKER_HOST are
    expanded in the job; the image's name, single-quoted inside the word, is not).'''
    name = f'"{shlex.quote(image)}"'
    if platform == 'Docker':
        return (f'"image {name} is not available from the Docker daemon (DOCKER_HOST=${{DOCKER_HOST:-default}}) '
                f'on $(hostname): build it with containers/build-image.sh"')
    return (f'"image {name} not found on $(hostname): build it (containers/README.md) and pass '
            f'-S SolverRun.image=PATH"')


def availability_commands(platform: str, image: str) -> List[str]:
    '''Lines that stop the job (status 0, reason in MISSING) when the node cannot start `image`.'''
    img = shlex.quote(image)
    if platform == 'Docker':
        probe = f"docker image inspect -f '{{{{.Id}}}}' {img} > {DOCKER_ID}"
    elif _is_remote(image):
        return []
    else:
        probe = f'test -f {img}'
    return [f'if ! {probe}; then echo {missing_reason_shell(platform, image)} > {MISSING}; exit 0; fi']


def _exec_in_image(platform: str, image: str, argv) -> str:
    '''A command line running `argv` inside the image on the node.'''
    img = shlex.quote(image)
    args = ' '.join(shlex.quote(a) for a in argv)
    if platform == 'Docker':
        rest = ' '.join(shlex.quote(a) for a in argv[1:])
        return f'docker run --rm --network=none --entrypoint {shlex.quote(argv[0])} {img} {rest}'
    command = 'singularity' if platform == 'Singularity' else 'apptainer'
    opts = ' '.join(shlex.quote(o) for o in apptainer.exec_options()) if command == 'apptainer' else ''
    return ' '.join(p for p in (command, 'exec', opts, img, args) if p)


def provenance_commands(platform: str, image: str) -> List[str]:
    '''Lines recording the image's sha256 (SIF) and its baked spack.lock, when there is one.'''
    cat = f'{_exec_in_image(platform, image, ["cat", IMAGE_SPACK_LOCK])} > {SPACK_LOCK} 2>/dev/null ' \
          f'|| rm -f {SPACK_LOCK}'
    if platform == 'Docker':
        return [cat]
    if _is_remote(image):
        return []
    img = shlex.quote(image)
    return [f'if [ -f {img} ]; then sha256sum {img} > {SIF_SHA256}; {cat}; fi']


def abi_commands(platform: str, image: str) -> List[str]:
    '''Hybrid runs: the Open MPI version on the node and in the image; stop before launching when
    their major series differ (the case then fails naming both, from the files).'''
    version = ' '.join(launch.OPENMPI_VERSION_COMMAND)
    return [f'{version} > {HOST_MPI} 2>&1',
            f'{_exec_in_image(platform, image, launch.OPENMPI_VERSION_COMMAND)} > {IMAGE_MPI} 2>&1',
            f'host_major=$({_MAJOR_SED} {HOST_MPI} | head -n 1); '
            f'image_major=$({_MAJOR_SED} {IMAGE_MPI} | head -n 1)',
            'if [ -z "$host_major" ] || [ "$host_major" != "$image_major" ]; then exit 0; fi']


def commands(platform: str, image: str, container_leg: bool, hybrid: bool) -> List[str]:
    '''Every probe line of one leg: both legs stop when the image is missing (nothing to compare
    with); the container leg records provenance, and checks the MPI ABI before a hybrid run.'''
    lines = availability_commands(platform, image)
    if container_leg:
        lines += provenance_commands(platform, image)
        if hybrid:
            lines += abi_commands(platform, image)
    return lines


class Findings:
    '''What the probe files in a stage directory say.'''

    def __init__(self, stagedir: str, image: str, hybrid_container_leg: bool):
        self.stagedir, self.image, self.hybrid = stagedir, image, hybrid_container_leg

    def _text(self, name: str) -> Optional[str]:
        return read_stage_file(self.stagedir, name, default=None)

    def missing_reason(self) -> Optional[str]:
        text = self._text(MISSING)
        if text is None:
            return None
        return text.strip() or f'image {self.image} is not available on the node'

    def mpi_versions(self):
        host, image = self._text(HOST_MPI), self._text(IMAGE_MPI)
        return (apptainer.parse_mpirun_version(host or ''), apptainer.parse_mpirun_version(image or ''))

    def abi_problem(self) -> Optional[str]:
        '''Why the hybrid run could not work (None outside hybrid container legs).'''
        if not self.hybrid:
            return None
        problem = apptainer.abi_problem(*self.mpi_versions())
        return (f'container check, MPI ABI check before the hybrid run of {self.image}: {problem}'
                if problem else None)

    def provenance(self) -> dict:
        '''{image, image_sha256, image_spack_lock_sha256}, plus host_mpi/image_mpi for hybrid runs.'''
        facts = {'image': self.image, 'image_sha256': None, 'image_spack_lock_sha256': None}
        docker_id = (self._text(DOCKER_ID) or '').strip().removeprefix('sha256:')
        sif = (self._text(SIF_SHA256) or '').split()
        facts['image_sha256'] = docker_id or (sif[0] if sif else None)
        lock = read_stage_file(self.stagedir, SPACK_LOCK, default=b'', binary=True)
        if lock:
            facts['image_spack_lock_sha256'] = hashlib.sha256(lock).hexdigest()
        if self.hybrid:
            host, image = self.mpi_versions()
            facts['host_mpi'] = '.'.join(map(str, host[1:])) if host else None
            facts['image_mpi'] = '.'.join(map(str, image[1:])) if image else None
        return facts
