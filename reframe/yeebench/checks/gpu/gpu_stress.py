"""Load every GPU of this node at once and read its error counters before and after (run once per node).

    python -m yeebench.checks.gpu.gpu_stress --seconds 30 --timeout 120 -- ./nbody --bodies 131072 --steps 200

Lists the GPUs (nvidia-smi), snapshots `nvidia-smi -q -d ECC` and the kernel log (dmesg, else
journalctl -k; neither readable: said so, the Xid scan is skipped), then runs PROGRAM on every GPU at
the same time (CUDA_VISIBLE_DEVICES set to that GPU's UUID), each GPU relaunching it until --seconds
have passed; a run still going at --timeout is killed and counts as a hang.  Then the same snapshots
again.  Prints one line `YEEBENCH-GPU-STRESS <json>` that gpu_errors.node_problems judges.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

from yeebench.checks.gpu import gpu_errors

MARKER = "YEEBENCH-GPU-STRESS"
QUERY = ["--query-gpu=index,pci.bus_id,uuid,name", "--format=csv,noheader"]
#: Where the kernel log is read from, in turn (the first that answers is used before and after).
KERNEL_LOGS = (["dmesg"], ["journalctl", "-k", "-b", "-q", "--no-pager", "-o", "short-monotonic"])


def _run(cmd, timeout=60):
    """(stdout, '') or (None, why) of a command (named by its file name)."""
    name = os.path.basename(cmd[0])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"{name}: {err}"
    if done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return None, f"{name} exited {done.returncode}" + (f": {why[-1]}" if why else "")
    return done.stdout, ""


def kernel_log(source=None):
    """(source, lines) of the first readable kernel log, or (None, why none is readable)."""
    whys = []
    for cmd in ([source] if source else KERNEL_LOGS):
        if not shutil.which(cmd[0]):
            whys.append(f"no {cmd[0]}")
            continue
        text, why = _run(cmd)
        if text is not None and text.strip():
            return cmd, text.splitlines()
        whys.append(why or f"{cmd[0]} printed nothing")
    return None, "kernel log not readable (" + "; ".join(whys) + ")"


def snapshot(smi):
    """{'gpus': [...] or None, 'ecc': {...} or None, 'errors': [...]} of this node now."""
    out, errors = {"gpus": None, "ecc": None}, []
    text, why = _run([smi, *QUERY])
    try:
        out["gpus"] = gpu_errors.parse_gpu_list(text) if text is not None else None
    except ValueError as err:
        why = str(err)
    if why:
        errors.append(why)
    text, why = _run([smi, "-q", "-d", "ECC"])
    try:
        out["ecc"] = gpu_errors.parse_ecc(text) if text is not None else None
    except ValueError as err:
        why = str(err)
    if why:
        errors.append(why)
    out["errors"] = errors
    return out


def load_one(uuid, program, seconds, deadline):
    """Relaunch `program` on one GPU until `seconds` have passed: 'VALID <runs> run(s) ...' or what failed."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=uuid, CUDA_DEVICE_ORDER="PCI_BUS_ID")
    start, runs, last = time.monotonic(), 0, ""
    while runs == 0 or time.monotonic() - start < seconds:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            done = subprocess.run(program, capture_output=True, text=True, errors="replace", timeout=left,
                                  env=env, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"hung: still running at the time limit after {runs} complete run(s)"
        except OSError as err:
            return f"did not start: {err}"
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        if done.returncode != 0 or not last.endswith(" VALID"):
            return f"failed (exit {done.returncode}) in run {runs + 1}: {last or 'no output'}"
        runs += 1
    return f"VALID {runs} run(s) in {time.monotonic() - start:.1f} s: {last}"


def load_all(gpus, program, seconds, timeout):
    """{index: outcome} of `program` on every GPU at once."""
    deadline = time.monotonic() + timeout
    outcomes = {}

    def one(index, uuid):
        try:
            outcomes[index] = load_one(uuid, program, seconds, deadline)
        except Exception as err:   # noqa: BLE001 - whatever it was, this GPU was not shown to work
            outcomes[index] = f"failed: {type(err).__name__}: {err}"

    threads = [threading.Thread(target=one, args=(index, uuid)) for index, _, uuid, _ in gpus]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def stress(program, seconds, timeout, smi="nvidia-smi"):
    """The node's record (see gpu_errors.node_problems)."""
    record = {"host": socket.gethostname(), "seconds": seconds}
    before = snapshot(smi)
    if before["gpus"] is None:
        record["error"] = "nvidia-smi lists no GPU: " + "; ".join(before["errors"])
        return record
    source, log_before = kernel_log()
    record.update(gpus=before["gpus"], ecc_before=before["ecc"], kernel_log="readable" if source else log_before)
    record["runs"] = load_all(before["gpus"], program, seconds, timeout)
    after = snapshot(smi)
    record.update(gpus_after=after["gpus"], ecc_after=after["ecc"])
    if after["gpus"] is None:
        record["smi_error"] = "; ".join(after["errors"])
    if before["ecc"] is None or after["ecc"] is None:
        record["ecc_error"] = "; ".join(dict.fromkeys(before["errors"] + after["errors"])) or "no ECC report"
    if source:
        again, log_after = kernel_log(source)
        if again:
            record["kernel_new"] = [line for line in gpu_errors.new_lines(log_before, log_after) if "NVRM" in line]
        else:   # readable before the load, not after: nothing to compare, said so
            record["kernel_log"] = f"read before the load, not after: {log_after}"
    return record


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m yeebench.checks.gpu.gpu_stress",
                                 description="Load every GPU of the node at once; ECC and Xid before and after.")
    ap.add_argument("--seconds", type=float, default=30.0, help="how long each GPU is kept loaded")
    ap.add_argument("--timeout", type=float, default=120.0, help="a run still going after this many seconds hangs")
    ap.add_argument("--nvidia-smi", default="nvidia-smi")
    ap.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM [ARGS...] run on each GPU")
    args = ap.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program or args.seconds <= 0 or args.timeout < args.seconds:
        ap.error("give -- PROGRAM [ARGS...], --seconds > 0 and --timeout >= --seconds")
    record = stress(program, args.seconds, args.timeout, args.nvidia_smi)
    print(f"{MARKER} {json.dumps(record, sort_keys=True)}", flush=True)
    return 0


