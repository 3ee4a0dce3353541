"""`yeebench results export`: the versioned export schema, each format's escaping, refused figures, and
pushes to a local stand-in endpoint (accepted, refused, unreachable, silent, batched)."""
import base64
import json
import re
import socket
from pathlib import Path

import jsonschema
import pytest

from http_receiver import receiver
from results_testutil import ingested, run_cli, synthetic_run
from yeebench.results import export_figures, export_formats, export_push, export_readback
from yeebench.results.schema import SCHEMA_DIR

REPO = Path(__file__).resolve().parents[4]
EXPORT_MD = REPO / "results" / "schema" / "export.md"

# Each schema version's layout. A change to what the code writes needs a new version and entry here
# (results/schema/export.md, "Versioning rule").
KNOWN_LAYOUTS = {
    1: {"fields": ["check", "direction", "environ", "git_sha", "image_digest", "metric", "parameters", "partition",
                   "repeat", "run_id", "schema", "schema_version", "system", "timestamp", "unit", "value"],
        "labels": ["system", "partition", "environ", "check", "metric", "unit", "direction", "repeat", "run_id",
                   "git_sha", "image_digest"],
        "param_prefix": "param_", "series": "yeebench_figure", "influx": ("yeebench", "figure")},
}


def _export_schema():
    return json.loads((SCHEMA_DIR / "export.schema.json").read_text())


def _objects(run_dir):
    return export_figures.load_objects([run_dir])


def test_layout_is_the_one_recorded_for_its_version(tmp_path):
    version = export_figures.EXPORT_SCHEMA_VERSION
    schema = _export_schema()
    obj = _objects(ingested(tmp_path))[0]
    layout = {"fields": sorted(obj), "labels": list(export_figures.LABEL_FIELDS),
              "param_prefix": export_figures.PARAM_PREFIX, "series": export_figures.SERIES,
              "influx": (export_figures.INFLUX_MEASUREMENT, export_figures.INFLUX_FIELD)}
    assert version in KNOWN_LAYOUTS, f"schema version {version} has no recorded layout"
    assert layout == KNOWN_LAYOUTS[version], "the export layout changed: bump EXPORT_SCHEMA_VERSION"
    assert schema["properties"]["schema_version"]["const"] == version
    assert sorted(schema["properties"]) == layout["fields"] == sorted(schema["required"])
    assert re.search(rf"^# Export schema .*, version {version}$", EXPORT_MD.read_text(), re.M)


def test_export_md_lists_every_label_the_code_writes():
    text = EXPORT_MD.read_text()
    table = text.split("| JSON field | label")[1].split("\n\n")[0]
    documented = set()
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        documented |= set(re.findall(r"`([a-z_<>]+)`", cells[1]))
    assert documented == set(export_figures.LABEL_FIELDS) | {"param_<name>"}
    order = text.split("Labels, in the order they are written: ")[1].split(", then")[0]
    assert re.findall(r"`([a-z_]+)`", order) == list(export_figures.LABEL_FIELDS)


