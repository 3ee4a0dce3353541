"""pytest imports test files by their base name (rootdir-relative packages are not used here), so two
test files of one name in different folders stop the whole collection ("import file mismatch")."""
import collections
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SKIP = {".git", ".venv", "build", "__pycache__", "node_modules"}


def test_no_two_test_files_share_a_name():
    by_name = collections.defaultdict(list)
    for top, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                by_name[name].append(os.path.relpath(os.path.join(top, name), REPO))
    assert len(by_name) > 100
    assert not {name: paths for name, paths in by_name.items() if len(paths) > 1}
