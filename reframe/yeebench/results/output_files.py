"""Provenance from the JSON that yee and the microbenchmarks wrote in test output dirs.

yee prints a "yee-report" object (build info, placement); affinity/numa-bw/halo
print objects with a "program" key. They may be whole files (*.json) or the
job's stdout (rfm_job.out), possibly one object per line.
"""
import json
import os
from pathlib import Path

from yeebench import safe_io

_MAX_BYTES = 4 * 1024 * 1024
#: Files of one output folder looked at: a job keeps a handful; a folder the report names may hold anything.
_MAX_FILES = 1000
_KNOWN_PROGRAMS = ("affinity", "numa-bw", "halo")


def _json_objects(path):
    """The JSON objects of a job's output file; none for anything but a regular file of at most
    _MAX_BYTES (a link to /proc/kmsg, a FIFO or a device is never opened for a blocking read)."""
    try:
        text = safe_io.read_bytes(path, "job output file", _MAX_BYTES).decode("utf-8", "replace")
    except safe_io.FileRefused:
        return []
    try:
        whole = json.loads(text)
        return [whole] if isinstance(whole, dict) else []
    except (ValueError, RecursionError):
        pass
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                found.append(obj)
    return found


def _output_files(directory):
    """The *.json and *.out entries of a folder, sorted, at most _MAX_FILES of them."""
    names = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith((".json", ".out")):
                    names.append(entry.name)
                    if len(names) >= _MAX_FILES:
                        break
    except OSError:
        return []
    return [Path(directory) / name for name in sorted(names)]


def program_outputs(case):
    """(program name, object) for each yee/microbench JSON object in the case's output dir."""
    seen = set()
    for key in ("outputdir", "stagedir"):
        directory = case.get(key)
        if not directory or not Path(directory).is_dir():
            continue
        for path in _output_files(directory):
            for obj in _json_objects(path):
                if obj.get("schema") == "yee-report":
                    program = "yee"
                elif obj.get("program") in _KNOWN_PROGRAMS:
                    program = obj["program"]
                else:
                    continue
                fingerprint = json.dumps(obj, sort_keys=True)
                if fingerprint in seen:  # stage and output dirs often hold the same file
                    continue
                seen.add(fingerprint)
                yield program, obj
        if seen:
            break  # the output dir had them; the stage dir is only a fallback
