# Copyright The yeebench developers. See the LICENSE file at the top of the repository.
#
# SPDX-License-Identifier: BSD-3-Clause

import glob
import json
import os
import re

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack_repo.yeebench.build_systems.develop import ProjectFolderDevelop

from spack.package import *

# Backends: the solver/src/backends/*/backend.cmake of this repository (a new one needs no edit here).
BACKEND_DIR = os.path.join(os.path.dirname(__file__), *[os.pardir] * 6, "solver", "src", "backends")
BACKENDS = tuple(sorted(os.path.basename(os.path.dirname(p))
                        for p in glob.glob(f"{BACKEND_DIR}/*/backend.cmake")))


class Yee(ProjectFolderDevelop, CMakePackage, CudaPackage):
    """yee: a hybrid MPI + OpenMP 3D FDTD (Yee scheme) Maxwell solver, the application benchmark
    of the yeebench suite. Reports Mcells/s, per-phase timings, energy and checksums as JSON and
    says whether the run is valid. Precision (f32/f64) is a run-time flag, not a variant."""

    homepage = "https://github.com/yeebench/yeebench"
    git = "https://github.com/yeebench/yeebench.git"

    maintainers("yeebench")
    tags = ["benchmark", "hpc"]

    license("BSD-3-Clause")

    # The repository has no release tags yet: a release is a commit on main (immutable, fetched
    # exactly), `main` follows the branch, and `spack develop` (spack.yaml) builds a work tree.
    version("main", branch="main")
    version("0.1.0", commit="7821a06521f810f2d90282dff6192090bb37c75a")

    # Each variant maps to one CMake option; +cuda (CudaPackage) is backend=cuda, cuda_arch its sm.
    variant("backend", default="cpu", values=BACKENDS, description="kernel backend (YEE_BACKEND)")
    requires("+cuda", when="backend=cuda", msg="backend=cuda is +cuda (and cuda_arch)")
    requires("backend=cuda", when="+cuda", msg="+cuda builds the cuda backend")
    variant("hdf5", default=True, description="HDF5 field output with parallel HDF5 (YEE_HDF5)")
    variant("sanitize", default=False, description="ASan + UBSan instrumentation (YEE_SANITIZE)")
    conflicts("+sanitize", when="+cuda", msg="the sanitizers are for the cpu backend")
    conflicts("cuda_arch=none", when="+cuda", msg="give cuda_arch=<sm>, e.g. cuda_arch=90 for H100")
    conflicts("%apple-clang", msg="Apple Clang has no OpenMP; use GCC or LLVM Clang")  # FindOpenMP

    depends_on("c", type="build")  # solver/cmake/hdf5.cmake: FindHDF5 probes with a C program
    depends_on("cxx", type="build")
    depends_on("cmake@3.19:", type="build")  # string(JSON): traits.json
    depends_on("mpi")
    depends_on("hdf5+mpi", when="+hdf5")
    depends_on("python@3.8:", type="test")  # the ctest verification scripts

    root_cmakelists_dir = "solver"

    @property
    def binary(self):
        """The executable: the `program` of the backend's traits.json (src/backends/README.md)."""
        backend = self.spec.variants["backend"].value
        with open(join_path(BACKEND_DIR, backend, "traits.json")) as f:
            return json.load(f)["program"]

    def target_march(self):
        """The -march Spack's compiler wrapper adds, passed on so the report's build flags show it."""
        found = re.search(r"-march=(\S+)", microarchitecture_flags(self.spec, "cxx"))
        return found.group(1) if found else ""

    def cmake_args(self):
        args = [
            self.define("YEE_BACKEND", self.spec.variants["backend"].value),
            self.define("YEE_HDF5", "ON" if self.spec.satisfies("+hdf5") else "OFF"),
            self.define_from_variant("YEE_SANITIZE", "sanitize"),
            self.define("YEE_MARCH", self.target_march()),
            self.define("YEE_TESTS", self.run_tests),
        ]
        if self.spec.satisfies("+cuda"):
            args.append(self.define_from_variant("CMAKE_CUDA_ARCHITECTURES", "cuda_arch"))
        return args

    def check(self):
        """`spack install --test=root yee`: the verification suite (cavity modes, energy, invariance).
        The tests labelled robustness (signals, full disks, bad input) check source logic a second
        build does not change; the source tree's own ctest runs them."""
        with working_dir(self.build_directory):
            ctest("-LE", "robustness", "--output-on-failure", "--no-tests=error")

    def test_small_cavity(self):
        """run a 16^3 cavity for 5 steps and check the solver reports it valid"""
        if self.spec.satisfies("+cuda") and not which("nvidia-smi"):
            raise SkipTest("yee-cuda needs an NVIDIA GPU (no nvidia-smi here)")
        yee = which(join_path(self.prefix.bin, self.binary))
        out = yee("--nx", "16", "--ny", "16", "--nz", "16", "--steps", "5", "--quiet", output=str)
        assert '"valid": true' in out, f"yee did not report a valid run: {out[:200]}"

    def test_rejects_courant_violation(self):
        """a Courant number above 1/sqrt(3) is refused with exit status 2"""
        yee = which(join_path(self.prefix.bin, self.binary))
        yee("--nx", "8", "--ny", "8", "--nz", "8", "--courant", "0.9", fail_on_error=False,
            output=str, error=str)
        assert yee.returncode == 2, f"yee --courant 0.9 exited {yee.returncode}, expected 2"
