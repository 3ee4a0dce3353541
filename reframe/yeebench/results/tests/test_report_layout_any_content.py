"""The report lays out at 800 and 1280 px whatever a run holds: the recorded smoke run, made hostile
by a small function (long host, system, partition and check names, a long parameter set, non-ASCII
names, long paths and unbroken tokens, a plausibility warning, a failure, a skip, parts not measured,
an acceptance line), so that the live-run layout test cannot fail on the content of one machine."""
import copy
import html
import json
import re

import pytest

from results_testutil import FIXTURES
from test_results_report import check_layout, report_of
from yeebench.results.report import LONG_TOKEN, breakable

SMOKE_RUN = FIXTURES / "reports" / "suite_smoke_run.json"

HOST = "login-node-with-an-unusually-long-hostname-0001.partition-a.cluster.computing-centre.example.org"
SYSTEM = "a-cluster-whose-configured-system-name-is-far-longer-than-any-sensible-name"
PARTITION = "gpu-partition-with-a-very-long-name-for-nodes-with-four-accelerators-each"
LONG_CHECK = "FdtdStrongScalingOnEveryNumaDomainWithExplicitCoreBindingAndHaloExchangeProfiling"
NON_ASCII_CHECK = "Größenmessung_Speicherbandbreite_日本語のチェック名_ÅngströmΣχέδιο"
ACCEPTANCE = "AcceptanceInterconnectMulticastAcrossAllSwitchesOfTheFabricWithoutLossOrReordering"
LONG_PATH = "/scratch/" + "/".join(["a-deeply-nested-stage-directory"] * 6) + "/rfm_job.err"
UNBROKEN = "x" * 180  # no separator at all: must wrap too
HOSTILE_TEXT = "<b>not bold</b> & 'quoted'"  # must stay escaped


def _case(report, prefix):
    return next(c for run in report["runs"] for c in run["testcases"] if c["display_name"].startswith(prefix))


def _renamed(case, check, suffix=""):
    """A copy of `case` named `check`, with the same ReFrame parameters."""
    copied = copy.deepcopy(case)
    params = case["display_name"].split(" %", 1)
    copied["display_name"] = check + (" %" + params[1] if len(params) > 1 else "") + suffix
    copied["name"] = copied["display_name"]
    copied["unique_name"] = f"{check}_{case['hashcode']}"
    copied["short_name"] = copied["unique_name"]
    return copied


def hostile_report(source=SMOKE_RUN):
    """The smoke run with every section the report can show, each holding long or unusual text."""
    report = json.loads(source.read_text())
    info = report["session_info"]
    info["hostname"] = HOST
    info["cmdline"] = f"{LONG_PATH}/reframe -C {LONG_PATH}/settings.py --report-file {LONG_PATH}/{UNBROKEN}.json"
    cases = report["runs"][0]["testcases"]

    # a speed-up larger than the cores used: a plausibility warning carrying the whole parameter set
    balance = _case(report, "FdtdJobBalance")
    balance["perfvalues"]["local:default:parallel_efficiency"][0] = 119.8
    balance["mesh_file"] = LONG_PATH

    # long and non-ASCII check names with long parameter values, measured
    strong = _case(report, "FdtdStrongScaling")
    long_named = _renamed(strong, LONG_CHECK, " %layout=per-socket:fill:core:interleaved:" + UNBROKEN[:60])
    long_named["layout"] = "per-socket:fill:core:interleaved:" + UNBROKEN[:60]
    numa = _case(report, "NumaBandwidth %policy=none")
    non_ascii = _renamed(numa, NON_ASCII_CHECK)
    non_ascii["observations"] = {"not_measured": {"triad_bandwidth_on_the_remote_numa_node_" + UNBROKEN[:40]:
                                                  f"only one NUMA node: Größe {LONG_PATH} {HOSTILE_TEXT}"},
                                 "skipped_cases": {f"{UNBROKEN[:50]},{LONG_PATH}": "Σχέδιο " + UNBROKEN}}

    # a failure with a long reason, a skip with a long reason, an acceptance line
    failed = _renamed(strong, LONG_CHECK + "Failing")
    failed.update(result="fail", fail_phase="sanity", perfvalues={},
                  fail_reason=f"sanity error: {LONG_PATH} not found {UNBROKEN} {HOSTILE_TEXT}\nsecond line")
    skipped = _renamed(_case(report, "FdtdNodeScaling"), NON_ASCII_CHECK + "Übersprungen")
    skipped.update(result="skip", observations={"skip_reason": f"needs two nodes of {PARTITION}: {UNBROKEN}"})
    accept = _renamed(_case(report, "AcceptanceMulticast"), ACCEPTANCE)
    accept.update(result="fail", fail_phase="performance",
                  acceptance_reason=f"{LONG_PATH}: multicast group {UNBROKEN} lost packets {HOSTILE_TEXT}")
    cases += [long_named, non_ascii, failed, skipped, accept]

    for case in cases:
        case["system"], case["partition"] = SYSTEM, PARTITION
        case["job_nodelist"] = [HOST]
    return report


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    source = tmp / "hostile_smoke_run.json"
    source.write_text(json.dumps(hostile_report()))
    return report_of(source, tmp)


