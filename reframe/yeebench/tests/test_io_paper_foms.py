"""IoOutputPaper's figures from the solver's reports: the spread of the ranks' computation times
(paper 001: standard deviation under 10 % of the mean) and the file-count comparison (one writer,
a file per PE against one file per step)."""
import importlib.util
import sys
from pathlib import Path

import pytest

CHECK = Path(__file__).resolve().parents[1] / 'checks' / 'io' / 'io_paper.py'


def _module():
    spec = importlib.util.spec_from_file_location('io_paper_under_test', CHECK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # ReFrame looks its test classes' files up through it
    spec.loader.exec_module(module)
    return module


class Recorder:
    def __init__(self):
        self.foms, self.observations = {}, {}

    def add_fom(self, name, value, unit, direction):
        self.foms[name] = (value, unit, direction)


def test_compute_spread_is_the_standard_deviation_over_the_mean_in_percent():
    rec = Recorder()
    sec = {'update': 1.2, 'halo': 0.2, 'mean_update': 1.0, 'update_stddev': 0.05}
    _module().IoOutputPaper.compute_foms(rec, {(2, 30): sec, (1, 30): dict(sec, update_stddev=0.0)}, 2, 30)
    assert rec.foms['compute_spread'] == (5.0, '%', 'lower')
    assert rec.foms['p2_n30_compute_spread'] == (5.0, '%', 'lower')
    assert 'p1_n30_compute_spread' not in rec.foms          # one rank has no spread


def test_compute_spread_of_one_rank_is_not_measured_with_the_reason():
    rec = Recorder()
    _module().IoOutputPaper.compute_foms(rec, {(1, 30): {'update': 1.0, 'halo': 0.0, 'mean_update': 1.0,
                                                         'update_stddev': 0.0}}, 1, 30)
    assert 'compute_spread' not in rec.foms
    assert 'no spread' in rec.observations['not_measured']['compute_spread']


def test_file_count_ratio_is_files_per_pe_over_one_file_at_the_largest_case():
    rec = Recorder()
    io_s = {('hdf5-zlib', 4, 40): (0.3, 1e6), ('hdf5-zlib-one-file', 4, 40): (0.2, 1e6),
            ('hdf5-zlib', 2, 40): (9.0, 1e6)}
    _module().IoOutputPaper.file_count_foms(rec, io_s, 4, 40)
    assert rec.foms['hdf5_zlib_per_pe_over_one_file'] == (pytest.approx(1.5), 'x', 'lower')
    rec = Recorder()
    _module().IoOutputPaper.file_count_foms(rec, {('hdf5-zlib', 4, 40): (0.3, 1e6)}, 4, 40)
    assert 'hdf5-zlib-one-file' in rec.observations['not_measured']['hdf5_zlib_per_pe_over_one_file']
