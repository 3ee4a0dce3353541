"""NetPIPE output: the `-o np.out` file and the per-size lines on stderr.

np.out columns: bytes, throughput in NetPIPE "Mbps" (2^20 bits/s), one-way time in seconds.
stderr lines:   '  3:       4 bytes 430600 times -->     86.22 Mbps in       0.35 usec'.
Both are converted to SI: bandwidth in MB/s (10^6 bytes/s), latency in us.
"""
import re

from yeebench.parsers import ParseError

MBPS_TO_MBS = 2 ** 20 / 8 / 1e6    # NetPIPE Mbps -> MB/s (SI)


def mbps_to_MBs(mbps):
    return mbps * MBPS_TO_MBS


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
    """Rows {'bytes', 'repeats', 'bandwidth_MBs', 'latency_us'} from NetPIPE's progress lines."""
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            rows.append({'bytes': int(m.group(2)), 'repeats': int(m.group(3)),
                         'bandwidth_MBs': mbps_to_MBs(float(m.group(4))),
                         'latency_us': float(m.group(5))})
    if not rows:
        raise ParseError('no NetPIPE progress lines ("N: B bytes R times --> X Mbps in T usec") found')
    return rows
