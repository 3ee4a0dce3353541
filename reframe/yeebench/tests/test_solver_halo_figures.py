"""The solver's halo traffic per step, totals over ranks and per rank (paper 002, Table 1 counts bytes per
process), read from a recorded report and published by FdtdMessageStats as performance variables."""
import copy
import json
from pathlib import Path

import pytest
from reframe.core.exceptions import SanityError

from checkfiles import check_file
from yeebench.solver import HALO_PER_STEP, halo_traffic_per_step

DATA = Path(__file__).parent / 'data' / 'json'
# yee --nx 800 --ny 400 --nz 4 --decomp 4x1x1 --steps 5 (mpirun -np 4): FdtdMessageStats's grid and split
FLAT = json.loads((DATA / 'yee-4ranks-flat.json').read_text())
# an older yee's report (no per-step or per-rank halo figures)
OLD = json.loads((DATA / 'yee-2ranks.json').read_text())


def split_counts(report, bytes_per_value=4):
    '''Bytes and messages per step of each rank of a P x 1 x 1 split: one message per neighbour, the
    2 tangential components of the ny x nz face.'''
    ranks = report['dims'][0]
    assert report['dims'][1:] == [1, 1]
    face = report['grid']['ny'] * report['grid']['nz']
    neighbours = [(r > 0) + (r < ranks - 1) for r in range(ranks)]
    return [n * 2 * face * bytes_per_value for n in neighbours], neighbours


def test_the_per_rank_figures_are_the_papers_per_process_count_of_the_split():
    figures = {name: (value, unit) for name, value, unit in halo_traffic_per_step(FLAT)}
    assert list(figures) == [name for name, _ in HALO_PER_STEP]
    sent, messages = split_counts(FLAT)
    assert figures['halo_bytes_per_rank_per_step_max'] == (max(sent), 'B')
    assert figures['halo_bytes_per_rank_per_step_mean'] == (pytest.approx(sum(sent) / len(sent)), 'B')
    assert figures['halo_messages_per_rank_per_step_max'] == (max(messages), 'messages')
    assert figures['halo_bytes_per_step'] == (sum(sent), 'B')         # the total over ranks, as before
    assert figures['halo_messages_per_step'] == (sum(messages), 'messages')
    ranks = FLAT['ranks']
    assert figures['halo_bytes_per_rank_per_step_mean'][0] * ranks == pytest.approx(figures['halo_bytes_per_step'][0])
    assert figures['halo_bytes_per_rank_per_step_max'][0] * ranks > figures['halo_bytes_per_step'][0]  # ends send less


@pytest.mark.parametrize('key', [name for name, _ in HALO_PER_STEP])
@pytest.mark.parametrize('bad', [None, 'many', -1.0, float('nan'), True])
def test_a_missing_or_bad_halo_figure_is_one_sanity_error_naming_it(key, bad):
    report = copy.deepcopy(FLAT)
    if bad is None:
        del report[key]
    else:
        report[key] = bad
    with pytest.raises(SanityError) as err:
        halo_traffic_per_step(report)
    assert key in str(err.value) and '\n' not in str(err.value)


def test_an_older_solvers_report_is_refused_with_the_reason():
    with pytest.raises(SanityError, match='halo_bytes_per_step.*rebuild'):
        halo_traffic_per_step(OLD)


def _message_stats_foms(report):
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location('fdtd_messages_under_test', check_file('fdtd_messages'))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # ReFrame looks its test classes' files up through it
    spec.loader.exec_module(module)

    class Recorder:
        add_report_foms = module.FdtdMessageStats.add_report_foms

        def __init__(self):
            self.foms = {}

        def add_fom(self, name, value, unit, direction):
            self.foms[name] = (value, unit, direction)
    rec = Recorder()
    rec.add_report_foms(report)
    return rec.foms


def test_fdtd_message_stats_publishes_the_per_rank_figures_beside_the_totals():
    foms = _message_stats_foms(FLAT)
    for name, value, unit in halo_traffic_per_step(FLAT):
        assert foms[name] == (value, unit, 'lower'), name
    assert foms['halo_bytes_per_rank_per_step_max'][0] < foms['halo_bytes_per_step'][0]
