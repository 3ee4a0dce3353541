"""Energy conservation in the closed PEC box without a source: the staggered discrete
energy sum(|E^n|^2 + H^{n-1/2}.H^{n+1/2})/2 is conserved by the Yee scheme; relative
drift over >= 1000 steps must stay <= 1e-10 (f64) and <= 1e-5 (f32)."""
from yee_testlib import check, finish, report, without_missing_kernels

STEPS = 1200


def drift(rep):
    series = [w for _, w in rep["energy_series"]]
    w0 = series[0]
    return max(abs(w - w0) for w in series) / w0, w0, len(series)


CASES = [("f64", 1e-10, 1, "fused"), ("f32", 1e-5, 1, "fused"), ("f64", 1e-10, 2, "split"),
         ("f32", 1e-5, 3, "fused"), ("f64", 1e-10, 2, "wavefront")]
for precision, tol, ranks, kernel in without_missing_kernels(CASES, lambda case: ["--kernel", case[3]]):
    rep = report(["--nx", 20, "--ny", 18, "--nz", 16, "--steps", STEPS, "--precision", precision,
                  "--source", "none", "--init-mode", "pulse", "--source-pos", "7,9,5", "--energy-every", 10,
                  "--kernel", kernel], ranks=ranks)
    d, w0, n = drift(rep)
    check(w0 > 1.0 and n >= STEPS // 10,
          "%s ranks=%d: energy diagnosed %d times, initial energy %.6g" % (precision, ranks, n, w0))
    check(d <= tol, "%s ranks=%d %s: relative energy drift %.3e over %d steps <= %g" % (
        precision, ranks, kernel, d, STEPS, tol))

# The diagnostic can fail: with a source the energy must change.
rep = report(["--n", 16, "--steps", 200, "--precision", "f64", "--energy-every", 10])
ws = [w for _, w in rep["energy_series"]]
d = (max(ws) - min(ws)) / max(ws)
check(d > 0.5, "with a source the energy changes (by %.3g of its maximum), so the check can fail" % d)
finish()
