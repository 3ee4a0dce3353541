"""Reading what a job left in its stage directory: a file's text, its last line, an error line.

Sanity functions explain a failed run from the job's own output (the last line of stderr, the
program's `prog: error:` line, a marker file a job line wrote). They all read the stage directory
the same way, here: a file that is not there is the caller's choice of a default or an OSError,
and undecodable bytes never end a sanity function (they are replaced), since the point is a reason.
"""
import os

#: Passed as `default`: a missing or unreadable file raises OSError (the caller's own error path).
RAISE = object()


def stage_path(where, name):
    """Path of `name` (a str or ReFrame's deferred stdout/stderr) in the stage directory of `where`:
    a test (its `stagedir`) or a directory path."""
    return os.path.join(getattr(where, "stagedir", where), str(name))


def read_stage_file(where, name, default=RAISE, binary=False):
    """Whole text (bytes with `binary`) of `name` in the stage directory, or `default` when it
    cannot be read (OSError without a default)."""
    try:
        if binary:
            with open(stage_path(where, name), "rb") as fh:
                return fh.read()
        with open(stage_path(where, name), errors="replace") as fh:
            return fh.read()
    except OSError:
        if default is RAISE:
            raise
        return default


def lines(text):
    """The non-empty lines of `text`, stripped ([] for None)."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def last_line(text):
    """Last non-empty line of `text`, stripped ('' when there is none)."""
    found = lines(text)
    return found[-1] if found else ""


def error_lines(text, prefix):
    """The lines of `text` starting with `prefix` (a program's own error lines, e.g. 'yee: error:')."""
    return [line for line in lines(text) if line.startswith(prefix)]


def last_stage_line(where, name):
    """Last non-empty line of a stage-directory file ('' when it is missing or empty)."""
    return last_line(read_stage_file(where, name, ""))


def last_error_line(where, name, prefix, missing, empty):
    """The last `prefix` line of a stage-directory file, else its last line; `missing` when it cannot
    be read, `empty` when it holds nothing (what a sanity message says instead)."""
    text = read_stage_file(where, name, None)
    if text is None:
        return missing
    found = lines(text)
    return (error_lines(text, prefix) or found or [empty])[-1]
