"""The installable package: what the wheel holds, where the package finds its data, `yeebench checks-dir`,
the dependency ranges and the constraints CI installs.  (make test-package installs the wheel and runs it.)"""
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from yeebench import cli, package_data

PROJECT = Path(__file__).resolve().parents[2]           # reframe/
REPO = PROJECT.parent


def _git(*args):
    return subprocess.run(['git', *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _tracked(folder):
    return [Path(p) for p in _git('ls-files', '--', folder).splitlines()]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    '''A wheel built with `pip wheel reframe/`, and whether the checkout was left as it was.'''
    if not shutil.which('git') or not (REPO / '.git').exists():
        pytest.skip('not a git checkout')
    out = tmp_path_factory.mktemp('wheel')
    before = _git('status', '--porcelain', '--ignored', '--', 'reframe')
    build = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--quiet', '--disable-pip-version-check',
                            '-w', str(out), str(PROJECT)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    after = _git('status', '--porcelain', '--ignored', '--', 'reframe')
    [path] = out.glob('yeebench-*.whl')
    with zipfile.ZipFile(path) as zf:
        return set(zf.namelist()), before == after


def test_building_the_wheel_leaves_the_checkout_as_it_was(wheel):
    assert wheel[1], 'pip wheel reframe/ left files in the checkout (build/, *.egg-info?)'


def test_the_wheel_holds_every_check_and_the_sources_their_jobs_compile(wheel):
    names = wheel[0]
    checks = _tracked('reframe/yeebench/checks')
    assert any('/src/' in str(p) for p in checks)
    missing = [str(p) for p in checks if str(p.relative_to('reframe')) not in names]
    assert not missing, f'check files missing from the wheel: {missing}'
    assert 'yeebench/vcluster/measure.sh' in names and 'yeebench/acceptance/run.sh' in names


@pytest.mark.parametrize('name', ['solver', 'microbench', 'references', 'topology'])
def test_the_wheel_ships_every_tracked_file_of_the_data_folders(wheel, name):
    folder = (PROJECT / package_data.SHIPPED[name]).resolve().relative_to(REPO)
    tracked = _tracked(str(folder))
    assert tracked
    shipped = {f'yeebench/{package_data.SHIPPED_DIR}/{name}/{p.relative_to(folder)}' for p in tracked}
    assert not shipped - wheel[0], f'missing from the wheel: {sorted(shipped - wheel[0])[:10]}'
    ignored = {f'yeebench/{package_data.SHIPPED_DIR}/{name}/{Path(p).relative_to(folder)}' for p in
               _git('ls-files', '--others', '--ignored', '--exclude-standard', '--', str(folder)).splitlines()}
    assert not ignored & wheel[0], f'git-ignored files (build outputs?) shipped: {sorted(ignored & wheel[0])[:10]}'


def test_the_wheel_has_the_named_files_a_site_needs(wheel):
    names = wheel[0]
    for n in ('solver/CMakeLists.txt', 'solver/src/backends/cpu/traits.json', 'microbench/CMakeLists.txt',
              'references/local.json', 'topology/README.md'):
        assert f'yeebench/_shipped/{n}' in names, n
    assert not any(n.startswith('yeebench/_shipped/') and n.endswith('__init__.py') for n in names)


def test_the_checkout_is_where_an_editable_install_finds_its_data():
    # this test suite runs from the checkout (make venv: an editable install), which has no _shipped copy
    assert not (package_data.package_dir() / package_data.SHIPPED_DIR).exists()
    assert package_data.source_tree('solver') == REPO / 'solver'
    assert package_data.source_tree('microbench') == REPO / 'microbench'
    assert package_data.references_dir() == PROJECT / 'config' / 'references'
    assert package_data.topology_dir() == PROJECT / 'config' / 'topology'
    assert package_data.checks_dir() == PROJECT / 'yeebench' / 'checks'


def test_an_installed_copy_wins_and_a_missing_one_is_named(tmp_path, monkeypatch):
    installed = tmp_path / 'site-packages' / 'yeebench'
    (installed / '_shipped' / 'solver').mkdir(parents=True)
    monkeypatch.setattr(package_data, 'package_dir', lambda: installed)
    assert package_data.source_tree('solver') == installed / '_shipped' / 'solver'
    with pytest.raises(FileNotFoundError, match=r'no microbench folder: neither .*_shipped/microbench'):
        package_data.source_tree('microbench')
    with pytest.raises(KeyError):
        package_data.source_tree('references')


def test_checks_dir_prints_the_packages_checks(capsys):
    assert cli.main(['checks-dir']) == 0
    assert capsys.readouterr().out == f'{package_data.checks_dir()}\n'


def test_checks_dir_without_checks_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(package_data, 'package_dir', lambda: tmp_path)
    monkeypatch.setattr(package_data, 'checks_dir', lambda: tmp_path / 'checks')
    assert cli.main(['checks-dir']) == 2
    assert 'has no checks/ folder' in capsys.readouterr().err


def _pyproject():
    tomllib = pytest.importorskip('tomllib')
    return tomllib.loads((PROJECT / 'pyproject.toml').read_text())['project']


def _constraints():
    pins = {}
    for line in (PROJECT / 'constraints.txt').read_text().splitlines():
        line = line.split('#')[0].strip()
        if line:
            name, version = line.split('==')
            pins[re.sub(r'[-_.]+', '-', name).lower()] = version
    return pins


def test_dependencies_are_ranges_that_the_constraints_pin_inside():
    project, pins = _pyproject(), _constraints()
    requirements = [Requirement(r) for r in project['dependencies'] + project['optional-dependencies']['test']]
    for req in requirements:
        assert not any(s.operator in ('==', '===') for s in req.specifier), f'{req}: a pin, not a range'
        name = re.sub(r'[-_.]+', '-', req.name).lower()
        assert name in pins, f'{req.name} has no exact version in constraints.txt'
        assert req.specifier.contains(pins[name]), f'constraints.txt pins {req.name}=={pins[name]}, outside {req}'


def test_the_oldest_supported_reframe_is_the_one_make_test_package_installs():
    [reframe] = [Requirement(r) for r in _pyproject()['dependencies'] if r.startswith('reframe-hpc')]
    [lower] = [s.version for s in reframe.specifier if s.operator == '>=']
    oldest = re.search(r'^RFM_OLDEST \?= (\S+)$', (PROJECT / 'package.mk').read_text(), re.M).group(1)
    assert oldest.startswith(lower) and reframe.specifier.contains(oldest)
    assert any(s.operator == '<' for s in reframe.specifier), 'the supported ReFrame range has no upper bound'
