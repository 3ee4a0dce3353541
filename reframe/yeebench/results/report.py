"""`yeebench results report`: one self-contained HTML file (plots inlined as data: URIs, inline
CSS, no scripts, no external resources) that opens offline.

Rendered from templates/report.html.j2 (Jinja2, autoescaping on). Reading order: a summary
(one line per experiment: the key figure its figure module chose, that figure's verdict against
the baseline, the seed paper's published figure beside it; then every skipped or left-out case
with its reason), the acceptance sign-off, plausibility warnings, one figure per experiment
(or a line saying why not) and, for a run on many nodes, each experiment's key figure per node and
the network's pair matrices (report_machine), then the figures in collapsed tables per experiment
(report_tables; the complete table beside the page as CSV and JSON) and the provenance. A run of
a whole machine reads as one: its figures pooled over partitions, environments and nodes (machine).
"""
import base64
import datetime
import fnmatch
import re
import tempfile
import unicodedata
from collections import OrderedDict
from pathlib import Path

import jinja2
import markupsafe
import PIL.Image

from yeebench import metrics
from yeebench.results import (compare, figures, machine, paper_figures, plots, quick_stats, report_machine,
                              report_tables)
from yeebench.results.figures import acceptance
from yeebench.results.errors import ResultsError
from yeebench.results.formats import verdict_text
from yeebench.results.store import atomic_write_text

TEMPLATES = Path(__file__).resolve().parent / "templates"
CSS_FILE = TEMPLATES / "report.css"
# the figure that stands for a check no experiment module knows (yeebench.results.figures), first present wins
KEY_METRICS = ("mcells_per_s", "latency_1B", "peak_bw", "bandwidth_peak", "triad_bw", "latency_*",
               "io_seconds_per_step", "parallel_efficiency")
# worst first: the summary shows a check's worst verdict
VERDICT_ORDER = report_tables.VERDICT_ORDER
MAX_LISTED = 200  # failed test cases (grouped) listed per run; the rest are counted (provenance.json has all)
# A run's text (a parameter set, a host, a path, a check's name) may hold a token wider than the page.
# One longer than this gets a line-break opportunity after each separator and at each lower-to-upper
# case step, and at least every LONG_TOKEN characters; a shorter one (a word, a number, every check
# name of the suite) never breaks.
LONG_TOKEN = 24
_BREAK_AFTER = ",;/\\_:|&?"
_BREAK_AFTER_BEFORE_LETTER = ".-"  # not inside a number: 1.0, node-01


def _joins(before, char):
    """Whether `char` belongs to the character before it (an accent, a variation selector, what a
    zero-width joiner joins): a break there would split one letter or symbol."""
    return unicodedata.category(char) in ("Mn", "Mc", "Me") or "\u200d" in (before, char)


def _pieces(token):
    """The token cut where a line may break (see LONG_TOKEN); joined again they are the token."""
    if len(token) <= LONG_TOKEN:
        return [token]
    pieces, start = [], 0
    for i in range(1, len(token)):
        before, char = token[i - 1], token[i]
        if _joins(before, char):
            continue
        natural = before in _BREAK_AFTER or (before in _BREAK_AFTER_BEFORE_LETTER and not char.isdigit()) \
            or (before.islower() and char.isupper())
        if natural or i - start >= LONG_TOKEN:
            pieces.append(token[start:i])
            start = i
    return pieces + [token[start:]]


def breakable(value):
    """The value as escaped HTML with <wbr> inside its long tokens, so that it wraps within the page
    where a reader would break it (after a comma, a slash, between name parts) and the copied text
    stays whole. Every text of the run the template shows goes through this filter."""
    parts = []
    for i, chunk in enumerate(re.split(r"(\s+)", str(value))):
        parts.append(markupsafe.escape(chunk) if i % 2 else
                     markupsafe.Markup("<wbr>").join(markupsafe.escape(p) for p in _pieces(chunk)))
    return markupsafe.Markup("").join(parts)


