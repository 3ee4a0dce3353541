"""Backend traits: yeebench.backends reads solver/src/backends/<name>/traits.json; every backend
folder has a valid one, and CMake builds what it declares (program name, GPU device, kernels)."""
import json
import re
import shutil
import subprocess

import pytest

from yeebench import backends, fixtures
from yeebench.backends import BACKENDS_DIR, BackendTraits, backend_traits, read_traits, solver_backends

SOLVER = BACKENDS_DIR.parents[1]
VALID = {'device': 'gpu', 'language': 'cuda', 'build_tool': 'nvcc', 'program': 'yee-x',
         'kernels': ['fused', 'split'], 'run_options': ['--gpu-per-rank']}
DROP = object()  # a key left out


def write_backend(root, name, traits, backend_cmake=True):
    folder = root / name
    folder.mkdir(parents=True)
    if backend_cmake:
        (folder / 'backend.cmake').write_text('set(YEE_BACKEND_SOURCES kernels.cpp)\n')
    if traits is not None:
        (folder / 'traits.json').write_text(traits if isinstance(traits, str) else json.dumps(traits))
    return folder


def test_reads_every_field(tmp_path):
    write_backend(tmp_path, 'x', VALID)
    t = backend_traits('x', tmp_path)
    assert t == BackendTraits(name='x', device='gpu', language='cuda', build_tool='nvcc', program='yee-x',
                              kernels=('fused', 'split'), run_options=('--gpu-per-rank',))
    assert t.is_gpu and t.provides('fused') and not t.provides('wavefront')
    with pytest.raises(AttributeError):
        t.device = 'cpu'  # frozen


@pytest.mark.parametrize('change, reason', [
    ({'device': 'tpu'}, '"device" is \'tpu\''),
    ({'device': DROP}, '"device" must be a non-empty string'),
    ({'program': ''}, '"program" must be a non-empty string'),
    ({'program': '../yee'}, 'is not a file name'),
    ({'kernels': ['fused', 'split', 'magic']}, 'unknown kernel(s) magic'),
    ({'kernels': ['fused']}, 'must name fused and split'),
    ({'kernels': 'fused'}, '"kernels" must be a list'),
    ({'run_options': [1]}, '"run_options" must be a list'),
    ({'build_tool': DROP}, '"build_tool" must be a non-empty string'),
])
def test_invalid_traits_are_refused_with_the_reason(tmp_path, change, reason):
    data = {k: v for k, v in {**VALID, **change}.items() if v is not DROP}
    write_backend(tmp_path, 'x', data)
    with pytest.raises(ValueError, match=re.escape(reason)):
        read_traits(tmp_path / 'x' / 'traits.json')


@pytest.mark.parametrize('text, reason', [(None, 'cannot read'), ('{"device": ', 'not JSON'), ('[]', 'not a JSON object')])
def test_missing_or_malformed_files_are_refused(tmp_path, text, reason):
    write_backend(tmp_path, 'x', text)
    with pytest.raises(ValueError, match=reason):
        read_traits(tmp_path / 'x' / 'traits.json')


def test_backends_are_the_folders_with_a_backend_cmake_cpu_first(tmp_path):
    for name in ('zeta', 'cpu', 'alpha'):
        write_backend(tmp_path, name, VALID)
    write_backend(tmp_path, 'notes', None, backend_cmake=False)
    assert solver_backends(tmp_path) == ['cpu', 'alpha', 'zeta']


def test_fixtures_keeps_its_names():
    # checks import these from yeebench.fixtures
    assert fixtures.solver_backends is solver_backends
    assert fixtures.backend_program('cpu') == 'yee'
    assert fixtures.backend_program('cuda') == 'yee-cuda'


@pytest.mark.parametrize('name', solver_backends())
def test_every_backend_folder_declares_valid_traits(name):
    t = backend_traits(name)  # raises with the reason when missing or invalid
    assert t.name == name and t.device in backends.DEVICES
    assert t.is_gpu or '--gpu-per-rank' not in t.run_options  # a CPU build refuses it


def test_the_repository_backends():
    cpu, cuda = backend_traits('cpu'), backend_traits('cuda')
    assert (cpu.device, cpu.program, cpu.kernels) == ('cpu', 'yee', ('fused', 'split', 'wavefront'))
    assert (cuda.device, cuda.program, cuda.build_tool) == ('gpu', 'yee-cuda', 'nvcc')
    assert cuda.provides('wavefront') and '--gpu-per-rank' in cuda.run_options
    programs = [backend_traits(b).program for b in solver_backends()]
    assert len(set(programs)) == len(programs), 'two backends would install the same program'


def configure(name, build):
    '''CMake's configuration of backend `name`: (program it links, compile definitions of yee).'''
    done = subprocess.run(['cmake', '-S', str(SOLVER), '-B', str(build), f'-DYEE_BACKEND={name}', '-DYEE_TESTS=OFF',
                           '-DCMAKE_EXPORT_COMPILE_COMMANDS=ON', '-DYEE_MARCH='],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    program = re.search(r' -o (\S+) ', (build / 'CMakeFiles' / 'yee.dir' / 'link.txt').read_text()).group(1)
    commands = json.loads((build / 'compile_commands.json').read_text())
    main = next(c['command'] for c in commands if c['file'].endswith('src/main.cpp'))
    return program, dict(re.findall(r'-D(YEE_[A-Z_]+)=(\S*)', main))


@pytest.mark.skipif(not shutil.which('cmake'), reason='no cmake')
@pytest.mark.parametrize('name', solver_backends())
def test_cmake_builds_what_the_traits_declare(name, tmp_path):
    t = backend_traits(name)
    if t.build_tool != 'cmake' and not shutil.which(t.build_tool):
        pytest.skip(f'{name}: no {t.build_tool} here to configure it')
    program, defs = configure(name, tmp_path / 'build')
    assert program == t.program
    assert defs['YEE_BACKEND_DEVICE_GPU'] == ('1' if t.is_gpu else '0')
    assert defs['YEE_HAVE_WAVEFRONT'] == ('1' if t.provides('wavefront') else '0')
    assert t.program in defs['YEE_BACKEND_PROGRAM']
