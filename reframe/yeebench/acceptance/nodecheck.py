"""Verdicts of the node-level acceptance checks from the probe records of every node."""
from yeebench.acceptance import kernel_settings, topology


def topology_verdict(records, expected=None, expected_origin=None, expect_nodes=None):
    """(ok, reason, details) for the topology check.

    records: {host: probe record}; expected: a validated expected-topology
    document or None; expect_nodes: how many nodes the job spanned.
    """
    details, problems = [], []
    if not records:
        return False, "no node reported its topology", details
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
        return False, "; ".join(problems) + against, details
    if expected is None:
        return True, (f"{len(records)} node(s) alike; no expected-topology file for this system, "
                      "so nothing to compare against (record one with "
                      "`yeebench acceptance topology --record`)"), details
    return True, f"{len(records)} node(s) match {expected_origin}", details


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


def ipstack_verdict(records):
    """(ok, reason, ipv6_available) for the IP stack check; IPv4 is required, IPv6 reported."""
    if not records:
        return False, "no node reported its IP stack", False
    no_v4 = [h for h, r in sorted(records.items()) if not r["ipstack"]["ipv4_loopback"]]
    if no_v4:
        return False, f"IPv4 loopback TCP fails on {', '.join(no_v4)}", False
    v6 = {h: r["ipstack"] for h, r in records.items()}
    without = sorted(h for h, s in v6.items() if not s["ipv6_loopback"])
    unrouted = sorted(h for h, s in v6.items() if s["ipv6_loopback"] and not s["ipv6_global_addresses"])
    if without:
        return True, (f"IPv4 works on all {len(records)} node(s); IPv6 unavailable on "
                      f"{', '.join(without)} (no IPv6 loopback): dual stack not offered"), False
    text = f"IPv4 and IPv6 loopback work on all {len(records)} node(s)"
    if unrouted:
        text += f"; no global IPv6 address on {', '.join(unrouted)}"
    return True, text, not unrouted
