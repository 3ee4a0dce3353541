"""GPU error counters before and after a load (paper 003 section 3.4: all GPUs of a node loaded at once
gave "NVRM: Xid (...): 48, An uncorrectable double bit error" and then a GPU "fell off the bus").

Pure functions on text: `nvidia-smi -q -d ECC` (every counter of every GPU, by PCI bus id),
`nvidia-smi --query-gpu=index,pci.bus_id,uuid,name --format=csv,noheader` (which index a bus id is)
and the kernel log's NVRM lines (Xid events, "fallen off the bus").  `node_problems` compares two
snapshots of one node and names each GPU whose uncorrectable ECC counters rose, that logged an Xid or
that fell over; a corrected-error rise is a note.
"""
import re
from collections import Counter

#: Kernel log: "NVRM: Xid (PCI:0000:07:00): 48, pid=..., ..." (older drivers: "Xid (0000:07:00): 48, ...").
XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?\): (\d+)")
#: Kernel log: "NVRM: GPU 0000:07:00.0: GPU has fallen off the bus." (also Xid 79 says so).
OFF_BUS = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?:? "
                     r".*fallen off the bus", re.IGNORECASE)
#: Xid numbers that mean the GPU is gone or its memory is corrupt (48: double bit ECC, 79: off the bus).
XID_MEANING = {13: "graphics engine exception", 31: "memory page fault", 43: "GPU stopped processing",
               45: "preemptive cleanup", 48: "double bit ECC error", 61: "internal micro-controller breakpoint",
               62: "internal micro-controller halt", 63: "ECC page retirement or row remapping",
               64: "ECC page retirement or row remapper failure", 74: "NVLink error", 79: "fallen off the bus",
               92: "high single-bit ECC error rate", 94: "contained ECC error", 95: "uncontained ECC error"}
_GPU_HEAD = re.compile(r"^GPU ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])\s*$")


def bus_id(text):
    """A PCI address in one spelling, whatever the writer: '00000000:07:00.0', '0000:07:00' -> '0000:07:00'."""
    domain, bus, rest = text.strip().split(":", 2)
    return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(rest.split('.')[0], 16):02x}"


def parse_ecc(text):
    """{bus id: {counter path: int}} from `nvidia-smi -q -d ECC`.

    The report nests sections by indentation ('ECC Errors' > 'Volatile' > 'SRAM Uncorrectable', or on
    older drivers 'Volatile' > 'Double Bit' > 'Device Memory'); a counter is named by its path below
    'ECC Errors' ('Volatile/Double Bit/Device Memory').  'N/A' counters (a GPU without ECC) are left
    out, so such a GPU has an empty dict.  Raises ValueError on text that is no such report."""
    gpus, current, stack = {}, None, []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        head = _GPU_HEAD.match(raw)
        if head:
            current = gpus.setdefault(bus_id(head.group(1)), {})
            stack = []
            continue
        if current is None:
            continue
        depth = len(raw) - len(raw.lstrip())
        key, colon, value = raw.strip().partition(":")
        key = key.strip()
        stack = [(d, k) for d, k in stack if d < depth]
        if not colon or not value.strip():  # a section heading
            stack.append((depth, key))
            continue
        path = [k for _, k in stack]
        if "ECC Errors" not in path:
            continue
        value = value.strip()
        if value.isdigit():
            current["/".join(path[path.index("ECC Errors") + 1:] + [key])] = int(value)
    if not gpus:
        raise ValueError("no 'GPU <bus id>' section in the nvidia-smi ECC report")
    return gpus


