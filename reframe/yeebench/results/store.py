"""Run directories on disk: atomic writes and validated reads.

A run is results/<system>/<run-id>/ holding rows.jsonl, provenance.json and the
raw ReFrame report. It is built in a hidden temporary sibling directory and
renamed into place, so a run directory either exists complete or not at all,
and an existing run is never replaced.
"""
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from yeebench.processes import alive
from yeebench.results.errors import ResultsError
from yeebench.results.schema import validate_provenance, validate_row

ROWS_FILE = "rows.jsonl"
PROVENANCE_FILE = "provenance.json"
REPORT_FILE = "report.json"


def _default_file_mode():
    """0666 minus the umask: what open() would have given the file (mkstemp gives 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _output_path(path):
    path = Path(path)
    if path.is_dir():
        raise ResultsError(f"output path {path} is a directory; give a file name")
    return path


def atomic_write_text(path, text):
    """Write text (UTF-8) to path via a temporary file in the same directory and a rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path, data):
    """Write bytes to path via a temporary file in the same directory and a rename."""
    path = _output_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.pid{os.getpid()}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        os.fchmod(fd, _default_file_mode())
        with os.fdopen(fd, "wb") as fp:
            fp.write(data)
            fp.flush()
            os.fsync(fp.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


TMP_SUFFIX = ".tmp"
STALE_AFTER_S = 24 * 3600   # a temporary this old is stale even if its PID is alive again (reused)
_OWNER = re.compile(r"^\..+\.pid(\d+)\.[^.]+\.tmp$")


def is_temporary(path):
    """A hidden '.<name>.*.tmp' entry: a run or file still being written, or left by a killed writer."""
    name = Path(path).name
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def clean_stale_temporaries(directory, now=None):
    """Remove the temporaries an earlier, killed write left in directory: those whose owning process
    is gone, and any older than STALE_AFTER_S. Returns the paths removed."""
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not is_temporary(entry.name):
            continue
        match = _OWNER.match(entry.name)
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except FileNotFoundError:
            continue
        owner_gone = match is not None and not alive(int(match.group(1)))
        if owner_gone or age > STALE_AFTER_S:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass
            removed.append(Path(entry.path))
    return removed


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
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(run_dir.parent)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.pid{os.getpid()}.", suffix=TMP_SUFFIX,
                                    dir=run_dir.parent))
    try:
        for name, text in ((ROWS_FILE, rows_to_jsonl(rows)),
                           (PROVENANCE_FILE, json.dumps(provenance, indent=2, sort_keys=True) + "\n"),
                           (REPORT_FILE, report_text)):
            with open(tmp_dir / name, "w") as fp:
                fp.write(text)
                fp.flush()
                os.fsync(fp.fileno())
        os.chmod(tmp_dir, 0o777 & ~(_default_file_mode() ^ 0o666))
        try:
            # rename(2) onto an existing non-empty directory fails: no overwrite even in a race
            os.rename(tmp_dir, run_dir)
        except OSError as err:
            raise ResultsError(f"cannot create run directory {run_dir}: {err.strerror}") from None
    finally:
        if tmp_dir.exists():
            shutil.rmtree(tmp_dir, ignore_errors=True)
    return run_dir


def read_rows(path):
    """Rows of a rows.jsonl file, each validated; a bad line names file and line."""
    path = Path(path)
    rows = []
    try:
        with open(path) as fp:
            for lineno, line in enumerate(fp, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ResultsError(f"{path}:{lineno}: not valid JSON ({err.msg}); file corrupt or truncated") from None
                validate_row(row, f"{path}:{lineno}")
                rows.append(row)
    except OSError as err:
        raise ResultsError(f"cannot read {path}: {err.strerror}") from None
    return rows


def read_json(path, what):
    path = Path(path)
    try:
        with open(path) as fp:
            return json.load(fp)
    except OSError as err:
        raise ResultsError(f"cannot read {what} {path}: {err.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ResultsError(f"{what} {path} is not valid JSON ({getattr(err, 'msg', err)}); corrupt or truncated?") from None


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
