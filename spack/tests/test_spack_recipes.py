"""Our Spack recipes: valid Python, the declarations Spack needs, and CMake options that exist."""
import ast
import json
import re
import subprocess

import pytest

from spack_test_support import (REPO_ROOT, RECIPES, FakeSpec, cmake_cache_names, load_recipe,
                                variant_defaults)

# package directory -> (class name, CMake project folder)
RECIPE_FACTS = {
    'yee': ('Yee', 'solver'),
    'yeebench_microbench': ('YeebenchMicrobench', 'microbench'),
}
PACKAGES = sorted(RECIPE_FACTS)


def project_cmake_text(folder):
    '''The CMake code of a project: CMakeLists.txt files and cmake/*.cmake.'''
    root = REPO_ROOT / folder
    files = (sorted(root.rglob('CMakeLists.txt')) + sorted((root / 'cmake').glob('*.cmake'))
             + sorted(root.glob('src/backends/*/*.cmake')))
    return '\n'.join(p.read_text() for p in files)


def depends(directives):
    '''Dependency name (without constraints) -> list of (spec, kwargs).'''
    found = {}
    for args, kwargs in directives.of('depends_on'):
        found.setdefault(re.split(r'[@+~%\s]', args[0], maxsplit=1)[0], []).append((args[0], kwargs))
    return found


