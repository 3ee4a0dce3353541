"""spack.yaml and spack/systems/: what CI can check without Spack."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spack_test_support import REPO_ROOT, load_yaml

SPACK_YAML = REPO_ROOT / 'spack.yaml'
SYSTEMS = REPO_ROOT / 'spack' / 'systems'


@pytest.fixture(scope='module')
def env():
    return load_yaml(SPACK_YAML)['spack']


def spec_names(specs):
    return {re.split(r'[\s@+~%^]', s.strip(), maxsplit=1)[0]: s for s in specs}


def test_environment_has_the_suite_specs(env):
    specs = spec_names(env['specs'])
    for name in ('yee', 'yeebench-microbench', 'openmpi', 'ucx', 'osu-micro-benchmarks', 'hdf5',
                 'hwloc', 'numactl'):
        assert name in specs, f'spack.yaml lacks {name}'
    # ReFrame comes from PyPI at the version reframe/constraints.txt pins: the package release Spack
    # 1.1.0 uses (v2025.11.0) has ReFrame <= 4.7.3, without the plugin API the checks use.
    assert 'reframe' not in specs
    # OSU pinned: results name the benchmark version, and 7.4 is what offline mirrors carry here.
    assert re.search(r'@=?7\.4$', specs['osu-micro-benchmarks'])
    assert 'fabrics=ucx' in specs['openmpi']
    assert '+mpi' in specs['hdf5'].replace(' ', '')


def test_netpipe_is_documented_as_coming_from_the_os():
    text = SPACK_YAML.read_text()
    assert 'NetPIPE has no Spack package' in text and 'netpipe-openmpi' in text
    assert 'osu-micro-benchmarks +cuda' in text, 'the +cuda variant for GPU systems is documented'


def test_our_repo_is_registered_and_is_api_v2(env):
    repo_dir = REPO_ROOT / env['repos']['yeebench']
    repo = load_yaml(repo_dir / 'repo.yaml')['repo']
    assert repo['namespace'] == 'yeebench'
    assert re.fullmatch(r'v2\.\d+', repo['api'])
    assert (repo_dir / 'packages' / 'yee' / 'package.py').is_file()
    assert (repo_dir / 'packages' / 'yeebench_microbench' / 'package.py').is_file()


def test_develop_builds_our_packages_from_this_tree(env):
    develop = env['develop']
    assert set(develop) == {'yee', 'yeebench-microbench'}
    for name, entry in develop.items():
        assert entry['spec'] == f'{name}@=main'
        assert (REPO_ROOT / entry['path']).resolve() == REPO_ROOT


def _eval_when(expr, os_name, environ):
    # Spack evaluates include `when:` as a Python expression over os, platform, env, ...
    return eval(expr, {'__builtins__': {}}, {'os': os_name, 'env': environ, 'platform': 'linux'})


def test_system_include_picks_debian_on_debian_and_the_named_folder_elsewhere(env):
    entries = env['include']
    debian = next(e for e in entries if e['path'] == 'spack/systems/debian-bookworm')
    named = next(e for e in entries if '$YEEBENCH_SPACK_SYSTEM' in e['path'])
    assert (REPO_ROOT / debian['path']).is_dir()
    assert _eval_when(debian['when'], 'debian12', {}) is True
    assert _eval_when(named['when'], 'debian12', {}) is False
    assert _eval_when(debian['when'], 'rhel9', {}) is False
    assert _eval_when(named['when'], 'rhel9', {}) is False          # no system named: nothing included
    chosen = {'YEEBENCH_SPACK_SYSTEM': 'cluster-template'}
    assert _eval_when(debian['when'], 'debian12', chosen) is False
    assert _eval_when(named['when'], 'rhel9', chosen) is True
    assert (SYSTEMS / chosen['YEEBENCH_SPACK_SYSTEM']).is_dir()


def test_container_section_makes_a_singularity_recipe_with_our_template(env):
    container = env['container']
    assert container['format'] == 'singularity'
    template_dir = env['config']['template_dirs'][0].replace('$env/', '')
    assert (REPO_ROOT / template_dir / container['template']).is_file()


# -- spack/systems/debian-bookworm ---------------------------------------------------------------------
DEBIAN_EXTERNALS = {   # spec name -> (version, Debian package that provides it)
    'openmpi': ('4.1.4', 'openmpi-bin'), 'ucx': ('1.13.1', 'libucx0'),
    'hdf5': ('1.10.8', 'libhdf5-openmpi-dev'), 'hwloc': ('2.9.0', 'hwloc'),
    'numactl': ('2.0.16', 'numactl'), 'cmake': ('3.25.1', 'cmake'), 'gmake': ('4.3', 'make'),
    'gcc': ('12.2.0', 'gcc-12'),
}


@pytest.fixture(scope='module')
def debian_packages():
    return load_yaml(SYSTEMS / 'debian-bookworm' / 'packages.yaml')['packages']


def external(packages, name):
    entries = packages[name]['externals']
    assert len(entries) == 1, f'{name}: one external expected'
    return entries[0]


@pytest.mark.parametrize('name', sorted(DEBIAN_EXTERNALS))
def test_debian_externals_declare_bookworm_versions(debian_packages, name):
    version, _ = DEBIAN_EXTERNALS[name]
    entry = external(debian_packages, name)
    assert entry['spec'].startswith(f'{name}@{version}')
    assert entry['prefix'].startswith('/usr')
    assert debian_packages[name].get('buildable') is False


def test_debian_mpi_is_openmpi_over_ucx_and_hdf5_is_parallel(debian_packages):
    assert 'fabrics=ucx' in external(debian_packages, 'openmpi')['spec']
    assert '+mpi' in external(debian_packages, 'hdf5')['spec']
    assert debian_packages['mpi']['require'] == ['openmpi']
    compilers = external(debian_packages, 'gcc')['extra_attributes']['compilers']
    assert set(compilers) == {'c', 'cxx', 'fortran'}


def _debian_version(package):
    out = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


@pytest.mark.skipif(not Path('/etc/debian_version').is_file() or shutil.which('dpkg-query') is None,
                    reason='not a Debian system')
@pytest.mark.parametrize('name', sorted(DEBIAN_EXTERNALS))
def test_debian_externals_match_what_is_installed_here(debian_packages, name):
    version, package = DEBIAN_EXTERNALS[name]
    if not Path('/etc/debian_version').read_text().startswith('12'):
        pytest.skip('not Debian 12')
    installed = _debian_version(package)
    if installed is None:
        pytest.skip(f'{package} is not installed')
    # Debian versions look like [epoch:]upstream-revision (e.g. 1:2.0.16-1, 4.1.4-3+b1).
    upstream = installed.split(':')[-1].split('-')[0].split('+')[0]
    assert upstream == version, f'{package} is {installed}, packages.yaml says {name}@{version}'
    prefix = Path(external(debian_packages, name)['prefix'])
    assert prefix.is_dir()


def test_cluster_template_parses_and_names_the_site_mpi():
    packages = load_yaml(SYSTEMS / 'cluster-template' / 'packages.yaml')['packages']
    assert packages['mpi']['buildable'] is False
    assert 'fabrics=ucx' in packages['openmpi']['externals'][0]['spec']
    text = (SYSTEMS / 'cluster-template' / 'packages.yaml').read_text()
    assert 'cuda_arch=' in text
