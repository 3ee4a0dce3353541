"""Build hooks of the yeebench package (the metadata is in pyproject.toml).

1. The package carries the folders the checks need beyond the Python package (yeebench.package_data's
   SHIPPED: the solver's and the probes' CMake projects, the reference values, the recorded topologies)
   as package data under yeebench/_shipped/<name>/.  They are copied when the wheel is built: from the
   checkout (../solver, config/references, ...) or, when building from an sdist, from the sdist's own
   yeebench/_shipped/ (the sdist hook puts them there).  An editable install copies nothing: it runs from
   the checkout, where yeebench.package_data finds the folders in place.
2. Building from a checkout leaves it as it was: setuptools' build/ and *.egg-info folders go to a
   temporary folder, removed when the build ends.
"""
import atexit
import fnmatch
import os
import runpy
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
_DATA = runpy.run_path(os.path.join(HERE, 'yeebench', 'package_data.py'))
SHIPPED, SHIPPED_DIR = _DATA['SHIPPED'], _DATA['SHIPPED_DIR']


def _ignore(folder, names):
    def excluded(name):
        patterns = _DATA['EXCLUDED_DIRS'] if os.path.isdir(os.path.join(folder, name)) else _DATA['EXCLUDED_FILES']
        return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
    return {n for n in names if excluded(n)}


def _source(name):
    '''Where `name` is read from: the sdist's copy (building from an sdist), else the checkout.'''
    for path in (os.path.join(HERE, 'yeebench', SHIPPED_DIR, name), os.path.join(HERE, SHIPPED[name])):
        if os.path.isdir(path):
            return path
    raise SystemExit(f'yeebench build: {SHIPPED[name]} (relative to {HERE}) is missing: build from a checkout '
                     f'of the repository or from its sdist, not from a copy of reframe/ alone')


def copy_shipped(package_root):
    '''Copies every SHIPPED folder into <package_root>/yeebench/_shipped/<name>; returns the files.'''
    copied = []
    for name in SHIPPED:
        target = os.path.join(package_root, 'yeebench', SHIPPED_DIR, name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(_source(name), target, ignore=_ignore, symlinks=False)
        copied += [os.path.join(d, f) for d, _, files in os.walk(target) for f in files]
    return copied


class BuildPyWithShipped(build_py):
    '''build_py, plus the SHIPPED folders copied into the package (not for an editable install).'''

    def run(self):
        super().run()
        if not getattr(self, 'editable_mode', False):
            self._shipped = copy_shipped(self.build_lib)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + list(getattr(self, '_shipped', []))


class SdistWithShipped(sdist):
    '''sdist, plus the SHIPPED folders under yeebench/_shipped/, so that a wheel builds from it.'''

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        copy_shipped(base_dir)


# setuptools writes build/ and <name>.egg-info/ beside setup.py: send them to a temporary folder.
_TMP = tempfile.mkdtemp(prefix='yeebench-build-')
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)

setup(
    cmdclass={'build_py': BuildPyWithShipped, 'sdist': SdistWithShipped},
    options={'build': {'build_base': os.path.join(_TMP, 'build')},
             'egg_info': {'egg_base': _TMP}},
)
