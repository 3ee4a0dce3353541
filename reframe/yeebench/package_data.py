"""Where the data the checks need lives: in the installed package, or in the checkout it runs from.

A wheel or sdist of yeebench carries, under `yeebench/_shipped/<name>/`, copies of the folders
below (reframe/setup.py copies them at build time).  An editable install (`pip install -e reframe`)
has no such copies: it runs from the checkout, and there the folders are where the repository keeps
them.  `shipped(name)` returns the installed copy when the package has one, else the checkout's
folder; nothing else in the package names the repository's layout.

This module imports only the standard library: reframe/setup.py reads SHIPPED from it.
"""
from importlib import resources
from pathlib import Path

#: name -> the folder in the repository, relative to the Python project (reframe/).
SHIPPED = {
    'solver': '../solver',                       # the FDTD solver's CMake project (SolverBinary)
    'microbench': '../microbench',               # the probes' CMake project (ProbeBinaries)
    'references': 'config/references',           # per-system reference values (yeebench.references)
    'topology': 'config/topology',               # recorded node topologies (acceptance)
}

#: The folder of the package that holds the copies.
SHIPPED_DIR = '_shipped'

#: Folders and files of SHIPPED trees that are not copied (build outputs, editor and VCS leftovers).
EXCLUDED_DIRS = ('build', 'build-*', '__pycache__', '.git', '*.egg-info', '.cache')
EXCLUDED_FILES = ('*.pyc', 'CMakeUserPresets.json', '*.tmp', '.*.swp', '*~')


def package_dir():
    '''The installed `yeebench` package's folder (a real folder: the package is never zipped).'''
    return Path(str(resources.files('yeebench')))


def checkout_root():
    '''The repository the package runs from (an editable install), or None for an installed package.'''
    project = package_dir().parent                 # reframe/ in a checkout, site-packages/ when installed
    if not (project / 'pyproject.toml').is_file() or not (project / 'setup.py').is_file():
        return None
    return project.parent


def checkout_path(name):
    '''`name`'s folder in the checkout the package runs from (an editable install), or None.'''
    if checkout_root() is None:
        return None
    path = (package_dir().parent / SHIPPED[name]).resolve()
    return path if path.is_dir() else None


def shipped(name):
    '''The folder holding `name` (one of SHIPPED): the installed copy, else the checkout's.
    FileNotFoundError names both places when neither exists.'''
    if name not in SHIPPED:
        raise KeyError(f'{name!r} is not shipped data (one of {", ".join(SHIPPED)})')
    installed = package_dir() / SHIPPED_DIR / name
    if installed.is_dir():
        return installed
    checkout = checkout_path(name)
    if checkout is not None:
        return checkout
    raise FileNotFoundError(f'yeebench: no {name} folder: neither {installed} (an installed package) '
                            f'nor {SHIPPED[name]} beside {package_dir().parent} (a checkout); '
                            'reinstall the package (pip install yeebench)')


def source_tree(name):
    '''The CMake project `name` ('solver' or 'microbench') that the fixtures build.'''
    if name not in ('solver', 'microbench'):
        raise KeyError(f'{name!r} is not a source tree (solver, microbench)')
    return shipped(name)


def references_dir():
    return shipped('references')


def topology_dir():
    return shipped('topology')


def checks_dir():
    '''The folder of the ReFrame checks (`reframe -c "$(yeebench checks-dir)" -R`).'''
    return package_dir() / 'checks'
