"""yeebench.safe_io: outputs replace only regular files, inputs are bounded regular files read without
blocking, temporaries are told live or stale by their lock, never by a PID."""
import fcntl
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from yeebench import safe_io
from yeebench.safe_io import FileRefused


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _char_device(path):
    """A character device (null) at path: only root may make one."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


def _entries(folder):
    return sorted(os.listdir(folder))


# -- outputs ----------------------------------------------------------------------------------------
def test_a_new_output_is_written_with_the_mode_open_gives_and_no_temporary_left(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    safe_io.write_text(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert _entries(target.parent) == ["out.txt"]


def test_an_existing_regular_file_is_replaced_whole(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old and longer\n")
    safe_io.write_bytes(target, b"new\n")
    assert target.read_bytes() == b"new\n"


def test_a_lone_surrogate_is_written_not_raised(tmp_path):
    target = tmp_path / "out.txt"
    safe_io.write_text(target, "a\ud800b")
    assert target.read_bytes() == b"a?b"


@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "directory", "device"])
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_as_it_was(tmp_path, kind):
    target = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "dangling-symlink":
        target.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        _char_device(target)
    before = os.lstat(target)
    with pytest.raises(FileRefused) as err:
        safe_io.write_text(target, "data\n")
    assert str(target) in str(err.value) and "\n" not in str(err.value)
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert victim.read_text() == "keep\n" and not (tmp_path / "nowhere").exists()
    assert sorted(os.listdir(tmp_path)) == ["out", "victim.txt"]


def test_a_name_of_255_bytes_in_three_byte_characters_is_written(tmp_path):
    target = tmp_path / ("\u4e2d" * 85)           # 255 bytes, the longest name a folder takes
    safe_io.write_text(target, "x")
    assert target.read_text() == "x" and _entries(tmp_path) == [target.name]


def test_a_failed_write_leaves_no_temporary(tmp_path):
    with pytest.raises(TypeError):
        safe_io.write_bytes(tmp_path / "out", 12345)
    assert _entries(tmp_path) == []


def test_a_temporary_is_created_exclusively_and_locked(tmp_path):
    with safe_io.temporary_file(str(tmp_path), "x") as (fd, tmp):
        assert safe_io.is_temporary(tmp) and "pid" not in os.path.basename(tmp)
        other = os.open(tmp, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)
        assert safe_io.clean_stale_temporaries(str(tmp_path)) == []
    assert _entries(tmp_path) == []


# -- inputs -----------------------------------------------------------------------------------------
def test_a_regular_file_within_the_limit_is_read(tmp_path):
    path = tmp_path / "in.json"
    path.write_bytes(b"x" * 100)
    assert safe_io.read_bytes(path, "report", 100) == b"x" * 100
    (tmp_path / "link").symlink_to(path)
    assert safe_io.read_text(tmp_path / "link", "report", 100) == "x" * 100


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc-file", "link-to-proc", "directory", "socket",
                                  "sparse-huge", "missing"])
def test_an_input_that_is_not_a_bounded_regular_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "in"
    if kind == "fifo":
        os.mkfifo(path)              # no writer: a plain open() would wait for one forever
    elif kind == "dev-zero":
        path = "/dev/zero"
    elif kind == "proc-file":
        path = "/proc/self/status"
    elif kind == "link-to-proc":
        path.symlink_to("/proc/self/status")
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        import socket
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    elif kind == "sparse-huge":
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024 ** 3)
    with pytest.raises(FileRefused) as err:
        safe_io.read_bytes(path, "report", 64 * safe_io.MIB)
    message = str(err.value)
    assert "report" in message and str(path) in message and "\n" not in message
    if kind == "sparse-huge":
        assert "64 MiB" in message


def test_bytes_that_are_not_utf8_are_named(tmp_path):
    path = tmp_path / "in"
    path.write_bytes(b"ok\xff")
    with pytest.raises(FileRefused, match="not UTF-8"):
        safe_io.read_text(path, "log", 100)
    assert safe_io.read_text(path, "log", 100, errors="replace") == "ok\ufffd"


# -- locks ------------------------------------------------------------------------------------------
def test_a_lock_file_is_created_and_reused(tmp_path):
    path = tmp_path / "x.lock"
    fd = safe_io.open_lock_file(path)
    os.close(fd)
    fd = safe_io.open_lock_file(path)
    os.close(fd)
    assert path.is_file()


@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "directory"])
def test_a_planted_lock_file_is_refused_and_nothing_is_created_through_it(tmp_path, kind):
    path = tmp_path / "x.lock"
    aim = tmp_path / "elsewhere" / "created-by-lock"
    aim.parent.mkdir()
    if kind == "symlink":
        aim.write_text("")
        path.symlink_to(aim)
    elif kind == "dangling-symlink":
        path.symlink_to(aim)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(FileRefused):
        os.close(safe_io.open_lock_file(path))
    if kind == "dangling-symlink":
        assert not aim.exists()


# -- stale temporaries --------------------------------------------------------------------------------
_HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
""")


