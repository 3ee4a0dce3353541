"""Fixtures that provide the suite's own binaries.

Search order for every program: $YEEBENCH_PREFIX/bin, then PATH (a container
puts them there), else a CMake build of the repository's source folder into the
fixture's stage directory.  In the `spack` environment the binaries come from the
activated Spack environment's view only, and the fixture fails with the reason
when they are not there (a silent fallback would benchmark other binaries).  Checks use
them as `yee = fixture(SolverBinary, scope='environment')` and then
`self.yee.paths['yee']`.
"""
import os
import shlex
import shutil
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, sanity_function, variable

from yeebench import spack_env

REPO_ROOT = Path(__file__).resolve().parents[2]


def locate(program, env=None):
    '''Absolute path of `program` from $YEEBENCH_PREFIX/bin or PATH, else None.'''
    env = os.environ if env is None else env
    prefix = env.get('YEEBENCH_PREFIX')
    if prefix:
        candidate = Path(prefix) / 'bin' / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(program, path=env.get('PATH'))
    return os.path.abspath(found) if found else None


class CMakeOrFoundBinaries(rfm.CompileOnlyRegressionTest):
    '''Finds `programs` or builds them from `source_subdir` with CMake.'''

    #: Programs this fixture provides.
    programs = variable(typ.List[str])

    #: CMake project folder, relative to the repository root.
    source_subdir = variable(str)

    #: Extra CMake configure options.
    cmake_options = variable(typ.List[str], value=['-DCMAKE_BUILD_TYPE=Release'])

    #: Parallel build jobs.
    build_jobs = variable(int, value=2)

    #: Result: program name -> absolute path.
    paths = variable(typ.Dict[str, str], value={})

    #: Result: where the programs came from: 'prefix-or-path', 'spack' or 'cmake'.
    origin = variable(str, value='')

    sourcesdir = None
    build_system = 'CustomBuild'

    @run_before('compile')
    def locate_or_build(self):
        if 'spack' in self.current_environ.features:
            self.take_from_spack()
            return
        found = {p: locate(p) for p in self.programs}
        if all(found.values()):
            self.origin = 'prefix-or-path'
            self.paths = found
            self.build_system.commands = [f'echo "found {p}: {path}"' for p, path in found.items()]
            return
        source = REPO_ROOT / self.source_subdir
        install = Path(self.stagedir) / 'install'
        self.origin = 'cmake'
        self.paths = {p: str(install / 'bin' / p) for p in self.programs}
        self.build_system.commands = [
            f'cmake -S {source} -B build -DCMAKE_INSTALL_PREFIX={install} {" ".join(self.cmake_options)}',
            f'cmake --build build -j {self.build_jobs}',
            'cmake --install build',
        ]

    def take_from_spack(self):
        reason = spack_env.missing_reason(self.programs)
        if reason:
            self.build_system.commands = [f'echo {shlex.quote(reason)} >&2', 'false']
            return
        self.origin = 'spack'
        self.paths = {p: spack_env.locate(p) for p in self.programs}
        self.build_system.commands = [f'echo "spack view: {p}: {path}"' for p, path in self.paths.items()]

    @sanity_function
    def programs_exist(self):
        return sn.all(sn.map(lambda p: sn.assert_true(os.access(p, os.X_OK), f'{p} was not built'),
                             list(self.paths.values())))


class SolverBinary(CMakeOrFoundBinaries):
    '''The FDTD solver `yee`.'''
    programs = ['yee']
    source_subdir = 'solver'


class ProbeBinaries(CMakeOrFoundBinaries):
    '''The probes `affinity`, `numa-bw` and `halo`.'''
    programs = ['affinity', 'numa-bw', 'halo']
    source_subdir = 'microbench'
