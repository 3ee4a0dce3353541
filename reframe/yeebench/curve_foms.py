"""Point-to-point figures of merit from one measured curve (NetPIPE or OSU), as plain numbers.

Kept out of the check classes so they can be tested on recorded output.  Each FOM is
(name, value, unit, direction), in the order a check declares them.

Besides the curve's summary (latencies at 1 B and 4 KB, fit, peak) a check records the curve itself:
one figure per measured message size, `<family>_<bytes>B` (SIZE_FAMILIES), so that the gate can judge
each size (a slower protocol at 64 KiB moves no summary figure).  The results tools find a curve's
sizes by `parse_size_metric`, the one reader of these names.
"""
import re

from yeebench import fits

#: bw_large covers the sizes >= max_size / LARGE_FRACTION.
LARGE_FRACTION = 4

#: Latency FOMs: (name, message size in bytes).
LATENCY_SIZES = (('latency_1B', 1), ('latency_4KB', 4096))


def curve_foms(sizes, latency_us=None, bandwidth=None, peak_name='peak_bw', max_size=None):
    '''FOMs from a latency curve (us per message) and/or a bandwidth curve (MB/s).

    peak_name: name of the peak-bandwidth FOM (None: no peak, e.g. for a ping-pong's derived
    bandwidth); its large-message twin (`bw_large`, `bibw_large`) is the best bandwidth among
    sizes >= max_size / 4 (default max_size: the largest size measured).  A latency at a size
    outside the measured curve is left out, never extrapolated.
    '''
    foms = []
    if latency_us:
        for name, size in LATENCY_SIZES:
            try:
                foms.append((name, fits.interpolate(sizes, latency_us, size), 'us', 'lower'))
            except fits.FitError:
                pass
        positive = [(n, t) for n, t in zip(sizes, latency_us) if n > 0]
        alpha, beta = fits.hockney_fit([n for n, _ in positive], [t for _, t in positive])
        foms.append(('hockney_alpha', alpha, 'us', 'lower'))
        foms.append(('hockney_beta', beta * 1e3, 'ns/B', 'lower'))
        if bandwidth is None:   # ping-pong: one message of n bytes per one-way time
            bandwidth = [n / t if t > 0 else 0.0 for n, t in zip(sizes, latency_us)]
            peak_name = None
    if bandwidth:
        if peak_name:
            foms.append((peak_name, max(bandwidth), 'MB/s', 'higher'))
            large_from = (max_size or max(sizes)) / LARGE_FRACTION
            foms.append((large_name(peak_name), fits.best_at_or_above(sizes, bandwidth, large_from),
                         'MB/s', 'higher'))
        foms.append(('n_half', fits.n_half(sizes, bandwidth), 'B', 'lower'))
    return foms


def large_name(peak_name):
    '''peak_bw -> bw_large, peak_bibw -> bibw_large.'''
    return peak_name[len('peak_'):] + '_large' if peak_name.startswith('peak_') else peak_name + '_large'


def curve_values(curve, peak_name='peak_bw', max_size=None):
    '''{name: value} of `curve_foms` for a measured curve with latency and bandwidth (a NetPIPE run:
    yeebench.parsers.netpipe.Curve), for checks that report a few of the figures under their own names.'''
    return {name: value for name, value, _, _ in
            curve_foms(curve.sizes, curve.latency_us, curve.bandwidth, peak_name, max_size)}


#: Figure families recorded at every measured size: name -> (unit, direction, what it is).
#: curve_latency/curve_bw: point-to-point (OSU, NetPIPE); latency/efficiency: the collectives' per-size
#: figures (OsuCollective records latency_<n>B and efficiency_<n>B).  A family is a curve where a case
#: holds three or more of its sizes (results/curve_gate.py): a lone latency_1B (point-to-point's
#: interpolated summary) is not one.
SIZE_FAMILIES = {
    'curve_latency': ('us', 'lower', 'one-way latency at each measured message size'),
    'curve_bw': ('MB/s', 'higher', 'bandwidth at each measured message size'),
    'latency': ('us', 'lower', 'time per collective call at each message size'),
    'efficiency': ('%', 'higher', 'lower bound / measured collective time at each message size'),
}
_SIZE_METRIC = re.compile(r'(' + '|'.join(sorted(SIZE_FAMILIES, key=len, reverse=True)) + r')_(\d+)B')


def size_metric(family, size):
    """The figure name of `family` at `size` bytes: curve_latency_65536B."""
    return f'{family}_{int(size)}B'


def parse_size_metric(name):
    """(family, size in bytes) of a per-size figure name; None for any other name."""
    found = _SIZE_METRIC.fullmatch(name or '')
    return (found.group(1), int(found.group(2))) if found else None


def size_foms(sizes, latency_us=None, bandwidth=None):
    """One FOM per measured size: curve_latency_<n>B (us) and/or curve_bw_<n>B (MB/s), in size order.

    Only what was measured: a ping-pong's bandwidth is its latency's inverse and adds no figure.  A size
    measured twice keeps its first value (one figure per name); a negative size is not a message.  Only
    0 and the powers of two become figures: NetPIPE also measures 3 bytes either side of each (about 260
    sizes up to 4 MiB), which the plots keep but which would make every NetPIPE case ten times as many
    figures to store, gate and export as an OSU case, for sizes no other benchmark measures."""
    foms, seen = [], set()
    for family, values in (('curve_latency', latency_us), ('curve_bw', bandwidth)):
        if not values:
            continue
        unit, direction, _ = SIZE_FAMILIES[family]
        for size, value in zip(sizes, values):
            standard = size >= 0 and int(size) == size and not int(size) & (int(size) - 1)
            name = size_metric(family, size) if standard else None
            if name is None or name in seen:
                continue
            seen.add(name)
            foms.append((name, value, unit, direction))
    return foms