def _is_str_list(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_gpu_list(value):
    return isinstance(value, list) and all(
        isinstance(g, list) and len(g) == 4 and isinstance(g[0], int) and _is_str_list(g[1:]) for g in value)


def _is_ecc(value):
    return isinstance(value, dict) and all(
        isinstance(c, dict) and all(isinstance(n, int) and not isinstance(n, bool) for n in c.values())
        for c in value.values())


#: What each field of a node record must be when present (None: not read, said so in another field).
_FIELDS = {"error": lambda v: isinstance(v, str), "kernel_log": lambda v: isinstance(v, str),
           "smi_error": lambda v: isinstance(v, str), "ecc_error": lambda v: isinstance(v, str),
           "seconds": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
           "gpus": _is_gpu_list, "gpus_after": lambda v: v is None or _is_gpu_list(v),
           "ecc_before": lambda v: v is None or _is_ecc(v), "ecc_after": lambda v: v is None or _is_ecc(v),
           "kernel_new": _is_str_list,
           "runs": lambda v: isinstance(v, dict) and all(k.isdigit() and isinstance(o, str) for k, o in v.items())}


def _record(body):
    """One node's record from the JSON after the marker; ValueError naming what is wrong."""
    try:
        record = json.loads(body)
    except ValueError as err:
        raise ValueError(f"{MARKER} line is not JSON: {err}") from None
    if not isinstance(record, dict):
        raise ValueError(f"{MARKER} line is not a JSON object: {body[:60]}")
    if not isinstance(record.get("host"), str) or not record["host"]:
        raise ValueError(f"{MARKER} record names no host: {body[:60]}")
    bad = [field for field, fits in _FIELDS.items() if field in record and not fits(record[field])]
    if bad:
        raise ValueError(f"{MARKER} record of {record['host']}: unexpected {', '.join(bad)}")
    return record


def parse(text):
    """The node records in a job's output, keyed by host (a host twice, or a record that is not one, is
    a ValueError)."""
    nodes = {}
    for line in text.splitlines():
        if line.startswith(MARKER + " "):
            record = _record(line[len(MARKER) + 1:])
            if record["host"] in nodes:
                raise ValueError(f"host {record['host']} reported twice (more than one task per node)")
            nodes[record["host"]] = record
    return nodes


if __name__ == "__main__":
    sys.exit(main())
