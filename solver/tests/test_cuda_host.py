"""Host-side checks of the CUDA build (run in CI, which has nvcc but no GPU):
  - the binary says it is the CUDA backend and documents its flags;
  - it carries device code for every CMAKE_CUDA_ARCHITECTURES entry (sm code, and PTX
    for a virtual one, the JIT fallback of newer GPUs);
  - bad CUDA flags are usage errors (exit 2, one line);
  - without a GPU, a run fails cleanly: exit 1, one line naming the cause, no report,
    no hang, on one rank and on several.
Environment: YEE_BIN (the CUDA build's yee), YEE_CUDA_ARCHS (CMake's list, e.g. "90")."""
import os

from cuda_testlib import fatbin_entries, gpu_listing
from yee_testlib import YEE, check, finish, run

# Identity and documentation.
rc, out, _ = run(["--version"])
check(rc == 0 and "backend cuda" in out, "--version names the cuda backend: %r" % out.strip())
rc, out, _ = run(["--help"])
check(rc == 0 and "--gpu-per-rank" in out and "--cuda-aware" in out, "--help documents --gpu-per-rank and --cuda-aware")

# Device code for each requested architecture: "90" = sm_90 code + compute_90 PTX,
# "90-real" = code only, "90-virtual" = PTX only.
entries = fatbin_entries(YEE)
check(len(entries) > 0, "the binary embeds a CUDA fat binary (%d entries)" % len(entries))
for spec in os.environ.get("YEE_CUDA_ARCHS", "90").replace(",", ";").split(";"):
    arch, _, kind = spec.partition("-")
    if not arch.isdigit():
        continue
    if kind in ("", "real"):
        check(("sass", int(arch)) in entries, "sm_%s code present for CMAKE_CUDA_ARCHITECTURES=%s" % (arch, spec))
    if kind in ("", "virtual"):
        check(("ptx", int(arch)) in entries, "compute_%s PTX present for CMAKE_CUDA_ARCHITECTURES=%s" % (arch, spec))

# Usage errors are decided before any device is touched.
for args, needle in ((["--cuda-aware", "maybe"], "--cuda-aware: 'maybe' is not one of auto|on|off"),
                     (["--cuda-aware"], "--cuda-aware needs a value"),
                     (["--gpu-per-rank=yes"], "--gpu-per-rank takes no value"),
                     (["--kernel", "blocked"], "--kernel: 'blocked' is not one of fused|split|wavefront")):
    rc, out, err = run(["--nx", 8, "--ny", 8, "--nz", 8, "--steps", 1] + args)
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and lines[0].startswith("yee: error: ") and needle in lines[0] and not out,
          "%s: exit 2 with one line containing %r (got %d: %r)" % (" ".join(args), needle, rc, err.strip()[:200]))

has_gpu, why = gpu_listing()
if has_gpu:
    print("skip  no-GPU error paths: this machine has a GPU (%s)" % why[0])
else:
    print("info  no GPU here (%s): checking the no-device error path" % why)
    for ranks in (1, 2):
        rc, out, err = run(["--nx", 8, "--ny", 8, "--nz", 8, "--steps", 2, "--cuda-aware", "off", "--quiet"],
                           ranks=ranks, timeout=120)
        errs = [line for line in err.strip().splitlines() if line.startswith("yee: error: ")]
        check(rc == 1 and len(errs) == 1 and "no usable GPU" in errs[0] and '"schema"' not in out,
              "ranks=%d without a GPU: exit 1 (got %d), one error line naming the cause (%r), no report" % (
                  ranks, rc, errs[:2]))
    rc, _, err = run(["--nx", 8, "--ny", 8, "--nz", 8, "--steps", 2, "--gpu-per-rank", "--quiet"], ranks=2)
    check(rc == 1 and "yee: error: " in err, "--gpu-per-rank without a GPU: exit 1 (got %d)" % rc)
finish()
