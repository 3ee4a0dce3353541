"""Read-only access to ReFrame's results database (`storage` in reframe/config/settings.py).

ReFrame (4.7+) stores each session's full run report as JSON in the `sessions` table of an
SQLite file; the layout is versioned in `metadata.schema_version`. Anything else, a damaged
file or another layout, is refused with one line; the database is never written.
"""
import sqlite3
from pathlib import Path

from yeebench.results.errors import ResultsError

SUPPORTED_SCHEMA = "1.0"


def _connect(db_path):
    path = Path(db_path)
    if not path.is_file():
        raise ResultsError(f"no ReFrame results database at {db_path}")
    try:
        return sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    except sqlite3.Error as err:
        raise ResultsError(f"cannot open ReFrame results database {db_path}: {err}") from None


def sessions(db_path, session_ids=None):
    """(uuid, report JSON text) of every stored session, oldest first, or of the named ones."""
    conn = _connect(db_path)
    try:
        version = conn.execute("SELECT schema_version FROM metadata").fetchone()
        if version is None or version[0] != SUPPORTED_SCHEMA:
            found = "none" if version is None else repr(version[0])
            raise ResultsError(f"{db_path} is a ReFrame results database of schema version {found}; "
                               f"this yeebench reads {SUPPORTED_SCHEMA}")
        rows = conn.execute("SELECT uuid, json_blob FROM sessions ORDER BY session_start_unix").fetchall()
    except sqlite3.DatabaseError as err:
        raise ResultsError(f"{db_path} is not a ReFrame results database ({err})") from None
    finally:
        conn.close()
    if session_ids:
        wanted = set(session_ids)
        unknown = wanted - {uuid for uuid, _ in rows}
        if unknown:
            raise ResultsError(f"no session {', '.join(sorted(unknown))} in {db_path}")
        rows = [r for r in rows if r[0] in wanted]
    return rows
