"""The binary fixtures' build job: ReFrame's CMake build system configures and builds the project
only when the node lacks a program; the script is run here with a stand-in cmake that logs."""
import subprocess

import pytest

from yeebench import fixtures

buildsystems = pytest.importorskip('reframe.core.buildsystems')


def build_script(programs, source, optional=None):
    '''The build job's commands as ReFrame writes them: pre-build, the CMake lines, post-build.'''
    cmake = buildsystems.CMake()
    pre, post = fixtures.setup_find_or_build(cmake, programs, source, ['-DCMAKE_BUILD_TYPE=Release'], 2, optional)
    return '\n'.join(pre + cmake.emit_build_commands(None) + post), cmake


def run(tmp_path, programs, prefix_has=(), optional=None):
    stage, tools = tmp_path / 'stage', tmp_path / 'tools'
    stage.mkdir(parents=True)
    tools.mkdir()
    (tools / 'cmake').write_text(f'''#!/bin/sh
echo "cmake $*" >> {tmp_path}/cmake.log
if [ "$1" = --install ]; then mkdir -p install/bin; for p in {' '.join(programs)}; do
  printf '#!/bin/sh\\n' > install/bin/$p; chmod +x install/bin/$p; done; fi
''')
    (tools / 'cmake').chmod(0o755)
    prefix = tmp_path / 'prefix'
    (prefix / 'bin').mkdir(parents=True)
    for p in prefix_has:
        (prefix / 'bin' / p).write_text('#!/bin/sh\n')
        (prefix / 'bin' / p).chmod(0o755)
    script, _ = build_script(programs, tmp_path / 'src', optional)
    # ReFrame's build scripts end at the first failing command: so does this one
    script = "trap 'echo ERR-TRAP >&2; exit 97' ERR\n" + script
    out = subprocess.run(['bash', '-c', script], cwd=stage, capture_output=True, text=True, timeout=60,
                         env={'PATH': f'{tools}:/usr/bin:/bin', 'YEEBENCH_PREFIX': str(prefix)})
    log = (tmp_path / 'cmake.log').read_text().splitlines() if (tmp_path / 'cmake.log').exists() else []
    return out, stage, log


def test_the_build_uses_reframes_cmake_build_system_with_its_settings(tmp_path):
    script, cmake = build_script(['yee'], tmp_path / 'src')
    assert type(cmake).__name__ == 'CMake'
    assert (cmake.builddir, cmake.max_concurrency, cmake.configuredir) == ('build', 2, str(tmp_path / 'src'))
    assert f'-S {tmp_path / "src"} -B build' in script and 'cmake --build build -j 2' in script
    assert '-DCMAKE_C_COMPILER' not in script          # the project picks its compilers


def test_programs_on_the_node_are_linked_and_nothing_is_configured_or_built(tmp_path):
    out, stage, log = run(tmp_path, ['affinity', 'halo'], prefix_has=['affinity', 'halo'])
    assert out.returncode == 0, out.stderr
    assert log == []
    assert (stage / 'bin' / 'halo').resolve() == tmp_path / 'prefix' / 'bin' / 'halo'
    assert 'halo prefix-or-path' in (stage / 'origin.txt').read_text()


def test_a_missing_program_is_configured_built_installed_and_linked_on_the_node(tmp_path):
    out, stage, log = run(tmp_path, ['affinity', 'halo'], prefix_has=['affinity'])
    assert out.returncode == 0, out.stderr
    assert log[0].startswith('cmake -DCMAKE_INSTALL_PREFIX=') and log[0].endswith(f'-S {tmp_path}/src -B build')
    assert log[1:] == ['cmake --build build -j 2', 'cmake --install build']
    assert (stage / 'bin' / 'halo').resolve() == stage / 'install' / 'bin' / 'halo'
    assert 'halo cmake ' in (stage / 'origin.txt').read_text()


def test_an_optional_program_without_its_tool_is_recorded_missing_on_both_paths(tmp_path):
    optional = {'yee-cuda': (['-DYEE_BACKEND=cuda'], 'nvcc-that-is-not-here')}
    for prefix_has in (['yee'], []):
        out, stage, _ = run(tmp_path / str(len(prefix_has)), ['yee'], prefix_has=prefix_has, optional=optional)
        assert out.returncode == 0, out.stderr
        assert 'no nvcc-that-is-not-here to build it' in (stage / 'missing-yee-cuda.txt').read_text()


def test_a_build_system_that_runs_cmake_inside_the_build_tree_installs_into_the_stage(tmp_path):
    # ReFrame before 4.10 writes `mkdir -p build; cd build; cmake ... <source>; make -j N`: the
    # post-build lines must still find the build tree and link from the stage directory's install/
    stage, tools = tmp_path / 'stage', tmp_path / 'tools'
    stage.mkdir()
    tools.mkdir()
    for name in ('cmake', 'make'):
        (tools / name).write_text(f'''#!/bin/sh
echo "{name} $* in $PWD" >> {tmp_path}/tools.log
if [ "$1" = --install ] && [ -d "$2" ]; then mkdir -p install/bin; printf '#!/bin/sh\\n' > install/bin/yee; chmod +x install/bin/yee; fi
if [ "$1" = --install ] && [ ! -d "$2" ]; then echo "no build tree $2" >&2; exit 1; fi
''')
        (tools / name).chmod(0o755)
    cmake = buildsystems.CMake()
    pre, post = fixtures.setup_find_or_build(cmake, ['yee'], tmp_path / 'src', [], 2)
    old_style = ['mkdir -p build', 'cd build', f'cmake {" ".join(cmake.config_opts)} {tmp_path}/src', 'make -j 2']
    script = "trap 'exit 97' ERR\n" + '\n'.join(pre + old_style + post)
    out = subprocess.run(['bash', '-c', script], cwd=stage, capture_output=True, text=True, timeout=60,
                         env={'PATH': f'{tools}:/usr/bin:/bin'})
    assert out.returncode == 0, out.stderr
    log = (tmp_path / 'tools.log').read_text().splitlines()
    assert log[0] == f'cmake -DCMAKE_INSTALL_PREFIX={stage}/install {tmp_path}/src in {stage}/build', log
    assert log[-1] == f'cmake --install build in {stage}', log
    assert (stage / 'bin' / 'yee').resolve() == stage / 'install' / 'bin' / 'yee'
