"""The run history as a query layer: an SQLite cache over the run directories of a results tree.

The run directories (rows.jsonl + provenance.json, reviewable in git) are the
source of truth; RESULTS_DIR/.history.sqlite only caches, per run and figure, the
statistics the noise model and `compare --baseline history` query. Every open
re-checks each run directory's files (size, mtime, inode) against the cache and
re-reads the runs that disagree or are new, and forgets those that are gone; a
cache of another layout, or one that fails SQLite's quick check anywhere, is rebuilt
(into a temporary file renamed into place, under a lock: see History). SQLite rather
than DuckDB: it is in Python's standard library (no extra dependency) and is the
format ReFrame's own results database uses.
"""
import errno
import fcntl
import hashlib
import os
import sqlite3
import urllib.parse
from collections import defaultdict
from pathlib import Path

from yeebench import metrics, safe_io
from yeebench import stats
from yeebench.results import store
from yeebench.results.compare import DEFAULT_THRESHOLD, group_rows, location, top_spread
from yeebench.results.errors import ResultsError
from yeebench.results.noise import MIN_HISTORY_RUNS, pair_band

CACHE_NAME = ".history.sqlite"
DEFAULT_HISTORY_RUNS = 20  # the newest runs that make up the history

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE runs (id INTEGER PRIMARY KEY, path TEXT UNIQUE, signature TEXT, run_id TEXT,
                   system TEXT, started TEXT, suite_version TEXT);
CREATE TABLE figures (run INTEGER REFERENCES runs(id) ON DELETE CASCADE, system TEXT, partition TEXT,
                      environ TEXT, check_name TEXT, parameters TEXT, metric TEXT, unit TEXT,
                      direction TEXT, n INTEGER, best REAL, median REAL, top_spread REAL);
CREATE INDEX figures_by_system ON figures(system, run);
"""
# The layout is the schema's own digest: any change to the tables rebuilds the caches written before it
# (a hand-kept number was once set back to a value an older, different schema had used).
CACHE_LAYOUT = hashlib.sha256(_TABLES.encode()).hexdigest()[:16]


#: SQLite's files beside the cache: never followed, never written through a link.
_SIDE_FILES = ("-journal", "-wal", "-shm")


def _not_regular(path):
    """'' for a regular file or none at all; what it is otherwise ('a symbolic link', 'a directory' ...)."""
    try:
        return safe_io.file_kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return ""


def _whole(db):
    """True for a cache that passes SQLite's quick check and is of this layout."""
    try:
        whole = db.execute("PRAGMA quick_check").fetchone()
        row = db.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
    except sqlite3.DatabaseError:
        return False  # not a database, another layout, or damaged: never trusted
    return whole == ("ok",) and bool(row) and row[0] == CACHE_LAYOUT


SPREAD_QUANTILE = 0.9  # a run's repeats spread wider than 9 runs in 10 of the same figure: disturbed


def _signature(run_dir):
    parts = []
    for name in (store.ROWS_FILE, store.PROVENANCE_FILE):
        try:
            st = os.stat(Path(run_dir) / name)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
        except FileNotFoundError:
            parts.append("-")
    return "|".join(parts)


def _run_figures(run):
    """(key, unit, direction, n, best, median, top_spread) per figure of one run.

    top_spread (compare.top_spread; None for a single repeat): how far the best repeat lies from the
    next ones. A run whose best the others do not corroborate (beyond the default threshold) was
    disturbed as a whole and stays out of the history of the best: measured, seven such runs among
    twenty widened a 2-rank band from 9 % to 36 %."""
    out = []
    for key, rows in group_rows(run.rows).items():
        values = [r["value"] for r in rows]
        direction = rows[0]["direction"]
        best = spread = None
        if direction in (metrics.HIGHER, metrics.LOWER):
            best = location(values, direction, "best")
            spread = top_spread(values, direction) if len(values) > 1 else None
        out.append((key, rows[0]["unit"], direction, len(values), best, stats.median(values), spread))
    return out


