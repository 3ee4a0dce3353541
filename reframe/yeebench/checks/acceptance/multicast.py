"""The mcast probe's output (src/mcast.c) and its verdict (paper 003, test 13: multicast scalability).

A round: rank 0 sent `sent` datagrams to the group; `receivers` ranks had joined, `remote` of them on
other nodes than the sender; the worst receiver got `delivered_min`, the slowest receiver's rate was
`mbps_min` (Mbit/s, 10^6 bit/s); `reached_min` (None: unknown) counts for the worst receiver what reached
its node, read or dropped from its full socket buffer. Receivers on the sender's node hear it through the
kernel's multicast loopback, not the network: a run without a remote receiver measured nothing of the fabric.
A receiver that lost datagrams only to its own full socket buffer was not scheduled in time to read them (a
busy node): the network delivered them, so that shortfall is NOT MEASURED, not a failure of the fabric.
"""
import re
from collections import namedtuple

Round = namedtuple("Round", "receivers remote sent delivered_min delivered_mean mbps_min reached_min",
                   defaults=(None,))

_ROUND = re.compile(r"^round receivers (\d+) remote (\d+) sent (\d+) delivered_min (\d+) "
                    r"delivered_mean (\S+) mbps_min (\S+)(?: reached_min (-?\d+))?$", re.M)
_SUMMARY = re.compile(r"^mcast: (.*)$", re.M)


class McastOutputError(ValueError):
    """The probe printed no summary line."""


def parse(text):
    """(summary line without 'mcast: ', [Round, ...]) of the probe's stdout."""
    summaries = _SUMMARY.findall(text)
    if not summaries:
        raise McastOutputError("mcast printed no summary line")
    rounds = [Round(int(m[0]), int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5]),
                    int(m[6]) if m[6] and int(m[6]) >= 0 else None)
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
        lost = (f"with {worst.receivers} receiver(s) one got {worst.delivered_min} of {worst.sent} "
                f"datagrams, below {min_delivery:.0%}")
        short = [r for r in rounds if r.delivered_min / r.sent < min_delivery]
        if all(r.reached_min is not None and r.reached_min / r.sent >= min_delivery for r in short):
            return "not measured", (f"{lost}, but the rest reached the receivers' nodes and overflowed their "
                                    "socket buffers (UDP RcvbufErrors): the receiving processes were not scheduled "
                                    "in time on busy nodes; the network's delivery was not measured")
        return "fail", lost
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
