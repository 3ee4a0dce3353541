"""Where NetPIPE is (OSU: yeebench.osu.locate).

NetPIPE is not part of this repository: it comes from Debian's `netpipe-openmpi`
(NPopenmpi) or any NPmpi on PATH, or NETPIPE_HOME/bin.
"""
import os
import shutil
from pathlib import Path

NETPIPE_NAMES = ('NPopenmpi', 'NPmpi', 'NPmpich')


def find_netpipe(env=None):
    env = os.environ if env is None else env
    home = env.get('NETPIPE_HOME')
    for name in NETPIPE_NAMES:
        if home and (Path(home) / 'bin' / name).is_file():
            return str(Path(home) / 'bin' / name)
        found = shutil.which(name, path=env.get('PATH'))
        if found:
            return os.path.abspath(found)
    return None
