#!/usr/bin/env python3
"""Cost of the results tools against the size of a run: ingest, compare and report of ReFrame reports
made from a real run, scaled up to a whole machine's.

    python results/scale_benchmark.py --scales 1,10,100,1000 --out build/scale-benchmark

A scale of S is the recorded smoke run (27 test cases) on S nodes spread over up to 16 partitions
and 4 programming environments, as `reframe --distribute` records it, plus each partition's
all-pairs network matrix (results/scale_report.py): 100 is a 2,716-test-case run over 100 nodes,
the size of one full run at a mid-size site, and 1,000 a 1,000-node machine. Each tool runs as a
user runs it, a fresh process each, and is timed for wall and CPU seconds, its peak memory (the
child's maximum resident set) and its output's size. Writes OUT/scale-benchmark.json and
OUT/scale-benchmark.png (cost against size, log-log), and prints the growth exponent of CPU time
between the two largest scales of each tool (1 = linear). --max-exponent makes the run fail when a
tool grows faster than that (make test runs the smaller scales with it). --tree DIR runs the tools
of another checkout (the code before a change), on the same reports and machine.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale_report import SOURCE, write_scaled_report  # noqa: E402

TOOLS = ("ingest", "compare", "report")


def timed(argv, env=None):
    """Wall s, CPU s and peak resident MiB of one command, run in a fresh process (wait4 gives its rusage)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return {"rc": proc.returncode, "wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_mib": round(usage.ru_maxrss / 1024, 1), "output_tail": output.decode(errors="replace")[-400:]}


def page_shape(html):
    """What a reader gets: the page's bytes, its images, its table rows and the files it links."""
    text = html.read_text(errors="replace")
    linked = [html.parent / name for name in re.findall(r'href="([^"/:#]+)"', text)]
    return {"output_bytes": html.stat().st_size, "images": text.count("<img "), "table_rows": text.count("<tr"),
            "linked_bytes": sum(p.stat().st_size for p in set(linked) if p.is_file())}


def tool_command(tree):
    """The yeebench command line, and its environment: this checkout's, or the one in TREE."""
    if tree is None:
        return [str(Path(sys.executable).parent / "yeebench")], None
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve() / "reframe"))
    return [sys.executable, "-m", "yeebench"], env


def run_scale(scale, out, tree=None, tools=TOOLS, source=SOURCE):
    where = out / f"x{scale}"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    report = where / "report.json"
    cases = write_scaled_report(report, scale, source=source)
    results = where / "results"
    yeebench, env = tool_command(tree)
    row = {"scale": scale, "test_cases": cases, "report_mb": round(report.stat().st_size / 1e6, 2)}
    ingest = timed(yeebench + ["results", "ingest", str(report), "--results-dir", str(results)], env)
    row["ingest"] = ingest
    runs = sorted(p for p in results.glob("*/*") if p.is_dir())
    if ingest["rc"] != 0 or not runs:
        row["error"] = f"ingest failed (exit {ingest['rc']}): {ingest['output_tail']}"
        return row
    run = runs[0]
    row["rows"] = sum(1 for _ in open(run / "rows.jsonl"))
    if "compare" in tools:
        compared = where / "compare.json"
        compare = timed(yeebench + ["results", "compare", "--baseline", str(run), "--candidate", str(run),
                                    "--no-history", "--format", "json", "-o", str(compared)], env)
        if compared.exists():
            compare["output_bytes"] = compared.stat().st_size
            compare["figures"] = len(json.loads(compared.read_text())["results"])
        row["compare"] = compare
    if "report" in tools:
        html = where / "report.html"
        rep = timed(yeebench + ["results", "report", str(run), "-o", str(html)], env)
        if html.exists():
            rep.update(page_shape(html))
        row["report"] = rep
    for tool in tools:
        if row[tool]["rc"] != 0:
            row["error"] = f"{tool} failed (exit {row[tool]['rc']}): {row[tool]['output_tail']}"
    return row


