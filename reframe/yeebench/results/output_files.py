"""Provenance from the JSON that yee and the microbenchmarks wrote in test output dirs.

yee prints a "yee-report" object (build info, placement); affinity/numa-bw/halo
print objects with a "program" key. They may be whole files (*.json) or the
job's stdout (rfm_job.out), possibly one object per line.
"""
import json
from pathlib import Path

_MAX_BYTES = 4 * 1024 * 1024
_KNOWN_PROGRAMS = ("affinity", "numa-bw", "halo")


def _json_objects(path):
    try:
        if path.stat().st_size > _MAX_BYTES:
            return []
        text = path.read_text(errors="replace")
    except OSError:
        return []
    try:
        whole = json.loads(text)
        return [whole] if isinstance(whole, dict) else []
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append(obj)
    return found


def program_outputs(case):
    """(program name, object) for each yee/microbench JSON object in the case's output dir."""
    seen = set()
    for key in ("outputdir", "stagedir"):
        directory = case.get(key)
        if not directory or not Path(directory).is_dir():
            continue
        for path in sorted(Path(directory).glob("*")):
            if not path.is_file() or not (path.suffix == ".json" or path.name.endswith(".out")):
                continue
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