def test_jsonl_objects_follow_the_schema_and_hold_the_rows(tmp_path):
    run_dir = ingested(tmp_path)
    proc = run_cli("results", "export", run_dir, "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    validator = jsonschema.Draft7Validator(_export_schema())
    for obj in objects:
        validator.validate(obj)
    rows = [json.loads(line) for line in (run_dir / "rows.jsonl").read_text().splitlines()]
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert len(objects) == len(rows) > 0
    for obj, row in zip(objects, rows):
        assert (obj["check"], obj["metric"], obj["value"], obj["unit"], obj["repeat"], obj["parameters"]) == \
               (row["check"], row["metric"], row["value"], row["unit"], row["repeat"], row["parameters"])
        assert obj["git_sha"] == prov["git"]["sha"]


def test_openmetrics_document(tmp_path):
    run_dir = ingested(tmp_path)
    proc = run_cli("results", "export", run_dir)       # openmetrics is the default
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[0] == "# TYPE yeebench_figure gauge" and lines[-1] == "# EOF"
    samples = [line for line in lines if not line.startswith("#")]
    assert len(samples) == len(_objects(run_dir))
    pattern = re.compile(r'^yeebench_figure\{(\w+="(\\.|[^"\\])*",?)+\} -?[0-9.e+-]+ \d{10}\.\d{3}$')
    assert all(pattern.match(line) for line in samples), samples[0]


HOSTILE = 'say "hi" \\ back\\slash, a=b µs ✓'


def test_openmetrics_and_influx_escape_label_values(tmp_path):
    run_dir = synthetic_run(tmp_path, "r1", {"time_s": [1.5]}, params={"label": HOSTILE + "\nnext"})
    om = run_cli("results", "export", run_dir, "--format", "openmetrics")
    assert om.returncode == 0
    assert 'param_label="say \\"hi\\" \\\\ back\\\\slash, a=b µs ✓\\nnext"' in om.stdout
    influx_ok = synthetic_run(tmp_path, "r2", {"time_s": [1.5]}, params={"label": HOSTILE})
    influx = run_cli("results", "export", influx_ok, "--format", "influx")
    assert influx.returncode == 0
    assert ',param_label=say\\ "hi"\\ \\\\\\ back\\\\slash\\,\\ a\\=b\\ µs\\ ✓ figure=1.5 ' in influx.stdout
    jsonl = run_cli("results", "export", run_dir, "--format", "jsonl")
    assert json.loads(jsonl.stdout)["parameters"]["label"] == HOSTILE + "\nnext"


def test_a_line_break_influx_cannot_carry_is_refused_on_one_line(tmp_path):
    run_dir = synthetic_run(tmp_path, "r1", {"time_s": [1.5]}, params={"label": "two\nlines"})
    proc = run_cli("results", "export", run_dir, "--format", "influx")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "line break" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("value, says", [(float("nan"), "not a finite number"), (float("inf"), "not a finite number"),
                                         (-2.0, "negative")])
def test_figures_no_series_can_hold_are_refused(tmp_path, value, says):
    run_dir = synthetic_run(tmp_path, "r1", {"time_s": [1.0, value]})
    with receiver() as rx:
        proc = run_cli("results", "export", run_dir, "--push", f"{rx.url}/api/v1/import")
    assert proc.returncode == 2 and says in proc.stderr and "time_s" in proc.stderr
    assert proc.stderr.count("\n") == 1 and rx.requests == []


def test_negative_allowed_where_the_figure_may_be_negative(tmp_path):
    run_dir = synthetic_run(tmp_path, "r1", {"offset": [-2.0]}, units={"offset": ""}, directions={"offset": "lower"})
    proc = run_cli("results", "export", run_dir, "--format", "jsonl")
    assert proc.returncode == 0 and json.loads(proc.stdout)["value"] == -2.0


def test_a_lone_surrogate_is_refused(tmp_path):
    run_dir = synthetic_run(tmp_path, "r1", {"time_s": [1.0]}, params={"label": "\ud800"})
    proc = run_cli("results", "export", run_dir, "--format", "jsonl")
    assert proc.returncode == 2 and "not valid Unicode" in proc.stderr


@pytest.mark.parametrize("path, fmt", [("/api/v1/import/prometheus", "openmetrics"), ("/api/v1/import", "vm-jsonl"),
                                       ("/write", "influx"), ("/api/v2/write", "influx")])
def test_each_endpoint_gets_its_format(tmp_path, path, fmt):
    run_dir = ingested(tmp_path)
    objects = _objects(run_dir)
    with receiver() as rx:
        proc = run_cli("results", "export", run_dir, "--push", f"{rx.url}{path}?db=yeebench")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and f"{len(objects)} figures of 1 run(s) pushed" in proc.stderr
    ((where, headers, body),) = rx.requests
    assert where == f"{path}?db=yeebench"
    assert headers["Content-Type"] == export_push.CONTENT_TYPES[fmt]
    assert body.decode() == export_formats.document(export_formats.lines(objects, fmt), fmt)


def test_a_refused_write_exits_3_saying_none_was_accepted(tmp_path):
    run_dir = ingested(tmp_path)
    total = len(_objects(run_dir))
    with receiver() as rx:
        rx.status, rx.answer = 404, b'{"error":"database not found: \\"yeebench\\""}\n'
        proc = run_cli("results", "export", run_dir, "--push", f"{rx.url}/write?db=yeebench")
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1
    assert "HTTP 404" in proc.stderr and "database not found" in proc.stderr
    assert f"0 of {total} figures were accepted" in proc.stderr and "all accepted" not in proc.stderr


def test_a_failure_after_some_batches_counts_what_was_accepted(tmp_path):
    lines = export_formats.lines(_objects(ingested(tmp_path))[:5], "vm-jsonl")
    with receiver() as rx:
        rx.statuses = [204, 500]
        with pytest.raises(export_push.PushError) as err:
            export_push.push(lines, f"{rx.url}/api/v1/import", "vm-jsonl", batch=2)
    assert "2 of 5 figures were accepted" in str(err.value) and "1 more were not sent" in str(err.value)
    assert len(rx.requests) == 2


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_database(tmp_path):
    proc = run_cli("results", "export", ingested(tmp_path), "--push", f"http://127.0.0.1:{_closed_port()}/api/v1/import")
    assert proc.returncode == 3 and "connection refused" in proc.stderr and "0 of " in proc.stderr


def test_a_database_that_never_answers(tmp_path):
    with socket.socket() as silent:      # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/api/v1/import"
        proc = run_cli("results", "export", ingested(tmp_path), "--push", url, "--timeout", "1")
    assert proc.returncode == 3 and "no answer within 1 s" in proc.stderr


def test_credentials_are_sent_and_never_printed(tmp_path):
    with receiver() as rx:
        rx.status = 401
        url = rx.url.replace("://", "://ci:s3cret@") + "/api/v2/write?org=o&bucket=b&token=t0ken"
        proc = run_cli("results", "export", ingested(tmp_path), "--push", url)
    assert proc.returncode == 3 and "HTTP 401" in proc.stderr
    assert "s3cret" not in proc.stderr and "t0ken" not in proc.stderr and "ci:" not in proc.stderr
    headers = rx.requests[0][1]
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"ci:s3cret").decode()


