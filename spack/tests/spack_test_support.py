"""Loads our Spack recipes without Spack: a minimal stand-in for the parts of Spack's package API that
the recipes use (directives record their arguments; CMakePackage.define* build -D options; ctest and
microarchitecture_flags are recorded or faked), so these tests check what a recipe declares and which
CMake options it passes on any machine.  The real Spack runs them in `make test-spack` (spack/stage.sh)."""
import contextlib
import importlib.util
import sys
import types
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
RECIPES = REPO_ROOT / 'spack' / 'repo' / 'spack_repo' / 'yeebench' / 'packages'


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


class Directives:
    '''What one recipe class declared, in order.'''

    def __init__(self):
        self.calls = []

    def record(self, name):
        def directive(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            if name in ('run_after', 'run_before', 'on_package_attributes'):
                return lambda fn: fn
            return None
        return directive

    def of(self, name):
        return [(a, k) for n, a, k in self.calls if n == name]


class FakeSpec:
    '''Just enough of a concrete spec for cmake_args(): variant values and the target's flags.'''

    def __init__(self, values, target_flags='-march=zen3 -mtune=zen3'):
        self.values = dict(values)
        self.target_flags = target_flags
        self.variants = {k: types.SimpleNamespace(value=v) for k, v in self.values.items()}

    def satisfies(self, constraint):
        name = constraint.lstrip('+~')
        if name not in self.values:
            raise KeyError(f'variant {name!r} is not declared by the recipe')
        value = self.values[name]
        return bool(value) if constraint.startswith('+') else not value


class FakeCMakePackage:
    run_tests = False
    build_directory = 'spack-build'

    def __init__(self, spec):
        self.spec = spec

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            value = 'ON' if value else 'OFF'
        elif isinstance(value, (list, tuple)):
            value = ';'.join(str(v) for v in value)
        return f'-D{name}={value}'

    def define_from_variant(self, name, variant):
        if variant not in self.spec.values:
            raise KeyError(f'variant {variant!r} is not declared by the recipe')
        return self.define(name, self.spec.values[variant])


class FakeCudaPackage:
    '''The variants Spack's CudaPackage mixin declares.'''
    mixin_variants = {'cuda': False, 'cuda_arch': 'none'}


def load_recipe(package_dir, path=None):
    '''(module, Directives) of spack/repo/.../packages/<package_dir>/package.py (or of `path`).'''
    directives = Directives()
    api = types.ModuleType('spack.package')
    for name in ('version', 'variant', 'depends_on', 'requires', 'conflicts', 'license', 'maintainers',
                 'provides', 'patch', 'resource', 'run_after', 'run_before', 'on_package_attributes'):
        setattr(api, name, directives.record(name))
    api.working_dir = lambda *a, **k: contextlib.nullcontext()
    api.Executable = lambda *a, **k: None
    api.which = lambda *a, **k: None
    api.join_path = lambda *parts: '/'.join(parts)
    api.SkipTest = type('SkipTest', (Exception,), {})
    api.ctest = directives.record('ctest')
    api.microarchitecture_flags = lambda spec, language: spec.target_flags
    api.__all__ = [n for n in dir(api) if not n.startswith('_')]
    cmake = types.ModuleType('spack_repo.builtin.build_systems.cmake')
    cmake.CMakePackage = FakeCMakePackage
    cuda = types.ModuleType('spack_repo.builtin.build_systems.cuda')
    cuda.CudaPackage = FakeCudaPackage
    fakes = {'spack': types.ModuleType('spack'), 'spack.package': api,
             'spack_repo': types.ModuleType('spack_repo'),
             'spack_repo.builtin': types.ModuleType('spack_repo.builtin'),
             'spack_repo.builtin.build_systems': types.ModuleType('spack_repo.builtin.build_systems'),
             'spack_repo.builtin.build_systems.cmake': cmake,
             'spack_repo.builtin.build_systems.cuda': cuda}
    ours = 'spack_repo.yeebench.build_systems'   # this repository's own recipe code, loaded for real
    fakes.update({'spack_repo.yeebench': types.ModuleType('spack_repo.yeebench'), ours: types.ModuleType(ours)})
    saved = {k: sys.modules.get(k) for k in [*fakes, f'{ours}.develop']}
    sys.modules.update(fakes)
    try:
        shared = importlib.util.spec_from_file_location(f'{ours}.develop', RECIPES.parent / 'build_systems' / 'develop.py')
        sys.modules[f'{ours}.develop'] = importlib.util.module_from_spec(shared)
        shared.loader.exec_module(sys.modules[f'{ours}.develop'])
        path = path or RECIPES / package_dir / 'package.py'
        spec = importlib.util.spec_from_file_location(f'yeebench_recipe_{package_dir}', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module, directives


def variant_defaults(directives, cls=None):
    '''Variant name -> default, including those of the CudaPackage mixin when `cls` uses it.'''
    defaults = dict(getattr(cls, 'mixin_variants', {})) if cls is not None else {}
    defaults.update({args[0]: kwargs.get('default') for args, kwargs in directives.of('variant')})
    return defaults


def cmake_cache_names(cmakelists):
    '''Names of option(...) and set(... CACHE ...) entries of a CMakeLists.txt, its cmake/*.cmake and
    its backends' src/backends/*/backend.cmake.'''
    import re
    project = Path(cmakelists).parent
    included = sorted((project / 'cmake').glob('*.cmake')) + sorted(project.glob('src/backends/*/backend.cmake'))
    text = '\n'.join(p.read_text() for p in [Path(cmakelists), *included])
    names = set(re.findall(r'^\s*option\(\s*(\w+)', text, re.M))
    names |= set(re.findall(r'^\s*set\(\s*(\w+)\s+[^)]*\bCACHE\b', text, re.M))
    return names