def _environment():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=False)
    env.filters["breakable"] = breakable
    return env


def _fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _key_metric(check, metrics_present):
    """The experiment's own choice (its comparison ratio or headline figure), else the first generic match."""
    chosen = figures.key_metric(check, metrics_present)
    if chosen:
        return chosen
    for pattern in KEY_METRICS:
        for metric in metrics_present:
            if fnmatch.fnmatchcase(metric, pattern):
                return metric
    return metrics_present[0]


def _best(groups, direction):
    """(key, median) of the best case by direction among one metric's parameter cases."""
    medians = [(key, quick_stats.median([r["value"] for r in rows])) for key, rows in groups]
    pick = min if direction == metrics.LOWER else max
    return pick(medians, key=lambda kv: kv[1])


def _largest(groups, param):
    """(key, median) of the case with the largest value of `param`; None without that parameter."""
    scaled = []
    for key, rows in groups:
        try:
            scaled.append((float(rows[0]["parameters"][param]), key, rows))
        except (KeyError, TypeError, ValueError):
            continue
    if not param or not scaled:
        return None
    _, key, rows = max(scaled, key=lambda s: s[0])
    return key, quick_stats.median([r["value"] for r in rows])


def _summary(run, verdicts, pooled=None):
    """One line per check: its key figure (best case, pooled over the partitions, environments and nodes
    that measured it) with that figure's verdict; the other figures' verdicts counted beside it; the
    papers' figures. A line keeps its case's rows (`rows`) for the machine's view.
    pooled: the run's report_tables.pooled_groups, when the caller has them."""
    by_check = OrderedDict()
    keys_of = {}
    for key, (rows, keys) in (report_tables.pooled_groups(run) if pooled is None else pooled).items():
        by_check.setdefault(key[3], []).append((key, rows))
        keys_of[key] = keys
    lines, hardware = [], _hardware_by_testcase(run)   # the run's, the same for every check
    for check, groups in by_check.items():
        metric = _key_metric(check, list(OrderedDict.fromkeys(k[5] for k, _ in groups)))
        cases = [(k, rows) for k, rows in groups if k[5] == metric]
        direction = cases[0][1][0]["direction"]
        largest = _largest(cases, figures.key_scale(check))
        key, value = largest or _best(cases, direction)
        sample = dict(cases[0][1][0])
        own = [verdicts[k] for k in keys_of[key] if k in verdicts]
        own_class, own_text = report_tables.verdict_summary(own)
        others = [verdicts[k]["verdict"] for k2, _ in groups if k2 != key for k in keys_of[k2] if k in verdicts]
        counts = OrderedDict((v, others.count(v)) for v in VERDICT_ORDER if others.count(v))
        papers = _published(groups, hardware)
        lines.append({
            "check": check, "metric": metric,
            "case": _at_largest(key, cases, figures.key_scale(check)) if largest else _short_case(key[4], cases),
            "value": _fmt(value), "unit": sample["unit"] or "",
            "verdict": own_text, "verdict_class": own_class,
            "detail": ("other figures: " + ", ".join(f"{n} {verdict_text({'verdict': v})}" for v, n in counts.items()))
            if counts and set(counts) != {"unchanged"} else "",
            "papers": papers, "rows": dict(cases)[key], "direction": direction, "run": run.label})
    return lines


def _hardware_by_testcase(run):
    """{testcase: the hardware facts its check recorded} (observations['hardware']), from the provenance;
    under RUN_FACTS the provenance topology's NUMA distance table (`numactl --hardware` of the machine
    that ran ingest, not the compute node: a case's own record overrides it)."""
    out = {}
    for prov in run.provenances:
        table = (prov.get("topology") or {}).get("numa_distances")
        if table and RUN_FACTS not in out:
            out[RUN_FACTS] = {"numa_distances": table}
        for case in (prov.get("observations") or {}).get("cases", []):
            facts = case.get("facts") if isinstance(case, dict) else None
            if isinstance(facts, dict) and isinstance(facts.get("hardware"), dict):
                out[case.get("testcase")] = facts["hardware"]
    return out


