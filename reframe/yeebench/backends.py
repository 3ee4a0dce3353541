"""The solver's backends and their traits, as each backend folder declares them.

A backend is a folder solver/src/backends/<name>/ holding a `backend.cmake` (how CMake builds it)
and a `traits.json` (what it is: CPU or GPU, its program, its kernels, the options its runs
need; format in solver/src/backends/README.md).  The checks ask these traits instead of
naming backends, so a new backend is its folder and nothing else here.
"""
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Tuple

from yeebench.package_data import source_tree

BACKENDS_DIR = source_tree('solver') / 'src' / 'backends'

DEVICES = ('cpu', 'gpu')
KERNELS = ('fused', 'split', 'wavefront')


@dataclass(frozen=True)
class BackendTraits:
    '''One backend's traits.json.'''
    name: str
    device: str                    # 'cpu' | 'gpu'
    language: str                  # the kernels' language: 'cxx', 'cuda', ...
    build_tool: str                # the command a node needs to build it ('cmake', 'nvcc', ...)
    program: str                   # the solver program it builds ('yee', 'yee-cuda', ...)
    kernels: Tuple[str, ...]       # the --kernel values it provides
    run_options: Tuple[str, ...]   # solver options every parallel run of it needs

    @property
    def is_gpu(self):
        return self.device == 'gpu'

    def provides(self, kernel):
        return kernel in self.kernels


def solver_backends(root=BACKENDS_DIR):
    '''The solver's backends: folders of solver/src/backends holding a backend.cmake (or, before the
    folders carry one, every folder), `cpu` first.'''
    folders = [p for p in Path(root).iterdir() if p.is_dir()] if Path(root).is_dir() else []
    registered = [p.name for p in folders if (p / 'backend.cmake').is_file()]
    names = sorted(registered or [p.name for p in folders])
    return sorted(names, key=lambda n: n != 'cpu') or ['cpu']


def _strings(path, data, key):
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f'{path}: "{key}" must be a list of non-empty strings, not {value!r}')
    return tuple(value)


def _string(path, data, key, choices=None):
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f'{path}: "{key}" must be a non-empty string, not {value!r}')
    if choices and value not in choices:
        raise ValueError(f'{path}: "{key}" is {value!r}, not one of {", ".join(choices)}')
    return value


def read_traits(path, name=None):
    '''The BackendTraits of one traits.json file; ValueError with the reason when it is not valid.'''
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise ValueError(f'{path}: cannot read the backend\'s traits ({e.strerror})') from None
    except json.JSONDecodeError as e:
        raise ValueError(f'{path}: not JSON ({e})') from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: not a JSON object')
    kernels = _strings(path, data, 'kernels')
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown:
        raise ValueError(f'{path}: unknown kernel(s) {", ".join(unknown)} (kernels: {", ".join(KERNELS)})')
    if not {'fused', 'split'} <= set(kernels):
        raise ValueError(f'{path}: "kernels" must name fused and split (solver/src/kernel_contract.hpp)')
    program = _string(path, data, 'program')
    if not re.fullmatch(r'[A-Za-z0-9._-]+', program) or program in ('.', '..'):
        raise ValueError(f'{path}: "program" {program!r} is not a file name')
    return BackendTraits(name=name or path.parent.name,
                         device=_string(path, data, 'device', DEVICES),
                         language=_string(path, data, 'language'),
                         build_tool=_string(path, data, 'build_tool'),
                         program=program,
                         kernels=kernels,
                         run_options=_strings(path, data, 'run_options'))


@lru_cache(maxsize=None)
def backend_traits(name, root=BACKENDS_DIR):
    '''The traits of backend `name` (its folder's traits.json); ValueError when it has none or they are
    not valid.'''
    return read_traits(Path(root) / name / 'traits.json', name)
