"""Run directories on disk: atomic writes and validated reads.

A run is results/<system>/<run-id>/ holding rows.jsonl, provenance.json and the
raw ReFrame report. It is built in a hidden temporary sibling directory and
renamed into place, so a run directory either exists complete or not at all,
and an existing run is never replaced. Every file is written and read through
yeebench.safe_io: an output replaces only a regular file, an input is a regular
file of bounded size, and a temporary is told live or stale by its lock.
"""
import json
import math
import os
from pathlib import Path

from yeebench import safe_io
from yeebench.results import untrusted_json
from yeebench.results.errors import ResultsError
from yeebench.results.schema import validate_provenance, validate_row

ROWS_FILE = "rows.jsonl"
PROVENANCE_FILE = "provenance.json"
REPORT_FILE = "report.json"
#: The largest files read back: a run of the whole suite on one node writes a few MiB of rows, the
#: smoke set on 1,000 nodes (27,016 test cases) 107 MB of rows and a 26 MB provenance.
ROWS_LIMIT = 256 * safe_io.MIB
JSON_LIMIT = ROWS_LIMIT        # a baseline file holds the rows of the runs it pools

TMP_SUFFIX = safe_io.TMP_SUFFIX


def atomic_write_text(path, text):
    """Write text (UTF-8) to path via a temporary file in the same directory and a rename."""
    atomic_write_bytes(path, text.encode("utf-8", "replace"))


def atomic_write_bytes(path, data):
    """Write bytes to path via a temporary file in the same directory and a rename; ResultsError where
    path exists and is not a regular file (a link, a device, a FIFO, a directory)."""
    try:
        safe_io.write_bytes(path, data)
    except safe_io.FileRefused as err:
        raise ResultsError(str(err)) from None


def is_temporary(path):
    """A hidden '.<name>.*.tmp' entry: a run or file still being written, or left by a killed writer."""
    return safe_io.is_temporary(path)


def clean_stale_temporaries(directory, now=None):
    """Remove the temporaries killed writers left in directory (safe_io.clean_stale_temporaries: by
    their locks, never by a PID). Returns the paths removed. A directory that is a link is left alone:
    what it leads to is not the tree's to clean."""
    if Path(directory).is_symlink():
        return []
    return [Path(p) for p in safe_io.clean_stale_temporaries(directory, now)]


def rows_to_jsonl(rows):
    return "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)


def write_run(run_dir, rows, provenance, report_text):
    """Create run_dir with its three files; refuse when it already exists."""
    run_dir = Path(run_dir)
    for i, row in enumerate(rows):
        validate_row(row, f"row {i} to be written")
    validate_provenance(provenance, "provenance to be written")
    if run_dir.exists():
        raise ResultsError(f"run directory {run_dir} already exists; refusing to overwrite a recorded run")
    rows_data = rows_to_jsonl(rows).encode("utf-8", "replace")
    if len(rows_data) > ROWS_LIMIT:   # a run no tool could read back is not recorded
        raise ResultsError(f"the run's {len(rows)} figures make a rows file of {safe_io.size_text(len(rows_data))}, "
                           f"more than the {safe_io.size_text(ROWS_LIMIT)} the results tools read back; record it in "
                           f"parts (a ReFrame --report-file per partition, each ingested)")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(run_dir.parent)
    with safe_io.temporary_dir(str(run_dir.parent), run_dir.name) as tmp_dir:
        provenance_text = json.dumps(provenance, indent=2, sort_keys=True) + "\n"
        for name, data in ((ROWS_FILE, rows_data), (PROVENANCE_FILE, provenance_text.encode("utf-8", "replace")),
                           (REPORT_FILE, report_text.encode("utf-8", "replace"))):
            _write_new(os.path.join(tmp_dir, name), data)
        safe_io.release_owner(tmp_dir)
        try:
            # rename(2) onto an existing non-empty directory fails: no overwrite even in a race
            os.rename(tmp_dir, run_dir)
        except OSError as err:
            raise ResultsError(f"cannot create run directory {run_dir}: {err.strerror}") from None
    return run_dir


def _write_new(path, data):
    """A new file in our own temporary directory (exclusive: nothing there may be followed)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_text(path, what, limit):
    try:
        return safe_io.read_text(path, what, limit)
    except safe_io.FileRefused as err:
        raise ResultsError(str(err)) from None


def read_rows(path):
    """Rows of a rows.jsonl file (a regular file of at most ROWS_LIMIT bytes), each validated and with
    a finite value; a bad line names file and line."""
    path = Path(path)
    text = _read_text(path, "rows file", ROWS_LIMIT)
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ResultsError(f"{where}: not valid JSON ({err.msg}); file corrupt or truncated") from None
        except (ValueError, RecursionError):     # 5000 digits, or nesting past the parser
            raise ResultsError(f"{where}: not a row (a number too long or nesting too deep); file corrupt") from None
        validate_row(row, where)
        _check_value(row, where)
        if untrusted_json.has_lone_surrogate(row, line):    # no file, terminal or database takes it
            raise ResultsError(f"{where}: holds text that is not valid Unicode (a lone surrogate); file corrupt")
        rows.append(row)
    return rows


def _check_value(row, where):
    value = row["value"]
    try:
        finite = math.isfinite(value)
    except OverflowError:                        # an integer beyond a float
        finite = False
    if not finite:
        raise ResultsError(f"{where}: {row['metric']} = {str(value)[:40]} is not a finite number; file corrupt")


def read_json(path, what, limit=JSON_LIMIT):
    """The JSON document of a regular file of at most `limit` bytes; ResultsError naming `what`."""
    path = Path(path)
    return untrusted_json.loads(_read_text(path, what, limit), f"{what} {path}", scrub_surrogates=False)


def is_run_dir(path):
    return (Path(path) / ROWS_FILE).is_file()


class Run:
    """A recorded run loaded from disk (rows validated, provenance validated when present)."""

    def __init__(self, path, rows, provenance):
        self.path = Path(path)
        self.rows = rows
        self.provenance = provenance

    @property
    def run_id(self):
        if self.provenance:
            return self.provenance.get("run_id")
        return self.rows[0]["run_id"] if self.rows else self.path.name

    @property
    def label(self):
        return self.run_id or str(self.path)


def load_run(path):
    path = Path(path)
    if not path.exists():
        raise ResultsError(f"no such run: {path}")
    if is_temporary(path):
        raise ResultsError(f"{path} is a temporary directory of an unfinished ingest, not a recorded run")
    if not is_run_dir(path):
        raise ResultsError(f"{path} is not a run directory (no {ROWS_FILE})")
    rows = read_rows(path / ROWS_FILE)
    provenance = None
    if (path / PROVENANCE_FILE).exists():
        provenance = read_json(path / PROVENANCE_FILE, "provenance")
        validate_provenance(provenance, str(path / PROVENANCE_FILE))
    return Run(path, rows, provenance)


def find_runs(directory):
    """Run directories at or below directory (a run, a system folder or a results tree), sorted."""
    directory = Path(directory)
    if is_run_dir(directory):
        return [directory]
    return sorted(p.parent for p in directory.rglob(ROWS_FILE)
                  if not any(part.startswith(".") for part in p.relative_to(directory).parts))
