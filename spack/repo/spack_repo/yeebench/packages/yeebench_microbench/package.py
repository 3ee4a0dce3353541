# yeebench recipe for the placement, NUMA and halo probes (microbench/ in the yeebench repository).
#
# SPDX-License-Identifier: BSD-3-Clause

from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class YeebenchMicrobench(CMakePackage):
    """yeebench microbenchmarks: `affinity` (where every rank and thread runs), `numa-bw`
    (STREAM-style bandwidth under a memory policy, with page-placement verification) and `halo`
    (the solver's 6-face MPI halo exchange alone). Each prints one JSON object."""

    tags = ["benchmark", "hpc"]
    homepage = "https://github.com/yeebench/yeebench"
    git = "https://github.com/yeebench/yeebench.git"

    license("BSD-3-Clause")

    # `main` follows the branch; with `spack develop` (see spack.yaml) it builds the local work tree.
    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    # Each variant maps to one CMake option of microbench/CMakeLists.txt.
    variant(
        "native",
        default=False,
        description="Compile with -march=native (MICROBENCH_NATIVE); off: Spack's target flags",
    )
    variant(
        "sanitize",
        default=False,
        description="Build with AddressSanitizer + UndefinedBehaviorSanitizer (MICROBENCH_SANITIZE)",
    )

    depends_on("c", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("mpi")
    # OpenMP threads inside each rank; the probes use raw Linux syscalls, not libnuma.
    requires("%gcc", "%clang", "%oneapi", policy="one_of", msg="the probes need OpenMP")
    requires("platform=linux", msg="the probes read Linux affinity and NUMA state")

    # The CMake project lives in a sub-folder of the repository.
    root_cmakelists_dir = "microbench"

    def cmake_args(self):
        return [
            self.define_from_variant("MICROBENCH_NATIVE", "native"),
            self.define_from_variant("MICROBENCH_SANITIZE", "sanitize"),
            self.define("MICROBENCH_TESTS", self.run_tests),
        ]

    def check(self):
        with working_dir(self.build_directory):
            ctest("--output-on-failure")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def smoke_run(self):
        affinity = Executable(self.prefix.bin.affinity)
        affinity("--format", "json", output=str)
