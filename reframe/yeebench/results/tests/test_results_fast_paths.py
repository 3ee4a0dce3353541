"""The faster paths of ingest, compare and report give what the plain ones gave: the compiled schema
checks accept exactly what jsonschema accepts (never more), the cached rank test and the plain-Python
medians return the same floats as yeebench.stats, and ingest counts its repeats as before."""
import copy
import json
import random

import jsonschema
import pytest

from results_testutil import FIXTURES, REPORT_A
from yeebench import stats
from yeebench.results import fast_schema, quick_stats, rank_test, report_reader, schema

SMOKE_RUN = FIXTURES / "reports" / "suite_smoke_run.json"
ODD_VALUES = [None, True, False, 0, 1, -1, 1.0, 2.5, float("nan"), float("inf"), "", "x", "yeebench-row", [], {},
              ["a"], {"a": 1}, 10 ** 30, -0.0]


def _mutations(document, rng, count):
    """Copies of a document with one field replaced, removed or added (nested objects too)."""
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                paths.append(path + (key,))
                walk(value, path + (key,))
        elif isinstance(node, list):
            for index, value in enumerate(node[:3]):
                paths.append(path + (index,))
                walk(value, path + (index,))
    walk(document, ())
    for _ in range(count):
        copied = copy.deepcopy(document)
        path = rng.choice(paths)
        parent = copied
        for step in path[:-1]:
            parent = parent[step]
        action = rng.random()
        if action < 0.15 and isinstance(parent, dict):
            del parent[path[-1]]
        elif action < 0.25 and isinstance(parent, dict):
            parent[f"extra_{rng.randint(0, 9)}"] = rng.choice(ODD_VALUES)
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
        yield copied


def _never_more_than_jsonschema(schema_doc, documents):
    accepts = fast_schema.compile_schema(schema_doc)
    assert accepts is not None, "the schema uses a keyword the compiled checks do not know"
    validator = jsonschema.Draft7Validator(schema_doc)
    quick = valid = 0
    for document in documents:
        said = accepts(document)
        truth = validator.is_valid(document)
        assert not (said and not truth), document   # never accepts what jsonschema rejects
        quick += said
        valid += truth
    return quick, valid


def test_row_checks_accept_exactly_the_valid_rows():
    rng = random.Random(11)
    row = {"schema": "yeebench-row", "schema_version": 1, "run_id": "20260101T000000Z-ab", "timestamp": "t",
           "system": "s", "partition": "p", "environ": "e", "check": "C", "parameters": {"a": 1, "b": "x"},
           "metric": "m", "value": 1.5, "unit": "s", "direction": "lower", "direction_source": "declared",
           "repeat": 0, "status": "pass", "reference": [1, None, None], "testcase": "C_1"}
    documents = [row] + list(_mutations(row, rng, 1500))
    quick, valid = _never_more_than_jsonschema(schema._schema("row.schema.json"), documents)
    # the common valid row is answered quickly; what it leaves to jsonschema is an edge (1.0 as an integer)
    assert quick >= 0.9 * valid and valid > 250


def test_provenance_checks_never_accept_an_invalid_provenance(tmp_path):
    from results_testutil import ingested
    prov = json.loads((ingested(tmp_path) / "provenance.json").read_text())
    quick, valid = _never_more_than_jsonschema(schema._schema("provenance.schema.json"),
                                               [prov] + list(_mutations(prov, random.Random(3), 600)))
    assert quick >= 0.9 * valid and valid > 40


def test_reframe_report_checks_never_accept_an_invalid_report():
    report = json.loads(REPORT_A.read_text())
    quick, valid = _never_more_than_jsonschema(report_reader._reframe_report_schema(),
                                               [report] + list(_mutations(report, random.Random(5), 400)))
    assert quick >= 0.9 * valid and valid > 40


def test_reframe_schema_is_the_one_reframe_reads():
    from reframe.frontend.reporting import _schema
    assert report_reader._reframe_report_schema() == _schema()


def test_a_schema_with_an_unknown_keyword_is_left_to_jsonschema():
    assert fast_schema.compile_schema({"type": "object", "patternProperties": {"^a": {}}}) is None
    assert fast_schema.compile_schema({"type": "object", "properties": {"a": {"oneOf": [{}]}}}) is None


def _samples(rng, count):
    for _ in range(count):
        n, m = rng.randint(2, 14), rng.randint(2, 14)
        levels = rng.choice([2, 4, 10, 10 ** 6])
        scale = rng.choice([1.0, 0.37, 1e-9])
        yield ([rng.randint(0, levels) * scale for _ in range(n)], [rng.randint(0, levels) * scale for _ in range(m)])


def test_rank_test_gives_the_p_values_of_stats():
    rng = random.Random(7)
    methods = set()
    for x, y in _samples(rng, 300):
        assert rank_test.mann_whitney_greater(x, y) == stats.mann_whitney_greater(x, y), (x, y)
        pooled = len(set(x + y))
        methods.add("ties" if pooled < len(x) + len(y) else "distinct")
    assert methods == {"ties", "distinct"}
    # a run compared with itself: every value tied with its twin, the permutation method's case
    same = [1.0, 1.1, 1.2, 0.9, 1.05, 1.3, 0.95]
    assert rank_test.mann_whitney_greater(same, same) == stats.mann_whitney_greater(same, same)
    assert rank_test.mann_whitney_greater([1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]) == \
        pytest.approx(stats.mann_whitney_greater([1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]), nan_ok=True)


def test_quick_medians_are_the_medians_of_stats():
    rng = random.Random(9)
    for _ in range(3000):
        n = rng.randint(1, 17)
        values = rng.choice([
            lambda: [rng.lognormvariate(0, 2) * 10 ** rng.randint(-300, 300) for _ in range(n)],
            lambda: [float(rng.randint(-2, 2)) for _ in range(n)],
            lambda: [rng.randint(-5, 5) for _ in range(n)],
            lambda: [rng.gauss(100, 3) for _ in range(n)]])()
        assert quick_stats.median(values) == stats.median(values)
        assert quick_stats.robust_relative_sigma(values) == stats.robust_relative_sigma(values)
    assert quick_stats.median([1.0, float("nan")]) != quick_stats.median([1.0, float("nan")])  # NaN, as numpy


def test_ingest_counts_repeats_per_case_and_figure(tmp_path):
    from results_testutil import ingested
    from yeebench.results import store
    rows = store.read_rows(ingested(tmp_path, SMOKE_RUN) / "rows.jsonl")
    seen = {}
    for row in rows:
        key = (row["system"], row["partition"], row["environ"], row["check"],
               tuple(sorted((k, str(v)) for k, v in row["parameters"].items())), row["metric"])
        assert row["repeat"] == seen.get(key, 0)
        seen[key] = row["repeat"] + 1
