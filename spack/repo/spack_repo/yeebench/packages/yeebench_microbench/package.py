# Copyright The yeebench developers. See the LICENSE file at the top of the repository.
#
# SPDX-License-Identifier: BSD-3-Clause

import json

from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack_repo.yeebench.build_systems.develop import ProjectFolderDevelop

from spack.package import *


class YeebenchMicrobench(ProjectFolderDevelop, CMakePackage):
    """yeebench microbenchmarks: `affinity` (where every rank and thread runs), `numa-bw`
    (STREAM-style bandwidth under a memory policy, with page-placement verification) and `halo`
    (the solver's 6-face MPI halo exchange alone). Each prints one JSON object."""

    homepage = "https://github.com/yeebench/yeebench"
    git = "https://github.com/yeebench/yeebench.git"

    maintainers("yeebench")
    tags = ["benchmark", "hpc"]

    license("BSD-3-Clause")

    # No release tags yet: a release is a commit on main, `main` follows the branch (see yee).
    version("main", branch="main")
    version("0.1.0", commit="7821a06521f810f2d90282dff6192090bb37c75a")

    # Each variant maps to one CMake option of microbench/CMakeLists.txt.
    variant("native", default=False, description="-march=native (MICROBENCH_NATIVE); off: Spack's target")
    variant("sanitize", default=False, description="ASan + UBSan instrumentation (MICROBENCH_SANITIZE)")
    conflicts("%apple-clang", msg="Apple Clang has no OpenMP; use GCC or LLVM Clang")
    requires("platform=linux", msg="the probes read Linux affinity and NUMA state")

    depends_on("c", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("mpi")  # its mpirun also runs the multi-rank probe tests
    # The probe tests (ctest): a Python driver that checks placements against numactl's view.
    depends_on("python@3.8:", type="test")
    depends_on("numactl", type="test")

    root_cmakelists_dir = "microbench"

    def cmake_args(self):
        return [
            self.define_from_variant("MICROBENCH_NATIVE", "native"),
            self.define_from_variant("MICROBENCH_SANITIZE", "sanitize"),
            self.define("MICROBENCH_TESTS", self.run_tests),
        ]

    def check(self):
        """`spack install --test=root`: unit tests and the probe tests on this machine."""
        with working_dir(self.build_directory):
            ctest("--output-on-failure", "--no-tests=error")

    def run_json(self, program, *args):
        out = which(join_path(self.prefix.bin, program))(*args, output=str)
        return json.loads(out)

    def test_affinity(self):
        """affinity reports one placement per thread, each on a CPU of its own CPU set"""
        doc = self.run_json("affinity", "--format", "json")
        assert doc["ranks"] == 1 and len(doc["placement"]) == doc["threads_per_rank"] >= 1
        for p in doc["placement"]:
            assert p["cpu"] in p["cpus"], f"thread on CPU {p['cpu']} outside its set {p['cpus']}"

    def test_numa_bw(self):
        """numa-bw validates its triad over 4 MiB arrays and reports a positive bandwidth"""
        doc = self.run_json("numa-bw", "--size", "4Mi", "--repeats", "3", "--sample-pages", "16")
        assert doc.get("valid") is True, f"numa-bw result not valid: {doc}"
        assert doc["kernels"]["triad"]["best_gbs"] > 0, f"no triad bandwidth: {doc['kernels']}"

    def test_halo(self):
        """halo on one rank exchanges with nobody (walls) and validates"""
        doc = self.run_json("halo", "--sizes", "8", "--iterations", "5", "--warmup", "1")
        assert doc.get("valid") is True, f"halo result not valid: {doc}"
