"""Programming environments (features are documented in reframe/README.md).

host   the machine's own toolchain: gcc/g++ through Open MPI's wrappers, OpenMP, CMake
       (Debian: build-essential openmpi-bin libopenmpi-dev cmake).
spack  binaries from an activated Spack environment (spack.yaml at the repository root):
       yee, the probes, OSU and Open MPI on PATH; same compiler wrappers.
"""
_COMMON_FEATURES = ['mpi', 'openmpi', 'openmp', 'cmake']

environments = [
    {
        'name': 'host',
        'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpifort',
        'features': _COMMON_FEATURES + ['host-toolchain'],
    },
    {
        'name': 'spack',
        'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpifort',
        'features': _COMMON_FEATURES + ['spack'],
        # Run reframe inside `spack env activate <repo>` so PATH holds the environment's view.
        'env_vars': [['YEEBENCH_BINARY_SOURCE', 'spack']],
    },
]