RUN_FACTS = object()   # the key of a run's own facts in _hardware_by_testcase's answer
NODE_TABLE = "the compute node's NUMA distance table"   # recorded by the check on the compute node
INGEST_HOST_TABLE = "the ingest host's NUMA distance table (not the compute node's)"   # provenance.topology


def _published(groups, hardware=None):
    """Every published figure the check's rows measure, each beside this system's median for that case
    (a comparison check records several: each placement's rate, their ratio). A figure whose conditions
    the case does not meet (paper_figures: node count, sockets, buffers, ...) is never printed: in its place
    one line per figure says what it needs and what the run had. An `instead` pair carries its reason."""
    out, seen, needs = [], set(), OrderedDict()
    hardware = hardware or {}
    for _, rows in groups:
        row = rows[0]
        own = hardware.get(row.get("testcase")) or {}
        facts = dict(hardware.get(RUN_FACTS) or {}, **own)
        # the check's record is the compute node's table; the run's facts hold only the ingest host's
        table_of = NODE_TABLE if own.get("numa_distances") is not None else INGEST_HOST_TABLE
        for p in paper_figures.for_row(row, facts):
            common = {"paper": p.paper, "item": p.item, "href": f"{p.page}#{p.anchor}",
                      "instead": p.instead if p.status == "instead" else ""}
            if p.value is None:
                have = needs.setdefault((p.paper, p.item, p.needs), dict(common, needs=p.needs, have=[]))["have"]
                if p.have not in have:
                    have.append(p.have)
                continue
            key = (p.paper, p.item, p.what, row["metric"], tuple(sorted(row["parameters"].items())))
            if key in seen:
                continue
            seen.add(key)
            ours = p.ours if p.ours is not None else quick_stats.median([r["value"] for r in rows])
            out.append(dict(common, value=_fmt(float(p.value)), unit=p.unit, what=p.what,
                            metric=table_of if p.ours is not None else row["metric"],
                            ours=_fmt(ours), ours_unit=p.unit if p.ours is not None else row["unit"] or ""))
    shown = {(p["paper"], p["item"]) for p in out}
    return out + [dict(n, have="; ".join(n["have"])) for (paper, item, _), n in needs.items()
                  if (paper, item) not in shown]


def _at_largest(key, cases, param):
    """'at cores_used=4, the largest of 3': the parameters that only follow from it are left out."""
    mine = dict(p.split("=", 1) for p in key[4].split(",") if "=" in p)
    return f"at {param}={mine.get(param)}, the largest of {len(cases)}"


def _short_case(params_text, cases):
    """Only the parameters that differ between the metric's cases: 'binding=core', not all ten."""
    if len(cases) < 2:
        return ""
    split = [dict(p.split("=", 1) for p in k[4].split(",") if "=" in p) for k, _ in cases]
    varying = {name for name in split[0] if len({s.get(name) for s in split}) > 1}
    mine = dict(p.split("=", 1) for p in params_text.split(",") if "=" in p)
    return f"best of {len(cases)}: " + ", ".join(f"{k}={mine[k]}" for k in sorted(varying) if k in mine)


