"""Files that are not regular files, or not ones a command can read whole: what a command is given as
an input or an output, or finds in a results tree. Each is made at a path, and `fingerprint` tells
whether a command replaced or changed it."""
import os
import socket
import stat

#: Inputs that must be refused on one line, never read until memory runs out or waited on forever.
INPUT_KINDS = ("fifo", "dev-zero", "device", "proc-file", "proc-link", "directory", "socket", "sparse-3g",
               "empty", "not-utf8", "dangling-link", "link-loop")
#: Outputs a command must leave as they are (and refuse on one line).
OUTPUT_KINDS = ("fifo", "device", "link-to-file", "dangling-link", "link-to-directory", "directory", "socket")


def make(path, kind, outside):
    """Make `path` a file of `kind`; `outside` is a folder no command may write in (links point there)."""
    path = str(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "device":
        if os.geteuid() == 0:       # a null device of our own: replaced by mistake, nothing else breaks
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        else:
            os.symlink("/dev/null", path)
    elif kind == "proc-file":
        os.symlink("/proc/self/status", path)
    elif kind == "proc-link":
        os.symlink("/proc/self/environ", path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path)
        sock.close()
    elif kind == "sparse-3g":
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024 ** 3)
    elif kind == "empty":
        open(path, "wb").close()
    elif kind == "not-utf8":
        with open(path, "wb") as fh:
            fh.write(b"\xff\xfe{\"session_info\": \xc3\x28}\n")
    elif kind == "dangling-link":
        os.symlink(os.path.join(outside, "created-through-link"), path)
    elif kind == "link-loop":
        os.symlink(path, path)
    elif kind == "link-to-file":
        os.symlink(os.path.join(outside, "victim.txt"), path)
    elif kind == "link-to-directory":
        os.symlink(os.path.join(outside, "victim-dir"), path)
    else:
        raise ValueError(kind)
    return path


def prepare_outside(outside):
    """The folder links point into: a file and a folder that must stay as they are."""
    os.makedirs(os.path.join(outside, "victim-dir"), exist_ok=True)
    with open(os.path.join(outside, "victim.txt"), "w") as fh:
        fh.write("not yours\n")


def fingerprint(path):
    """(type and mode, inode, size) of path itself, never followed; None when it is not there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_mode, st.st_ino, st.st_size


def tree_state(root, skip=()):
    """{path: (mode, inode, size, mtime)} of everything under root (links not followed), the `skip`
    folders (where a command may write) left out."""
    skip = {os.path.abspath(s) for s in skip}
    state = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skip]
        for name in dirs + files:
            path = os.path.join(folder, name)
            if path in skip:
                continue
            st = os.lstat(path)
            # a folder's own size and time change whenever a temporary comes and goes in it
            state[path] = (st.st_mode, st.st_ino) if stat.S_ISDIR(st.st_mode) else \
                (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def changes(before, after):
    """What differs between two tree_state()s, as a few readable lines."""
    lines = [f"created {p}" for p in sorted(set(after) - set(before))]
    lines += [f"removed {p}" for p in sorted(set(before) - set(after))]
    lines += [f"changed {p}" for p in sorted(set(before) & set(after)) if before[p] != after[p]]
    return lines
