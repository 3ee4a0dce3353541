"""Atomic writes: a reader never sees half a file, and only a regular file is ever replaced."""
from yeebench import safe_io


def write_atomic(path, text):
    """Write `text` to `path` through a temporary beside it (safe_io.write_text: FileRefused, a usage
    error, where `path` is a link, a device, a FIFO or a directory)."""
    safe_io.write_text(path, text)
