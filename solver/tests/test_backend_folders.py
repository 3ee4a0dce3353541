"""A backend is one folder: a copy of the solver with one more folder src/backends/dummy/
(a backend.cmake naming its kernels.cpp, a traits.json) and no other file changed must configure with
-DYEE_BACKEND=dummy (the dummy's sources compiled, the wavefront stand-in linked, the
binary named yee-dummy), be offered in the error for an unknown backend, and get make
targets from solver/solver.mk. The same copy without the folder must refuse the backend, and
so must the folder without a valid traits.json (the check can fail)."""
import json
import os
import shutil
import subprocess
import sys

from yee_testlib import check, finish, scratch_dir

CMAKE = os.environ.get("YEE_CMAKE", "cmake")
SOLVER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tmp = scratch_dir("yee-backend-")
root = os.path.join(tmp, "repo")
copy = os.path.join(root, "solver")
shutil.copytree(SOLVER, copy, ignore=shutil.ignore_patterns("build*", "__pycache__"))
dummy = os.path.join(copy, "src", "backends", "dummy")


def configure(backend, build):
    return subprocess.run([CMAKE, "-S", copy, "-B", os.path.join(tmp, build), "-DYEE_BACKEND=" + backend,
                           "-DYEE_TESTS=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          capture_output=True, text=True, timeout=300)


before = configure("dummy", "before")
check(before.returncode != 0 and "no src/backends/dummy/backend.cmake" in before.stderr,
      "without the folder, YEE_BACKEND=dummy is refused")

os.mkdir(dummy)
shutil.copy(os.path.join(copy, "src", "backends", "cpu", "kernels.cpp"), dummy)
with open(os.path.join(dummy, "backend.cmake"), "w") as f:
    f.write("# A test backend: the CPU kernels without the wavefront kernel.\n"
            "set(YEE_BACKEND_SOURCES kernels.cpp)\n")

unknown = configure("nope", "unknown")
check(unknown.returncode != 0 and "backends: cpu, cuda, dummy)" in " ".join(unknown.stderr.split()),
      "an unknown backend is refused with the list that includes the new folder")

no_traits = configure("dummy", "no-traits")
check(no_traits.returncode != 0 and "traits.json is missing" in " ".join(no_traits.stderr.split()),
      "a backend folder without traits.json is refused")
traits = {"device": "tpu", "language": "cxx", "build_tool": "cmake", "program": "yee-dummy",
          "kernels": ["fused", "split"], "run_options": []}
with open(os.path.join(dummy, "traits.json"), "w") as f:
    json.dump(traits, f)
bad = configure("dummy", "bad-traits")
check(bad.returncode != 0 and "not cpu or gpu" in bad.stderr, "traits.json with an unknown device is refused")
with open(os.path.join(dummy, "traits.json"), "w") as f:
    json.dump({**traits, "device": "cpu"}, f)

after = configure("dummy", "after")
check(after.returncode == 0, "YEE_BACKEND=dummy configures: " + after.stderr.strip()[-500:])
if after.returncode == 0:
    with open(os.path.join(tmp, "after", "compile_commands.json")) as f:
        sources = {os.path.relpath(e["file"], copy) for e in json.load(f)}
    check("src/backends/dummy/kernels.cpp" in sources, "the dummy's kernels.cpp is compiled")
    check("src/time_block_none.cpp" in sources, "a backend without the wavefront kernel (traits.json) gets the stand-in")
    check(not any(s.startswith("src/backends/cpu/") for s in sources), "no cpu backend source is compiled")
    with open(os.path.join(tmp, "after", "CMakeFiles", "yee.dir", "link.txt")) as f:
        check("-o yee-dummy " in f.read(), "the binary is named yee-dummy")

# solver/solver.mk, included alone from the copy's root, defines the dummy's targets.
make = subprocess.run(["make", "-n", "-p", "-f", "solver/solver.mk", "BUILD=b", "PREFIX=p", "JOBS=1",
                       "build-solver-dummy"], cwd=root, capture_output=True, text=True, timeout=120)
check(make.returncode == 0 and "-DYEE_BACKEND=dummy" in make.stdout,
      "make build-solver-dummy configures the dummy backend: " + make.stderr.strip()[-300:])
targets = [l for l in make.stdout.splitlines() if l.startswith("TEST_TARGETS")]
check(any("test-solver-dummy-build" in l for l in targets), "make test runs test-solver-dummy-build")

shutil.rmtree(tmp, ignore_errors=True)
finish()
