"""NetPIPE output: the `-o np.out` file and the per-size lines on stderr.

np.out columns: bytes, throughput in NetPIPE "Mbps" (2^20 bits/s), one-way time in seconds.
stderr lines:   '  3:       4 bytes 430600 times -->     86.22 Mbps in       0.35 usec'.
Both are converted to SI: bandwidth in MB/s (10^6 bytes/s), latency in us.

NetPIPE writes each progress line in two pieces: the head ('  3:       4 bytes 430600 times --> ')
before it measures the size, the result (' 86.22 Mbps in 0.35 usec') after. Whatever else writes
to the same stderr meanwhile (mpirun, the other rank, Open MPI's help messages) lands between
them, and a line cut short elsewhere may be glued before a head. So the pieces are found wherever
they are in the text and each result is paired with the head before it; only the text after the
job's measured-run marker (yeebench.parsers.measured_run) is read.

Every check reads NetPIPE through `curve` / `curves` (a Curve: sizes, latency_us, bandwidth) and
takes its figures from yeebench.curve_foms.curve_foms; `parse_np_out` and `parse_stderr`
are the row readers beneath them.
"""
import re
from dataclasses import dataclass

from yeebench.parsers import ParseError
from yeebench.parsers.measured_run import after_marker

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
    a new run starts where NetPIPE's line counter is back at 0 or the message size goes back.
    A size whose result never followed its head is left out of the curve.
    """
    if source == 'np.out':
        return [Curve.from_rows(parse_np_out(text))]
    if source != 'stderr':
        raise ValueError(f'NetPIPE source {source!r}: one of {", ".join(SOURCES)}')
    runs = [[row for row in run if row['latency_us'] is not None] for run in progress_runs(text)]
    runs = [run for run in runs if run]
    if not runs:
        raise ParseError(NO_PROGRESS)
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


NO_PROGRESS = 'no NetPIPE progress lines ("N: B bytes R times --> X Mbps in T usec") found'

# The two pieces of a progress line; spaces only, so neither spans a line break.
_HEAD = r'(?P<line>\d+):[ \t]+(?P<bytes>\d+)[ \t]+bytes[ \t]+(?P<repeats>\d+)[ \t]+times[ \t]+-->'
_RESULT = r'(?P<mbps>[\d.]+)[ \t]+Mbps[ \t]+in[ \t]+(?P<usec>[\d.]+)[ \t]+usec'
_PIECE = re.compile(f'{_HEAD}|{_RESULT}')


def progress(text):
    """Every size NetPIPE started in `text` (stderr, after the measured-run marker), in order: rows
    {'line', 'bytes', 'repeats', 'bandwidth_MBs', 'latency_us'} ('line': NetPIPE's own counter,
    from 0 in each run); the last two are None where no result followed the size's head."""
    rows = []
    for m in _PIECE.finditer(after_marker(text)):
        if m.group('line') is not None:
            rows.append({'line': int(m.group('line')), 'bytes': int(m.group('bytes')),
                         'repeats': int(m.group('repeats')), 'bandwidth_MBs': None, 'latency_us': None})
        elif rows and rows[-1]['latency_us'] is None:   # a result without a head before it is not ours
            rows[-1]['bandwidth_MBs'] = mbps_to_MBs(float(m.group('mbps')))
            rows[-1]['latency_us'] = float(m.group('usec'))
    return rows


def progress_runs(text):
    """progress(text) cut into NetPIPE runs: a new one starts where the counter is back at 0 or the
    size goes back. (Not wherever the counter goes back: from 100 on NetPIPE prints it without a
    leading space, so text cut short before it could lengthen it, never its 0.)"""
    runs, current = [], []
    for row in progress(text):
        if current and (row['line'] == 0 or row['bytes'] < current[-1]['bytes']):
            runs.append(current)
            current = []
        current.append(row)
    return runs + [current] if current else runs


def parse_stderr(text):
    """Rows {'line', 'bytes', 'repeats', 'bandwidth_MBs', 'latency_us'} of every size with its result,
    from NetPIPE's progress lines ('line': NetPIPE's own counter, from 0 in each run)."""
    rows = [row for row in progress(text) if row['latency_us'] is not None]
    if not rows:
        raise ParseError(NO_PROGRESS)
    return rows


def measured_run_problem(np_out_text, stderr_text):
    """Why np.out and the measured run's progress on stderr disagree, or None when they agree.

    The measured run is the last NetPIPE run after the marker (a run before it in the same job, or a
    piece of one, is not compared). Its sizes, every one it started (a result lost in other output
    does not drop its size), must be np.out's rows in order: a run cut short started a size np.out
    lacks, or stopped before sizes np.out holds from another run."""
    sizes = curve(np_out_text).sizes
    runs = progress_runs(stderr_text)
    if not runs:
        return f'np.out holds {len(sizes)} sizes up to {sizes[-1]} B, the measured run printed no progress line'
    started = tuple(row['bytes'] for row in runs[-1])
    if started == sizes:
        return None
    common = next((i for i, (a, b) in enumerate(zip(started, sizes)) if a != b), min(len(started), len(sizes)))
    where = f'first difference at row {common + 1}: np.out {_at(sizes, common)}, stderr {_at(started, common)}'
    return (f'np.out holds {len(sizes)} sizes up to {sizes[-1]} B, the measured run\'s progress lines '
            f'{len(started)} up to {started[-1]} B ({where})')


def _at(sizes, i):
    return f'{sizes[i]} B' if i < len(sizes) else 'nothing'