@pytest.mark.parametrize("argv, says", [
    (["--push", "ftp://127.0.0.1/api/v1/import"], "not an http"),
    (["--push", "http://127.0.0.1:1/metrics"], "no known import endpoint"),
    (["--push", "http://127.0.0.1:notaport/write"], "not a URL"),
    (["--verify"], "--verify reads back"),
    (["--push", "http://127.0.0.1:1/api/v1/import", "--max-labels", "5"], "labels, more than --max-labels 5"),
])
def test_bad_usage_exits_2_before_sending(tmp_path, argv, says):
    proc = run_cli("results", "export", ingested(tmp_path), *argv)
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.count("\n") == 1


def test_output_file_and_a_missing_run(tmp_path):
    out = tmp_path / "figures.prom"
    proc = run_cli("results", "export", ingested(tmp_path), "-o", out)
    assert proc.returncode == 0 and proc.stdout.strip() == str(out) and out.read_text().endswith("# EOF\n")
    missing = run_cli("results", "export", tmp_path / "nope")
    assert missing.returncode == 2 and "nope" in missing.stderr


def _sample(obj, value=None, extra=None):
    labels = {"__name__": export_figures.SERIES, **export_figures.labels(obj), **(extra or {})}
    return labels, obj["value"] if value is None else value, export_figures.timestamp_ms(obj["timestamp"])


def test_readback_compare(tmp_path):
    objects = _objects(ingested(tmp_path))[:3]
    exact = [_sample(o) for o in objects]
    assert export_readback.compare(objects, exact) == []
    twelve_digits = [_sample(o, float(f"{o['value']:.12g}")) for o in objects]
    assert export_readback.compare(objects, twelve_digits) == []
    assert export_readback.compare(objects, exact + exact[:1]) == []        # the same push twice
    off = [_sample(objects[0], objects[0]["value"] * (1 + 1e-6))] + exact[1:]
    assert len(export_readback.compare(objects, off)) == 1
    missing = export_readback.compare(objects, exact[1:])
    assert len(missing) == 1 and "not stored" in missing[0]
    extra = export_readback.compare(objects, [_sample(o, extra={"ci": "x"}) for o in objects])
    assert len(extra) == 6                                                   # 3 unexpected + 3 not stored
    assert export_readback.compare(objects, [_sample(o, extra={"ci": "x"}) for o in objects], {"ci": "x"}) == []


def test_readback_base_url_and_extra_labels():
    url = "http://u:p@vm.example:8428/prefix/api/v1/import/prometheus?extra_label=site=a&extra_label=ci=b"
    assert export_readback.base_url(url) == "http://vm.example:8428/prefix"
    assert export_readback.extra_labels(url) == {"site": "a", "ci": "b"}
    assert export_readback.base_url("http://vm:8428/influx/write?db=x") == "http://vm:8428"


@pytest.mark.parametrize("sub", ["export", "calibrate"])
def test_subcommand_help(sub):
    proc = run_cli("results", sub, "--help")
    assert proc.returncode == 0 and f"yeebench results {sub}" in proc.stdout


def test_dashboard_queries_name_labels_and_figures_the_smoke_run_has(tmp_path):
    """Each panel of results/grafana_dashboard.json reads yeebench_figure through the dashboard's
    Prometheus data source variable, and names checks, metrics and labels a smoke run exports."""
    from results_testutil import FIXTURES
    dashboard = json.loads((REPO / "results" / "grafana_dashboard.json").read_text())
    objects = _objects(ingested(tmp_path, FIXTURES / "reports" / "suite_smoke_run.json"))
    label_names = {name for obj in objects for name in export_figures.labels(obj)}
    figures = {(o["check"], o["metric"]) for o in objects}
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource", "system"]
    assert dashboard["templating"]["list"][0]["query"] == "prometheus"
    for panel in dashboard["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for target in panel["targets"]:
            expr = target["expr"]
            assert "yeebench_figure{" in expr and 'system=~"$system"' in expr
            check, metric = re.search(r'check="([^"]+)"', expr), re.search(r'metric="([^"]+)"', expr)
            if check or metric:
                assert (check.group(1), metric.group(1)) in figures, panel["title"]
            grouped = re.findall(r"by \(([^)]*)\)", expr)
            used = {n.strip() for group in grouped for n in group.split(",")}
            used |= set(re.findall(r"\{\{(\w+)\}\}", target.get("legendFormat", "")))
            assert used <= label_names, (panel["title"], used - label_names)
