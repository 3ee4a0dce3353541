"""Read-only access to ReFrame's results database (`storage` in reframe/config/settings.py).

ReFrame (4.7+) stores each session's full run report as JSON in the `sessions` table of an
SQLite file; the layout is versioned in `metadata.schema_version`. Anything else, a damaged
file or another layout, is refused with one line; the database is never written.
"""
import sqlite3
import urllib.parse
from pathlib import Path

from yeebench.results.errors import ResultsError
from yeebench.results.report_reader import REPORT_LIMIT

SUPPORTED_SCHEMA = "1.0"


def _connect(db_path):
    path = Path(db_path)
    if not path.is_file():
        raise ResultsError(f"no ReFrame results database at {db_path}")
    try:
        return sqlite3.connect(f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as err:
        raise ResultsError(f"cannot open ReFrame results database {db_path}: {err}") from None


def sessions(db_path, session_ids=None):
    """(uuid, report JSON text) of every stored session, oldest first, or of the named ones. A session
    whose report is not text (NULL, a number, bytes that are not UTF-8) or larger than a report may be
    is refused naming it; the database's own text is never trusted to decode."""
    conn = _connect(db_path)
    conn.text_factory = bytes           # decoded here, session by session, not by sqlite3
    try:
        version = conn.execute("SELECT schema_version FROM metadata").fetchone()
        if version is None or _text(version[0]) != SUPPORTED_SCHEMA:
            found = "none" if version is None else repr(_text(version[0]))
            raise ResultsError(f"{db_path} is a ReFrame results database of schema version {found}; "
                               f"this yeebench reads {SUPPORTED_SCHEMA}")
        index = [(rowid, _text(uuid)) for rowid, uuid in conn.execute(
            "SELECT rowid, uuid FROM sessions ORDER BY session_start_unix")]
        if session_ids:
            wanted = set(session_ids)
            unknown = wanted - {uuid for _, uuid in index}
            if unknown:
                raise ResultsError(f"no session {', '.join(sorted(unknown))} in {db_path}")
            index = [(rowid, uuid) for rowid, uuid in index if uuid in wanted]
        rows = [(uuid, _report_text(conn, rowid, uuid, db_path)) for rowid, uuid in index]
    except sqlite3.DatabaseError as err:
        raise ResultsError(f"{db_path} is not a ReFrame results database ({err})") from None
    finally:
        conn.close()
    return rows


def _text(value):
    """A database value as text (bytes decoded with replacement, numbers as their text)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None if value is None else str(value)


def _report_text(conn, rowid, uuid, db_path):
    what = f"session {uuid} of {db_path}"
    size, kind = conn.execute("SELECT length(CAST(json_blob AS BLOB)), typeof(json_blob) FROM sessions "
                              "WHERE rowid = ?", (rowid,)).fetchone()
    kind = _text(kind)
    if kind not in ("text", "blob"):
        raise ResultsError(f"{what}: its report (json_blob) is {kind}, not JSON text")
    if size > REPORT_LIMIT:
        raise ResultsError(f"{what}: its report is {size} bytes, more than the {REPORT_LIMIT // 2 ** 20} MiB "
                           f"a report may be")
    blob = conn.execute("SELECT json_blob FROM sessions WHERE rowid = ?", (rowid,)).fetchone()[0]
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ResultsError(f"{what}: its report is not UTF-8 text (byte {err.start})") from None