def exponent(rows, tool, key="cpu_s"):
    """Growth exponent of TOOL's cost between the two largest scales: log(cost ratio) / log(size ratio)."""
    points = [(r["test_cases"], r[tool][key]) for r in rows if tool in r and r[tool].get("rc") == 0]
    if len(points) < 2:
        return None
    (n1, c1), (n2, c2) = points[-2], points[-1]
    return round(math.log(max(c2, 1e-3) / max(c1, 1e-3)) / math.log(n2 / n1), 3)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for tool in TOOLS:
        pts = [(r["test_cases"], r[tool]["cpu_s"]) for r in rows if tool in r and r[tool].get("rc") == 0]
        if pts:
            ax.loglog(*zip(*pts), marker="o", label=tool)
    if rows:
        n0 = rows[0]["test_cases"]
        ax.loglog([n0, rows[-1]["test_cases"]], [1, rows[-1]["test_cases"] / n0], ":", color="grey",
                  label="linear (slope 1)")
    ax.set_xlabel("test cases in the run")
    ax.set_ylabel("CPU time (s)")
    ax.set_title("yeebench results tools: cost against run size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def _line(row):
    parts = [f"{t} {row[t]['wall_s']:.2f} s wall / {row[t]['cpu_s']:.2f} s CPU / {row[t]['peak_mib']:.0f} MiB"
             for t in TOOLS if t in row]
    if "report" in row and "output_bytes" in row["report"]:
        rep = row["report"]
        parts.append(f"page {rep['output_bytes'] / 1e6:.2f} MB, {rep['images']} images, {rep['table_rows']} rows")
    return "  " + "  ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1,10,100,1000", help="comma-separated copies of the smoke run")
    parser.add_argument("--out", default="build/scale-benchmark", type=Path)
    parser.add_argument("--tree", type=Path, default=None,
                        help="run the tools of this checkout (its reframe/ folder) instead of this one's")
    parser.add_argument("--tools", default=",".join(TOOLS), help="which tools to time (default: all)")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="the ReFrame run report to scale up (default: the recorded smoke run, "
                             f"{SOURCE.relative_to(HERE.parent)}); e.g. a run whose pt2pt cases record whole curves")
    parser.add_argument("--max-exponent", type=float, default=None,
                        help="fail when a tool's CPU time grows faster than size**this between the two largest scales")
    args = parser.parse_args()
    try:
        scales = sorted({int(s) for s in args.scales.split(",")})
    except ValueError:
        parser.error(f"--scales {args.scales!r}: expected positive integers separated by commas")
    if not scales or scales[0] < 1:
        parser.error("--scales: expected positive integers")
    tools = tuple(t for t in TOOLS if t in args.tools.split(","))
    if not tools:
        parser.error(f"--tools {args.tools!r}: expected some of {', '.join(TOOLS)}")
    if not args.source.is_file():
        parser.error(f"--source {args.source}: no such file")
    if args.tree is not None and not (args.tree / "reframe" / "yeebench").is_dir():
        parser.error(f"--tree {args.tree}: no reframe/yeebench there")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for scale in scales:
        print(f"scale-benchmark: x{scale} ...", flush=True)
        row = run_scale(scale, args.out, args.tree, tools, args.source.resolve())
        if "error" in row:   # the larger scales are not tried; what was measured is still written
            print(f"scale-benchmark: error: x{scale}: {row['error']}", file=sys.stderr)
            failed = row
            break
        rows.append(row)
        print(f"  {row['test_cases']} test cases, {row['rows']} rows, report {row['report_mb']} MB", flush=True)
        print(_line(row), flush=True)
    else:
        failed = None
    growth = {tool: exponent(rows, tool) for tool in tools}
    source = args.source.resolve()
    doc = {"source": str(source.relative_to(HERE.parent) if source.is_relative_to(HERE.parent) else source), "tree": str(args.tree or HERE.parent),
           "scales": rows, "failed_scale": failed, "growth_exponent_cpu": growth,
           "load_average": os.getloadavg(), "cpu_count": os.cpu_count(), "cpu": cpu_model()}
    (args.out / "scale-benchmark.json").write_text(json.dumps(doc, indent=1) + "\n")
    drew = plot(rows, args.out / "scale-benchmark.png")
    print(f"scale-benchmark: growth exponent of CPU time between the two largest scales: {growth}")
    print(f"scale-benchmark: wrote {args.out / 'scale-benchmark.json'}" + (" and the plot" if drew else ""))
    if failed is not None:
        return 1
    if args.max_exponent is not None:
        over = {t: e for t, e in growth.items() if e is not None and e > args.max_exponent}
        if over:
            print(f"scale-benchmark: FAILED: cost grows faster than size**{args.max_exponent}: {over}")
            return 1
    return 0


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


if __name__ == "__main__":
    sys.exit(main())