def _provenance(prov, label):
    if not prov:
        return {"label": f"{label}: no provenance recorded", "items": [], "failed": []}
    git, sw, topo = prov.get("git", {}), prov.get("software", {}), prov.get("topology", {})
    img, rf = prov.get("environment_image", {}), prov.get("reframe", {})
    builds = prov.get("build", {}).get("programs", {})
    counts = prov.get("counts", {})
    items = [
        ("run", prov.get("run_id")), ("system", prov.get("system")),
        ("test cases", f"{counts.get('testcases')}: {counts.get('passed')} passed, {counts.get('skipped')} "
                       f"skipped, {counts.get('failed')} failed; {counts.get('rows')} rows"),
        ("started", rf.get("time_start")), ("yeebench", prov.get("suite_version") or "unrecorded"),
        ("ReFrame", f"{rf.get('version')} on {rf.get('hostname')} [{rf.get('source')}]"),
        ("command", rf.get("cmdline")),
        ("git", f"{git.get('sha') or 'unknown'}{' (dirty)' if git.get('dirty') else ''} [{git.get('source')}]"),
        ("builds", "; ".join(f"{name}: {b.get('version', '')} {b.get('compiler', '')} {b.get('flags', '')}"
                             for name, b in builds.items()) or "none reported"),
        ("compiler", sw.get("compiler")), ("MPI", sw.get("mpi")), ("UCX", sw.get("ucx")),
        ("topology", f"{topo.get('sockets')} socket(s), {topo.get('cores')} cores, {topo.get('cpus')} CPUs, "
                     f"{topo.get('numa_nodes')} NUMA node(s), distances {topo.get('numa_distances')}, "
                     f"{topo.get('model')} [{topo.get('source')}]"),
        ("last-level cache", _fmt((prov.get("plausibility") or {}).get("llc_bytes"))),
        ("container image", img.get("container_image_digest") or "none"),
        ("spack.lock sha256", img.get("spack_lock_sha256") or "none"),
        ("ingested", f"{prov.get('ingested_at')} on {prov.get('ingest_host')}"),
    ]
    jobs = prov.get("jobs", {}).get("cases", [])
    failed = [dict(first, count=count, names=names) for first, count, names in machine.grouped(
        (c for c in jobs if c.get("result") not in ("pass", "skip")),
        key=lambda c: (c.get("check"), c.get("result"), c.get("fail_phase"), c.get("fail_reason")),
        name=lambda c: c.get("testcase"))]
    return {"label": f"{label} (run {prov.get('run_id')})", "items": [(k, _fmt(v)) for k, v in items],
            "failed": failed[:MAX_LISTED], "failed_left_out": len(failed[MAX_LISTED:])}


def _skipped(runs):
    """Every skipped case and every part of a case left out, each with the reason its check gave; the
    cases of one check that give one reason (a check skipped on every node) as one line."""
    out = []
    for run in runs:
        for prov in run.provenances:
            for case in prov.get("jobs", {}).get("cases", []):
                where = ", ".join(str(n) for n in (case.get("nodelist") or [])[:3])
                if case.get("result") == "skip":
                    reason = case.get("skip_reason") or case.get("fail_reason") or "no reason recorded"
                    out.append({"check": case.get("check") or case.get("testcase"), "reason": reason, "where": where})
                for part, reason in (case.get("not_measured") or {}).items():
                    out.append({"check": f"{case.get('check') or case.get('testcase')}, {part}",
                                "reason": reason, "where": where})
    return [dict(first, count=count, names=names)
            for first, count, names in machine.grouped(out, key=lambda s: (s["check"], s["reason"]),
                                                       name=lambda s: s["where"])]


def _warnings(runs):
    """The plausibility warnings, those of one figure and rule (on every node of a partition) as one."""
    found = [w for run in runs for prov in run.provenances for w in (prov.get("plausibility") or {}).get("warnings", [])]
    return [dict(first, count=count) for first, count, _ in
            machine.grouped(found, key=lambda w: (w.get("check"), w.get("metric"), w.get("rule")))]


def _marks(path):
    """Bars or points the figure shows, as its PNG records them ('' when it does not say)."""
    with PIL.Image.open(path) as image:
        return image.text.get("yeebench-marks", "")


def _wide(path):
    """A figure of panels side by side gets the page's width: halved, its labels would be unreadable."""
    with PIL.Image.open(path) as image:
        return image.width > 2 * image.height


