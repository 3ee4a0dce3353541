"""ReFrame perflog handler that sends each figure of the yeebench checks to a time-series database the
moment its test case finishes: the same series, labels and values as `yeebench results export` of the
ingested run (results/schema/export.md), so one dashboard (results/grafana_dashboard.json) reads both.

Add it to your own ReFrame configuration, where `logging` lists its perflog handlers:

    import runpy
    YEEBENCH_PERFLOG_HANDLER = runpy.run_path('/path/to/yeebench/results/perflog_httpjson_handler.py')[
        'YEEBENCH_PERFLOG_HANDLER']
    site_configuration = {
        ...
        'logging': [{
            'handlers_perflog': [
                ...,                                # keep the handlers you have (filelog, ...)
                dict(YEEBENCH_PERFLOG_HANDLER, url='http://tsdb.example.org:8428/api/v1/import'),
            ],
        }],
    }

or copy the dictionary below into it. Keys are those of ReFrame's `httpjson` handler (ReFrame 4.x,
"Logging configuration" in ReFrame's configuration reference):

  url              the import endpoint; json_formatter must write what it reads:
                     VictoriaMetrics /api/v1/import             perflog_http.vm_import
                     VictoriaMetrics /api/v1/import/prometheus  perflog_http.openmetrics
                     VictoriaMetrics /write, InfluxDB /write    perflog_http.influx
                     a receiver of your own                     perflog_http.export_jsonl
  json_formatter   called with (record, extras, ignore_keys); returns the request body, or None to
                   send nothing (a test case that failed before its performance stage)
  extra_headers    the body's content type (ReFrame's default says application/json)
  authorization_header  a callable returning the Authorization header, e.g. lambda: 'Token ...'
  backoff_intervals, retry_timeout  how ReFrame retries when the server answers 429 (busy)

ReFrame checks at start-up that it can connect to the URL's host and port; when it cannot, it warns
and runs without this handler (its other handlers and the run report are unaffected). A record the
server refuses is a warning, and the run goes on: `WARNING: could not log performance data for
<test case>: HTTPJSONhandler logging failed: HTTP response code 500`. The figures
are those of the run report: `yeebench results ingest` + `export --push` later gives the same series
(with the ingested run's id), so a site can use either path or both.
"""
from yeebench.results import perflog_http

YEEBENCH_PERFLOG_HANDLER = {
    'type': 'httpjson',
    'url': 'http://localhost:8428/api/v1/import',
    'level': 'info',
    'json_formatter': perflog_http.vm_import,
    'extra_headers': {'Content-Type': 'application/x-ndjson'},
    'backoff_intervals': [1, 2, 4],
    'retry_timeout': 60,
}
