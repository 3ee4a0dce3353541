"""The verification scripts' temporary folders (yee_testlib.scratch_dir) do not outlive them: removed
when a script ends, fails or gets SIGTERM, kept with --keep; and the folder of a script killed
outright (SIGKILL, as a test timeout does) is removed by the next run of the same script."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from yee_testlib import HERE, check, finish

PREFIX = "yee-scratch-selftest-"
CHILD = r"""
import os, sys, time  # noqa: E401
sys.path.insert(0, %r)
from yee_testlib import scratch_dir
d = scratch_dir(%r)
open(os.path.join(d, "field.bin"), "wb").write(b"x" * 4096)
print(d, flush=True)
mode = sys.argv[1]
if mode == "fail":
    sys.exit(1)
if mode == "wait":
    time.sleep(60)
""" % (HERE, PREFIX)


def start(mode, *extra):
    return subprocess.Popen([sys.executable, "-c", CHILD, mode] + list(extra), stdout=subprocess.PIPE, text=True)


def folder_of(p):
    return p.stdout.readline().strip()


for mode in ("ok", "fail"):
    p = start(mode)
    d = folder_of(p)
    rc = p.wait(timeout=60)
    check(d.startswith(os.path.join(tempfile.gettempdir(), PREFIX)) and not os.path.exists(d),
          "a script that ends with rc %d removes its folder %s" % (rc, d))

p = start("wait")
d = folder_of(p)
p.send_signal(signal.SIGTERM)
rc = p.wait(timeout=60)
check(rc == 128 + signal.SIGTERM and not os.path.exists(d),
      "SIGTERM: the script exits %d and removes its folder" % rc)

p = start("wait")
killed = folder_of(p)
p.kill()
p.wait(timeout=60)
left = os.path.isdir(killed)
p = start("ok")
d = folder_of(p)
p.wait(timeout=60)
check(left and not os.path.exists(killed),
      "SIGKILL leaves the folder (%s), the next run removes it (%s)" % (left, not os.path.exists(killed)))

live = start("wait")
live_dir = folder_of(live)
p = start("ok")
folder_of(p)
p.wait(timeout=60)
check(os.path.isdir(live_dir), "a run beside a live one leaves that one's folder alone")
live.kill()
live.wait(timeout=60)

out = start("ok", "--keep").communicate(timeout=60)[0].split()
kept = out[-1] if out else ""
check(os.path.isdir(kept), "--keep keeps the folder (%s)" % kept)
for d in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
    shutil.rmtree(d, ignore_errors=True)
finish()
