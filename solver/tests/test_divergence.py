"""Gauss's law: in a source-free run started from divergence-free cavity modes, the
discrete divergence of E (backward differences at interior nodes) stays at round-off;
a divergent start (a Gaussian Ez pulse) shows the check can fail. The Courant limit is
enforced (1/sqrt(3) accepted, anything above rejected)."""
import math
import sys

from yee_testlib import check, finish, report, run

STEPS = 100 if "--small" in sys.argv else 400
for ranks in (1, 2):
    rep = report(["--nx", 18, "--ny", 14, "--nz", 12, "--steps", STEPS, "--precision", "f64", "--source", "none",
                  "--init-mode", "TM110+TE101+TE011+TM210"], ranks=ranks)
    ratio = rep["div_e_max"] / rep["e_max"]
    check(rep["e_max"] > 0.1 and ratio <= 1e-12,
          "ranks=%d: max|div E|/max|E| = %.2e <= 1e-12 after %d steps" % (ranks, ratio, STEPS))

rep = report(["--n", 14, "--steps", 50, "--precision", "f64", "--source", "none", "--init-mode", "pulse"])
check(rep["div_e_max"] / rep["e_max"] > 1e-3, "a non-solenoidal start is detected (%.2e)" % (rep["div_e_max"] / rep["e_max"]))

rep = report(["--n", 10, "--steps", 20, "--courant", repr(1 / math.sqrt(3)), "--source", "none", "--init-mode", "TM110"])
check(rep["valid"] and abs(rep["courant"] - 1 / math.sqrt(3)) < 1e-15, "Courant number 1/sqrt(3) is accepted")
rc, out, err = run(["--n", 10, "--steps", 20, "--courant", "0.5774"])
check(rc == 2 and err.startswith("yee: error: --courant") and "stability limit" in err and out == "",
      "Courant 0.5774 > 1/sqrt(3) is rejected with exit 2: %r" % err.strip())
finish()
