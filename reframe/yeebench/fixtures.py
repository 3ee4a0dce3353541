"""Fixtures that provide the suite's own binaries, resolved on the compute node.

The fixture's build job (ReFrame's CMake build system, run on a node of the partition:
`build_locally` is off) links every program into `<stage>/bin/`, taking the first of:
$YEEBENCH_PREFIX/bin, the node's PATH (a container puts them there), else a CMake build of the
source folder the package ships (yeebench.package_data) into the stage directory (configured and built only when a program is
missing: the pre-build lines end the script when all were found).  Nothing is looked up on the launch host, so a login node without the
MPI stack or with another CPU gives the same answer as the nodes.  In the `spack` environment the
binaries come from the activated Spack environment's view only, and the fixture fails with the
reason when they are not there (a silent fallback would benchmark other binaries).

`SolverBinary` is parameterised by solver backend through its `backends` variable (default: every
folder solver/src/backends/<name>/): `cpu` provides `yee`, every other backend the program its
traits.json names (yeebench.backends), a GPU backend only on partitions with the `gpu` feature;
these are optional: a node without the backend's build tool records why (`missing`) instead of
failing the CPU checks.  Checks use
`yee = fixture(SolverBinary, scope='environment')`, then `self.yee.paths['yee']` or
`self.yee.backend_program('cuda')`.
"""
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.exceptions import ReframeError
from reframe.core.builtins import run_before, sanity_function, variable

from yeebench import spack_env, stage_files
from yeebench.backends import BACKENDS_DIR, backend_traits, solver_backends  # noqa: F401 (importable here)
from yeebench.base import SmokeRun
from yeebench.package_data import source_tree


def backend_program(backend):
    '''The solver program a backend builds (its traits.json `program`: `yee` for cpu, `yee-cuda`, ...).'''
    return backend_traits(backend).program


#: The CMake build tree and install prefix of a fixture, in its stage directory.
BUILD_DIR, INSTALL_DIR = 'build', 'install'
#: The build script's shell variable holding the stage directory.
STAGE_VAR = 'fixture_stage'


def _found_line(program):
    '''Links `program` into bin/ from $YEEBENCH_PREFIX/bin or the node's PATH, noting where from.'''
    p, link = shlex.quote(program), shlex.quote(f'bin/{program}')
    return (f'if [ -n "${{YEEBENCH_PREFIX:-}}" ] && [ -x "$YEEBENCH_PREFIX/bin/"{p} ]; then '
            f'ln -sf "$YEEBENCH_PREFIX/bin/"{p} {link} && echo {p} prefix-or-path "$YEEBENCH_PREFIX/bin/"{p} >> origin.txt; '
            f'elif found=$(command -v {p}); then '
            f'ln -sf "$found" {link} && echo {p} prefix-or-path "$found" >> origin.txt; fi')


def _link_built(program):
    p = shlex.quote(program)
    return (f'ln -sf ../{INSTALL_DIR}/bin/{p} {shlex.quote(f"bin/{program}")} && '
            f'echo {p} cmake "$PWD/{INSTALL_DIR}/bin/"{p} >> origin.txt')


def _optional_lines(source, optional, jobs):
    '''Each optional program: its own CMake configuration (other options, e.g. another solver backend),
    built only where the tool it needs exists, else the reason goes to missing-<program>.txt.'''
    lines = []
    for p, (options, tool) in (optional or {}).items():
        reason = f'{p}: not in $YEEBENCH_PREFIX/bin or on the node\'s PATH, and no {tool} to build it'
        failed = f"{p}: the CMake build failed (see the fixture's output)"
        build, missing = shlex.quote(f'{BUILD_DIR}-{p}'), shlex.quote(f'missing-{p}.txt')
        lines.append(f'if [ ! -e {shlex.quote(f"bin/{p}")} ]; then if command -v {shlex.quote(tool)} > /dev/null; then '
                     f'cmake -S {shlex.quote(str(source))} -B {build} -DCMAKE_INSTALL_PREFIX="$PWD/{INSTALL_DIR}" '
                     f'{" ".join(map(shlex.quote, options))} && cmake --build {build} -j {int(jobs)} '
                     f'&& cmake --install {build} && {_link_built(p)} '
                     f'|| echo {shlex.quote(failed)} > {missing}; '
                     f'else echo {shlex.quote(reason)} > {missing}; fi; fi')
    return lines


def setup_find_or_build(build_system, programs, source, cmake_options, jobs, optional=None):
    '''Configure ReFrame's CMake build system `build_system` to link each of `programs` into bin/
    from the prefix or the node's PATH, and to build the CMake project `source` only when one is
    missing: the pre-build lines end the build script (status 0) when all were found, so the
    configure and build lines ReFrame emits run only for a missing program; the post-build lines
    install and link.  `optional` {program: (cmake options, tool the build needs)}: see
    _optional_lines; they are looked for and built on both paths.  Returns (prebuild, postbuild).'''
    build_system.configuredir = shlex.quote(str(source))   # written into the build script as is
    build_system.builddir = BUILD_DIR
    # ReFrame < 4.10 runs CMake inside the build tree (`cd build`), later ones from the stage directory:
    # the prefix and the post-build lines refer to the stage directory by the name the first line gives it
    build_system.config_opts = [f'-DCMAKE_INSTALL_PREFIX="${STAGE_VAR}/{INSTALL_DIR}"', *map(shlex.quote, cmake_options)]
    build_system.max_concurrency = jobs
    # the compilers are the project's choice (CMakeLists finds MPI), not the environment's wrappers
    build_system.flags_from_environ = False
    optional_lines = _optional_lines(source, optional, jobs)
    all_found = ' && '.join(f'[ -e {shlex.quote(f"bin/{p}")} ]' for p in programs)
    prebuild = [f'{STAGE_VAR}=$PWD', 'mkdir -p bin', ': > origin.txt',
                *[_found_line(p) for p in list(programs) + list(optional or {})],
                f'if {all_found}; then {"; ".join(optional_lines + ["exit 0"])}; fi']
    postbuild = [f'cd "${STAGE_VAR}"',
                 f'cmake --install {BUILD_DIR} && {{ {"; ".join(_link_built(p) for p in programs)}; }}',
                 *optional_lines]
    return prebuild, postbuild


