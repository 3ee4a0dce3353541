"""One NetPIPE reader: every check turns NetPIPE output into a curve through yeebench.parsers.netpipe
and takes its figures from yeebench.curve_foms, with the figures each check reported before."""
import ast
from pathlib import Path

import pytest

from yeebench import curve_foms
from yeebench.parsers import ParseError, netpipe

DATA = Path(__file__).parent / 'data' / 'netpipe'
YEEBENCH = Path(__file__).resolve().parents[1]
MBPS = 2 ** 20 / 8 / 1e6


def np_out_rows(text):
    '''The columns of np.out as written: (bytes, MB/s, us), read independently of the parser.'''
    return [(int(f[0]), float(f[1]) * MBPS, float(f[2]) * 1e6) for f in map(str.split, text.splitlines()) if f]


def test_curve_from_np_out_and_from_stderr():
    text = (DATA / 'np-default.out').read_text()
    curve = netpipe.curve(text)
    rows = np_out_rows(text)
    assert curve.sizes == tuple(n for n, _, _ in rows) and len(curve) == 32 and curve.max_size == 65536
    assert curve.bandwidth == pytest.approx([bw for _, bw, _ in rows])
    assert curve.latency_us == pytest.approx([t for _, _, t in rows])
    progress = netpipe.curve((DATA / 'np-default.stderr').read_text(), 'stderr')
    assert progress.sizes == curve.sizes
    assert progress.bandwidth == pytest.approx(curve.bandwidth, rel=1e-3)


def test_stderr_of_repeated_runs_is_one_curve_each():
    one = (DATA / 'np-n200.stderr').read_text()
    runs = netpipe.curves(one + one + one, 'stderr')
    assert len(runs) == 3 and all(r == runs[0] for r in runs)
    # perturbed sizes (-p) are one run: the line counter, not only the size, marks a new run
    assert len(netpipe.curves(one, 'stderr')) == 1
    with pytest.raises(ParseError, match='holds 3 runs'):
        netpipe.curve(one * 3, 'stderr')
    with pytest.raises(ValueError, match='one of np.out, stderr'):
        netpipe.curves(one, 'stdout')


def test_vcluster_figures_keep_their_definitions():
    # VclusterNetPIPE: latency_1B the 1-byte row, bw_peak the best of all sizes, bw_large the best of
    # sizes >= max_size / 4 (the definitions it computed on its own before sharing the reader)
    text = (DATA / 'np-default.out').read_text()
    rows = np_out_rows(text)
    for max_size in (65536, 131072):
        figures = curve_foms.curve_values(netpipe.curve(text), max_size=max_size)
        assert figures['latency_1B'] == min(t for n, _, t in rows if n == 1)
        assert figures['peak_bw'] == max(bw for _, bw, _ in rows)
        assert figures['bw_large'] == max(bw for n, bw, _ in rows if n >= max_size // 4)


def test_container_figures_are_the_best_run():
    # NetpipeContainerVsNative: latency_1B the best first-size (1 B) latency over the repeats,
    # peak_bw the best bandwidth of any size in any repeat
    stderr = (DATA / 'np-default.stderr').read_text()
    slower = stderr.replace(' usec', '0 usec')     # the same run with ten times the time
    runs = netpipe.curves(stderr + slower, 'stderr')
    figures = [curve_foms.curve_values(run) for run in runs]
    rows = [r for text in (stderr, slower) for r in netpipe.parse_stderr(text)]
    assert min(f['latency_1B'] for f in figures) == min(r['latency_us'] for r in rows if r['bytes'] == 1)
    assert max(f['peak_bw'] for f in figures) == max(r['bandwidth_MBs'] for r in rows)


def _sources():
    for path in sorted(YEEBENCH.rglob('*.py')):
        if 'tests' not in path.relative_to(YEEBENCH).parts:
            yield path, path.read_text()


def test_only_the_parser_reads_netpipe_output():
    # nobody else converts NetPIPE's Mbps, matches its progress lines or walks np.out's columns
    readers = {path.relative_to(YEEBENCH).as_posix() for path, text in _sources()
               if 'parse_np_out(' in text or 'parse_stderr(' in text or 'Mbps in' in text}
    assert readers == {'parsers/netpipe.py'}
    users = {path.relative_to(YEEBENCH).as_posix() for path, text in _sources()
             if any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == 'netpipe' and node.attr in ('curve', 'curves')
                    for node in ast.walk(ast.parse(text)))}
    assert users == {'checks/pt2pt/pt2pt.py', 'checks/pt2pt/vcluster_pt2pt.py', 'checks/containers/container.py'}
