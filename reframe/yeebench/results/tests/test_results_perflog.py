"""ReFrame's httpjson perflog handler with the documented snippet (results/perflog_httpjson_handler.py):
a real ReFrame run of a check on the suite's base class sends each figure, with its unit, direction
and parameters, to a receiver on 127.0.0.1, as the same series `results export` writes for the
ingested run."""
import json
import socket

import jsonschema
import pytest

from http_receiver import receiver
from reframe_probe import REFRAME, run_probe, write_config
from yeebench.results import export_figures
from yeebench.results.ingest import ingest
from yeebench.results.schema import SCHEMA_DIR

pytestmark = pytest.mark.skipif(not REFRAME.exists(), reason=f"no ReFrame at {REFRAME}")


def _lines(requests, path):
    return [json.loads(line) for where, _, body in requests if where == path
            for line in body.decode().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def perflog_run(tmp_path_factory):
    """One probe run with two handlers: the snippet as shipped (VictoriaMetrics import lines) and the
    same with the export objects' formatter; what the receiver got, and the run's report ingested."""
    folder = tmp_path_factory.mktemp("perflog")
    with receiver() as rx:
        config = write_config(folder, [
            f'dict(HANDLER, url="{rx.url}/api/v1/import")',
            f'dict(HANDLER, url="{rx.url}/objects", json_formatter=perflog_http.export_jsonl, '
            f'extra_headers={{"Content-Type": "application/json"}})'])
        proc = run_probe(folder, config, "--report-file", folder / "report.json")
        requests = list(rx.requests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = ingest(folder / "report.json", folder / "results")
    return requests, export_figures.load_objects([run_dir])


def _without_run_id(obj):
    return {k: v for k, v in obj.items() if k != "run_id"}


def test_every_figure_arrives_as_export_objects(perflog_run):
    requests, ingested = perflog_run
    received = _lines(requests, "/objects")
    validator = jsonschema.Draft7Validator(json.loads((SCHEMA_DIR / "export.schema.json").read_text()))
    for obj in received:
        validator.validate(obj)
    assert len(received) == len(ingested) == 6            # 2 cases x 3 figures
    by_case = {(o["parameters"]["size"], o["metric"]): o for o in received}
    assert by_case[(64, "bandwidth")]["unit"] == "MB/s" and by_case[(64, "bandwidth")]["direction"] == "higher"
    assert by_case[(4096, "latency")]["unit"] == "us" and by_case[(4096, "latency")]["direction"] == "lower"
    # MiB/s reaches the database in SI, as ingest records it: 100 MiB/s = 104.8576 MB/s
    assert by_case[(64, "throughput")]["unit"] == "MB/s"
    assert by_case[(64, "throughput")]["value"] == pytest.approx(104.8576)
    assert all(o["run_id"].split("-perflog-")[1].isdigit() for o in received)


def test_the_perflog_path_and_ingest_plus_export_give_the_same_figures(perflog_run):
    requests, ingested = perflog_run
    received = _lines(requests, "/objects")
    key = lambda o: json.dumps(_without_run_id(o), sort_keys=True)   # noqa: E731
    assert sorted(map(key, received)) == sorted(map(key, ingested))


def test_the_shipped_snippet_sends_victoriametrics_import_lines(perflog_run):
    requests, ingested = perflog_run
    lines = _lines(requests, "/api/v1/import")
    headers = [h for where, h, _ in requests if where == "/api/v1/import"]
    assert headers and all(h["Content-Type"] == "application/x-ndjson" for h in headers)
    got = sorted(json.dumps(dict(line["metric"], run_id=None, value=line["values"], ts=line["timestamps"]),
                            sort_keys=True) for line in lines)
    expected = sorted(json.dumps(dict({"__name__": export_figures.SERIES, **export_figures.labels(o)}, run_id=None,
                                      value=[o["value"]], ts=[export_figures.timestamp_ms(o["timestamp"])]),
                                 sort_keys=True) for o in ingested)
    assert got == expected


def test_a_refused_record_is_a_warning_and_the_run_goes_on(tmp_path):
    with receiver() as rx:
        rx.status = 500
        config = write_config(tmp_path, [f'dict(HANDLER, url="{rx.url}/api/v1/import")'])
        proc = run_probe(tmp_path, config)
        assert len(rx.requests) == 2
    assert proc.returncode == 0
    assert "could not log performance data" in proc.stdout + proc.stderr and "HTTP response code 500" in proc.stdout + proc.stderr


def test_an_unreachable_receiver_leaves_the_run_alone(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = write_config(tmp_path, [f'dict(HANDLER, url="http://127.0.0.1:{port}/api/v1/import")'])
    proc = run_probe(tmp_path, config)
    assert proc.returncode == 0 and "httpjson: could not connect to server" in proc.stdout + proc.stderr
