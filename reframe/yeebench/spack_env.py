"""Binaries from an activated Spack environment (spack.yaml at the repository root).

    spack env activate . && spack concretize -f && spack install
    reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R -p spack --mode smoke -r

In the `spack` programming environment the checks must run what `spack install` built, never a
CMake build of the work tree: `locate()` answers from the environment's view only (the folder named
by spack.yaml's `view:`; `view: true` means <env>/.spack-env/view), and `missing_reason()` says in
one line why a program is not there, or that the environment is half-installed (a package spack.lock
lists as a root is not in the view: Spack links only installed packages into it).
"""
import json
import os
from pathlib import Path

import yaml


def active_environment(env=None):
    '''Folder of the active Spack environment ($SPACK_ENV), or None.'''
    env = os.environ if env is None else env
    path = env.get('SPACK_ENV')
    return Path(path) if path and Path(path).is_dir() else None


def view_path(env_dir):
    '''The default view's root folder of the environment in `env_dir`, or None when views are off.'''
    manifest = Path(env_dir) / 'spack.yaml'
    try:
        view = (yaml.safe_load(manifest.read_text()) or {}).get('spack', {}).get('view', True)
    except (OSError, yaml.YAMLError):
        return None
    if view is True:
        return Path(env_dir) / '.spack-env' / 'view'
    if isinstance(view, str):
        return Path(view)
    if isinstance(view, dict) and view:
        default = view.get('default') or next(iter(view.values()))
        root = default.get('root') if isinstance(default, dict) else None
        return Path(root) if root else None
    return None


def locate(program, env=None):
    '''Absolute path of `program` in the active environment's view, or None.'''
    env_dir = active_environment(env)
    view = view_path(env_dir) if env_dir else None
    if view is None:
        return None
    candidate = view / 'bin' / program
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def not_in_view(env_dir, view):
    '''Names of spack.lock's roots built by Spack (not externals) that the view does not hold.'''
    try:
        lock = json.loads((Path(env_dir) / 'spack.lock').read_text())
        specs = lock['concrete_specs']
        roots = [specs[root['hash']] for root in lock['roots']]
    except (OSError, ValueError, KeyError, TypeError):
        return []  # not concretized: the programs' presence decides
    return sorted(s['name'] for s in roots
                  if 'external' not in s and not (Path(view) / '.spack' / s['name']).is_dir())


def missing_reason(programs, env=None):
    '''One line saying why some of `programs` cannot be taken from Spack ('' when all are there).'''
    env_dir = active_environment(env)
    if env_dir is None:
        return 'no active Spack environment (run `spack env activate .` in the repository first)'
    view = view_path(env_dir)
    if view is None:
        return f'the Spack environment {env_dir} has no view (set `view: true` in its spack.yaml)'
    absent = not_in_view(env_dir, view)
    if absent:
        return (f'the Spack environment {env_dir} is half-installed: {", ".join(absent)} from spack.lock '
                f'not in its view (run `spack -e {env_dir} install`)')
    missing = [p for p in programs if locate(p, env) is None]
    if missing:
        return (f'not in the Spack view {view}/bin: {", ".join(missing)} '
                f'(run `spack install` in {env_dir})')
    return ''
