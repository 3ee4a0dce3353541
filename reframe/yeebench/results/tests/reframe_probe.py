"""ReFrame runs of tests/fixtures/checks/perflog_probe.py under a minimal configuration of its own
(system `probesys`, partition `p1`, environment `builtin`), written the way ReFrame's documentation
shows one, with the perflog handlers a test gives."""
import os
import subprocess
from pathlib import Path

from results_testutil import FIXTURES

REPO = Path(__file__).resolve().parents[4]
REFRAME = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "reframe"
PROBE = FIXTURES / "checks" / "perflog_probe.py"
SNIPPET = REPO / "results" / "perflog_httpjson_handler.py"
SYSTEM, PARTITION = "probesys", "p1"

CONFIG = '''
import runpy
from yeebench.results import perflog_http

HANDLER = runpy.run_path({snippet!r})["YEEBENCH_PERFLOG_HANDLER"]
site_configuration = {{
    "systems": [{{"name": {system!r}, "descr": "perflog probe", "hostnames": [".*"],
                 "partitions": [{{"name": {partition!r}, "scheduler": "local", "launcher": "local",
                                 "environs": ["builtin"]}}]}}],
    "environments": [{{"name": "builtin"}}],
    "logging": [{{"handlers_perflog": [{handlers}]}}],
}}
'''


def write_config(folder, handlers=()):
    """A configuration file whose perflog handlers are the given Python expressions (HANDLER is the
    snippet's dictionary, perflog_http the formatters' module)."""
    path = Path(folder) / "probe_settings.py"
    path.write_text(CONFIG.format(snippet=str(SNIPPET), system=SYSTEM, partition=PARTITION,
                                  handlers=", ".join(handlers)))
    return path


def run_probe(folder, config, *argv, references=None):
    """One ReFrame run of the probe; CompletedProcess. references: YEEBENCH_REFERENCES_DIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RFM_")}
    if references is not None:
        env["YEEBENCH_REFERENCES_DIR"] = str(references)
    return subprocess.run([str(REFRAME), "-C", str(config), "-c", str(PROBE), "--prefix", str(Path(folder) / "rfm"),
                           "-r", *map(str, argv)], capture_output=True, text=True, env=env, cwd=folder, timeout=300)
