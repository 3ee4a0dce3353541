"""Drop one file from the page cache and say how much of it is still there.

A read bandwidth measured from the page cache is memory bandwidth, not the
storage's.  Where O_DIRECT is refused (tmpfs, some network file systems) the
storage check drops the file's pages instead (posix_fadvise DONTNEED, no root
needed) and asks the kernel which pages are still resident (mincore); a read
figure counts only when none are.

    python -m yeebench.checks.io.pagecache drop FILE    # prints 'pagecache R of N pages resident'
"""
import ctypes
import ctypes.util
import mmap
import os
import sys

MARKER = "pagecache"


def resident(path):
    """(resident pages, total pages) of a file, from mincore(2)."""
    size = os.path.getsize(path)
    page = mmap.PAGESIZE
    pages = -(-size // page)
    if pages == 0:
        return 0, 0
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap failed")
        try:
            vec = ctypes.create_string_buffer(pages)
            if libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore failed")
            return sum(b & 1 for b in vec.raw), pages
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def drop(path):
    """Write back and drop the file's cached pages; (resident, total) afterwards."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return resident(path)


def parse(text):
    """(resident, total) from the helper's output line, or None."""
    for line in text.splitlines():
        words = line.split()
        if len(words) == 6 and words[0] == MARKER and words[2] == "of":
            return int(words[1]), int(words[3])
    return None


def main(argv):
    if len(argv) != 2 or argv[0] != "drop":
        sys.stderr.write("usage: python -m yeebench.checks.io.pagecache drop FILE\n")
        return 2
    try:
        left, total = drop(argv[1])
    except OSError as err:
        sys.stderr.write(f"pagecache: {argv[1]}: {err.strerror or err}\n")
        return 1
    print(f"{MARKER} {left} of {total} pages resident")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
