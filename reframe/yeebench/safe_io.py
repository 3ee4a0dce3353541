"""Files the tools write and read, one way for every command.

An output replaces only a regular file: a symbolic link, a device, a FIFO, a socket or a directory
at the target is refused, never swapped for a file. It is written into a temporary beside it
(created exclusively, never through a link) and renamed into place, so a reader sees the old file
or the new one. An input is read only when it is a regular file outside /proc and /sys, no larger
than a limit the caller names, and never with a read that can block. A temporary is named by a
random token and held under a lock (flock) while it is written, so a cleaner can tell a live one
(locked, whichever process, PID namespace or host holds it) from one a killed writer left (free).
"""
import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import stat
import time

from yeebench.usage import UsageError

KIB, MIB = 1024, 1024 * 1024
TMP_SUFFIX = ".tmp"
#: Inside a temporary directory: the file its writer holds locked while it fills the directory.
OWNER_FILE = ".owner"
#: A temporary directory without its owner file (a writer killed between making it and locking it,
#: or a writer of an older yeebench) is left alone this long: making and locking take microseconds.
UNOWNED_GRACE_S = 600
#: Where locks do not work (ENOLCK, EOPNOTSUPP), a temporary is stale only after this long.
UNLOCKABLE_STALE_S = 24 * 3600
_LOCKS_UNSUPPORTED = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EBADF, errno.EINVAL)
_PSEUDO_ROOTS = ("/proc", "/sys")


class FileRefused(UsageError):
    """A file the tools will not write or read as asked (one line, exit 2)."""


