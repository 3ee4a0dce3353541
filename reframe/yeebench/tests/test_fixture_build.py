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
