"""The CLI surface: --help everywhere, `python -m yeebench`, usage errors exit 2."""
import subprocess
import sys
from pathlib import Path

import pytest

from results_testutil import run_cli

SUBCOMMANDS = ("ingest", "compare", "baseline", "plot", "report")


def test_top_level_help_lists_results():
    proc = run_cli("--help")
    assert proc.returncode == 0 and "results" in proc.stdout


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_subcommand_help(sub):
    proc = run_cli("results", sub, "--help")
    assert proc.returncode == 0 and f"yeebench results {sub}" in proc.stdout


def test_results_without_subcommand_prints_help():
    proc = run_cli("results")
    assert proc.returncode == 2 and "SUBCOMMAND" in proc.stdout


def test_installed_console_script():
    script = Path(sys.executable).parent / "yeebench"
    if not script.exists():
        pytest.skip("package not installed with its console script in this environment")
    proc = subprocess.run([str(script), "results", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "compare" in proc.stdout


@pytest.mark.parametrize("argv", [("results", "compare"), ("results", "ingest"), ("results", "report", "x"),
                                  ("results", "compare", "--baseline", "a", "--candidate", "b", "--format", "xml")])
def test_usage_errors_exit_2(argv):
    proc = run_cli(*argv)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
