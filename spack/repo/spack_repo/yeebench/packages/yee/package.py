# yeebench recipe for the FDTD solver `yee` (solver/ in the yeebench repository).
#
# SPDX-License-Identifier: BSD-3-Clause

from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class Yee(CMakePackage):
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

    # Each variant maps to one CMake option of solver/CMakeLists.txt.
    variant(
        "backend",
        default="cpu",
        values=("cpu",),
        multi=False,
        description="Kernel backend, one folder in solver/src/backends/ (YEE_BACKEND; cuda later)",
    )
    variant(
        "sanitize",
        default=False,
        description="Build with AddressSanitizer + UndefinedBehaviorSanitizer (YEE_SANITIZE)",
    )

    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("mpi")
    # OpenMP is required by the solver (threads inside each rank); GCC and Clang provide it.
    requires("%gcc", "%clang", "%oneapi", policy="one_of", msg="yee needs a compiler with OpenMP")

    # The CMake project lives in a sub-folder of the repository.
    root_cmakelists_dir = "solver"

    def cmake_args(self):
        return [
            self.define_from_variant("YEE_BACKEND", "backend"),
            self.define_from_variant("YEE_SANITIZE", "sanitize"),
            # Spack's compiler wrappers already pass the target's -march: no second one from CMake.
            self.define("YEE_MARCH", ""),
            self.define("YEE_TESTS", self.run_tests),
        ]

    def check(self):
        # `spack install --test=root yee` runs the solver's verification tests (cavity, energy, invariance).
        with working_dir(self.build_directory):
            ctest("--output-on-failure")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def smoke_run(self):
        yee = Executable(self.prefix.bin.yee)
        yee("--nx", "16", "--ny", "16", "--nz", "16", "--steps", "5", "--quiet", output=str)
