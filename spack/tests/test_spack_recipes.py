"""Our Spack recipes: valid Python, the declarations Spack needs, and CMake options that exist."""
import ast

import pytest

from spack_test_support import (REPO_ROOT, RECIPES, FakeSpec, cmake_cache_names, load_recipe,
                                variant_defaults)

# package directory -> (class name, CMake project folder, C or C++ language dependency)
RECIPE_FACTS = {
    'yee': ('Yee', 'solver', 'cxx'),
    'yeebench_microbench': ('YeebenchMicrobench', 'microbench', 'c'),
}


@pytest.mark.parametrize('package_dir', sorted(RECIPE_FACTS))
def test_recipe_is_python_that_compiles(package_dir):
    source = (RECIPES / package_dir / 'package.py').read_text()
    compile(source, str(RECIPES / package_dir / 'package.py'), 'exec')
    tree = ast.parse(source)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == [RECIPE_FACTS[package_dir][0]]
    imports = {a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert 'CMakePackage' in imports, 'API v2 recipes import the build system from spack_repo.builtin'


@pytest.mark.parametrize('package_dir', sorted(RECIPE_FACTS))
def test_recipe_declares_versions_dependencies_and_project_folder(package_dir):
    class_name, folder, language = RECIPE_FACTS[package_dir]
    module, directives = load_recipe(package_dir)
    cls = getattr(module, class_name)
    versions = {args[0]: kwargs for args, kwargs in directives.of('version')}
    assert versions['main'] == {'branch': 'main'}
    tagged = [v for v, k in versions.items() if 'tag' in k]
    assert tagged and all(versions[v]['tag'] == f'v{v}' for v in tagged)
    deps = [args[0] for args, _ in directives.of('depends_on')]
    assert 'mpi' in deps and language in deps and any(d.startswith('cmake@') for d in deps)
    assert cls.git.endswith('.git') and cls.homepage.startswith('https://')
    assert cls.root_cmakelists_dir == folder
    assert (REPO_ROOT / folder / 'CMakeLists.txt').is_file()
    assert len((RECIPES / package_dir / 'package.py').read_text().splitlines()) <= 80


@pytest.mark.parametrize('package_dir', sorted(RECIPE_FACTS))
@pytest.mark.parametrize('run_tests', [False, True])
def test_every_cmake_define_is_an_option_of_the_project(package_dir, run_tests):
    class_name, folder, _ = RECIPE_FACTS[package_dir]
    module, directives = load_recipe(package_dir)
    cls = getattr(module, class_name)
    package = cls(FakeSpec(variant_defaults(directives, cls)))
    package.run_tests = run_tests
    args = package.cmake_args()
    names = {a[2:].split('=', 1)[0] for a in args}
    # CMake's own variables (CMAKE_CUDA_ARCHITECTURES, ...) are always options of a project.
    known = cmake_cache_names(REPO_ROOT / folder / 'CMakeLists.txt') | {n for n in names if n.startswith('CMAKE_')}
    assert names <= known, f'{package_dir} passes {sorted(names - known)}, not options of {folder}/CMakeLists.txt'
    tests_option = {'yee': 'YEE_TESTS', 'yeebench_microbench': 'MICROBENCH_TESTS'}[package_dir]
    assert f'-D{tests_option}={"ON" if run_tests else "OFF"}' in args


@pytest.mark.parametrize('package_dir', sorted(RECIPE_FACTS))
def test_every_variant_reaches_cmake(package_dir):
    class_name, _, _ = RECIPE_FACTS[package_dir]
    module, directives = load_recipe(package_dir)
    cls = getattr(module, class_name)
    defaults = variant_defaults(directives, cls)
    for name, default in defaults.items():
        if not isinstance(default, bool):
            continue
        on = cls(FakeSpec({**defaults, name: True})).cmake_args()
        off = cls(FakeSpec({**defaults, name: False})).cmake_args()
        assert on != off, f'variant {name} of {package_dir} changes no CMake option'


def test_fake_define_from_variant_rejects_undeclared_variants():
    module, directives = load_recipe('yee')
    package = module.Yee(FakeSpec({}))
    with pytest.raises(KeyError):
        package.cmake_args()


def test_yee_cuda_variant_selects_the_cuda_backend_and_architecture():
    module, directives = load_recipe('yee')
    defaults = variant_defaults(directives, module.Yee)
    args = module.Yee(FakeSpec({**defaults, 'cuda': True, 'cuda_arch': ('90',)})).cmake_args()
    assert '-DYEE_BACKEND=cuda' in args and '-DCMAKE_CUDA_ARCHITECTURES=90' in args
    assert '-DYEE_BACKEND=cpu' in module.Yee(FakeSpec(defaults)).cmake_args()
    cmake_dir = REPO_ROOT / 'solver' / 'src' / 'backends'
    assert (cmake_dir / 'cuda' / 'kernels.cpp').is_file() and (cmake_dir / 'cpu' / 'kernels.cpp').is_file()
    conflicts = [args[0] for args, _ in directives.of('conflicts')]
    assert 'cuda_arch=none' in conflicts


def test_yee_hdf5_variant_needs_parallel_hdf5():
    _, directives = load_recipe('yee')
    deps = {args[0]: kwargs.get('when') for args, kwargs in directives.of('depends_on')}
    assert deps.get('hdf5+mpi') == '+hdf5'
