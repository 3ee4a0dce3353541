"""`yeebench vcluster up|down|status|exec|preflight`: a virtual Slurm cluster on this machine."""
import argparse
import json
import os
import signal
import sys

from yeebench.usage import UsageError

from . import cluster, preflight
from .layout import DEFAULT_MTU, DEFAULT_STATE_DIR, LayoutError, make_layout

ENV_STATE_DIR = "YEEBENCH_VCLUSTER_DIR"


def _state_dir(args) -> str:
    return os.path.abspath(args.state_dir or os.environ.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR)


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def cmd_up(args) -> int:
    try:
        layout = make_layout(args.nodes, args.cpus_per_node, args.link_rate, cluster.host_cpus(),
                             state_dir=_state_dir(args), memory_mb=args.memory_mb, mtu=args.mtu)
    except LayoutError as err:
        raise UsageError(str(err))
    reason = preflight.check(shaping=layout.link_rate_bps is not None)
    if reason:
        print(f"yeebench vcluster: cannot run here: {reason}", file=sys.stderr)
        return 2
    if layout.cpus_shared:
        print(f"vcluster: note: {len(layout.nodes)} nodes x {layout.cpus_per_node} CPUs exceed the "
              f"{len(cluster.host_cpus())} host CPUs, so nodes share CPUs", file=sys.stderr)
    try:
        seconds = cluster.up(layout)
    except cluster.ClusterError as err:
        print(f"yeebench vcluster up: error: {err}", file=sys.stderr)
        return 1
    rate = (f"{layout.link_rate_bps / 1e9:g} Gbit/s links" if layout.link_rate_bps else "unshaped links") \
        + f", MTU {layout.mtu}"
    print(f"vcluster up in {seconds:.1f} s: {len(layout.nodes)} nodes "
          f"({', '.join(f'{n.name}={n.addr} cpus {n.cpus}' for n in layout.nodes)}), {rate}")
    print("  run commands on the head node:  yeebench vcluster exec -- sinfo")
    print(f"  SLURM_CONF={layout.slurm_conf}")
    return 0


def cmd_down(args) -> int:
    if os.geteuid() != 0:
        print("yeebench vcluster: cannot run here: needs root to remove namespaces", file=sys.stderr)
        return 2
    try:
        cluster.down(_state_dir(args))
    except cluster.NotOwner as err:
        print(f"yeebench vcluster down: {err}", file=sys.stderr)
        return 1
    return 0


def cmd_status(args) -> int:
    info = cluster.status(_state_dir(args))
    if args.json:
        print(json.dumps(info, indent=1))
    elif not info["up"]:
        left = f" (left-over namespaces: {', '.join(info['namespaces'])})" if info["namespaces"] else ""
        print(f"vcluster: down{left}")
        if info["owner"] and info["owner"]["state_dir"] != info["state_dir"]:
            from .owner import describe
            print(f"  this machine's cluster is {describe(info['owner'])}")
    else:
        rate = info["link_rate_bps"]
        print(f"vcluster: {info['phase']}, links {'%g Gbit/s' % (rate / 1e9) if rate else 'unshaped'}, "
              f"SLURM_CONF={info['slurm_conf']}")
        for name, d in info["daemons"].items():
            print(f"  {name:<14} pid {d['pid']:<8} {'running' if d['alive'] else 'NOT RUNNING'}")
        for name, n in info["nodes"].items():
            print(f"  node {name:<9} {n['addr']:<12} cpus {','.join(map(str, n['cpus'])):<10} {n['state'] or '?'}")
    healthy = info["up"] and all(d["alive"] for d in info["daemons"].values()) \
        and all(n["state"] in ("idle", "alloc", "mix", "comp") for n in info["nodes"].values())
    return 0 if healthy else 1


def cmd_exec(args) -> int:
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError("exec needs a command, e.g. `yeebench vcluster exec -- sinfo`")
    try:
        return cluster.exec_on_head(_state_dir(args), argv)
    except cluster.ClusterError as err:
        raise UsageError(str(err))


def cmd_degrade(args) -> int:
    from . import degrade
    from .sysrun import SystemError_
    if not (args.clear or args.link_rate or args.cpu_percent is not None):
        raise UsageError("degrade needs --link-rate, --cpu-percent or --clear")
    state_dir = _state_dir(args)
    try:
        if args.clear:
            degrade.clear(state_dir, args.node)
            print(f"vcluster degrade: {args.node} is as `up` made it again")
        if args.link_rate:
            rate = degrade.slow_link(state_dir, args.node, args.link_rate)
            print(f"vcluster degrade: {args.node}'s link at {rate / 1e6:g} Mbit/s")
        if args.cpu_percent is not None:
            path = degrade.cap_cpu(state_dir, args.node, args.cpu_percent)
            print(f"vcluster degrade: {args.node} limited to {args.cpu_percent:g} % of one CPU ({path})")
    except (degrade.DegradeError, LayoutError, SystemError_) as err:
        raise UsageError(str(err))
    return 0


def cmd_preflight(args) -> int:
    reason = preflight.check(shaping=True)
    if reason:
        print(f"vcluster preflight: {reason}")
        return 2
    print("vcluster preflight: this machine can host a virtual cluster")
    return 0


def cmd_verify(args) -> int:
    from .layout import parse_link_rate
    from . import verify
    try:
        rate = parse_link_rate(args.link_rate)
    except LayoutError as err:
        raise UsageError(str(err))
    if not 0 < args.tolerance < 1:
        raise UsageError(f"--tolerance must be between 0 and 1, got {args.tolerance}")
    try:
        ok, lines = verify.verify(verify.load_rows(args.results), rate, args.tolerance)
    except verify.VerifyError as err:
        raise UsageError(str(err))
    print("\n".join(lines))
    print(f"vcluster verify: {'all properties hold' if ok else 'FAILED'}")
    return 0 if ok else 1


