"""Verdicts of the node-level acceptance checks from the probe records of every node.

Each verdict function returns (verdict, reason, ...) with verdict one of
PASS, FAIL or NOT MEASURED (nothing to compare against, nothing to test).
"""
from yeebench import kernel_settings
from yeebench.checks.acceptance import ipstack
from yeebench import node_topology as topology
from yeebench.verdicts import FAIL, NOT_MEASURED, PASS

RECORD_TOPOLOGY = ("record one on a node known to be good with `yeebench acceptance topology --record "
                   "--system {system}{partition}` (writes {dir}/{system}{dash_partition}.yaml), "
                   "check it in and run again")


def topology_verdict(records, expected=None, expected_origin=None, expect_nodes=None, how_to_record=""):
    """(verdict, reason, details) for the topology check.

    records: {host: probe record}; expected: a validated expected-topology
    document or None; expected_origin: its path as given; expect_nodes: how
    many nodes the job spanned.  Without an expected file nodes that differ
    from each other still FAIL, but alike nodes are NOT MEASURED: nothing says
    what they should be.
    """
    details, problems = [], []
    if not records:
        return FAIL, "no node reported its topology", details
    if expect_nodes is not None and len(records) != expect_nodes:
        problems.append(f"{len(records)} node(s) reported, the job spanned {expect_nodes}")
    observed = {host: rec["topology"] for host, rec in records.items()}
    for host, topo in sorted(observed.items()):
        details.append(f"{host}: {topo.get('sockets')} socket(s), {topo.get('cores')} cores, "
                       f"{topo.get('pus')} PUs, {topo.get('numa_nodes')} NUMA node(s), "
                       f"distances {topo.get('numa_distances')} [{topo.get('source')}]")
        details.extend(f"{host}: {note}" for note in topology.distance_notes(topo.get("numa_distances")))
    problems.extend(topology.compare_nodes(observed))
    if expected is not None:
        for host, topo in sorted(observed.items()):
            problems.extend(f"{host}: {p}" for p in topology.compare(expected, topo))
    if problems:
        against = f" (expected: {expected_origin})" if expected is not None and expected_origin else ""
        return FAIL, "; ".join(problems) + against, details
    if expected is None:
        return NOT_MEASURED, (f"no expected-topology file for this system, so {len(records)} node(s) were "
                              f"compared with nothing" + (f"; {how_to_record}" if how_to_record else "")), details
    return PASS, f"{len(records)} node(s) match {expected_origin}", details


def settings_verdict(records):
    """(ok, reason, findings) for the kernel-settings check.

    Settings never fail acceptance on their own: they are warnings with a
    reason for the site to weigh.  The check fails only when the probe could
    not read anything at all, or nodes disagree on a setting.
    """
    findings, problems = [], []
    per_setting = {}
    for host, rec in sorted(records.items()):
        for item in kernel_settings.assess(rec["settings"]):
            findings.append({"host": host, **item})
        for key, value in rec["settings"].items():
            per_setting.setdefault(key, {}).setdefault(str(value), []).append(host)
    if not records:
        return False, "no node reported its settings", findings
    for key, values in sorted(per_setting.items()):
        if len(values) > 1 and key not in ("HugePages_Free",):
            spread = "; ".join(f"{v} on {', '.join(hosts)}" for v, hosts in sorted(values.items()))
            problems.append(f"{key} differs between nodes: {spread}")
    if problems:
        return False, "; ".join(problems), findings
    warnings = [f for f in findings if f["level"] == "warning"]
    return True, (f"{len(records)} node(s) read; {len(warnings)} warning(s), "
                  f"{len(findings) - len(warnings)} note(s)"), findings


def _interface_problems(host, state):
    """(problems, working interfaces described) of one node's job interfaces."""
    if state.get("error"):
        return [f"{host}: {state['error']}"], []
    problems, good = [], []
    for name, iface in sorted(state.get("interfaces", {}).items()):
        mine = []
        if not iface.get("present"):
            mine.append("does not exist")
        else:
            if iface.get("loopback"):
                mine.append("is loopback")
            if not iface.get("up"):
                mine.append("is down")
            if not iface.get("ipv4"):
                mine.append("has no IPv4 address")
            failed = [f"{a} ({why})" for a, why in sorted(iface.get("ipv4", {}).items()) if why]
            if failed:
                mine.append(f"fails TCP at {', '.join(failed)}")
        if mine:
            problems.append(f"{host}: job interface {name} {' and '.join(mine)}")
        else:
            good.append(f"{name} {', '.join(sorted(iface['ipv4']))}")
    return problems, good


