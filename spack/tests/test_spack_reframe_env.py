"""yeebench.spack_env: programs come from the active Spack environment's view, or a one-line reason."""

import pytest

from yeebench import spack_env


def make_env(tmp_path, view_setting='true', programs=('yee',)):
    env_dir = tmp_path / 'env'
    env_dir.mkdir()
    (env_dir / 'spack.yaml').write_text(f'spack:\n  specs: [yee]\n  view: {view_setting}\n')
    if view_setting == 'true':
        view = env_dir / '.spack-env' / 'view'
    elif view_setting == 'false':
        view = None
    else:
        view = tmp_path / 'custom-view'
    if view is not None:
        (view / 'bin').mkdir(parents=True)
        for name in programs:
            exe = view / 'bin' / name
            exe.write_text('#!/bin/sh\n')
            exe.chmod(0o755)
    return env_dir, view


def test_program_is_taken_from_the_default_view(tmp_path):
    env_dir, view = make_env(tmp_path)
    env = {'SPACK_ENV': str(env_dir)}
    assert spack_env.locate('yee', env) == str(view / 'bin' / 'yee')
    assert spack_env.missing_reason(['yee'], env) == ''


def test_a_view_path_set_in_spack_yaml_is_honoured(tmp_path):
    env_dir, view = make_env(tmp_path, view_setting=str(tmp_path / 'custom-view'))
    assert spack_env.locate('yee', {'SPACK_ENV': str(env_dir)}) == str(view / 'bin' / 'yee')


def test_missing_program_names_the_view_and_the_fix(tmp_path):
    env_dir, view = make_env(tmp_path, programs=('yee',))
    env = {'SPACK_ENV': str(env_dir)}
    assert spack_env.locate('halo', env) is None
    reason = spack_env.missing_reason(['yee', 'halo'], env)
    assert 'halo' in reason and 'yee' not in reason.split(':')[-1] and 'spack install' in reason
    assert '\n' not in reason


def test_no_active_environment_and_no_view_are_reported(tmp_path):
    assert spack_env.locate('yee', {}) is None
    assert 'spack env activate' in spack_env.missing_reason(['yee'], {})
    env_dir, _ = make_env(tmp_path, view_setting='false')
    assert 'has no view' in spack_env.missing_reason(['yee'], {'SPACK_ENV': str(env_dir)})


def test_a_non_executable_file_is_not_a_program(tmp_path):
    env_dir, view = make_env(tmp_path)
    (view / 'bin' / 'yee').chmod(0o644)
    assert spack_env.locate('yee', {'SPACK_ENV': str(env_dir)}) is None


def test_the_repository_spack_yaml_uses_the_default_view():
    from pathlib import Path
    repo = Path(__file__).resolve().parents[2]
    assert spack_env.view_path(repo) == repo / '.spack-env' / 'view'


@pytest.mark.parametrize('text', ['spack: [unclosed', ''])
def test_unreadable_manifests_mean_no_view(tmp_path, text):
    (tmp_path / 'spack.yaml').write_text(text)
    # An empty manifest falls back to Spack's default (a view); broken YAML means none.
    expected = None if text else tmp_path / '.spack-env' / 'view'
    assert spack_env.view_path(tmp_path) == expected


def write_lock(env_dir, roots):
    '''spack.lock with the given (name, external) roots.'''
    import json
    specs = {f'h{i}': dict({'name': name}, **({'external': {'path': '/usr'}} if external else {}))
             for i, (name, external) in enumerate(roots)}
    (env_dir / 'spack.lock').write_text(json.dumps({
        'roots': [{'hash': h, 'spec': s['name']} for h, s in specs.items()], 'concrete_specs': specs}))


def test_a_half_installed_environment_is_never_used(tmp_path):
    env_dir, view = make_env(tmp_path, programs=('yee', 'affinity'))
    env = {'SPACK_ENV': str(env_dir)}
    write_lock(env_dir, [('yee', False), ('yeebench-microbench', False), ('openmpi', True)])
    (view / '.spack' / 'yee').mkdir(parents=True)
    reason = spack_env.missing_reason(['yee'], env)
    assert 'half-installed' in reason and 'yeebench-microbench' in reason and 'openmpi' not in reason
    (view / '.spack' / 'yeebench-microbench').mkdir()
    assert spack_env.missing_reason(['yee', 'affinity'], env) == ''
