"""Per-system reference values, kept in data files (reframe/config/references/<system>.json).

File layout (values follow ReFrame's reference tuples: value, lower and upper
bound as fractions of the value (null = unbounded), unit):

  {"partitions": {
     "<partition name or *>": {
       "<check pattern>": {"<perf variable>": [value, lower, upper, "unit"], ...}}}}

A check pattern is an fnmatch pattern matched against the check's display name
(e.g. "OsuPt2Pt %benchmark=osu_latency*") or its class name.  Every matching
entry applies; later (more specific) patterns win for the same variable.
"""
import fnmatch
import json
import os
from pathlib import Path

from yeebench import package_data

DEFAULT_DIR = package_data.references_dir()   # the package's copy of reframe/config/references


class ReferenceError(ValueError):
    """A reference file exists but cannot be used (the message names the file and the problem)."""


def references_dir():
    return Path(os.environ.get('YEEBENCH_REFERENCES_DIR', DEFAULT_DIR))


def load(system, directory=None):
    """The parsed reference file of `system`, or {} when there is none."""
    path = Path(directory or references_dir()) / f'{system}.json'
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ReferenceError(f'{path}: not valid JSON: {err}') from None
    if not isinstance(data.get('partitions', {}), dict):
        raise ReferenceError(f'{path}: "partitions" must be an object')
    return data


def lookup(data, partition, names):
    """{perf variable: (value, lower, upper, unit)} for a check called any of `names`."""
    out = {}
    partitions = data.get('partitions', {})
    for part_key in ('*', partition):
        for pattern, values in partitions.get(part_key, {}).items():
            if any(fnmatch.fnmatchcase(n, pattern) for n in names):
                for var, ref in values.items():
                    if not isinstance(ref, list) or len(ref) != 4:
                        raise ReferenceError(f'reference {pattern!r}/{var}: expected [value, lower, upper, unit]')
                    out[var] = tuple(ref)
    return out