def fabric_verdict(records):
    """(problems, details, unmeasured) of the round trips between nodes (ipstack.fabric): each node must
    reach the next one (sorted by host) over IPv4, and over IPv6 where that node has a global address.
    `unmeasured`: why the fabric was not measured ('' when it was): one node, or a probe run without
    --peers, whose round trips stayed on the node."""
    hosts = sorted(records)
    if len(hosts) == 1:
        return [], [], (f"same node: the job ran on {hosts[0]} alone, so every round trip stayed on it and the "
                        "network between nodes was NOT MEASURED (run on 2 or more nodes)")
    fabrics = {h: records[h]["ipstack"].get("fabric") for h in hosts}
    alone = [h for h, fab in fabrics.items() if fab is None]
    if alone:
        return [], [], (f"the round trips of {', '.join(alone)} stayed on the node (the probe ran without "
                        "--peers): the network between nodes was NOT MEASURED")
    problems, details, ring = [], [], ipstack.ring_peers(hosts)
    for host, fab in fabrics.items():
        if fab.get("error"):
            problems.append(f"{host}: no round trip across the network: {fab['error']}")
            continue
        peer = fab.get("peer")
        if peer != ring[host]:
            problems.append(f"{host}: met {fab.get('nodes')} node(s) and reached {peer}, but the job's nodes "
                            f"are {', '.join(hosts)} (next: {ring[host]})")
            continue
        v4, v6 = fab.get("ipv4") or {}, fab.get("ipv6") or {}
        if not v4:
            problems.append(f"{host} -> {peer}: {peer} offered no IPv4 address to connect to")
        problems += [f"{host} -> {peer}: {family} TCP to {addr} fails ({why})"
                     for family, found in (("IPv4", v4), ("IPv6", v6)) for addr, why in sorted(found.items()) if why]
        details.append(f"{host} -> {peer} across the network: IPv4 {', '.join(sorted(v4)) or '-'}, "
                       f"IPv6 {', '.join(sorted(v6)) or '-'}")
    return problems, details, ""


def ipstack_verdict(records):
    """(verdict, reason, ipv6_available, details) for the IP stack check.

    IPv4 TCP must work over every interface the MPI/Slurm configuration gives
    a job (loopback does not count), and IPv6 TCP too (paper 003 test 14: dual
    stack).  An IPv6 address that does not carry TCP FAILs; a node without any
    global IPv6 address on its job interfaces, or without such an interface at
    all, is NOT MEASURED with the reason (a site without IPv6 waives it).  The
    same holds across the network (fabric_verdict): a job of one node, whose
    round trips never left it, is NOT MEASURED ("same node").
    """
    if not records:
        return FAIL, "no node reported its IP stack", False, []
    problems, details, empty, sources = [], [], [], set()
    v6_hosts, v6_broken = [], []
    for host, rec in sorted(records.items()):
        state = rec["ipstack"]
        if "interfaces" not in state:
            return FAIL, f"{host}: the probe tested loopback only (old probe output)", False, []
        sources.add(state.get("source", ""))
        if not state.get("interfaces") and not state.get("error"):
            empty.append(host)
            continue
        bad, good = _interface_problems(host, state)
        problems += bad
        details += [f"{host}: {g} ({state.get('source')})" for g in good]
        v6_all = {a: why for i in state["interfaces"].values() for a, why in (i.get("ipv6") or {}).items()}
        v6 = [a for a, why in v6_all.items() if not why]
        failed = [f"{a} ({why})" for a, why in sorted(v6_all.items()) if why]
        if v6:
            v6_hosts.append(host)
        if failed:  # an IPv6 address the node offers but that does not carry TCP: the stack is broken
            v6_broken.append(f"{host}: IPv6 TCP fails at {', '.join(failed)}")
        details.append(f"{host}: IPv6 " + (", ".join(sorted(v6)) if v6 else "no working global address "
                                           "on the job interface(s)"))
    problems += v6_broken
    crossing, crossed, unmeasured = fabric_verdict(records)
    problems += crossing
    details += crossed
    if problems:
        return FAIL, "; ".join(problems), False, details
    if empty:
        return NOT_MEASURED, (f"no interface other than loopback has an address on {', '.join(empty)}: "
                              "no network a job could use to test"), False, details
    ipv4 = (f"IPv4 TCP works over the job interface(s) on all {len(records)} node(s) "
            f"(chosen by {'; '.join(sorted(sources))})")
    missing = sorted(set(records) - set(v6_hosts))
    if unmeasured:
        v6_words = (f"no global IPv6 address on {', '.join(missing)}" if missing else "IPv6 too")
        return NOT_MEASURED, f"{ipv4} on the node itself ({v6_words}); {unmeasured}", False, details
    ipv4 += f"; across the network each node reached the next ({' -> '.join(sorted(records))} -> {min(records)})"
    if missing:
        # test 14 is the dual stack: without IPv6 half of it was not tested (a site that offers
        # no IPv6 waives it on the sign-off page, where the waiver is recorded)
        return NOT_MEASURED, (f"{ipv4}, but no global IPv6 address on the job interface(s) of "
                              f"{', '.join(missing)}: the dual stack (IPv6 half) was not tested; "
                              "waive it where the site offers no IPv6"), False, details
    return PASS, ipv4 + "; IPv6 too (dual stack)", True, details
