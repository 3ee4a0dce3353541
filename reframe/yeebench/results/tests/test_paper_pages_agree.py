"""The paper pages, the paper rows and the checks say the same: the figure a check's docstring claims has
a measured row naming that check, no check claims a figure the rows call not reproducible, a page's prose
calls not reproducible only what the rows do, and the virtual-cluster sizes they state are the ones the
make files start."""
import ast
import re
from pathlib import Path

from yeebench.results import paper_figures as pf
from yeebench.vcluster.layout import default_cpus_per_node

REFRAME = Path(__file__).resolve().parents[3]
PAGES = REFRAME / "papers"
CHECKS = REFRAME / "yeebench" / "checks"
CLAIM = re.compile(r"^Paper (\d{3})(?: (Figs?\. \d+(?:-\d+)?|Table \d+))?[:,]")
HOST_CORES = 2   # CI's machine (the pages' "CI has 2 cores")


def _class_claims():
    """[(class, paper, figure or '')] from the first line of every check class's docstring."""
    out = []
    for path in CHECKS.glob("*/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found = CLAIM.match((ast.get_docstring(node) or "").strip())
                if found:
                    out.append((node.name, found.group(1), found.group(2) or ""))
    return out


def _items(paper, figure):
    """Rows of `paper` whose item is `figure` or one of its sub-rows ('Fig. 6 (per node)', 'Figs. 7 ...')."""
    numbers = re.findall(r"\d+", figure)
    return [e for e in pf.EXPERIMENTS if e.paper == paper and (
        not figure or e.item.split(" (")[0] == figure or
        (e.item.startswith(figure.split(" ")[0].rstrip("s.")) and re.findall(r"\d+", e.item.split(" (")[0]) == numbers))]


def claim_problems(claims, experiments=None):
    rows = experiments or pf.EXPERIMENTS
    out = []
    for name, paper, figure in claims:
        mine = [e for e in _items(paper, figure) if e in rows and e.check == name]
        if not mine:
            out.append(f"{name} claims paper {paper} {figure or '(no figure)'}: no row of that figure names it")
        dead = [e.item for e in _items(paper, figure) if e in rows and e.status in ("not reproducible", "no measurement")]
        if figure and dead:
            out.append(f"{name} claims paper {paper} {figure}, which the rows call {dead}: not reproducible")
    return out


def test_every_check_docstring_claim_has_its_row():
    claims = _class_claims()
    assert ("FdtdPackingSweep", "002", "Fig. 3") in claims and ("FdtdNodeScaling", "000", "Fig. 12") in claims
    assert not claim_problems(claims)


def test_a_check_claiming_a_figure_that_is_not_reproducible_fails():
    assert claim_problems([("HaloMessageSizes", "002", "Fig. 4")])          # the stale claim this test replaces
    assert claim_problems([("FdtdPacking", "002", "")])                     # paper 002 rows never name it
    assert not claim_problems([("FdtdMessageStats", "002", "Table 1")])


def _page_prose(paper):
    text = (PAGES / f"{paper}.md").read_text()
    return text.split(pf.BEGIN)[0] + text.split(pf.END)[-1]


def test_what_a_page_calls_not_reproducible_the_rows_do():
    wrong = []
    for paper in pf.papers():
        for figure in re.findall(r"((?:Figs?\.|Table) \d+(?:-\d+)?)(?: \([^)]*\))? (?:is|are) not reproducible",
                                 _page_prose(paper)):
            statuses = {e.status for e in _items(paper, figure)}
            if statuses != {"not reproducible"}:
                wrong.append(f"papers/{paper}.md calls {figure} not reproducible, the rows: {sorted(statuses)}")
    assert not wrong


def _make_var(name, path):
    return int(re.search(rf"^{name}\s*\?=\s*(\d+)", (REFRAME / path).read_text(), re.M).group(1))


def _stated_sizes(texts=None):
    """[(where, what, number)] of every virtual-cluster size the pages and the rows state."""
    if texts is None:
        texts = {f"papers/{p.name}": p.read_text() for p in PAGES.glob("*.md")}
        texts.update({f"{e.paper} {e.item}": f"{e.how} {e.ci}" for e in pf.EXPERIMENTS})
    out = []
    for where, text in texts.items():
        for n in re.findall(r"(\d+) on the CI virtual cluster", text):
            out.append((where, "nodes", int(n)))
        for n in re.findall(r"make test-vcluster`[^.]*? across (\d+) virtual nodes", text):
            out.append((where, "nodes", int(n)))
        for n in re.findall(r"(\d+) virtual nodes of \d+ cores?", text):
            out.append((where, "nodes", int(n)))
        for n in re.findall(r"virtual cluster's srun partition\*\* \(`[^`]*`, (\d+) nodes sharing", text):
            out.append((where, "nodes", int(n)))
        for n in re.findall(r"virtual nodes of (\d+) cores?", text):
            out.append((where, "cores", int(n)))
        for n in re.findall(r"make test-acceptance-vcluster`[^.]*? across (\d+)", text):
            out.append((where, "acceptance nodes", int(n)))
    return out


def test_the_virtual_cluster_sizes_stated_are_the_make_files():
    nodes = _make_var("VCLUSTER_NODES", "vcluster.mk")
    want = {"nodes": nodes, "cores": default_cpus_per_node(HOST_CORES, nodes),
            "acceptance nodes": _make_var("ACCEPTANCE_VC_NODES", "acceptance.mk")}
    stated = _stated_sizes()
    assert {what for _, what, _ in stated} == set(want), stated   # each kind is stated somewhere
    wrong = [f"{where}: {n} {what}, the make files: {want[what]}" for where, what, n in stated if n != want[what]]
    assert not wrong, wrong


def test_a_stale_size_is_found():
    stale = {"000": "The paper's 18 nodes are the partition's nodes here (3 on the CI virtual cluster).",
             "ci": "CI has 2 cores (2 virtual nodes of 1 core on the virtual cluster)"}
    assert sorted(_stated_sizes(stale)) == [("000", "nodes", 3), ("ci", "cores", 1), ("ci", "nodes", 2)]
