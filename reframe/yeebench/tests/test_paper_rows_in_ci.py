"""Every paper row that names a check is selected by a CI stage, or says why not (paper_figures `ci`).

The stages' selections come from the stages themselves (ci_stages: each make target run with stand-in
programs, its ReFrame command replayed with --list), so a selection edited in a Makefile fragment,
run.sh or the virtual cluster's smoke run is what this test sees."""
import fnmatch
import sys
from pathlib import Path

import pytest

import ci_stages
from ci_stages import REPO

sys.path.insert(0, str(REPO / 'reframe'))
from yeebench.results import paper_figures as pf  # noqa: E402


@pytest.fixture(scope='module')
def selections(tmp_path_factory):
    if not (Path(sys.executable).parent / 'reframe').exists():
        pytest.skip('reframe is not installed next to this Python')
    return {stage: ci_stages.selected_cases(stage, tmp_path_factory.mktemp(stage.replace('-', '_')))
            for stage in ci_stages.STAGES}


def stages_selecting(exp, selections):
    def hit(name, params):
        return fnmatch.fnmatchcase(name, exp.check) and all(
            fnmatch.fnmatchcase(str(params.get(k, '')), v) for k, v in exp.params.items())
    return [stage for stage, cases in selections.items() if any(hit(n, p) for n, p in cases)]


def test_every_stage_selects_something(selections):
    for stage, cases in selections.items():
        assert cases, f'{stage}: no check selected (did its ReFrame command change shape?)'


def test_every_row_naming_a_check_is_selected_by_a_ci_stage_or_says_why_not(selections):
    missing, stale = [], []
    for exp in pf.EXPERIMENTS:
        if not exp.check:
            continue
        stages = stages_selecting(exp, selections)
        if not stages and not exp.ci:
            missing.append(f'{exp.paper} {exp.item}: {exp.check} {exp.params}')
        if stages and exp.ci:
            stale.append(f'{exp.paper} {exp.item}: selected by {", ".join(stages)} but says "{exp.ci}"')
    assert not missing, 'rows no CI stage selects, without a reason: ' + '; '.join(missing)
    assert not stale, 'rows with a stale reason: ' + '; '.join(stale)


def test_the_multi_node_paper_comparisons_run_on_the_virtual_cluster(selections):
    # one node cannot show them: per-node vs per-socket binding, node scaling, packing, inter-node pt2pt
    names = {name for name, _ in selections['test-vcluster']}
    assert {'FdtdBindingSweep', 'FdtdNumaSweep', 'FdtdNodeScaling', 'FdtdPackingSweep', 'FdtdMessageStats',
            'NetPIPEPt2Pt', 'OsuPt2Pt'} <= names


def test_listing_args_drop_what_runs_or_writes():
    args = ['-c', 'x.py', '-n', 'A%p=1', '-r', '--report-file', 'r.json', '--prefix=/p', '-S', 'A.v=1']
    assert ci_stages.listing_args(args) == ['-c', 'x.py', '-n', 'A%p=1', '-S', 'A.v=1']


def test_listed_cases_reads_cases_not_fixtures():
    text = ('- FdtdPackingSweep %ranks=2 /1aa4d21a\n'
            "    ^SolverBinary ~vcluster:srun+host 'yee /0c70bab7\n"
            '- FdtdBindingSweep /90c0a172\n')
    assert ci_stages.listed_cases(text) == [('FdtdPackingSweep', {'ranks': '2'}), ('FdtdBindingSweep', {})]
