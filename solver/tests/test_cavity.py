"""PEC cavity resonance: a single discrete eigenmode put in as the initial E field must
ring at the discrete Yee eigenfrequency
    f = 1/(pi dt) asin(c dt sqrt(sum_i sin^2(m_i pi dx/(2 L_i))/dx^2))
to <= 1e-4 relative, and the continuum frequency (c/2) sqrt(sum (m_i/L_i)^2) must be
off by the predicted O((k dx)^2) amount, i.e. the test can tell the two apart."""
import math
import os
import tempfile

from yee_testlib import check, finish, read_probes, report

N = (24, 16, 20)          # non-cubic box (cells; dx = 1)
S = 0.99 / math.sqrt(3)   # default Courant number
STEPS = 800


def measured_omega(x, dt):
    """Frequency of a single sinusoid sampled every dt: x[n+1] + x[n-1] = 2 cos(w dt) x[n]
    holds exactly for A cos(n w dt) + B sin(n w dt); least squares over all samples."""
    num = sum(x[n] * (x[n + 1] + x[n - 1]) for n in range(1, len(x) - 1))
    den = 2.0 * sum(x[n] * x[n] for n in range(1, len(x) - 1))
    return math.acos(num / den) / dt


def crossing_omega(x, dt):
    """Independent cross-check: mean period from zero crossings (coarser, ~1e-3)."""
    zs = []
    for n in range(len(x) - 1):
        if x[n] == 0.0 or (x[n] > 0) != (x[n + 1] > 0):
            zs.append(n + x[n] / (x[n] - x[n + 1]))
    half_periods = (zs[-1] - zs[0]) / (len(zs) - 1)
    return math.pi / (half_periods * dt)


def yee_omega(m):
    s = sum(math.sin(mi * math.pi / (2 * ni)) ** 2 for mi, ni in zip(m, N))
    return 2.0 / S * math.asin(S * math.sqrt(s))


def continuum_omega(m):
    return math.pi * math.sqrt(sum((mi / ni) ** 2 for mi, ni in zip(m, N)))


def predicted_dispersion(m):
    """Second-order relative error of the Yee frequency: -(dx^2/24)(sum k_i^4/k^2 - S^2 k^2)."""
    k = [mi * math.pi / ni for mi, ni in zip(m, N)]
    k2 = sum(ki * ki for ki in k)
    return -(sum(ki ** 4 for ki in k) / k2 - S * S * k2) / 24.0


def run_mode(name, m, field, probe, ranks):
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "probes.csv")
        rep = report(["--nx", N[0], "--ny", N[1], "--nz", N[2], "--steps", STEPS, "--precision", "f64",
                      "--source", "none", "--init-mode", name, "--probe", probe, "--probe-field", field,
                      "--probe-out", csv], ranks=ranks)
        _, cols = read_probes(csv)
    x = cols[0]
    check(max(abs(v) for v in x) > 0.1, "%s: probe %s sees the mode" % (name, field))
    w = measured_omega(x, S)
    w_yee, w_cont = yee_omega(m), continuum_omega(m)
    rel = abs(w - w_yee) / w_yee
    check(rel <= 1e-4, "%s: measured w=%.12f vs discrete Yee %.12f, rel %.2e <= 1e-4" % (name, w, w_yee, rel))
    rel_x = abs(crossing_omega(x, S) - w_yee) / w_yee
    check(rel_x <= 2e-3, "%s: zero-crossing estimate agrees, rel %.2e <= 2e-3" % (name, rel_x))
    cont = (w_yee - w_cont) / w_cont
    pred = predicted_dispersion(m)
    check(abs(w - w_cont) / w_cont > 10 * 1e-4 or abs(cont) > 10 * rel,
          "%s: continuum formula is off by %.3e, distinguishable from the measurement (err %.1e)" % (name, cont, rel))
    check(abs(cont - pred) <= 0.05 * abs(pred),
          "%s: continuum offset %.4e matches the O((k dx)^2) prediction %.4e within 5%%" % (name, cont, pred))
    check(rep["valid"], "%s: report valid" % name)


# TM110: Ez only (probe Ez); TE101: Ey only (probe Ey); TM210 on 2 ranks (decomposed).
run_mode("TM110", (1, 1, 0), "Ez", "7,5,9", ranks=1)
run_mode("TE101", (1, 0, 1), "Ey", "7,5,6", ranks=1)
run_mode("TM210", (2, 1, 0), "Ez", "5,6,3", ranks=2)
finish()