def _hold_lock(path):
    """A live writer elsewhere (another process; it could be in another PID namespace or on another
    host): it holds `path` locked until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_live_writers_temporaries_are_kept_whatever_pid_their_name_claims(tmp_path):
    # names as an older yeebench wrote them, claiming a PID that is not alive here
    run_tmp = tmp_path / ".20260101T000000Z-abc.pid999999999.q1.tmp"
    run_tmp.mkdir()
    file_tmp = tmp_path / ".rows.jsonl.pid999999999.q2.tmp"
    holders = [_hold_lock(run_tmp / safe_io.OWNER_FILE), _hold_lock(file_tmp)]
    try:
        assert safe_io.clean_stale_temporaries(str(tmp_path)) == []
        assert run_tmp.is_dir() and file_tmp.is_file()
    finally:
        for proc in holders:
            proc.stdin.close()
            proc.wait()
    removed = safe_io.clean_stale_temporaries(str(tmp_path))     # their writers are gone now
    assert sorted(removed) == sorted([str(run_tmp), str(file_tmp)])
    assert _entries(tmp_path) == []


def test_an_unowned_temporary_directory_is_stale_only_after_the_grace(tmp_path):
    young = tmp_path / ".young.0123456789abcdef.tmp"
    old = tmp_path / ".old.0123456789abcdef.tmp"
    young.mkdir()
    old.mkdir()
    past = old.stat().st_mtime - safe_io.UNOWNED_GRACE_S - 10
    os.utime(old, (past, past))
    assert safe_io.clean_stale_temporaries(str(tmp_path)) == [str(old)]
    assert young.is_dir()


def test_a_link_named_like_a_temporary_is_removed_without_touching_its_target(tmp_path):
    target = tmp_path / "precious"
    target.mkdir()
    (target / "file").write_text("keep")
    folder = tmp_path / "tree"
    folder.mkdir()
    (folder / ".x.0123456789abcdef.tmp").symlink_to(target)
    assert safe_io.clean_stale_temporaries(str(folder)) == [str(folder / ".x.0123456789abcdef.tmp")]
    assert (target / "file").read_text() == "keep"


def test_a_temporary_directory_is_owned_until_it_is_renamed(tmp_path):
    with safe_io.temporary_dir(str(tmp_path), "run") as tmp:
        assert os.path.isfile(os.path.join(tmp, safe_io.OWNER_FILE))
        assert safe_io.clean_stale_temporaries(str(tmp_path)) == []
        (open(os.path.join(tmp, "rows.jsonl"), "w")).close()
        safe_io.release_owner(tmp)
        assert safe_io.clean_stale_temporaries(str(tmp_path)) == []     # young and unowned: kept
        os.rename(tmp, tmp_path / "run")
    assert _entries(tmp_path) == ["run"] and _entries(tmp_path / "run") == ["rows.jsonl"]


def test_only_our_own_temporaries_are_ever_cleaned(tmp_path):
    theirs = [tmp_path / ".notes.txt.tmp", tmp_path / ".cache.tmp", tmp_path / "visible.0123456789abcdef.tmp"]
    for path in theirs:
        path.write_text("theirs")
    ours = [tmp_path / ".rows.jsonl.0123456789abcdef.tmp", tmp_path / ".rows.jsonl.pid1.ab12cd.tmp"]
    for path in ours:
        path.write_text("killed writer's")
    assert sorted(safe_io.clean_stale_temporaries(str(tmp_path))) == sorted(str(p) for p in ours)
    assert all(p.read_text() == "theirs" for p in theirs)
