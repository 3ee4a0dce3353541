"""The mcast probe's output (src/mcast.c) and its verdict (paper 003, test 13: multicast scalability).

A round: rank 0 sent `sent` datagrams to the group; `receivers` ranks had joined, `remote` of them on
other nodes than the sender; the worst receiver got `delivered_min`, the slowest receiver's rate was
`mbps_min` (Mbit/s, 10^6 bit/s). Receivers on the sender's node hear it through the kernel's
multicast loopback, not the network: a run without a remote receiver measured nothing of the fabric.
"""
import re
from collections import namedtuple

Round = namedtuple("Round", "receivers remote sent delivered_min delivered_mean mbps_min")

_ROUND = re.compile(r"^round receivers (\d+) remote (\d+) sent (\d+) delivered_min (\d+) "
                    r"delivered_mean (\S+) mbps_min (\S+)$", re.M)
_SUMMARY = re.compile(r"^mcast: (.*)$", re.M)


class McastOutputError(ValueError):
    """The probe printed no summary line."""


def parse(text):
    """(summary line without 'mcast: ', [Round, ...]) of the probe's stdout."""
    summaries = _SUMMARY.findall(text)
    if not summaries:
        raise McastOutputError("mcast printed no summary line")
    rounds = [Round(int(m[0]), int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5]))
              for m in _ROUND.findall(text)]
    return summaries[-1].strip(), rounds


def verdict(summary, rounds, min_delivery):
    """('pass' | 'fail' | 'not measured', reason)."""
    if summary.startswith("SKIP "):
        return "not measured", f"multicast not measured: {summary[5:]}"
    if summary.endswith("INVALID"):
        return "fail", "a multicast datagram arrived damaged"
    if not rounds:
        return "fail", f"mcast printed no round: {summary}"
    remote = max(r.remote for r in rounds)
    if remote == 0:
        return ("not measured", "every receiver ran on the sender's node (kernel multicast loopback, not the "
                "network); run on 2 or more nodes (make test-acceptance-vcluster)")
    worst = min(rounds, key=lambda r: r.delivered_min / r.sent)
    if worst.delivered_min / worst.sent < min_delivery:
        return "fail", (f"with {worst.receivers} receiver(s) one got {worst.delivered_min} of {worst.sent} "
                        f"datagrams, below {min_delivery:.0%}")
    return "pass", (f"multicast to {remote} remote node(s): every round delivered >= {min_delivery:.0%} "
                    "to every receiver")


def details(rounds):
    return [f"{r.receivers} receiver(s) ({r.remote} remote): worst {r.delivered_min}/{r.sent} datagrams, "
            f"{r.mbps_min:.1f} Mbit/s" for r in rounds]


def foms(rounds):
    """[(name, value, unit, direction)] of a measured run."""
    out = [("multicast_delivered", 100.0 * min(r.delivered_min / r.sent for r in rounds), "%", "higher"),
           ("multicast_mbps_1", rounds[0].mbps_min, "Mbit/s", "higher"),
           ("multicast_mbps_all", rounds[-1].mbps_min, "Mbit/s", "higher")]
    if rounds[0].mbps_min > 0:
        out.append(("multicast_scaling", rounds[-1].mbps_min / rounds[0].mbps_min, "x", "higher"))
    return out
