"""A `local`-scheduler partition runs its jobs on this machine, so the MPI it has is the one whose
`mpirun --version` answers here; a partition of any other scheduler, or one that declares its MPI,
is taken at its word."""
from types import SimpleNamespace

import pytest

from yeebench import capabilities


def stand_in_mpirun(folder, answer):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / 'mpirun').write_text(f'#!/bin/sh\necho {answer!r}\n')
    (folder / 'mpirun').chmod(0o755)
    return str(folder)


def partition(scheduler, extras=None):
    return SimpleNamespace(scheduler=SimpleNamespace(registered_name=scheduler), extras=extras or {},
                           features=['numactl'], fullname=f'site:{scheduler}')


@pytest.mark.parametrize('answer, found', [('mpirun (Open MPI) 4.1.4', 'openmpi'),
                                           ('HYDRA build details:', None), ('', None)])
def test_the_mpi_is_what_mpirun_says_it_is(tmp_path, answer, found):
    assert capabilities.mpi_here(stand_in_mpirun(tmp_path / 'bin', answer)) == found


def test_no_mpirun_is_no_mpi(tmp_path):
    (tmp_path / 'empty').mkdir()
    assert capabilities.mpi_here(str(tmp_path / 'empty')) is None


def test_only_an_undeclared_local_partition_is_filled_in(tmp_path, monkeypatch):
    monkeypatch.setenv('PATH', stand_in_mpirun(tmp_path / 'bin', 'mpirun (Open MPI) 5.0.3') + ':/usr/bin:/bin')
    monkeypatch.setattr(capabilities, '_refused', lambda path: {})
    assert capabilities.partition_extras(partition('local'))['mpi_implementation'] == 'openmpi'
    assert capabilities.partition_extras(partition('local', {'mpi_implementation': 'mpich'}))['mpi_implementation'] == 'mpich'
    assert 'mpi_implementation' not in capabilities.partition_extras(partition('slurm'))
