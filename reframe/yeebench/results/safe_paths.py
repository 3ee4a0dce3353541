"""Paths built from a report's or a row's fields: one name inside a directory we own, never more.

A report and the rows made from it are data from outside. Every file or directory name taken
from them goes through here, so no field can name a path outside the results tree
('../x', '/tmp/x', a NUL byte, a hidden or empty name).
"""
import re
from pathlib import Path

from yeebench.results.errors import ResultsError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_LEN = 120


def clean_component(text, fallback="unknown", replacement="-", max_len=_MAX_LEN):
    """A safe single path component made from any text (runs of characters outside [A-Za-z0-9._-]
    become `replacement`)."""
    strip = replacement + "."
    name = _UNSAFE.sub(replacement, str(text)).strip(strip)[:max_len].strip(strip)
    return name or fallback


def check_component(text, what):
    """text itself when it is a safe single path component; ResultsError naming `what` otherwise."""
    if not isinstance(text, str) or text != clean_component(text, fallback=""):
        raise ResultsError(f"{what} {text!r} is not a plain name (letters, digits, '.', '_', '-'; "
                           f"no '/', '..' or leading dot); refusing to build a path from it")
    return text


def child(directory, name, what, suffix=""):
    """directory/<name><suffix>, name checked, and the result confirmed to lie directly in directory."""
    base = Path(directory)
    path = base / (check_component(name, what) + suffix)
    if path.resolve().parent != base.resolve():
        raise ResultsError(f"{what} {name!r} leads outside {base}; refusing")
    return path
