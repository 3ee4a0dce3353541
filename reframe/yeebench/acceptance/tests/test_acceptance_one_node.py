"""The node and network checks run through ReFrame on this one machine: what one node cannot
show is NOT MEASURED (network pairs, topology without an expected file), never PASS; the
IP stack is judged on the job's interfaces, not loopback."""
import os
import shutil
import subprocess
import sys

import pytest

from yeebench.acceptance import report

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


@pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None, reason="no MPI")
def test_one_node_cannot_pass_network_or_unrecorded_topology(tmp_path):
    reframe = os.path.join(os.path.dirname(sys.executable), "reframe")
    report_file = tmp_path / "report.json"
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / "rfm"))
    cmd = [reframe, "-C", os.path.join(REPO, "reframe", "config", "settings.py"),
           "-c", os.path.join(REPO, "reframe", "yeebench", "checks", "acceptance", "acceptance_node.py"),
           "-c", os.path.join(REPO, "reframe", "yeebench", "checks", "pt2pt", "acceptance_network.py"),
           "-n", "AcceptanceNetwork", "-n", "AcceptanceTopology", "-n", "AcceptanceIPStack",
           "--system", "local", "-p", "host", "-r", "--report-file", str(report_file)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert report_file.exists(), done.stdout[-3000:]
    cases = {c["name"]: c for c in report.collect([str(report_file)])["cases"]}
    network, topology, ip = cases["AcceptanceNetwork"], cases["AcceptanceTopology"], cases["AcceptanceIPStack"]
    assert network["verdict"] == "NOT MEASURED" and "shared memory, not the network" in network["reason"]
    assert network["foms"] == []  # no one-node figure is stored as a network figure
    assert topology["verdict"] == "NOT MEASURED" and "--record --system local" in topology["reason"]
    assert "../" not in topology["reason"]  # the folder as given, not a path relative to the stage
    assert "job interface" in ip["reason"] or (ip["verdict"] == "NOT MEASURED" and
                                               "no interface other than loopback" in ip["reason"])
