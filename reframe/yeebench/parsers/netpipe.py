"""NetPIPE output: the `-o np.out` file and the per-size lines on stderr.

np.out columns: bytes, throughput in NetPIPE "Mbps" (2^20 bits/s), one-way time in seconds.
stderr lines:   '  3:       4 bytes 430600 times -->     86.22 Mbps in       0.35 usec'.
Both are converted to SI: bandwidth in MB/s (10^6 bytes/s), latency in us.

Every check reads NetPIPE through `curve` / `curves` (a Curve: sizes, latency_us, bandwidth) and
takes its figures from yeebench.curve_foms.curve_foms; `parse_np_out` and `parse_stderr`
are the row readers beneath them.
"""
import re
from dataclasses import dataclass

from yeebench.parsers import ParseError

MBPS_TO_MBS = 2 ** 20 / 8 / 1e6    # NetPIPE Mbps -> MB/s (SI)

#: Where a NetPIPE run's curve is read from: its `-o` file or its progress lines on stderr.
SOURCES = ('np.out', 'stderr')


def mbps_to_MBs(mbps):
    return mbps * MBPS_TO_MBS


@dataclass(frozen=True)
class Curve:
    """One NetPIPE run, per message size in the order measured."""
    sizes: tuple          # bytes
    latency_us: tuple     # one-way time per message
    bandwidth: tuple      # MB/s (10^6 B/s)

    @classmethod
    def from_rows(cls, rows):
        return cls(tuple(r['bytes'] for r in rows), tuple(r['latency_us'] for r in rows),
                   tuple(r['bandwidth_MBs'] for r in rows))

    def __len__(self):
        return len(self.sizes)

    @property
    def max_size(self):
        return self.sizes[-1]


def curves(text, source='np.out'):
    """Every NetPIPE run in `text` (np.out text or stderr), as Curves in the order run.

    np.out holds one run; stderr holds one per NetPIPE started in the job (e.g. repeated runs):
    a new run starts where NetPIPE's line counter or the message size goes back.
    """
    if source == 'np.out':
        return [Curve.from_rows(parse_np_out(text))]
    if source != 'stderr':
        raise ValueError(f'NetPIPE source {source!r}: one of {", ".join(SOURCES)}')
    runs, current = [], []
    for row in parse_stderr(text):
        if current and (row['line'] <= current[-1]['line'] or row['bytes'] < current[-1]['bytes']):
            runs.append(current)
            current = []
        current.append(row)
    runs.append(current)
    return [Curve.from_rows(run) for run in runs]


def curve(text, source='np.out'):
    """The curve of the one NetPIPE run in `text` (np.out text or stderr); ParseError for several."""
    runs = curves(text, source)
    if len(runs) > 1:
        raise ParseError(f'NetPIPE {source} holds {len(runs)} runs, expected one')
    return runs[0]


def parse_np_out(text):
    """Rows {'bytes', 'bandwidth_MBs', 'latency_us'} from np.out."""
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 3:
            raise ParseError(f'np.out line {n}: expected 3 columns (bytes Mbps seconds), got {line.strip()!r}')
        try:
            size, mbps, seconds = int(fields[0]), float(fields[1]), float(fields[2])
        except ValueError:
            raise ParseError(f'np.out line {n}: not numbers: {line.strip()!r}') from None
        rows.append({'bytes': size, 'bandwidth_MBs': mbps_to_MBs(mbps), 'latency_us': seconds * 1e6})
    if not rows:
        raise ParseError('np.out holds no data rows')
    return rows


_LINE = re.compile(r'^\s*(\d+):\s+(\d+)\s+bytes\s+(\d+)\s+times\s+-->\s+([\d.]+)\s+Mbps\s+in\s+([\d.]+)\s+usec')


def parse_stderr(text):
    """Rows {'line', 'bytes', 'repeats', 'bandwidth_MBs', 'latency_us'} from NetPIPE's progress lines
    ('line': NetPIPE's own counter, from 0 in each run)."""
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            rows.append({'line': int(m.group(1)), 'bytes': int(m.group(2)), 'repeats': int(m.group(3)),
                         'bandwidth_MBs': mbps_to_MBs(float(m.group(4))),
                         'latency_us': float(m.group(5))})
    if not rows:
        raise ParseError('no NetPIPE progress lines ("N: B bytes R times --> X Mbps in T usec") found')
    return rows
