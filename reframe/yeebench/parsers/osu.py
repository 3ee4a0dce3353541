"""OSU Micro-Benchmarks output tables, every header layout from 5.x to 7.x.

Layouts seen (captured from real builds in tests/data/osu-*):
  5.x/6.x latency   '# Size          Latency (us)'
  7.x latency       '# Datatype: MPI_CHAR.' then '# Size       Avg Latency(us)'
  7.x -c            '... Avg Latency(us)        Validation'   (Pass/Fail column)
  7.x -z            '... Avg Latency(us)  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)'
  -f (collectives)  '... Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations'
  bandwidth         '# Size      Bandwidth (MB/s)'       (MB = 10^6 bytes)
  osu_mbw_mr        '# Size                  MB/s        Messages/s'
Column names are normalised (see COLUMN_NAMES); unknown ones become snake_case.
"""
import re
from dataclasses import dataclass, field

from yeebench.parsers import ParseError

COLUMN_NAMES = {
    'latency (us)': 'latency_us',      # 5.x/6.x pt2pt: an average over iterations
    'avg latency(us)': 'latency_us',
    'min latency(us)': 'min_latency_us',
    'max latency(us)': 'max_latency_us',
    'p50 tail lat(us)': 'p50_latency_us',
    'p90 tail lat(us)': 'p90_latency_us',
    'p99 tail lat(us)': 'p99_latency_us',
    'bandwidth (mb/s)': 'bandwidth_MBs',
    'mb/s': 'bandwidth_MBs',
    'messages/s': 'messages_per_s',
    'iterations': 'iterations',
    'validation': 'validation',
}


@dataclass
class OsuTable:
    title: str = ''                  # e.g. 'OSU MPI Latency Test'
    version: str = ''                # e.g. '7.4'
    datatype: str = ''               # 7.x only, e.g. 'MPI_CHAR'
    columns: list = field(default_factory=list)   # normalised names, first is 'size'
    rows: list = field(default_factory=list)      # dicts keyed by column name

    def column(self, name):
        """(sizes, values) of one column; raises ParseError if the table lacks it."""
        if name not in self.columns:
            raise ParseError(f'OSU output has no column {name!r} (columns: {", ".join(self.columns)})')
        pairs = [(r['size'], r[name]) for r in self.rows if r.get(name) is not None]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    @property
    def validation_failed(self):
        return [r['size'] for r in self.rows if r.get('validation', 'Pass') != 'Pass']


def _normalise(col):
    key = col.strip().lower()
    if key in COLUMN_NAMES:
        return COLUMN_NAMES[key]
    return re.sub(r'[^a-z0-9]+', '_', key).strip('_') or 'col'


_TITLE = re.compile(r'#\s*(OSU .*?)\s+v(\d+(?:\.\d+)*\S*)\s*$')
_DATATYPE = re.compile(r'#\s*Datatype:\s*(\S+?)\.?\s*$')


def parse(text):
    """Parse one OSU benchmark's stdout into an OsuTable."""
    table = OsuTable()
    header = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith('#'):
            m = _TITLE.match(line)
            if m:
                table.title, table.version = m.group(1), m.group(2)
                continue
            m = _DATATYPE.match(line)
            if m:
                table.datatype = m.group(1)
                continue
            body = line.lstrip('#').strip()
            if body.lower().startswith('size'):
                header = ['size'] + [_normalise(c) for c in re.split(r'\s{2,}', body)[1:]]
            continue
        fields = line.split()
        if header is None or not fields[0].isdigit():
            continue   # launcher chatter, warnings
        row = {'size': int(fields[0])}
        for i, token in enumerate(fields[1:], start=1):
            name = header[i] if i < len(header) else f'col{i}'
            row[name] = _number(token)
        table.rows.append(row)
    if header is None:
        raise ParseError('no OSU header line ("# Size ...") found')
    if not table.rows:
        raise ParseError('OSU header found but no data rows')
    table.columns = header
    return table


def _number(token):
    try:
        value = float(token)
    except ValueError:
        return token   # 'Pass' / 'Fail'
    return int(value) if value.is_integer() and 'e' not in token.lower() and '.' not in token else value
