"""`yeebench results report`: one self-contained HTML file (plots inlined as data: URIs,
inline CSS, no scripts, no external resources) that opens offline."""
import base64
import datetime
import html
import tempfile
from pathlib import Path

from yeebench.results import compare, plots, stats
from yeebench.results.store import atomic_write_text

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#222;max-width:1200px}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0} th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}
th{background:#f3f3f3} td{max-width:420px;overflow-wrap:break-word} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.regressed{background:#fbd5d5;font-weight:bold} .improved{background:#d5f5dc} .missing{background:#fff1c9}
.changed{background:#e8e3fb} .figure{display:inline-block;margin:.4em;vertical-align:top}
.figure img{max-width:560px;border:1px solid #ddd} .muted{color:#777;font-size:12px}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;font-size:13px} dt{font-weight:bold}
"""


def _e(value):
    return html.escape("" if value is None else str(value))


def _fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _table(headers, rows, classes=None):
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = f' class="{_e(classes[i])}"' if classes and classes[i] else ""
        cells = "".join(f'<td class="num">{_e(_fmt(c))}</td>' if isinstance(c, (int, float)) and not isinstance(c, bool)
                        else f"<td>{_e(c)}</td>" for c in row)
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _run_summary(runs):
    rows = []
    for run in runs:
        provs = run.provenances or [None]
        for prov in provs:
            counts = (prov or {}).get("counts", {})
            rf = (prov or {}).get("reframe", {})
            rows.append([(prov or {}).get("run_id", run.label), (prov or {}).get("system", "-"),
                         rf.get("time_start", "-"), counts.get("testcases", "-"), counts.get("passed", "-"),
                         counts.get("skipped", "-"), counts.get("failed", "-"), counts.get("rows", len(run.rows))])
    return _table(["run", "system", "started (UTC)", "test cases", "passed", "skipped", "failed", "rows"], rows)


def _fom_table(run, verdicts):
    groups = compare.group_rows(run.rows)
    rows, classes = [], []
    for key, members in groups.items():
        values = [r["value"] for r in members]
        sample = members[0]
        verdict = verdicts.get(key, {})
        change = verdict.get("change")
        rows.append([sample["check"], key[4].replace(",", ", "), sample["metric"], stats.median(values), min(values), max(values),
                     len(values), sample["unit"] or "-",
                     f"{sample['direction']} ({sample['direction_source']})",
                     verdict.get("verdict", "-"), "-" if change is None else f"{change * 100:+.1f}%"])
        classes.append(verdict.get("verdict"))
    return _table(["check", "parameters", "metric", "median", "min", "max", "n", "unit", "better",
                   "verdict", "change (+ = worse)"], rows, classes)


def _provenance(prov):
    if not prov:
        return "<p class='muted'>no provenance recorded</p>"
    git, sw, topo = prov.get("git", {}), prov.get("software", {}), prov.get("topology", {})
    img, rf = prov.get("environment_image", {}), prov.get("reframe", {})
    builds = prov.get("build", {}).get("programs", {})
    items = [
        ("run", prov.get("run_id")), ("system", prov.get("system")),
        ("ReFrame", f"{rf.get('version')} on {rf.get('hostname')} [{rf.get('source')}]"),
        ("command", rf.get("cmdline")),
        ("git", f"{git.get('sha') or 'unknown'}{' (dirty)' if git.get('dirty') else ''} [{git.get('source')}]"),
        ("builds", "; ".join(f"{name}: {b.get('version', '')} {b.get('compiler', '')} {b.get('flags', '')}"
                             for name, b in builds.items()) or "none reported"),
        ("compiler", sw.get("compiler")), ("MPI", sw.get("mpi")), ("UCX", sw.get("ucx")),
        ("software source", sw.get("source")),
        ("topology", f"{topo.get('sockets')} socket(s), {topo.get('cores')} cores, {topo.get('cpus')} CPUs, "
                     f"{topo.get('numa_nodes')} NUMA node(s), distances {topo.get('numa_distances')}, "
                     f"{topo.get('model')} [{topo.get('source')}]"),
        ("observed bindings", f"{len(prov.get('bindings', {}).get('observed', []))} placement record(s) "
                              f"[{prov.get('bindings', {}).get('source')}]"),
        ("container image", img.get("container_image_digest") or "none"),
        ("spack.lock sha256", img.get("spack_lock_sha256") or "none"),
        ("ingested", f"{prov.get('ingested_at')} on {prov.get('ingest_host')}"),
    ]
    out = ["<dl>"] + [f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items] + ["</dl>"]
    jobs = prov.get("jobs", {}).get("cases", [])
    failed = [c for c in jobs if c.get("result") not in ("pass", "skip")]
    if failed:
        out.append("<h3>Failed test cases</h3>")
        out.append(_table(["test case", "check", "result", "phase", "reason"],
                          [[c["testcase"], c["check"], c["result"], c.get("fail_phase"), c.get("fail_reason")]
                           for c in failed], ["regressed"] * len(failed)))
    nodes = sorted({n for c in jobs for n in (c.get("nodelist") or [])})
    jobids = [c.get("jobid") for c in jobs if c.get("jobid")]
    out.append(f"<p class='muted'>nodes: {_e(', '.join(nodes) or '-')}; {len(jobids)} job id(s)"
               f"{': ' + _e(', '.join(jobids[:20])) if jobids else ''}{' ...' if len(jobids) > 20 else ''}</p>")
    return "\n".join(out)


def render(runs, baseline=None, threshold=compare.DEFAULT_THRESHOLD):
    """The report's HTML text for the runs (RowSource list), against an optional baseline RowSource."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>yeebench report</title>"
             f"<style>{_CSS}</style></head><body>",
             "<h1>yeebench report</h1>",
             f"<p class='muted'>generated {now}; {len(runs)} run source(s)"
             f"{'; baseline: ' + _e(baseline.label) if baseline else ''}</p>",
             "<h2>Runs</h2>", _run_summary(runs)]
    verdicts_by_run = []
    if baseline is not None:
        parts.append(f"<h2>Verdicts against the baseline</h2><p>threshold {threshold * 100:g}%, "
                     f"noise-aware (best repeat of each side, MAD spread, Mann-Whitney with "
                     f"&ge;{compare.MIN_REPEATS_FOR_TEST} repeats each); change is signed so that positive "
                     f"is worse.</p>")
        summary_rows = []
        for run in runs:
            results = compare.compare_rows(baseline.rows, run.rows, threshold=threshold)
            verdicts_by_run.append({(r["system"], r["partition"], r["environ"], r["check"], r["parameters"],
                                     r["metric"]): r for r in results})
            counts = compare.summary(results)
            summary_rows.append([run.label] + [counts[v] for v in compare.VERDICTS])
        parts.append(_table(["run"] + list(compare.VERDICTS), summary_rows,
                            ["regressed" if r[1] else None for r in summary_rows]))
    else:
        verdicts_by_run = [{} for _ in runs]
    parts.append("<h2>Figures of merit</h2>")
    for run, verdicts in zip(runs, verdicts_by_run):
        parts.append(f"<h3>{_e(run.label)}</h3>")
        parts.append(_fom_table(run, verdicts))
    parts.append("<h2>Plots</h2>")
    with tempfile.TemporaryDirectory(prefix="yeebench-report-") as tmp:
        for path in plots.write_plots(runs, tmp, baseline=baseline):
            data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            name = Path(path).stem
            parts.append(f"<div class='figure'><img alt='{_e(name)}' title='{_e(name)}' "
                         f"src='data:image/png;base64,{data}'><div class='muted'>{_e(name)}</div></div>")
    parts.append("<h2>Provenance</h2>")
    for run in runs:
        for prov in run.provenances or [None]:
            parts.append(f"<h3>{_e((prov or {}).get('run_id', run.label))}</h3>")
            parts.append(_provenance(prov))
    if baseline is not None:
        parts.append("<h3>Baseline</h3>")
        for prov in baseline.provenances[:3] or [None]:
            parts.append(_provenance(prov))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(runs, output, baseline=None, threshold=compare.DEFAULT_THRESHOLD):
    output = Path(output)
    atomic_write_text(output, render(runs, baseline, threshold))
    return output