def recipe(package_dir, **values):
    module, directives = load_recipe(package_dir)
    cls = getattr(module, RECIPE_FACTS[package_dir][0])
    return cls, directives, {**variant_defaults(directives, cls), **values}


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_recipe_is_python_that_compiles(package_dir):
    source = (RECIPES / package_dir / 'package.py').read_text()
    tree = ast.parse(source)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == [RECIPE_FACTS[package_dir][0]]
    imports = {a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert 'CMakePackage' in imports, 'API v2 recipes import the build system from spack_repo.builtin'
    assert len(source.splitlines()) <= 115


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_recipe_declares_project_maintainers_and_the_license_the_repository_carries(package_dir):
    cls, directives, _ = recipe(package_dir)
    assert cls.git.endswith('.git') and cls.homepage.startswith('https://')
    assert cls.root_cmakelists_dir == RECIPE_FACTS[package_dir][1]
    assert directives.of('maintainers') and all(directives.of('maintainers')[0][0])
    assert [a for a, _ in directives.of('license')] == [('BSD-3-Clause',)]
    assert (REPO_ROOT / 'LICENSE').read_text().startswith('BSD 3-Clause License')
    for args, kwargs in directives.of('variant'):
        assert kwargs.get('description'), f'variant {args[0]} of {package_dir} has no description'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_versions_follow_main_or_pin_a_commit_of_this_repository(package_dir):
    _, directives, _ = recipe(package_dir)
    versions = {args[0]: kwargs for args, kwargs in directives.of('version')}
    assert versions.pop('main') == {'branch': 'main'}
    assert versions, 'at least one release version pinned to a commit'
    folder = RECIPE_FACTS[package_dir][1]
    shallow = subprocess.run(['git', 'rev-parse', '--is-shallow-repository'], cwd=REPO_ROOT,
                             capture_output=True, text=True).stdout.strip()
    for version, kwargs in versions.items():
        assert set(kwargs) == {'commit'} and re.fullmatch(r'[0-9a-f]{40}', kwargs['commit'])
        if shallow == 'true':
            continue  # a shallow clone may not hold the commit; a full clone (CI) checks it
        cmakelists = subprocess.run(['git', 'show', f'{kwargs["commit"]}:{folder}/CMakeLists.txt'],
                                    cwd=REPO_ROOT, capture_output=True, text=True)
        assert cmakelists.returncode == 0, f'{version}: commit {kwargs["commit"]} is not in this repository'
        assert re.search(rf'project\(\w+ VERSION {re.escape(version)}\b', cmakelists.stdout), \
            f'{folder}/CMakeLists.txt at {kwargs["commit"]} does not declare version {version}'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_every_language_the_cmake_project_enables_is_a_build_dependency(package_dir):
    _, directives, _ = recipe(package_dir)
    text = project_cmake_text(RECIPE_FACTS[package_dir][1])
    languages = set()
    for call in re.findall(r'(?:project\(\w+[^)]*LANGUAGES|enable_language\()([^)]*)\)', text):
        languages |= set(call.split()) & {'C', 'CXX', 'Fortran'}
    deps = depends(directives)
    for language in languages:
        name = {'C': 'c', 'CXX': 'cxx', 'Fortran': 'fortran'}[language]
        assert name in deps, f'{package_dir}: the CMake project enables {language}, no depends_on("{name}")'
        assert deps[name][0][1].get('type') == 'build'
    assert 'mpi' in deps and any(s.startswith('cmake@') for s, _ in deps['cmake'])


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_programs_the_ctest_suite_runs_are_test_dependencies(package_dir):
    _, directives, _ = recipe(package_dir)
    folder = RECIPE_FACTS[package_dir][1]
    scripts = '\n'.join(p.read_text() for p in (REPO_ROOT / folder / 'tests').glob('*.py'))
    deps = depends(directives)
    needed = {'python'} | ({'numactl'} if re.search(r'["\']numactl["\']', scripts) else set())
    for name in needed:
        assert name in deps, f'{package_dir}: its tests run {name}, not a dependency'
        assert any(k.get('type') in ('test', ('build', 'test')) for _, k in deps[name]) or name == 'mpi'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_no_fixed_list_of_compilers(package_dir):
    _, directives, _ = recipe(package_dir)
    for args, _ in directives.of('requires'):
        assert not any(a.startswith('%') for a in args), f'{package_dir} requires compilers {args}'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_build_time_tests_fail_when_ctest_finds_none(package_dir):
    cls, directives, values = recipe(package_dir)
    cls(FakeSpec(values)).check()
    assert directives.of('ctest') and '--no-tests=error' in directives.of('ctest')[-1][0]


def test_the_solver_check_leaves_out_only_the_robustness_tests():
    """check() runs ctest -LE robustness: the label must exist (a misspelt one leaves out nothing) and
    never mark the physics the check is there for."""
    cls, directives, values = recipe('yee')
    cls(FakeSpec(values)).check()
    args = directives.of('ctest')[-1][0]
    excluded = args[args.index('-LE') + 1]
    cmake = (REPO_ROOT / 'solver/tests/CMakeLists.txt').read_text()
    marked = set()
    for names, labels in re.findall(r'set_tests_properties\(([^)]*?)PROPERTIES\s+LABELS\s+"([^"]*)"', cmake):
        if excluded in labels.split(';'):
            marked |= set(names.split())
    assert marked, f'no test is labelled {excluded!r} in solver/tests/CMakeLists.txt'
    physics = {'cavity_modes', 'energy_conservation', 'decomposition_invariance', 'divergence_and_courant',
               'wavefront_equality', 'halo_per_rank'}
    assert not marked & physics, f'the Spack check would leave out physics tests: {sorted(marked & physics)}'
    defined = set(re.findall(r'yee_test\((\w+) ', cmake))
    assert marked <= defined, f'labelled but never defined: {sorted(marked - defined)}'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_stand_alone_tests_exist_and_say_what_they_check(package_dir):
    cls, _, _ = recipe(package_dir)
    tests = [n for n in vars(cls) if n.startswith('test_')]
    assert len(tests) >= 2
    for name in tests:
        assert (getattr(cls, name).__doc__ or '').strip(), f'{package_dir}.{name} has no docstring'


@pytest.mark.parametrize('package_dir', PACKAGES)
@pytest.mark.parametrize('run_tests', [False, True])
def test_every_cmake_define_is_an_option_of_the_project(package_dir, run_tests):
    cls, _, values = recipe(package_dir)
    folder = RECIPE_FACTS[package_dir][1]
    package = cls(FakeSpec(values))
    package.run_tests = run_tests
    args = package.cmake_args()
    names = {a[2:].split('=', 1)[0] for a in args}
    # CMake's own variables (CMAKE_CUDA_ARCHITECTURES, ...) are always options of a project.
    known = cmake_cache_names(REPO_ROOT / folder / 'CMakeLists.txt') | {n for n in names if n.startswith('CMAKE_')}
    assert names <= known, f'{package_dir} passes {sorted(names - known)}, not options of {folder}/CMakeLists.txt'
    tests_option = {'yee': 'YEE_TESTS', 'yeebench_microbench': 'MICROBENCH_TESTS'}[package_dir]
    assert f'-D{tests_option}={"ON" if run_tests else "OFF"}' in args


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_every_variant_reaches_cmake(package_dir):
    cls, _, defaults = recipe(package_dir)
    for name, default in defaults.items():
        if not isinstance(default, bool):
            continue
        on = cls(FakeSpec({**defaults, name: True})).cmake_args()
        off = cls(FakeSpec({**defaults, name: False})).cmake_args()
        assert on != off, f'variant {name} of {package_dir} changes no CMake option'


def test_fake_define_from_variant_rejects_undeclared_variants():
    module, _ = load_recipe('yee')
    with pytest.raises(KeyError):
        module.Yee(FakeSpec({})).cmake_args()


@pytest.mark.parametrize('flags, march', [('-march=zen3 -mtune=zen3', 'zen3'), ('-mcpu=neoverse-v1', ''),
                                          ('', '')])
def test_yee_records_the_march_spack_builds_for(flags, march):
    cls, _, values = recipe('yee')
    assert f'-DYEE_MARCH={march}' in cls(FakeSpec(values, target_flags=flags)).cmake_args()


def test_yee_cuda_variant_selects_the_cuda_backend_architecture_and_binary():
    cls, directives, values = recipe('yee')
    # the concretizer sets backend=cuda for +cuda (and +cuda for backend=cuda): the requires below
    cuda = cls(FakeSpec({**values, 'cuda': True, 'backend': 'cuda', 'cuda_arch': ('90',)}))
    args = cuda.cmake_args()
    assert '-DYEE_BACKEND=cuda' in args and '-DCMAKE_CUDA_ARCHITECTURES=90' in args
    cpu = cls(FakeSpec(values))
    assert '-DYEE_BACKEND=cpu' in cpu.cmake_args() and cpu.binary == 'yee'
    assert cuda.binary == 'yee-cuda'
    requires = {(args[0], kwargs['when']) for args, kwargs in directives.of('requires')}
    assert {('+cuda', 'backend=cuda'), ('backend=cuda', '+cuda')} <= requires
    assert 'cuda_arch=none' in [args[0] for args, _ in directives.of('conflicts')]


def test_yee_backend_variant_offers_exactly_the_solver_backend_folders():
    _, directives, values = recipe('yee')
    folders = sorted(p.parent.name for p in (REPO_ROOT / 'solver/src/backends').glob('*/backend.cmake'))
    assert {'cpu', 'cuda'} <= set(folders)
    variant = [kwargs for args, kwargs in directives.of('variant') if args[0] == 'backend']
    assert list(variant[0]['values']) == folders and values['backend'] == 'cpu'


def test_a_new_backend_folder_reaches_the_yee_recipe_with_no_other_edit(tmp_path):
    # The recipe in a copy of the repository's layout, with one more backend folder beside cpu.
    recipe_copy = tmp_path / RECIPES.relative_to(REPO_ROOT) / 'yee' / 'package.py'
    recipe_copy.parent.mkdir(parents=True)
    recipe_copy.write_text((RECIPES / 'yee' / 'package.py').read_text())
    for name, program in [('cpu', 'yee'), ('dummy', 'yee-dummy')]:
        (tmp_path / 'solver/src/backends' / name).mkdir(parents=True)
        (tmp_path / 'solver/src/backends' / name / 'backend.cmake').write_text('set(YEE_BACKEND_SOURCES kernels.cpp)\n')
        (tmp_path / 'solver/src/backends' / name / 'traits.json').write_text(json.dumps({'program': program}))
    (tmp_path / 'solver/src/backends/not_a_backend').mkdir()  # no backend.cmake: not listed
    module, directives = load_recipe('yee', path=recipe_copy)
    assert module.BACKENDS == ('cpu', 'dummy')
    values = {**variant_defaults(directives, module.Yee), 'backend': 'dummy'}
    dummy = module.Yee(FakeSpec(values))
    assert '-DYEE_BACKEND=dummy' in dummy.cmake_args() and dummy.binary == 'yee-dummy'
    assert module.Yee(FakeSpec({**values, 'backend': 'cpu'})).binary == 'yee'


def test_yee_hdf5_variant_needs_parallel_hdf5():
    _, directives, _ = recipe('yee')
    deps = {args[0]: kwargs.get('when') for args, kwargs in directives.of('depends_on')}
    assert deps.get('hdf5+mpi') == '+hdf5'


@pytest.mark.parametrize('package_dir', PACKAGES)
def test_a_develop_build_is_redone_only_when_its_project_folder_changed(package_dir, tmp_path):
    import os
    cls, _, values = recipe(package_dir)
    folder = RECIPE_FACTS[package_dir][1]
    source = tmp_path / 'repo' / folder / 'src'
    source.mkdir(parents=True)
    (source / 'main.c').write_text('int main(void) { return 0; }\n')
    outputs = tmp_path / 'repo' / 'build'
    outputs.mkdir()
    package = cls(FakeSpec({**values, 'dev_path': str(tmp_path / 'repo')}))
    package.prefix = str(tmp_path / 'prefix')
    assert package.detect_dev_src_change(), 'never installed: build'
    (tmp_path / 'prefix' / '.spack').mkdir(parents=True)
    manifest = tmp_path / 'prefix' / '.spack' / 'install_manifest.json'
    manifest.write_text('{}')
    old, now = 1_000_000, 2_000_000
    for path in [tmp_path / 'repo', source.parent, source, source / 'main.c']:
        os.utime(path, (old, old))
    os.utime(manifest, (now - 10, now - 10))
    (outputs / 'log.txt').write_text('a later run elsewhere in the work tree')
    assert not package.detect_dev_src_change()
    os.utime(source / 'main.c', (now, now))
    assert package.detect_dev_src_change()
