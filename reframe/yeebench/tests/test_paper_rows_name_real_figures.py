"""Every paper row names a figure some check emits, and a check and parameters some check has.

The figures come from the check sources (every `add_fom` name, an f-string's fields read as `*`, and
`<case>_over_<baseline>` for a check that forms ratios with add_ratios / ratio_foms), the checks and
their parameters from ReFrame's own listing of every check file, so a renamed figure or parameter
leaves a row that can never be filled, and this test says which."""
import fnmatch
import re
import sys
from pathlib import Path

import pytest

from test_suite_checks import list_checks, listed

YEEBENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(YEEBENCH.parent))
from yeebench.results import paper_figures as pf  # noqa: E402

FOM = re.compile(r"""add_fom\(\s*(f?)(['"])(.*?)\2""", re.S)
DYNAMIC = re.compile(r"add_fom\(\s*[a-z_]")
LITERAL = re.compile(r"""(?<!\w)(f?)(['"])([a-z][a-zA-Z0-9_{}.()\[\]]*_[a-zA-Z0-9_{}.()\[\]]*)\2""")
CLASS = re.compile(r"^class (\w+)\(([^)]*)\)", re.M)


def _glob(f, name):
    return re.sub(r"\{[^}]*\}", "*", name) if f else name


def _literals(text):
    """Every name-like string of a file: where a check passes add_fom a name made elsewhere (a helper
    returning (name, value, unit, direction) tuples), its figures are among these."""
    return {_glob(f, name) for f, _, name in LITERAL.findall(text)}


def _patterns(text):
    out = {_glob(f, name) for f, _, name in FOM.findall(text)}
    if "add_ratios(" in text or "ratio_foms(" in text:
        out.add("*_over_*")
    return out


def emitted():
    """{check class: figure-name patterns} from the check files and the library their classes build on."""
    library = {path.stem: path.read_text() for path in YEEBENCH.glob("*.py")}
    out = {}
    for path in (YEEBENCH / "checks").glob("*/*.py"):
        text = path.read_text()
        used = [t for mod, t in library.items() if re.search(rf"\b{mod}\b", text)]
        found = _patterns(text).union(*(_patterns(t) for t in used))
        if DYNAMIC.search(text) or any(DYNAMIC.search(t) for t in used):
            found |= _literals(text).union(*(_literals(t) for t in used),
                                           *(_literals(p.read_text()) for p in path.parent.glob("*.py")))
        for name, _ in CLASS.findall(text):
            out[name] = found
    return out


def _meets(metric, patterns):
    """A row's metric (itself maybe a pattern) matches some emitted pattern, either way round."""
    concrete = metric.replace("*", "X")
    return any(fnmatch.fnmatchcase(concrete, p) or fnmatch.fnmatchcase(p.replace("*", "X"), metric)
               for p in patterns)


def unfillable(experiments, foms):
    return [f"{e.paper} {e.item}: {e.check} emits no {e.metric!r}" for e in experiments
            if e.check in foms and e.metric and not _meets(e.metric, foms[e.check])]


def test_every_row_names_a_figure_its_check_emits():
    foms = emitted()
    assert not unfillable(pf.EXPERIMENTS, foms)


def test_a_row_naming_a_figure_no_check_emits_fails():
    foms = emitted()
    for check, metric in (("AcceptanceStorage", "write_gbs"), ("AcceptanceNUMACosts", "remote_cost"),
                          ("FdtdNumaSweep", "localalloc_share")):
        bad = pf._e("000", "x", "x", "like for like", check, {}, metric)
        assert unfillable([bad], foms), (check, metric)
    for check, metric in (("AcceptanceStorage", "write_bandwidth"), ("FdtdNodeScaling", "efficiency_vs_4_nodes"),
                          ("IoOutputPaper", "*_io_s"), ("FdtdBindingSweep", "per_socket_over_per_node")):
        good = pf._e("000", "x", "x", "like for like", check, {}, metric)
        assert not unfillable([good], foms), (check, metric)


@pytest.fixture(scope="module")
def listing(tmp_path_factory):
    if not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("reframe is not installed next to this Python")
    text = list_checks("-c", str(YEEBENCH / "checks"), "-R", tmp_path=tmp_path_factory.mktemp("listing"),
                       nvidia_smi="exit 9")
    cases = {}
    for line in listed(text):
        name, *params = line[2:].split(" /")[0].split(" %")
        cases.setdefault(name, []).append(dict(p.split("=", 1) for p in params))
    return cases


def test_every_row_names_a_check_and_parameters_a_check_has(listing):
    wrong = []
    for e in pf.EXPERIMENTS:
        if not e.check or " " in e.check:   # a command (`yeebench acceptance availability`), not a check
            continue
        cases = [c for name, cs in listing.items() if fnmatch.fnmatchcase(name, e.check) for c in cs]
        if not cases:
            wrong.append(f"{e.paper} {e.item}: no check {e.check}")
        elif not any(all(k in c and fnmatch.fnmatchcase(c[k], v) for k, v in e.params.items()) for c in cases):
            wrong.append(f"{e.paper} {e.item}: {e.check} has no case with {e.params}")
    assert not wrong, "; ".join(wrong)
