"""`yeebench acceptance ...`: exit codes, one-line errors, files written atomically."""
import json
import os

import pytest

from yeebench.cli import main

DATA = os.path.join(os.path.dirname(__file__), "data")
REPORT = os.path.join(DATA, "reframe_report_acceptance.json")


def run(capsys, *argv):
    code = main(["acceptance", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_availability_pass_and_fail_exit_codes(capsys):
    code, out, _ = run(capsys, "availability", os.path.join(DATA, "availability_30days_pass.csv"))
    assert code == 0 and "PASS" in out and "EL = 99.44%" in out
    code, out, _ = run(capsys, "availability", os.path.join(DATA, "availability_30days_fail.csv"),
                       "--format", "json")
    assert code == 1 and json.loads(out)["verdict"] == "FAIL"


def test_availability_threshold_and_window_options(capsys):
    log = os.path.join(DATA, "availability_30days_fail.csv")
    assert run(capsys, "availability", log, "--threshold", "94%")[0] == 0
    code, out, _ = run(capsys, "availability", log, "--days", "60")
    assert code == 1 and "INSUFFICIENT DATA" in out


def test_availability_window_options_conflict_or_combine(capsys):
    log = os.path.join(DATA, "availability_30days_pass.csv")
    code, out, _ = run(capsys, "availability", log, "--start", "2012-03-01", "--days", "5", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and (doc["start"], doc["end"], doc["days"]) == ("2012-03-01", "2012-03-05", 5)
    code, _, err = run(capsys, "availability", log, "--start", "2012-03-01", "--end", "2012-03-05", "--days", "5")
    assert code == 2 and "give at most two" in err and len(err.strip().splitlines()) == 1


def test_availability_of_a_node_missing_10_days_is_insufficient_data(capsys):
    code, out, _ = run(capsys, "availability", os.path.join(DATA, "availability_node_missing_10_days.csv"))
    assert code == 1 and "INSUFFICIENT DATA" in out and "80 of 90 node-days" in out


@pytest.mark.parametrize("argv, message", [
    (["availability", "/nonexistent.csv"], "cannot read availability log /nonexistent.csv"),
    (["availability", os.path.join(DATA, "numactl_vm_one_node.txt")], "header lacks column(s)"),
    (["availability", os.path.join(DATA, "availability_30days_pass.csv"), "--end", "1999-01-01"],
     "no rows between"),
    (["report", "/nonexistent.json"], "cannot read report"),
    (["report", os.path.join(DATA, "availability_30days_pass.csv")], "not valid JSON"),
    (["topology", "--check", "/nonexistent.yaml"], "cannot read"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["availability", "x.csv", "--days", "0"],
                                  ["availability", "x.csv", "--threshold", "101"],
                                  ["availability", "x.csv", "--end", "yesterday"],
                                  ["topology", "--record", "--check", "f"]])
def test_bad_options_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["acceptance", *argv])
    assert exc.value.code == 2


def test_report_html_is_written_atomically_and_self_contained(capsys, tmp_path):
    out_file = tmp_path / "sub" / "acceptance.html"
    code, out, err = run(capsys, "report", REPORT, "-o", str(out_file))
    assert code == 0 and out.strip() == str(out_file)
    assert "NOT ACCEPTABLE (3 passed, 1 failed, 2 not measured)" in err
    page = out_file.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    assert "n3: latency 9.1 us" in page and "no GPU: nvidia-smi not found" in page
    assert "write_bandwidth = 0.147 GB/s" in page
    assert [p.name for p in out_file.parent.iterdir()] == ["acceptance.html"]  # no temp file left


def test_report_strict_and_json(capsys):
    assert run(capsys, "report", REPORT, "--strict", "--format", "text")[0] == 1
    code, out, _ = run(capsys, "report", REPORT, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["overall"] == "NOT ACCEPTABLE"
    assert doc["counts"] == {"PASS": 3, "FAIL": 1, "NOT MEASURED": 2, "WAIVED": 0}
    names = [c["name"] for c in doc["cases"]]
    assert "AcceptanceAvailability" in names  # not given: a NOT MEASURED row, never left out


def test_report_with_availability_and_waivers(capsys, tmp_path):
    waiver = tmp_path / "waivers.yaml"
    waiver.write_text("waived_by: Site Operator\nwaivers:\n  - check: AcceptanceGPU*\n    reason: no GPUs\n")
    code, out, _ = run(capsys, "report", REPORT, "--format", "json", "--waivers", str(waiver),
                       "--availability", os.path.join(DATA, "availability_30days_pass.csv"))
    doc = json.loads(out)
    assert code == 0 and doc["counts"] == {"PASS": 4, "FAIL": 1, "NOT MEASURED": 0, "WAIVED": 1}
    assert doc["waivers"]["waived_by"] == "Site Operator"
    code, _, err = run(capsys, "report", REPORT, "--waivers", str(tmp_path / "none.yaml"))
    assert code == 2 and "cannot read waiver file" in err


def test_topology_record_and_check_round_trip(capsys, tmp_path):
    code, out, _ = run(capsys, "topology", "--record", "--system", "s1", "--dir", str(tmp_path))
    path = out.strip()
    assert code == 0 and path == str(tmp_path / "s1.yaml")
    code, out, _ = run(capsys, "topology", "--check", path)
    assert code == 0 and out.startswith("PASS")
    text = open(path).read().replace("cores: ", "cores: 1").replace("pus: ", "pus: 1")
    open(path, "w").write(text)
    code, out, _ = run(capsys, "topology", "--check", path)
    assert code == 1 and "MISMATCH" in out and "FAIL" in out


@pytest.mark.parametrize("argv, says", [
    (["--system", "../outside"], "--system '../outside' is not a plain name"),
    (["--system", "/abs"], "is not a plain name"),
    (["--system", "s1", "--partition", "../../p"], "--partition '../../p' is not a plain name"),
    (["--system", ".hidden"], "is not a plain name"),
])
def test_topology_record_never_writes_outside_its_dir(capsys, tmp_path, argv, says):
    folder = tmp_path / "topology"
    folder.mkdir()
    code, out, err = run(capsys, "topology", "--record", "--dir", str(folder), *argv)
    assert code == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["topology"]


def test_topology_record_into_a_file_or_over_a_device_is_one_line(capsys, tmp_path):
    existing = tmp_path / "existing.yaml"
    existing.write_text("# hand-edited\n")
    code, _, err = run(capsys, "topology", "--record", "--dir", str(existing))
    assert code == 2 and "is not a directory" in err and len(err.strip().splitlines()) == 1, err
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "topology", "--record", "-o", str(fifo))
    assert code == 2 and "FIFO" in err and len(err.strip().splitlines()) == 1, err
    assert existing.read_text() == "# hand-edited\n" and os.path.exists(fifo) and not os.path.isfile(fifo)
    code, out, _ = run(capsys, "topology", "--record", "-o", str(existing))      # a regular file: replaced
    assert code == 0 and out.strip() == str(existing) and "schema: yeebench-topology" in existing.read_text()


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_report_output_that_is_not_a_regular_file_is_left_as_it_was(capsys, tmp_path, kind):
    target, victim = tmp_path / "page.html", tmp_path / "victim.html"
    victim.write_text("mine")
    if kind == "symlink":
        target.symlink_to(victim)
    else:
        os.mkfifo(target)
    before = os.lstat(target)
    code, _, err = run(capsys, "report", REPORT, "-o", str(target))
    assert code == 2 and str(target) in err and len(err.strip().splitlines()) == 1, err
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode) and victim.read_text() == "mine"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-huge", "deep-yaml"])
def test_inputs_that_are_not_bounded_files_are_one_line(capsys, tmp_path, kind):
    path = tmp_path / "input"
    if kind == "fifo":
        os.mkfifo(path)                 # no writer: a plain open() would wait forever
    elif kind == "dev-zero":
        path = "/dev/zero"
    elif kind == "sparse-huge":
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024 ** 3)
    else:
        path.write_text("waived_by: x\nwaivers: " + "[" * 20000 + "]" * 20000 + "\n")
    for argv in (["availability", str(path)], ["report", REPORT, "--waivers", str(path)],
                 ["topology", "--check", str(path)]):
        if kind == "deep-yaml" and argv[0] == "availability":
            continue
        code, _, err = run(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
    code, out, _ = run(capsys, "report", REPORT, "--availability", str(path), "--format", "json")
    assert code == 0 and "availability log unusable" in out


def test_topology_and_settings_print_this_node(capsys):
    code, out, _ = run(capsys, "topology")
    assert code == 0 and json.loads(out)["cores"] >= 1
    code, out, _ = run(capsys, "settings", "--format", "json")
    assert code == 0 and "kernel.randomize_va_space" in json.loads(out)["settings"]


def test_results_page_needs_an_html_file(capsys, tmp_path):
    code, _, err = run(capsys, "report", REPORT, "--format", "text", "--results-page", str(tmp_path / "r.html"))
    assert code == 2 and "--results-page needs --format html" in err


def test_page_is_readable_by_others(capsys, tmp_path):
    out_file = tmp_path / "a.html"
    saved = os.umask(0o022)
    try:
        assert run(capsys, "report", REPORT, "-o", str(out_file))[0] == 0
    finally:
        os.umask(saved)
    assert out_file.stat().st_mode & 0o777 == 0o644


def _readme_block(text, first_line_start, containing=""):
    """The indented README block that starts with `first_line_start` and contains `containing`."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if not line.strip().startswith(first_line_start):
            continue
        block = []
        for ln in lines[start:]:
            if not ln.startswith("    "):
                break
            block.append(ln[4:])
        if containing in "\n".join(block):
            return block
    raise AssertionError(f"no README block starting {first_line_start!r} with {containing!r}")


def test_readme_sign_off_command_and_waiver_example_run_as_written(capsys, tmp_path, monkeypatch):
    import shlex
    import shutil
    with open(os.path.join(os.path.dirname(__file__), "..", "README.md")) as f:
        readme = f.read()
    command = " ".join(ln.rstrip("\\").strip() for ln in _readme_block(readme, "yeebench acceptance report", "--waivers"))
    (tmp_path / "waivers.yaml").write_text("\n".join(_readme_block(readme, "waived_by:")) + "\n")
    (tmp_path / "build" / "acceptance").mkdir(parents=True)
    shutil.copy(REPORT, tmp_path / "build" / "acceptance" / "report.json")
    shutil.copy(os.path.join(DATA, "availability_30days_pass.csv"), tmp_path / "availability.csv")
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[:2] == ["yeebench", "acceptance"]
    code, _, err = run(capsys, *argv[2:])
    assert code == 0 and "1 not measured but waived" in err
    page = (tmp_path / "acceptance.html").read_text()
    assert "J. Admin" in page and "this system has no GPUs" in page and "AcceptanceAvailability" in page


def test_a_run_whose_checks_all_failed_still_gets_its_results_page(capsys, tmp_path):
    """The virtual cluster's bad-node run (vc2's link slowed): AcceptanceNetwork failed, so no figure is
    recorded, yet the results page shows its pair matrix with vc2, and only vc2, named."""
    from yeebench.vcluster.bad_node import page_outliers
    report = os.path.join(DATA, "reframe_report_bad_node_link.json")
    code, _, err = run(capsys, "report", report, "-o", str(tmp_path / "a.html"),
                       "--results-page", str(tmp_path / "r.html"))
    assert "no results page" not in err
    assert code == 0 and page_outliers(str(tmp_path / "r.html")) == {"vc2"}
    assert not list(tmp_path.glob("**/rows.jsonl"))    # shown, never recorded
