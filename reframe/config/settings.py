"""ReFrame configuration of yeebench: one file per system in systems/, environments in environments.py.

    reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R --mode smoke -r            # this machine
    reframe -C reframe/config/settings.py -c reframe/yeebench/checks -R -r --system <name>      # another system

`--mode smoke` is `-t smoke -S smoke=true`: the smoke set, at its smoke sizes (a run that selects
the smoke cases with `-t smoke` alone measures them at full size). With another site configuration,
which has no such mode, write the two options out.

Each systems/<file>.py defines a module-level `system` dict (a ReFrame `systems`
entry) and optionally `environments` (a list of ReFrame `environments` entries).
The catch-all system `local` (hostnames '.*') is placed last so that systems
matching a real host name are picked first.  Stage, output, perflog and report
files go under $YEEBENCH_RFM_DIR (default: build/reframe/ in the repository, git-ignored).
"""
import importlib.util
import os
import sys
from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent
REPO_ROOT = CONFIG_DIR.parents[1]
RFM_DIR = Path(os.environ.get('YEEBENCH_RFM_DIR', REPO_ROOT / 'build' / 'reframe'))
(RFM_DIR / 'reports').mkdir(parents=True, exist_ok=True)

# The check library must be importable even with a ReFrame installed outside our venv.
if str(REPO_ROOT / 'reframe') not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / 'reframe'))


def _load(path):
    spec = importlib.util.spec_from_file_location(f'yeebench_config_{path.stem}', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _collect():
    systems, environments = [], list(_load(CONFIG_DIR / 'environments.py').environments)
    for path in sorted((CONFIG_DIR / 'systems').glob('*.py')):
        if path.name.startswith('_'):
            continue
        module = _load(path)
        system = getattr(module, 'system', None)
        if system is None:
            continue
        system = dict(system)
        system.setdefault('prefix', str(RFM_DIR / system['name']))
        systems.append(system)
        environments.extend(getattr(module, 'environments', []))
    systems.sort(key=lambda s: s['name'] == 'local')   # catch-all last
    return systems, environments


_systems, _environments = _collect()

site_configuration = {
    'systems': _systems,
    'environments': _environments,
    'logging': [{
        'level': 'debug',
        'handlers': [
            {'type': 'stream', 'name': 'stdout', 'level': 'info', 'format': '%(message)s'},
            {'type': 'file', 'name': str(RFM_DIR / 'reframe.log'), 'level': 'debug',
             'format': '[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s', 'append': False},
        ],
        'handlers_perflog': [{
            'type': 'filelog',
            'prefix': '%(check_system)s/%(check_partition)s',
            'basedir': str(RFM_DIR / 'perflogs'),
            'level': 'info',
            # one line per test run: common fields, then every performance variable
            'format': ('%(check_job_completion_time)s|%(check_display_name)s|%(check_system)s:'
                       '%(check_partition)s|%(check_environ)s|%(check_perfvalues)s'),
            'format_perfvars': ('%(check_perf_var)s=%(check_perf_value)s %(check_perf_unit)s '
                                '(ref %(check_perf_ref)s, %(check_perf_result)s)|'),
            'append': True,
        }],
    }],
    'modes': [{'name': 'smoke', 'options': ['-t', 'smoke', '-S', 'smoke=true']}],
    'general': [{
        'report_file': str(RFM_DIR / 'reports' / 'run-report-{sessionid}.json'),
        'topology_prefix': str(RFM_DIR / 'topology'),
        'check_search_path': [str(REPO_ROOT / 'reframe' / 'yeebench' / 'checks')],
        'check_search_recursive': True,  # one folder per experiment
        'save_log_files': False,
    }],
    # ReFrame's results database, one per system, for `reframe --performance-compare`,
    # `--list-stored-sessions` and `yeebench results ingest --reframe-db` (RFM_ENABLE_RESULTS_STORAGE=0: off)
    'storage': [{'enable': True, 'target_systems': [s['name']],
                 'sqlite_db_file': str(RFM_DIR / 'results-db' / f"{s['name']}.db")} for s in _systems],
}
