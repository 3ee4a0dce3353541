# yeebench recipe for the FDTD solver `yee` (solver/ in the yeebench repository).
#
# SPDX-License-Identifier: BSD-3-Clause

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class Yee(CMakePackage, CudaPackage):
    """yee: a hybrid MPI + OpenMP 3D FDTD (Yee scheme) Maxwell solver, the application benchmark
    of the yeebench suite. Reports Mcells/s, per-phase timings, energy and checksums as JSON.
    Precision (f32/f64) is chosen at run time (--precision), so it is not a build variant."""

    tags = ["benchmark", "hpc"]
    homepage = "https://github.com/yeebench/yeebench"
    git = "https://github.com/yeebench/yeebench.git"

    license("BSD-3-Clause")

    # `main` follows the branch; with `spack develop` (see spack.yaml) it builds the local work tree.
    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    # Each variant maps to one CMake option of solver/CMakeLists.txt (and its cmake/*.cmake):
    # +cuda -> YEE_BACKEND=cuda (else cpu), cuda_arch -> CMAKE_CUDA_ARCHITECTURES (CudaPackage).
    variant("hdf5", default=True, description="HDF5 field output, parallel HDF5 (YEE_HDF5)")
    variant(
        "sanitize",
        default=False,
        description="Build with AddressSanitizer + UndefinedBehaviorSanitizer (YEE_SANITIZE)",
    )
    conflicts("+sanitize", when="+cuda", msg="the sanitizers are for the cpu backend")
    conflicts("cuda_arch=none", when="+cuda", msg="give cuda_arch=<sm>, e.g. cuda_arch=90 for H100")

    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("mpi")
    depends_on("hdf5+mpi", when="+hdf5")
    # OpenMP is required by the solver (threads inside each rank); GCC and Clang provide it.
    requires("%gcc", "%clang", "%oneapi", policy="one_of", msg="yee needs a compiler with OpenMP")

    # The CMake project lives in a sub-folder of the repository.
    root_cmakelists_dir = "solver"

    def cmake_args(self):
        args = [
            self.define("YEE_BACKEND", "cuda" if self.spec.satisfies("+cuda") else "cpu"),
            self.define("YEE_HDF5", "ON" if self.spec.satisfies("+hdf5") else "OFF"),
            self.define_from_variant("YEE_SANITIZE", "sanitize"),
            # Spack's compiler wrappers already pass the target's -march: no second one from CMake.
            self.define("YEE_MARCH", ""),
            self.define("YEE_TESTS", self.run_tests),
        ]
        if self.spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", self.spec.variants["cuda_arch"].value))
        return args

    def check(self):
        # `spack install --test=root yee` runs the solver's verification tests (cavity, energy, invariance).
        with working_dir(self.build_directory):
            ctest("--output-on-failure")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def smoke_run(self):
        yee = Executable(self.prefix.bin.yee)
        yee("--nx", "16", "--ny", "16", "--nz", "16", "--steps", "5", "--quiet", output=str)