class History:
    """Recorded runs under one results tree, queried through the cache.

    Opening takes an exclusive lock (flock on RESULTS_DIR/.history.sqlite.lock) while it validates,
    rebuilds and syncs the cache: concurrent commands wait for each other there and never see a
    half-built cache. Queries afterwards need no lock of ours (SQLite's own locks keep a reader and
    another command's sync apart), so one process may hold several Histories of one tree.

    A tree that cannot be written (read-only, not ours) or whose lock file or cache is not a regular
    file (a planted link is never followed) is read without writing to it: the cache, when it is whole,
    is copied into memory and synced there; `notes` says why."""

    def __init__(self, results_dir):
        self.results_dir = Path(results_dir)
        self.path = self.results_dir / CACHE_NAME
        self.refreshed = 0
        self.unreadable = []
        self.notes = []
        self.db = None
        if not self.results_dir.is_dir():
            self.results_dir.mkdir(parents=True, exist_ok=True)
        lock = self._take_lock()
        if lock is None:
            self.db = self._in_memory()
            try:
                self._sync()
            except BaseException:
                self.close()
                raise
            return
        self._lock = lock
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX)
            try:
                self.db = self._open()
                self._sync()
            except sqlite3.DatabaseError:
                # damage that the quick check did not see (a page first read by the sync): start afresh
                if self.db is not None:
                    self.db.close()
                self.db = self._rebuild()
                self._sync()
        except BaseException:
            self.close()
            raise
        self._release()

    _lock = None

    def _release(self):
        if self._lock is not None:
            os.close(self._lock)      # releases the lock
            self._lock = None

    def _take_lock(self):
        """fd of the tree's lock file, or None (with a note) where the tree is to be read, not written."""
        why = None
        try:
            fd = safe_io.open_lock_file(f"{self.path}.lock")
        except safe_io.FileRefused as err:
            why = f"{err}"
        except OSError as err:
            if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            why = f"{self.results_dir} cannot be written ({err.strerror})"
        else:
            for name in (self.path, *(f"{self.path}{s}" for s in _SIDE_FILES)):
                kind = _not_regular(name)
                if kind:
                    os.close(fd)
                    why = f"{name} is {kind}, not a regular file (remove it)"
                    break
            else:
                return fd
        self.notes.append(f"{why}: the history cache is read into memory, not updated")
        return None

    def _in_memory(self):
        """The cache copied into memory when it is a whole one of this layout, else an empty one."""
        memory = sqlite3.connect(":memory:")
        if not _not_regular(self.path) and self.path.exists():
            try:
                source = sqlite3.connect(f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro",
                                         uri=True, timeout=60)
                try:
                    if _whole(source):
                        source.backup(memory)
                        memory.execute("PRAGMA foreign_keys = ON")
                        return memory
                finally:
                    source.close()
            except sqlite3.Error:
                pass        # unreadable without writing (a hot journal, damage): built afresh
        with memory:
            memory.executescript(_TABLES)
            memory.execute("INSERT INTO meta VALUES ('layout', ?)", (CACHE_LAYOUT,))
        memory.execute("PRAGMA foreign_keys = ON")
        return memory

    def _open(self):
        """A connection to the cache if it is whole and of this layout, else to a freshly built one."""
        if self.path.exists():
            db = sqlite3.connect(self.path, timeout=60)
            if _whole(db):
                db.execute("PRAGMA foreign_keys = ON")
                return db
            db.close()
        return self._rebuild()

    def _rebuild(self):
        """Build an empty cache in a temporary file and rename it into place (the caller holds the
        exclusive lock): a killed build leaves only a temporary, never a half-built cache."""
        store.clean_stale_temporaries(self.results_dir)    # a build that was killed halfway
        # a locked temporary named by a random token: a concurrent cleaner sees it is alive
        with safe_io.temporary_file(str(self.results_dir), CACHE_NAME) as (_, tmp):
            db = sqlite3.connect(tmp)
            db.execute("PRAGMA journal_mode = OFF")    # a temporary: the rename is the commit
            with db:
                db.executescript(_TABLES)
                db.execute("INSERT INTO meta VALUES ('layout', ?)", (CACHE_LAYOUT,))
            db.close()
            # a journal left beside the old cache would be rolled back into the new one
            for suffix in _SIDE_FILES:
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            os.replace(tmp, self.path)
        db = sqlite3.connect(self.path, timeout=60)
        db.execute("PRAGMA foreign_keys = ON")
        return db

    def _sync(self):
        """Make the cache agree with the run directories on disk."""
        on_disk = {str(p.resolve()): p for p in store.find_runs(self.results_dir)}
        cached = dict(self.db.execute("SELECT path, signature FROM runs"))
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for path in set(cached) - set(on_disk):
                self.db.execute("DELETE FROM runs WHERE path = ?", (path,))
            for path, run_dir in sorted(on_disk.items()):
                signature = _signature(run_dir)
                if cached.get(path) == signature:
                    continue
                self.db.execute("DELETE FROM runs WHERE path = ?", (path,))
                try:
                    run = store.load_run(run_dir)   # validated
                except ResultsError as err:
                    self.unreadable.append(str(err))   # left out of the history, and said so
                    continue
                self._insert(path, signature, run)
                self.refreshed += 1

    def _insert(self, path, signature, run):
        prov = run.provenance or {}
        started = (prov.get("reframe") or {}).get("time_start") or (run.rows[0]["timestamp"] if run.rows else "")
        cur = self.db.execute("INSERT INTO runs (path, signature, run_id, system, started, suite_version) "
                              "VALUES (?, ?, ?, ?, ?, ?)",
                              (path, signature, run.run_id, prov.get("system") or run.rows[0]["system"],
                               started or "", prov.get("suite_version")))
        self.db.executemany(
            "INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(cur.lastrowid, *key[:5], key[5], unit, direction, n, best, med, spread)
             for key, unit, direction, n, best, med, spread in _run_figures(run)])

    def run_count(self):
        return self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def values(self, systems, exclude_run_ids=(), statistic="best", last=DEFAULT_HISTORY_RUNS, column=None,
               suite_version=None):
        """{row_key: [the statistic of each of the newest `last` runs holding the figure]}
        (or of another column of the figures table); only runs of `suite_version` when it is given."""
        column = column or ("best" if statistic == "best" else "median")
        agreed = (f"AND COALESCE(f.top_spread, 0) <= {DEFAULT_THRESHOLD!r} "
                  if statistic == "best" and column == "best" else "")
        value = f"COALESCE(f.{column}, f.median)" if column == "best" else f"f.{column}"
        exclude = list(exclude_run_ids)
        out = defaultdict(list)
        # newest `last` runs per figure, ranked inside SQLite (a window function) rather than in Python
        query = (f"SELECT system, partition, environ, check_name, parameters, metric, value FROM ("
                 f"SELECT f.system, f.partition, f.environ, f.check_name, f.parameters, f.metric, "
                 f"{value} AS value, ROW_NUMBER() OVER (PARTITION BY f.partition, "
                 f"f.environ, f.check_name, f.parameters, f.metric ORDER BY r.started DESC, r.run_id DESC) AS age "
                 f"FROM figures f JOIN runs r ON r.id = f.run "
                 f"WHERE f.system = ? {agreed}AND r.run_id NOT IN ({','.join('?' * len(exclude))}) "
                 f"{'AND r.suite_version = ? ' if suite_version else ''}) "
                 f"WHERE age <= ? ORDER BY age")
        version = [suite_version] if suite_version else []
        for system in systems:
            for *key, value in self.db.execute(query, [system, *exclude, *version, last]):
                out[tuple(key)].append(value)
        return dict(out)

    def noise(self, systems, exclude_run_ids=(), statistic="best", last=DEFAULT_HISTORY_RUNS):
        """{row_key: noise band} for figures with at least MIN_HISTORY_RUNS runs (see pair_band)."""
        bands = {key: pair_band(values, min_runs=MIN_HISTORY_RUNS)
                 for key, values in self.values(systems, exclude_run_ids, statistic, last).items()}
        return {key: band for key, band in bands.items() if band is not None}

    def usual_spread(self, systems, exclude_run_ids=(), last=DEFAULT_HISTORY_RUNS):
        """{row_key: the spread of the best repeats (compare.top_spread) that SPREAD_QUANTILE of the
        newest `last` runs stay within}, for figures with at least MIN_HISTORY_RUNS runs of several
        repeats: how much a run's repeats may disagree on this machine before it counts as disturbed."""
        import numpy as np
        spreads = self.values(systems, exclude_run_ids, last=last, column="top_spread")
        return {key: float(np.quantile([v for v in values if v is not None], SPREAD_QUANTILE))
                for key, values in spreads.items()
                if sum(v is not None for v in values) >= MIN_HISTORY_RUNS}

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None
        self._release()


def open_history(results_dir):
    """The synced history of a results tree; ResultsError when a run in it cannot be read."""
    try:
        return History(results_dir)
    except sqlite3.Error as err:
        raise ResultsError(f"history cache {Path(results_dir) / CACHE_NAME}: {err}") from None