def parse_gpu_list(text):
    """[(index, bus id, uuid, name)] from `nvidia-smi --query-gpu=index,pci.bus_id,uuid,name
    --format=csv,noheader`; raises ValueError on a line that is not four fields with an index."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",", 3)]
        if len(fields) != 4 or not fields[0].isdigit():
            raise ValueError(f"unexpected nvidia-smi GPU line: {line.strip()!r}")
        out.append((int(fields[0]), bus_id(fields[1]), fields[2], fields[3]))
    return out


def kernel_events(lines):
    """Counter({(bus id, what): n}) of the NVRM lines: what is 'Xid 48' or 'fallen off the bus'."""
    events = Counter()
    for line in lines:
        xid = XID.search(line)
        if xid:
            events[(bus_id(xid.group(1)), f"Xid {int(xid.group(2))}")] += 1
            continue
        off = OFF_BUS.search(line)
        if off:
            events[(bus_id(off.group(1)), "fallen off the bus")] += 1
    return events


def new_lines(before, after):
    """The kernel log lines of `after` that `before` did not have (each line counted: a ring buffer
    that dropped its oldest lines in between loses nothing new)."""
    seen = Counter(before)
    out = []
    for line in after:
        if seen[line]:
            seen[line] -= 1
        else:
            out.append(line)
    return out


def _xid_words(what):
    number = what.split()[-1]
    meaning = XID_MEANING.get(int(number)) if what.startswith("Xid") and number.isdigit() else None
    return f"{what} ({meaning})" if meaning else what


#: The words of a note on corrected ECC errors (stress_verdict shows these in a passing verdict).
CORRECTED = "corrected ECC errors"


def counter_kind(counter):
    """'uncorrectable' (the paper's failure: Xid 48, double bit) or 'corrected' (single bit, SEC: an
    occasional one is normal on HBM) of a counter path from parse_ecc."""
    words = counter.lower()
    return "uncorrectable" if "uncorrectable" in words or "double bit" in words else "corrected"


def ecc_rises(before, after):
    """{'uncorrectable': [...], 'corrected': [...]} of one GPU's counters that rose, each 'name a -> b'.
    The same counter under 'Volatile' (since boot) and 'Aggregate' (lifetime) is one counter: named
    once, without the prefix, by the first of the two that rose (parse_ecc keeps Volatile first)."""
    out, seen = {"uncorrectable": [], "corrected": []}, set()
    for counter, count in before.items():
        now = after.get(counter, count)
        parts = counter.split("/")
        plain = "/".join(parts[1:]) if len(parts) > 1 and parts[0] in ("Volatile", "Aggregate") else counter
        if now > count and plain not in seen:
            seen.add(plain)
            out[counter_kind(counter)].append(f"{plain} {count} -> {now}")
    return out


def node_problems(record):
    """(problems, notes) of one node's stress record, each naming the GPU by index and bus id.

    record: {'gpus': [[index, bus, uuid, name], ...] before the load, 'gpus_after': the same after
    (None: nvidia-smi failed), 'ecc_before'/'ecc_after': parse_ecc of each (None: unreadable, with
    'ecc_error'), 'kernel_log': 'readable' or why not, 'kernel_new': the log lines that appeared,
    'runs': {index: 'VALID ...' | why it failed}}."""
    gpus = {bus: index for index, bus, _, _ in record.get("gpus") or []}
    name = lambda bus: f"GPU {gpus[bus]} ({bus})" if bus in gpus else f"GPU at {bus}"  # noqa: E731
    problems, notes = [], []
    after = record.get("gpus_after")
    if after is None:
        problems.append("nvidia-smi failed after the load: " + (record.get("smi_error") or "no answer"))
    else:
        gone = sorted(set(gpus) - {bus for _, bus, _, _ in after}, key=gpus.get)
        problems += [f"{name(bus)} fell off: nvidia-smi no longer lists it after the load" for bus in gone]
    runs = record.get("runs") or {}
    for index, outcome in sorted(runs.items(), key=lambda kv: int(kv[0])):
        if not outcome.startswith("VALID"):
            bus = next((b for b, i in gpus.items() if i == int(index)), None)
            problems.append(f"{name(bus) if bus else f'GPU {index}'}: the load {outcome}")
    ran = {int(index) for index in runs}
    # a listed GPU without an outcome was never shown to work under load
    problems += [f"{name(bus)}: no load ran on it" for bus, index in sorted(gpus.items(), key=lambda kv: kv[1])
                 if index not in ran]
    before_ecc, after_ecc = record.get("ecc_before"), record.get("ecc_after")
    if before_ecc is None or after_ecc is None:
        notes.append("ECC counters not compared: " + (record.get("ecc_error") or "no ECC report"))
    else:
        for bus in sorted(before_ecc, key=lambda b: gpus.get(b, 99)):
            rises = ecc_rises(before_ecc[bus], after_ecc.get(bus) or {})
            if rises["uncorrectable"]:
                problems.append(f"{name(bus)}: uncorrectable ECC errors rose: " + ", ".join(rises["uncorrectable"]))
            if rises["corrected"]:
                notes.append(f"{name(bus)}: {CORRECTED} rose: " + ", ".join(rises["corrected"]))
        no_ecc = [name(bus) for bus in sorted(before_ecc, key=lambda b: gpus.get(b, 99)) if not before_ecc[bus]]
        if no_ecc:
            notes.append(f"no ECC counters (ECC off or not supported) on {', '.join(no_ecc)}")
    if record.get("kernel_log") != "readable":
        notes.append(f"Xid lines not scanned: {record.get('kernel_log') or 'kernel log not read'}")
    else:
        events = kernel_events(record.get("kernel_new") or [])
        by_gpu = {}
        for (bus, what), n in sorted(events.items()):
            by_gpu.setdefault(bus, []).append(_xid_words(what) + (f" x{n}" if n > 1 else ""))
        problems += [f"{name(bus)}: kernel log: {', '.join(whats)}"
                     for bus, whats in sorted(by_gpu.items(), key=lambda kv: gpus.get(kv[0], 99))]
    return problems, notes