def size_text(size):
    """'256 MiB', '4 KiB', '17 bytes'."""
    for unit, scale in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def file_kind(mode):
    """What a file that is not a regular file is, in words ('' for a regular file)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "" if stat.S_ISREG(mode) else "not a regular file"


def _pseudo_devices():
    devices = set()
    for root in _PSEUDO_ROOTS:
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            pass
    return devices


def _in_pseudo_fs(path, st):
    """True for a file of /proc or /sys (its own or a link's target): such files block, never end or
    change as they are read, whatever their size says."""
    real = os.path.realpath(path)
    return st.st_dev in _pseudo_devices() or any(real == r or real.startswith(r + "/") for r in _PSEUDO_ROOTS)


# -- outputs ----------------------------------------------------------------------------------------
def check_output(path):
    """FileRefused unless `path` is absent or a regular file (a symbolic link is refused, not followed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        raise FileRefused(f"cannot write {path}: {err.strerror}") from None
    kind = file_kind(st.st_mode)
    if kind == "a directory":
        raise FileRefused(f"output {path} is a directory; give a file name")
    if kind:
        raise FileRefused(f"output {path} is {kind}, not a regular file; refusing to replace it "
                          f"(name a regular file or a new path)")


def _temporary_name(folder, name):
    # the name cut to 200 bytes (not characters): with the token it stays within NAME_MAX (255 bytes)
    stem = os.fsdecode(os.fsencode(name)[:200])
    return os.path.join(folder, f".{stem}.{secrets.token_hex(8)}{TMP_SUFFIX}")


def _lock(fd):
    """Hold an exclusive lock on fd; False where the file system has no locks."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    except OSError as err:
        if err.errno in _LOCKS_UNSUPPORTED:
            return False
        raise


def _create_locked(path, mode=0o666):
    """fd of a new file at `path` (exclusive, no link followed), locked; None when a cleaner removed it
    between its creation and our lock (the caller tries another name)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        _lock(fd)
        if os.fstat(fd).st_nlink == 0:     # a cleaner took it for a dead writer's before we locked it
            os.close(fd)
            return None
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def temporary_file(folder, name, mode=0o666):
    """(fd, path) of a new locked temporary `.<name>.<token>.tmp` in folder; removed on the way out
    unless it was renamed away."""
    while True:
        tmp = _temporary_name(folder, name)
        try:
            fd = _create_locked(tmp, mode)
        except FileExistsError:
            continue
        if fd is not None:
            break
    try:
        yield fd, tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.lstat(tmp), os.fstat(fd)):
                os.unlink(tmp)
        os.close(fd)


@contextlib.contextmanager
def temporary_dir(folder, name, mode=0o777):
    """Path of a new temporary directory `.<name>.<token>.tmp` in folder, held by the lock of its
    owner file. Before the caller renames it into place it calls release_owner(path); a directory
    left behind is removed on the way out."""
    while True:
        tmp = _temporary_name(folder, name)
        try:
            os.mkdir(tmp, mode)
        except FileExistsError:
            continue
        try:
            fd = _create_locked(os.path.join(tmp, OWNER_FILE), 0o600)
        except FileNotFoundError:      # a cleaner removed the directory before it had an owner
            continue
        if fd is not None and os.path.isdir(tmp):
            break
        if fd is not None:
            os.close(fd)
    try:
        yield tmp
    finally:
        if os.path.isdir(tmp) and not os.path.islink(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        os.close(fd)


def release_owner(tmp_dir):
    """Remove the owner file before the rename (its lock lives on until temporary_dir ends; a cleaner
    seeing the directory without it leaves it alone for UNOWNED_GRACE_S)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(tmp_dir, OWNER_FILE))


def write_bytes(path, data, mode=0o666, make_parents=True):
    """Write `data` to `path` atomically (a new file gets `mode` less the umask, as open() gives);
    FileRefused where `path` exists and is not a regular file."""
    path = os.fspath(path)
    check_output(path)
    folder = os.path.dirname(os.path.abspath(path))
    if make_parents:
        os.makedirs(folder, exist_ok=True)
    with temporary_file(folder, os.path.basename(path), mode) as (fd, tmp):
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        check_output(path)            # swapped for a link or a device while we wrote: still refused
        os.replace(tmp, path)


def write_text(path, text, mode=0o666, make_parents=True):
    """write_bytes of `text` in UTF-8 (a lone surrogate is written as '?', never an exception)."""
    write_bytes(path, text.encode("utf-8", "replace"), mode, make_parents)


# -- inputs -----------------------------------------------------------------------------------------
def _refuse_input(what, path, why):
    raise FileRefused(f"{what} {path} {why}; refusing to read it")


def _check_input(what, path, st, limit):
    kind = file_kind(st.st_mode)
    if kind:
        _refuse_input(what, path, f"is {kind}, not a regular file")
    if _in_pseudo_fs(path, st):
        _refuse_input(what, path, "is a file of /proc or /sys, not a regular file")
    if st.st_size > limit:
        _refuse_input(what, path, f"is {st.st_size} bytes, more than the {size_text(limit)} limit for a {what}")


def read_bytes(path, what, limit):
    """The bytes of the regular file `path`; FileRefused (naming `what`) for a missing or unreadable
    file, anything but a regular file (links are followed to their target), a file of /proc or
    /sys, and one larger than `limit` bytes. Never blocks: devices and FIFOs are never read."""
    path = os.fspath(path)
    try:
        _check_input(what, path, os.stat(path), limit)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as err:
        raise FileRefused(f"cannot read {what} {path}: {err.strerror}") from None
    try:
        _check_input(what, path, os.fstat(fd), limit)    # the file opened is the one checked
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(limit + 1 - total, 4 * MIB))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except BlockingIOError:
        _refuse_input(what, path, "would block")
    except OSError as err:
        raise FileRefused(f"cannot read {what} {path}: {err.strerror}") from None
    finally:
        os.close(fd)
    if total > limit:
        _refuse_input(what, path, f"grew past the {size_text(limit)} limit for a {what} as it was read")
    return b"".join(chunks)


def read_text(path, what, limit, errors="strict"):
    """read_bytes decoded as UTF-8; FileRefused naming `what` for bytes that are not UTF-8."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as err:
        raise FileRefused(f"{what} {path} is not UTF-8 text (byte {err.start}); refusing to read it") from None


def read_yaml(path, what, limit=MIB):
    """The YAML document of a bounded regular file (safe_load); FileRefused naming `what` for one that
    cannot be read, is not YAML or nests too deeply for the parser."""
    import yaml
    text = read_text(path, what, limit)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise FileRefused(f"{what} {path} is not valid YAML ({str(err).splitlines()[0]})") from None
    except RecursionError:
        raise FileRefused(f"{what} {path} nests too deeply to be read") from None


# -- locks --------------------------------------------------------------------------------------------
def open_lock_file(path):
    """fd of the lock file `path` (created if absent), never through a link; FileRefused where `path`
    is a link or anything but a regular file. OSError (EROFS, EACCES) where it cannot be created."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise FileRefused(f"lock file {path} is a symbolic link; refusing to follow it (remove it)") from None
        if err.errno == errno.EISDIR:
            raise FileRefused(f"lock file {path} is a directory, not a regular file; remove it") from None
        raise
    kind = file_kind(os.fstat(fd).st_mode)
    if kind:
        os.close(fd)
        raise FileRefused(f"lock file {path} is {kind}, not a regular file; remove it")
    return fd


# -- stale temporaries --------------------------------------------------------------------------------
#: Our temporaries' names: '.<name>.<16 hex digits>.tmp', or as yeebench named them before,
#: '.<name>.pid<N>.<mkstemp's letters>.tmp'. Nothing else is ever taken for one of ours.
_TEMPORARY = re.compile(r"^\..+\.(?:[0-9a-f]{16}|pid[0-9]+\.[A-Za-z0-9_]+)" + re.escape(TMP_SUFFIX) + "$", re.S)


def is_temporary(name):
    """A temporary of ours (by its name): a file or run still being written, or left by a killed writer."""
    return bool(_TEMPORARY.match(os.path.basename(os.fspath(name))))


def _holder_gone(lock_path):
    """True: nobody holds lock_path's lock (we took it: the caller removes while holding fd);
    False: its writer lives; None: no lock file, or a file system without locks."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None, None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False, None
    except OSError as err:
        os.close(fd)
        if err.errno in _LOCKS_UNSUPPORTED:
            return None, None
        raise
    return True, fd


def clean_stale_temporaries(directory, now=None):
    """Remove the temporaries that killed writers left in `directory`: a file or a directory whose
    lock nobody holds (no PID is trusted: the writer may live in another PID namespace or on another
    host sharing the tree). A directory without its owner file is stale after UNOWNED_GRACE_S, and
    anything on a file system without locks after UNLOCKABLE_STALE_S. Returns the paths removed."""
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not is_temporary(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        age = now - st.st_mtime
        if stat.S_ISLNK(st.st_mode) or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            gone, fd = True, None            # planted under a temporary's name: never ours, never followed
        else:
            lock = os.path.join(entry.path, OWNER_FILE) if stat.S_ISDIR(st.st_mode) else entry.path
            gone, fd = _holder_gone(lock)
            if gone is None:
                unowned = stat.S_ISDIR(st.st_mode) and not os.path.lexists(lock)
                gone = age > (UNOWNED_GRACE_S if unowned else UNLOCKABLE_STALE_S)
        try:
            if gone:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)
                removed.append(entry.path)
        finally:
            if fd is not None:
                os.close(fd)
    return removed