def cmd_smoke(args) -> int:
    from . import smoke
    try:
        make_layout(args.nodes, None, args.link_rate, cluster.host_cpus())
    except LayoutError as err:
        raise UsageError(str(err))
    return smoke.run_smoke(args.nodes, args.link_rate, args.out, args.partitions, not args.own_check_only,
                           args.tolerance, _state_dir(args), args.skip_unsupported)


def _stop_on_signal(signum, frame):
    raise KeyboardInterrupt


def _quiet_on_closed_pipe(func):
    """`yeebench vcluster status | head -1` must not end in a traceback, and a SIGTERM (a stage runner or
    a batch system stopping the run) at any moment, during `up` too, takes the path of Ctrl-C, where
    whatever was started is torn down, instead of killing Python with daemons left running."""
    def wrapped(args):
        previous = signal.signal(signal.SIGTERM, _stop_on_signal)
        try:
            return func(args)
        except BrokenPipeError:
            sys.stderr.close()
            return 0
        except KeyboardInterrupt:
            print(f"yeebench vcluster {args.vcluster_command}: stopped by a signal", file=sys.stderr)
            return 143
        finally:
            signal.signal(signal.SIGTERM, previous)
    return wrapped


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "vcluster", help="virtual Slurm cluster on this machine (network namespaces as nodes)",
        description="A Slurm cluster made of network namespaces on this machine: one bridge, N nodes "
                    "on 10.77.0.0/24, real munge/slurmctld/slurmd. Needs root.")
    parser.set_defaults(func=lambda a: (parser.print_help(), 2)[1])
    sub = parser.add_subparsers(dest="vcluster_command", metavar="ACTION")

    def add(name, func, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        func = _quiet_on_closed_pipe(func)
        p.add_argument("--state-dir", help=f"where configs, logs and state live (default ${ENV_STATE_DIR} "
                                           f"or {DEFAULT_STATE_DIR})")
        p.set_defaults(func=func)
        return p

    p = add("up", cmd_up, "create the namespaces, start munge, slurmctld and one slurmd per node, "
                          "wait until the nodes are idle")
    p.add_argument("--nodes", type=_positive_int, default=2, help="number of nodes (default 2)")
    p.add_argument("--cpus-per-node", type=_positive_int, default=None,
                   help="CPUs per node (default: host CPUs / nodes, at least 2; nodes share CPUs "
                        "when the host has too few)")
    p.add_argument("--link-rate", default="none",
                   help="rate limit of each node's link, e.g. 1gbit, 10gbit, or none (default none)")
    p.add_argument("--memory-mb", type=_positive_int, default=1024, help="RealMemory per node (default 1024)")
    p.add_argument("--mtu", type=_positive_int, default=DEFAULT_MTU,
                   help=f"MTU of the virtual links (default {DEFAULT_MTU}, jumbo frames; 1500 = standard Ethernet)")
    add("down", cmd_down, "stop everything `up` started and remove namespaces, cgroups and the state dir "
                          "(safe to run twice or after a crash)")
    p = add("status", cmd_status, "show daemons and node states; exit 0 only when the cluster is healthy")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = add("exec", cmd_exec, "run a command on the head node (switch namespace, SLURM_CONF set), "
                              "e.g. `yeebench vcluster exec -- reframe ...`")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="command and its arguments")
    p = add("verify", cmd_verify, "assert on a smoke run's results: inter-node bandwidth within a tolerance "
                                  "of the link rate, intra-node better than inter-node")
    p.add_argument("results", help="ingested run directory (rows.jsonl) or ReFrame JSON report")
    p.add_argument("--link-rate", default="none", help="configured link rate, e.g. 1gbit (none: skip that check)")
    p.add_argument("--tolerance", type=float, default=0.15, help="relative tolerance (default 0.15)")
    p = add("smoke", cmd_smoke, "CI smoke run: up, NetPIPE intra/inter through ReFrame's Slurm path, "
                                "ingest, verify, down (always)")
    p.add_argument("--nodes", type=_positive_int, default=2, help="number of nodes (default 2)")
    p.add_argument("--link-rate", default="1gbit", help="link rate to shape and verify (default 1gbit)")
    p.add_argument("--tolerance", type=float, default=0.15, help="relative tolerance on the rate (default 0.15)")
    p.add_argument("--out", default="build/vcluster-smoke", help="output directory (default build/vcluster-smoke)")
    p.add_argument("--partitions", default="vcluster:srun",
                   help="ReFrame --system value (default vcluster:srun; vcluster = both launchers)")
    p.add_argument("--own-check-only", action="store_true",
                   help="run only the vcluster NetPIPE check, not the suite's pt2pt pairs")
    p.add_argument("--skip-unsupported", action="store_true",
                   help="exit 0 with a printed reason when this machine cannot host the cluster (CI)")
    p = add("degrade", cmd_degrade, "make one node bad on purpose (a slower link, a capped CPU), so that an "
                                    "acceptance run can be shown to name it; --clear undoes it")
    p.add_argument("node", help="the node, e.g. vc2")
    p.add_argument("--link-rate", help="its link's rate, below the cluster's (e.g. 100mbit)")
    p.add_argument("--cpu-percent", type=float, help="its processes' share of one CPU, in percent (e.g. 10)")
    p.add_argument("--clear", action="store_true", help="the node's link and CPU as `up` made them")
    add("preflight", cmd_preflight, "check root, commands and kernel features; exit 2 with the reason if absent")
