"""OSU Micro-Benchmarks output tables, every header layout from 5.x to 7.x.

Layouts seen (captured from real builds in tests/data/osu-*):
  5.x/6.x latency   '# Size          Latency (us)'
  7.x latency       '# Datatype: MPI_CHAR.' then '# Size       Avg Latency(us)'
  7.x -T a -T b     one '# Datatype: X.' + '# Size ...' block per datatype, in the order given
                    (7.2 pt2pt prints its first '# Size' header before the first '# Datatype:')
  7.x -c            '... Avg Latency(us)        Validation'   (Pass/Fail column)
  7.x -z            '... Avg Latency(us)  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)'
  -f (collectives)  '... Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations'
  osu_barrier       '# Avg Latency(us)' (no Size column: one row; stored with size 0, no payload)
  bandwidth         '# Size      Bandwidth (MB/s)'       (MB = 10^6 bytes)
  osu_mbw_mr        '# Size                  MB/s        Messages/s'
  -d cuda           title 'OSU MPI-CUDA ...', '# Rank 0 Memory on DEVICE (D) and Rank 1 Memory on ...'
Column names are normalised (see COLUMN_NAMES); unknown ones become snake_case.
`parse_all` returns one table per block; `parse` returns the only one (or the one of `datatype`).
Only the text after the job's measured-run marker is read (yeebench.parsers.measured_run: a probe
run before it is not the benchmark's), and a line that is not a whole row (other output between
the rows, a row cut short) is not one.
"""
import re
from dataclasses import dataclass, field

from yeebench.parsers import ParseError
from yeebench.parsers.measured_run import after_marker

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
# First column of a header without a Size column (osu_barrier and other size-less runs).
_SIZELESS_FIRST = ('avg latency(us)', 'latency (us)', 'bandwidth (mb/s)', 'mb/s')


@dataclass
class OsuTable:
    title: str = ''                  # e.g. 'OSU MPI Latency Test', 'OSU MPI-CUDA Latency Test'
    version: str = ''                # e.g. '7.4'
    datatype: str = ''               # 7.x only, e.g. 'MPI_CHAR'
    buffers: str = ''                # -d cuda: e.g. 'DEVICE (D) -> DEVICE (D)'; '' for host buffers
    sized: bool = True               # False: no Size column (barrier); rows then carry size 0
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
_MEMORY = re.compile(r'#\s*Rank 0 Memory on (.+?) and Rank 1 Memory on (.+?)\s*$')


def _header(body):
    """Normalised column names of a header line body, or None when it is not a table header."""
    cols = [c for c in re.split(r'\s{2,}', body.strip()) if c]
    if not cols:
        return None
    if cols[0].lower() == 'size':
        return ['size'] + [_normalise(c) for c in cols[1:]]
    if cols[0].lower() in _SIZELESS_FIRST:
        return [_normalise(c) for c in cols]
    return None


def parse_all(text):
    """Every table in one OSU benchmark's stdout, in order (one per datatype with -T a,b,c)."""
    tables, current = [], None
    title = version = buffers = ''
    pending_datatype = ''
    for raw in after_marker(text).splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith('#'):
            if m := _TITLE.match(line):
                title, version = m.group(1), m.group(2)
            elif m := _DATATYPE.match(line):
                if current is not None and not current.rows and not current.datatype:
                    current.datatype = m.group(1)     # 7.2 pt2pt prints its first header, then the type
                else:
                    pending_datatype, current = m.group(1), None   # a new datatype: a new block
            elif m := _MEMORY.match(line):
                buffers = f'{m.group(1)} -> {m.group(2)}'
            elif (columns := _header(line.lstrip('#'))) is not None:
                current = OsuTable(title=title, version=version, datatype=pending_datatype, buffers=buffers,
                                   sized=columns[0] == 'size', columns=columns)
                tables.append(current)
            continue
        if current is None:
            continue   # launcher chatter, warnings before any header
        row = _row(line, current)
        if row is not None:
            current.rows.append(row)
    if not tables:
        raise ParseError('no OSU header line ("# Size ..." or "# Avg Latency(us)") found')
    for table in tables:
        if not table.rows:
            what = f' for datatype {table.datatype}' if table.datatype else ''
            raise ParseError(f'OSU header found but no data rows{what}')
        if not table.sized:      # stored with a size of 0 so column() works alike for every layout
            table.columns = ['size'] + table.columns
    return tables


def _row(line, table):
    """One data row as a dict, or None for a line that is not one (chatter between rows)."""
    fields = line.split()
    if table.sized:
        if not fields[0].isdigit():
            return None
        row, values, names = {'size': int(fields[0])}, fields[1:], table.columns[1:]
    else:
        if _number(fields[0]) is fields[0]:
            return None
        row, values, names = {'size': 0}, fields, table.columns
    if len(values) < len(names):
        return None   # cut short
    for i, token in enumerate(values):
        name = names[i] if i < len(names) else f'col{i + 1}'
        row[name] = _number(token)
        if i < len(names) and name != 'validation' and isinstance(row[name], str):
            return None   # words where the header has a number: other output, not a row
    return row


def parse(text, datatype=None):
    """The one table of an OSU run (the block of `datatype`, e.g. 'MPI_INT', when -T gave several).

    Several blocks and no `datatype` is an error: merging them would make one curve of several.
    """
    tables = parse_all(text)
    if datatype is not None:
        found = [t for t in tables if t.datatype.lower() == datatype.lower()]
        if not found:
            raise ParseError(f'OSU output has no block for datatype {datatype} '
                             f'(found: {", ".join(t.datatype or "?" for t in tables)})')
        return found[0]
    if len(tables) > 1:
        raise ParseError(f'OSU output holds {len(tables)} tables (datatypes: '
                         f'{", ".join(t.datatype or "?" for t in tables)}): choose one with datatype=')
    return tables[0]


def _number(token):
    try:
        value = float(token)
    except ValueError:
        return token   # 'Pass' / 'Fail'
    return int(value) if value.is_integer() and 'e' not in token.lower() and '.' not in token else value
