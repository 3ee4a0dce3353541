"""Probe one node for the acceptance checks: topology, kernel settings, IP stack.

Run once per node (one rank per node); prints one line
`YEEBENCH-NODE <json>` that the check parses.  `python -m yeebench.checks.acceptance.nodeprobe`
With `--peers DIR` (a folder every node of the job sees) the nodes' probes meet there and each
sends a TCP round trip to the next node's addresses (ipstack.fabric): the IP stack across the network.
"""
import argparse
import json
import sys

from yeebench.checks.acceptance import ipstack
from yeebench import kernel_settings
from yeebench import node_topology as topology

MARKER = "YEEBENCH-NODE"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m yeebench.checks.acceptance.nodeprobe")
    ap.add_argument("--peers", metavar="DIR", help="meet the job's other nodes in DIR for round trips between them")
    args = ap.parse_args(argv)
    record = {"topology": topology.observe(), "settings": kernel_settings.collect(),
              "ipstack": ipstack.probe()}
    if args.peers:
        stack = record["ipstack"]
        stack["fabric"] = ipstack.fabric(args.peers, record["topology"]["host"], ipstack.listen_addresses(stack),
                                         ipstack.expected_nodes())
    print(f"{MARKER} {json.dumps(record, sort_keys=True)}", flush=True)
    return 0


def parse(text):
    """All node records in a job's output, keyed by host (a host seen twice is an error)."""
    nodes = {}
    for line in text.splitlines():
        if line.startswith(MARKER + " "):
            record = json.loads(line[len(MARKER) + 1:])
            host = record["topology"]["host"]
            if host in nodes:
                raise ValueError(f"host {host} reported twice (more than one rank per node)")
            nodes[host] = record
    return nodes


if __name__ == "__main__":
    sys.exit(main())