class CMakeOrFoundBinaries(SmokeRun, rfm.CompileOnlyRegressionTest):
    '''Finds `programs` on the node or builds them from `source_subdir` with CMake there.'''

    #: Programs this fixture provides.
    programs = variable(typ.List[str])

    #: CMake project the package ships (yeebench.package_data.source_tree): 'solver' or 'microbench'.
    source_subdir = variable(str)

    #: Extra CMake configure options.
    cmake_options = variable(typ.List[str], value=['-DCMAKE_BUILD_TYPE=Release'])

    #: Parallel build jobs.
    build_jobs = variable(int, value=2)

    #: Result: program name -> absolute path (links in the stage directory's bin/).
    paths = variable(typ.Dict[str, str], value={})

    #: Result: where the programs came from: 'prefix-or-path', 'spack' or 'cmake'.
    origin = variable(str, value='')

    sourcesdir = None
    build_system = 'CMake'
    # the build job runs on a node of the partition: the launch host may lack compilers and MPI
    build_locally = False

    def optional_programs(self):
        '''{program: (cmake options, tool its build needs)} of programs this partition may lack.'''
        return {}

    @run_before('compile')
    def locate_or_build(self):
        if 'spack' in self.current_environ.features:
            self.take_from_spack()
            return
        try:
            source = source_tree(self.source_subdir)
        except KeyError as err:          # a -S value naming no shipped tree: one line, no traceback
            raise ReframeError(f'source_subdir: {err.args[0]}') from None
        optional = self.optional_programs()
        self.paths = {p: os.path.join(self.stagedir, 'bin', p) for p in list(self.programs) + list(optional)}
        self.prebuild_cmds, self.postbuild_cmds = setup_find_or_build(
            self.build_system, self.programs, source, self.cmake_options, self.build_jobs, optional)

    def take_from_spack(self):
        # CustomBuild: nothing is built here, the job only reports (or refuses) the view's programs
        self.build_system = 'CustomBuild'
        reason = spack_env.missing_reason(self.programs)
        if reason:
            # the build fails with the reason; the paths only name what would have been there
            self.paths = {p: os.path.join(self.stagedir, 'bin', p) for p in self.programs}
            self.build_system.commands = [f'echo {shlex.quote(reason)} >&2', 'false']
            return
        self.origin = 'spack'
        self.paths = {p: spack_env.locate(p) for p in self.programs}
        self.build_system.commands = [f'echo "spack view: {p}: {path}"' for p, path in self.paths.items()]

    @run_before('sanity')
    def read_origin(self):
        text = stage_files.read_stage_file(self, 'origin.txt', default=None)
        if text is not None:
            self.origin = ','.join(sorted({line.split()[1] for line in text.splitlines() if line.split()}))

    def missing(self, program):
        '''Why an optional program is absent on this partition's nodes (None when it is there).'''
        text = stage_files.read_stage_file(self, f'missing-{program}.txt', default=None)
        return None if text is None else (text.strip() or f'{program} is missing')

    @sanity_function
    def programs_exist(self):
        return sn.all(sn.map(lambda p: sn.assert_true(os.access(self.paths[p], os.X_OK),
                                                      f'{self.paths[p]} was not found or built'),
                             list(self.programs)))


class SolverBinary(CMakeOrFoundBinaries):
    '''The FDTD solver: `yee`, plus `yee-<backend>` of every other backend on GPU partitions.'''

    #: Solver backends this fixture provides (folders of solver/src/backends).
    backends = variable(typ.List[str], value=solver_backends())

    programs = ['yee']
    source_subdir = 'solver'

    def optional_programs(self):
        gpu_partition = 'gpu' in self.current_partition.features
        cpu_yee = os.path.join(self.stagedir, 'bin', 'yee')
        optional = {}
        for b in self.backends:
            traits = backend_traits(b)
            if b == 'cpu' or (traits.is_gpu and not gpu_partition):
                continue
            optional[traits.program] = (self.cmake_options + [f'-DYEE_BACKEND={b}', f'-DYEE_CPU_BIN={cpu_yee}'],
                                        traits.build_tool)
        return optional

    def backend_program(self, backend):
        '''(path, None) of `backend`'s solver on this partition, or (None, why it is not there).'''
        if backend not in self.backends:
            return None, f'no solver backend {backend!r} (backends: {", ".join(self.backends)})'
        program = backend_program(backend)
        if program not in self.paths:
            return None, (f'partition {self.current_partition.fullname} has no feature \'gpu\': '
                          f'{program} is built for GPU partitions only')
        why = self.missing(program)
        return (None, why) if why else (self.paths[program], None)


class ProbeBinaries(CMakeOrFoundBinaries):
    '''The probes `affinity`, `numa-bw` and `halo`.'''
    programs = ['affinity', 'numa-bw', 'halo']
    source_subdir = 'microbench'
