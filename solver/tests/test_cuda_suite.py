"""Runs one script of the CPU backend's verification suite (cavity frequency, energy
conservation, decomposition invariance, divergence) against the CUDA build, whose yee
is YEE_BIN; skipped (exit 77, with the reason) on a machine without a GPU.
Usage: test_cuda_suite.py SCRIPT [ARGS...]"""
import os
import subprocess
import sys

from cuda_testlib import require_gpu_or_skip

if len(sys.argv) < 2:
    print("usage: test_cuda_suite.py SCRIPT [ARGS...]", file=sys.stderr)
    sys.exit(2)
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), sys.argv[1])
require_gpu_or_skip(os.path.basename(script) + " on the CUDA backend")
env = dict(os.environ, YEE_POISON="1")  # see test_cuda_gpu.py
sys.exit(subprocess.run([sys.executable, script] + sys.argv[2:], env=env).returncode)
