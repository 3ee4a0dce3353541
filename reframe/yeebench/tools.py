"""Where the external benchmarks are: OSU Micro-Benchmarks and NetPIPE.

Neither is part of this repository.  OSU comes from Spack (`spack install
osu-micro-benchmarks`, on PATH inside the Spack environment) or from a build
pointed to by OSU_HOME (install prefix or build tree, any version 5.x-7.x).
NetPIPE comes from Debian's `netpipe-openmpi` (NPopenmpi) or any NPmpi on PATH.
"""
import os
import shutil
from pathlib import Path

NETPIPE_NAMES = ('NPopenmpi', 'NPmpi', 'NPmpich')
# OSU layouts: install prefix (libexec/...), 5.x build tree (mpi/...), 7.x build tree (c/mpi/...).
_OSU_DIRS = ('libexec/osu-micro-benchmarks/mpi/{kind}', 'libexec/osu-micro-benchmarks/mpi/{kind}/standard',
             'libexec/osu-micro-benchmarks/mpi/{kind}/blocking', 'mpi/{kind}', 'c/mpi/{kind}',
             'c/mpi/{kind}/standard', 'c/mpi/{kind}/blocking', 'bin', '.')


def osu_kind(benchmark):
    return 'pt2pt' if benchmark in ('osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr',
                                    'osu_multi_lat', 'osu_latency_mt') else 'collective'


def find_osu(benchmark, env=None):
    """Absolute path of an OSU benchmark binary, or None.  OSU_HOME first, then PATH."""
    env = os.environ if env is None else env
    home = env.get('OSU_HOME')
    if home:
        for pattern in _OSU_DIRS:
            candidate = Path(home) / pattern.format(kind=osu_kind(benchmark)) / benchmark
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate.resolve())
    found = shutil.which(benchmark, path=env.get('PATH'))
    return os.path.abspath(found) if found else None


def osu_missing_reason(benchmark):
    home = os.environ.get('OSU_HOME')
    where = f'OSU_HOME={home} (no {benchmark} under it)' if home else 'OSU_HOME is not set'
    return (f'OSU Micro-Benchmarks not found: {benchmark} is not on PATH and {where}; '
            f'install it (spack install osu-micro-benchmarks) or set OSU_HOME to an OSU build')


def find_netpipe(env=None):
    env = os.environ if env is None else env
    home = env.get('NETPIPE_HOME')
    for name in NETPIPE_NAMES:
        if home and (Path(home) / 'bin' / name).is_file():
            return str(Path(home) / 'bin' / name)
        found = shutil.which(name, path=env.get('PATH'))
        if found:
            return os.path.abspath(found)
    return None
