"""Lower bounds on what OSU's blocking collective benchmarks report, and efficiencies against them.

What OSU measures (OMB 5.x-7.x, c/mpi/collective/blocking/osu_<name>.c): each rank times only
its own call (MPI_Wtime() around MPI_<Coll>()), iterations are separated by an untimed
MPI_Barrier, and "Avg Latency" is the mean over ranks of each rank's mean call time.

Why the textbook alpha-beta bounds do not bound it: those (Chan, Heimlich, Purkayastha and van de
Geijn, "Collective communication: theory, practice, and experience", Concurrency Computat.: Pract.
Exper. 19(13), 2007) bound the time from a simultaneous start to the last rank's completion.  A
barrier releases ranks at different times, so a rank may enter after its data has arrived and
time only a local copy; back-to-back bcasts from one root pipeline that way.  Used as bounds on
OSU's figures they gave "efficiencies" of up to 588% on this suite's machines.

The bound used here is a data-dependency argument on the same per-rank times.  Let L be the last
rank to enter the call, at time E.  A rank j (entered at e_j <= E) whose result needs m bytes
derived from L's input cannot finish before E + T1(m), where T1(m) is the fastest one-way time of
an m-byte message; so j's own time t_j >= E - e_j + T1(m) >= T1(m).
  allreduce  every result element depends on every input: the p-1 ranks other than L each
             receive >= n bytes derived from L's input           -> mean >= (p-1)/p * T1(n)
  alltoall   every rank receives its n-byte block from L          -> mean >= (p-1)/p * T1(n)
  bcast      only the root's input matters and the root may enter first: no rank need wait,
             so OSU's mean has no positive bound and bcast gets no efficiency figure.
T1(n) comes from osu_latency (half a round trip) run several times before the collective, on the
fastest path the collective uses: the minimum over repeats at each size, or the alpha-beta line
fitted to those minima where it is lower (the fit may pass below a noisy point).
"""
import math
from dataclasses import dataclass

from yeebench import fits

BOUNDED = ('allreduce', 'alltoall')
UNBOUNDED_REASON = {
    'bcast': "no lower bound exists for OSU's per-rank bcast time (a receiver entering after the "
             "root's data arrived times only a local copy): no efficiency figure",
}
#: Efficiency above 100% by less than this (or than the ping-pong's own spread) is noise.
NOISE_FLOOR = 0.10


@dataclass
class PingPong:
    """Repeated osu_latency curves: (sizes, one-way times in us) per run."""
    curves: list

    def envelope(self):
        return fits.lower_envelope(self.curves)

    def alpha_beta(self):
        """(alpha_us, beta_us_per_byte) fitted to the minima over repeats, sizes >= 1 B."""
        best = {n: t for n, t in self.envelope().items() if n > 0}
        return fits.hockney_fit(list(best), list(best.values()))

    def one_way_us(self, size):
        """Fastest one-way time of a `size`-byte message (FitError outside the measured sizes)."""
        best = {n: t for n, t in self.envelope().items() if n > 0}
        measured = fits.interpolate(list(best), list(best.values()), size)
        alpha, beta = self.alpha_beta()
        return min(measured, alpha + beta * size)

    def noise(self, size):
        """Relative spread of the repeats at `size` (nearest measured size), at least NOISE_FLOOR."""
        sizes = sorted({n for n, _ in self.envelope().items() if n > 0})
        nearest = min(sizes, key=lambda n: abs(math.log(n) - math.log(max(size, 1)))) if sizes else size
        return max(NOISE_FLOOR, fits.spread(self.curves, nearest))


def lower_bound_us(collective, procs, size, pingpong):
    """Lower bound of OSU's mean per-rank time for one call (us); None where none exists."""
    if collective not in BOUNDED:
        if collective in UNBOUNDED_REASON:
            return None
        raise ValueError(f'no lower bound for collective {collective!r}')
    if procs < 2:
        return 0.0
    return (procs - 1) / procs * pingpong.one_way_us(size)


@dataclass
class Efficiency:
    size: int
    percent: float
    bound_us: float
    measured_us: float
    noise: float

    @property
    def beyond_noise(self):
        return self.percent > 100.0 * (1.0 + self.noise)

    def reason(self, collective):
        return (f'{collective} at {self.size} B took {self.measured_us:.2f} us, below its lower bound '
                f'{self.bound_us:.2f} us: efficiency {self.percent:.0f}% exceeds 100% by more than the '
                f'{100 * self.noise:.0f}% noise of the ping-pong repeats (model: yeebench.checks.collectives.bounds)')


def efficiencies(collective, procs, sizes, latencies_us, pingpong):
    """Efficiency (bound / measured, %) at every size the bound covers."""
    found = []
    for size, t in zip(sizes, latencies_us):
        if t <= 0:
            continue
        try:
            bound = lower_bound_us(collective, procs, size, pingpong)
        except fits.FitError:
            continue        # a size the ping-pong did not cover: no bound measured there
        if bound is None:
            return []
        found.append(Efficiency(size, 100.0 * bound / t, bound, t, pingpong.noise(size)))
    return found