def _visible_text(page):
    """The page's text as a reader copies it: soft line breaks gone, entities kept."""
    return re.sub(r"<wbr>|\u200b", "", page.read_text())


def test_hostile_run_shows_every_section(hostile_page):
    text = _visible_text(hostile_page)
    for section in ('id="acceptance"', 'id="warnings"', "<h3>Not measured</h3>", "<h3>Failed test cases</h3>"):
        assert section in text, section
    assert "119.8% is above 100%" in text
    for name in (LONG_CHECK, NON_ASCII_CHECK, ACCEPTANCE, HOST, SYSTEM, LONG_PATH, UNBROKEN):
        assert name in text, name  # shown whole, not cut
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp;" in text and "<b>not bold</b>" not in text


@pytest.mark.parametrize("width", [1280, 800])
def test_layout_of_a_run_with_hostile_content(hostile_page, tmp_path, width):
    check_layout(hostile_page, tmp_path, width, "hostile-run")


def _unbroken(markup):
    return html.unescape(str(markup).replace("<wbr>", ""))


@pytest.mark.parametrize("text", [UNBROKEN, LONG_PATH, NON_ASCII_CHECK, HOSTILE_TEXT, "e\u0301" * 40,
                                  "backend=cpu,grid=80,kernel=fused,load=1.0,num_cpus_per_task=1", ""])
def test_breakable_keeps_the_whole_text_escaped(text):
    shown = str(breakable(text))
    assert _unbroken(shown) == text
    assert "<" not in shown.replace("<wbr>", "")  # nothing of the text becomes markup
    # no piece between two break opportunities is wider than LONG_TOKEN characters
    assert all(len(html.unescape(piece)) <= LONG_TOKEN for word in shown.split() for piece in word.split("<wbr>"))


def test_breakable_breaks_where_a_reader_would():
    assert str(breakable("FdtdJobBalance parallel_efficiency AcceptanceKernelSettings 119.8")) == \
        "FdtdJobBalance parallel_efficiency AcceptanceKernelSettings 119.8"  # short tokens never break
    assert "kernel=fused,<wbr>load=1.0,<wbr>num_<wbr>cpus" in str(breakable(
        "backend=cpu,grid=80,kernel=fused,load=1.0,num_cpus_per_task=1"))
    assert str(breakable(LONG_CHECK)).startswith("Fdtd<wbr>Strong<wbr>Scaling<wbr>On<wbr>")
    assert "<wbr>\u0301" not in str(breakable("e\u0301" * 40))  # an accent stays on its letter
