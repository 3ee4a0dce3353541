"""The fuzz stage's harness (tests/fuzz/) finds what it is there to find: a traceback, a hang, a read that
outgrows the memory ceiling, a write outside the named outputs, a special file replaced, an exit 2
without a one-line error. Each is staged with a stand-in for the `yeebench` entry point."""
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))

import forked  # noqa: E402
import fuzz_commands  # noqa: E402
import special_files  # noqa: E402

import yeebench.cli  # noqa: E402


def _stand_in(monkeypatch, behaviour):
    monkeypatch.setattr(yeebench.cli, "main", behaviour)


def test_a_raise_is_a_traceback_and_a_clean_exit_is_not(monkeypatch, tmp_path):
    def raises(argv):
        raise KeyError("boom")
    _stand_in(monkeypatch, raises)
    outcome = forked.run(["x"], tmp_path, 30)
    assert outcome.traceback and outcome.code == forked.RAISED and "KeyError: 'boom'" in outcome.err

    def refuses(argv):
        print("yeebench x: error: no", file=sys.stderr)
        return 2
    _stand_in(monkeypatch, refuses)
    outcome = forked.run(["x"], tmp_path, 30)
    assert not outcome.traceback and outcome.code == 2 and fuzz_commands._one_error_line(outcome.err)


def test_a_command_past_its_deadline_is_killed_as_hung(monkeypatch, tmp_path):
    _stand_in(monkeypatch, lambda argv: time.sleep(60))
    outcome = forked.run(["x"], tmp_path, 0.5)
    assert outcome.hung and outcome.code is None and outcome.seconds < 30


def test_a_read_past_the_memory_ceiling_fails(monkeypatch, tmp_path):
    _stand_in(monkeypatch, lambda argv: len(bytearray(forked.MEMORY_LIMIT)))
    outcome = forked.run(["x"], tmp_path, 60)
    assert outcome.traceback and "MemoryError" in outcome.err


def _fuzz(tmp_path):
    return fuzz_commands.Fuzz(tmp_path / "fuzz", seed=1, budget_s=600)


@pytest.mark.parametrize("where", ["case", "outside"])
def test_a_write_outside_the_named_outputs_is_a_failure(monkeypatch, tmp_path, where):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")
    target = case / "stray" if where == "case" else fuzz.outside / "victim.txt"

    def writes(argv):
        Path(target).write_text("stray")
        return 0
    _stand_in(monkeypatch, writes)
    fuzz.check("writes", ["x"], case, {0}, writable=[case / "out"])
    ((label, _, problems, _),) = fuzz.failures
    assert label == "writes" and "wrote outside its outputs" in problems[0] and str(target) in problems[0]


def test_a_write_in_the_named_outputs_is_not(monkeypatch, tmp_path):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")

    def writes(argv):
        os.makedirs(case / "out")
        (case / "out" / "page.html").write_text("ok")
        return 0
    _stand_in(monkeypatch, writes)
    fuzz.check("writes", ["x"], case, {0}, writable=[case / "out"])
    assert fuzz.failures == [] and fuzz.ran == 1


def test_a_special_file_replaced_and_a_refusal_not_made_are_failures(monkeypatch, tmp_path):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")
    fifo = special_files.make(case / "target", "fifo", str(fuzz.outside))

    def replaces(argv):
        (case / "new").write_text("x")
        os.replace(case / "new", fifo)          # what a write through a temporary and a rename did
        return 0
    _stand_in(monkeypatch, replaces)
    fuzz.check("replaces", ["x"], case, {0, 2}, writable=[case], guards=[fifo], refuse=True)
    ((_, _, problems, _),) = fuzz.failures
    assert "exit 0 where a refusal (exit 2) was due" in problems and f"replaced or changed {fifo}" in problems


def test_exit_2_needs_exactly_one_error_line(monkeypatch, tmp_path):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")

    def two_errors(argv):
        print("yeebench x: error: one\nyeebench x: error: two", file=sys.stderr)
        return 2
    _stand_in(monkeypatch, two_errors)
    fuzz.check("two", ["x"], case, {0, 2})
    assert fuzz.failures[0][2] == ["exit 2 without exactly one error line"]


def test_an_undocumented_exit_code_is_a_failure(monkeypatch, tmp_path):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")
    _stand_in(monkeypatch, lambda argv: 3)
    fuzz.check("three", ["x"], case, {0, 2})
    assert fuzz.failures[0][2] == ["exit 3; documented: [0, 2]"]


def test_the_seed_fixes_the_crafted_reports():
    import json
    import random

    import mutations
    seed = (fuzz_commands.CORPUS / "report.json").read_text()
    texts = []
    for _ in range(2):
        rng = random.Random(7)
        texts.append([mutations.report_text(rng, mutations.mutate_report(rng, json.loads(seed))) for _ in range(5)])
    assert texts[0] == texts[1] and len(set(texts[0])) == 5


def test_the_table_counts_commands_and_problems_per_class(monkeypatch, tmp_path):
    fuzz = _fuzz(tmp_path)
    case = fuzz.case_dir("c")
    fuzz.current_class = "outputs"
    _stand_in(monkeypatch, lambda argv: 3)
    fuzz.check("three", ["x"], case, {0, 2}, refuse=True)
    _stand_in(monkeypatch, lambda argv: 0)
    fuzz.check("fine", ["x"], case, {0, 2})
    table = fuzz.table().splitlines()
    kinds = table[0].split()[3:]
    row = table[1].split()
    assert row[:3] == ["outputs", "2", "1"]
    counted = dict(zip(kinds, map(int, row[3:])))
    assert counted["exit-code"] == 1 and counted["not-2"] == 1 and sum(counted.values()) == 2
