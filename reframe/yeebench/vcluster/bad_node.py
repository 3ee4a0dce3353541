"""One bad node among many is found and named: make one node of the running virtual cluster bad on
purpose, run the acceptance network check over every node, and require that it fails naming exactly
that node (and no other) as the outlier, in ReFrame's verdict, on the acceptance page and in the results
page's node-pair figure.

    python -m yeebench.vcluster.bad_node --node vc2 --out DIR [--kinds link,cpu] -- RUN.SH OPTIONS...

Kinds: `link` slows the node's link to --link-rate (default 400mbit, against links of several Gbit/s
or the cluster's rate); `cpu` limits the node's processes to --cpu-percent of one CPU. Each kind is
undone before the next (`yeebench vcluster degrade --clear`), whatever its outcome. Exit 0 when every
kind named exactly the node, 1 otherwise, 2 for bad arguments or no cluster.
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys

from . import cluster, degrade
from .layout import DEFAULT_STATE_DIR
from .sysrun import SystemError_

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RUN_SH = os.path.join(REPO, "reframe", "yeebench", "acceptance", "run.sh")
CHECK = "AcceptanceNetwork"
#: A node in the verdict's outlier list: "outlier node(s): vc2: bandwidth 12.3 MB/s vs median ...; vc2: ..."
_NODE = re.compile(r"(?:^|; )([^\s:;/]+)(?:/\d+)?: (?:latency|bandwidth) ")


def named_outliers(reason: str):
    """The nodes a failed AcceptanceNetwork verdict names as outliers (empty when it names none)."""
    found = re.search(r"outlier node\(s\): (.*)", reason or "")
    return set(_NODE.findall(found.group(1))) if found else set()


#: A node the results page's pair heatmap names: "... srun: vc2 bandwidth 49 MB/s vs median 337 MB/s (588% worse)"
_PAGE_NODE = re.compile(r"(?:: |; )([^\s:;]+) (?:latency|bandwidth) [-+0-9.eE]+ \S+ vs median ")


def page_outliers(page_path: str):
    """The nodes the results page's AcceptanceNetwork heatmap names as outliers; None without that figure."""
    with open(page_path, encoding="utf-8", errors="replace") as fp:
        text = fp.read()
    captions = [html.unescape(re.sub(r"<[^>]+>", "", c.replace("<wbr>", "")))
                for c in re.findall(r"<figcaption>(.*?)</figcaption>", text, re.S)]
    found = [c for c in captions if c.startswith(f"{CHECK}: every node pair")]
    return set(_PAGE_NODE.findall(" ".join(found))) if found else None


def verdict_of(report_path: str):
    """(result, fail_reason) of the network check in a ReFrame run report; None when it did not run."""
    with open(report_path, encoding="utf-8") as fp:
        report = json.load(fp)
    for run in report.get("runs", []):
        for case in run.get("testcases", []):
            if str(case.get("name", "")).split(" ")[0].split("%")[0] == CHECK:
                return case.get("result"), str(case.get("fail_reason") or "")
    return None


def run_network_check(state_dir: str, out: str, run_opts):
    env = dict(os.environ)
    cmd = ["env", f"YEEBENCH_PREFIX={env.get('YEEBENCH_PREFIX', '')}", "bash", RUN_SH, out, *run_opts, "-n", CHECK]
    with open(out + ".log", "w") as log:
        return subprocess.call([sys.executable, "-m", "yeebench", "vcluster", "exec", "--state-dir", state_dir,
                                "--", *cmd], stdout=log, stderr=subprocess.STDOUT)


def judge(kind: str, node: str, out: str) -> bool:
    report = os.path.join(out, "report.json")
    if not os.path.isfile(report):
        print(f"bad-node {kind}: FAILED: the acceptance run wrote no report (see {out}.log)")
        return False
    try:
        found = verdict_of(report)
    except (OSError, ValueError, AttributeError, TypeError) as err:
        print(f"bad-node {kind}: FAILED: the acceptance run's report {report} cannot be read: {err}")
        return False
    if found is None:
        print(f"bad-node {kind}: FAILED: {CHECK} did not run (see {out}/reframe.out)")
        return False
    result, reason = found
    named = named_outliers(reason)
    page = os.path.join(out, "acceptance.html")
    on_page = os.path.isfile(page) and node in open(page, encoding="utf-8", errors="replace").read()
    results_page = os.path.join(out, "results.html")
    in_figure = page_outliers(results_page) if os.path.isfile(results_page) else None
    if result == "fail" and named == {node} and on_page and in_figure == {node}:
        print(f"bad-node {kind}: PASSED: {CHECK} failed naming {node} and only {node}, as does the results page's "
              f"node-pair figure: {reason.strip()[:300]}")
        return True
    why = (f"it passed: {reason.strip()[:300]}" if result != "fail" else
           f"it named {sorted(named) or 'no node'}, not only {node}: {reason.strip()[:300]}" if named != {node} else
           f"the acceptance page ({page}) does not name {node}" if not on_page else
           f"the results page ({results_page}) has no {CHECK} node-pair figure" if in_figure is None else
           f"the results page's node-pair figure names {sorted(in_figure) or 'no node'}, not only {node}")
    print(f"bad-node {kind}: FAILED: {why}")
    return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m yeebench.vcluster.bad_node",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--node", required=True, help="the node made bad, e.g. vc2")
    parser.add_argument("--out", required=True, help="folder of the runs (one per kind)")
    parser.add_argument("--kinds", default="link,cpu", help="link, cpu or both (default link,cpu)")
    parser.add_argument("--link-rate", default="400mbit", help="the bad node's link rate (default 400mbit)")
    parser.add_argument("--cpu-percent", type=float, default=10.0,
                        help="the bad node's share of one CPU, percent (default 10)")
    parser.add_argument("--state-dir", default=os.environ.get("YEEBENCH_VCLUSTER_DIR", DEFAULT_STATE_DIR))
    parser.add_argument("run_opts", nargs=argparse.REMAINDER, help="-- then run.sh's ReFrame options")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - {"link", "cpu"}:
        parser.error(f"--kinds takes link and/or cpu, got {args.kinds!r}")
    run_opts = args.run_opts[1:] if args.run_opts[:1] == ["--"] else args.run_opts
    if cluster.status(args.state_dir).get("phase") != "up":
        print(f"bad-node: error: no healthy virtual cluster in {args.state_dir} (yeebench vcluster up)",
              file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    ok = True
    for kind in kinds:
        out = os.path.join(os.path.abspath(args.out), kind)
        try:
            if kind == "link":
                degrade.slow_link(args.state_dir, args.node, args.link_rate)
                print(f"bad-node link: {args.node}'s link at {args.link_rate}")
            else:
                path = degrade.cap_cpu(args.state_dir, args.node, args.cpu_percent)
                print(f"bad-node cpu: {args.node} at {args.cpu_percent:g} % of one CPU ({path})")
        except (degrade.DegradeError, SystemError_, ValueError) as err:
            print(f"bad-node {kind}: SKIPPED: cannot make {args.node} bad here: {err}")
            continue
        try:
            run_network_check(args.state_dir, out, run_opts)
            ok &= judge(kind, args.node, out)
        finally:
            try:
                degrade.clear(args.state_dir, args.node)
            except (degrade.DegradeError, SystemError_) as err:
                print(f"bad-node {kind}: FAILED: cannot restore {args.node}: {err}")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