def _plot_item(path, name=None, caption=None, wide=False):
    return {"name": name or Path(path).stem, "caption": caption or name or Path(path).stem, "marks": _marks(path),
            "wide": wide or _wide(path), "data": base64.b64encode(Path(path).read_bytes()).decode("ascii")}


def sidecar_paths(output):
    """The complete table's files beside the report: NAME.figures.csv and NAME.figures.json."""
    output = Path(output)
    return output.with_name(f"{output.stem}.figures.csv"), output.with_name(f"{output.stem}.figures.json")


def render(runs, baseline=None, threshold=compare.DEFAULT_THRESHOLD, output=None):
    """The report's HTML text for the runs (RowSource list), against an optional baseline RowSource, and
    the complete table of figures {file name: text} to write beside it (OUTPUT.figures.csv/.json)."""
    verdicts_by_run = []
    for run in runs:
        results = compare.compare_rows(baseline.rows, run.rows, threshold=threshold) if baseline else []
        verdicts_by_run.append({(r["system"], r["partition"], r["environ"], r["check"], r["parameters"],
                                 r["metric"]): r for r in results})
    groups = [compare.group_rows(run.rows) for run in runs]
    pooled = [report_tables.pooled_groups(run, full) for run, full in zip(runs, groups)]
    summary = [line for run, verdicts, mine in zip(runs, verdicts_by_run, pooled)
               for line in _summary(run, verdicts, mine)]
    node_of = report_machine.node_lookup(runs)
    plot_items, machine_items = [], []
    with tempfile.TemporaryDirectory(prefix="yeebench-report-") as tmp:
        paths, not_drawn = plots.write_figures(runs, tmp, baseline=baseline)
        plot_items = [_plot_item(path) for path in paths]
        spread, lines = report_machine.figures(summary, report_machine.pair_matrices(runs), node_of,
                                               Path(tmp) / "machine", several_runs=len(runs) > 1)
        machine_items = [_plot_item(item["path"], item["name"], item["caption"], item.get("wide", False))
                         for item in spread]
        not_drawn += lines
    provenances = [_provenance(prov, run.label) for run in runs for prov in (run.provenances or [None])]
    if baseline is not None:
        provenances += [_provenance(prov, "baseline") for prov in baseline.provenances[:3]]
    full = report_tables.full_rows(runs, verdicts_by_run, node_of, groups)
    csv_path, json_path = sidecar_paths(output or "report.html")
    files = {csv_path.name: report_tables.as_csv(full), json_path.name: report_tables.as_json(full)}
    systems = sorted({row["system"] for run in runs for row in run.rows})
    html = _environment().get_template("report.html.j2").render(
        title=", ".join(systems), css=CSS_FILE.read_text(),
        generated=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        runs=runs, baseline=baseline.label if baseline else None, summary=summary, skipped=_skipped(runs),
        signoff=acceptance.signoff(runs), warnings=_warnings(runs), plots=plot_items, machine=machine_items,
        not_drawn=not_drawn, full_table={"csv": csv_path.name, "json": json_path.name, "figures": len(full)},
        tables=[report_tables.experiment_tables(r, v, node_of, p) for r, v, p in zip(runs, verdicts_by_run, pooled)],
        provenances=provenances)
    return html, files


def write_report(runs, output, baseline=None, threshold=compare.DEFAULT_THRESHOLD):
    """The report at OUTPUT and its complete table beside it (written first: the page never links to a
    file that is not there). Returns OUTPUT."""
    output = Path(output)
    for path in (output, *sidecar_paths(output)):  # nothing written when one of the three cannot be
        if path.is_dir():
            raise ResultsError(f"output path {path} is a directory; give a file name")
    html, files = render(runs, baseline, threshold, output)
    for name, text in files.items():
        atomic_write_text(output.with_name(name), text)
    atomic_write_text(output, html)
    return output
