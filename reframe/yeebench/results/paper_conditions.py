"""When a paper's published value may stand beside one of our figures: the conditions its figure was
measured under, and the facts of a recorded row they are held against.

A condition names one fact of FACTS and what the figure needs of it (exactly, at least, between,
one of). The facts of a row come from its parameters, its metric's name (a node-curve figure
`<name>_<n>_nodes` was measured on n nodes) and the hardware its check recorded (observations
['hardware'], with the run's NUMA distance table). A fact the run did not record never meets a
condition: the report then says what the figure needs instead of printing the paper's number.
"""
import math
import re
from collections import namedtuple

#: One condition: `fact` (a key of FACTS), `op` ('==', '>=', 'between', 'in') and its value
#: (a number; a (low, high) pair for 'between'; a tuple of allowed values for 'in').
Condition = namedtuple("Condition", "fact op value")


def exactly(fact, value):
    return Condition(fact, "==", value)


def at_least(fact, value):
    return Condition(fact, ">=", value)


def between(fact, low, high):
    return Condition(fact, "between", (low, high))


def one_of(fact, *values):
    return Condition(fact, "in", tuple(values))


#: Every fact a condition may name: (singular noun, plural noun) of a count, or how a value reads.
FACTS = {
    "nodes": ("node", "nodes"),
    "ranks": ("rank", "ranks"),
    "ranks_per_node": ("rank per node", "ranks per node"),
    "sockets_per_node": ("socket per node", "sockets per node"),
    "numa_nodes_per_node": ("NUMA node per node", "NUMA nodes per node"),
    "full_packing_nodes": ("node under full packing", "nodes under full packing"),
    "placement": "placement {}",
    "buffers": "{} buffers",
    "transport": "transport {}",
    "implementation": "implementation {}",
    "numa_distance": "a remote NUMA distance of {}",
    "code": "{}",
    "steps": ("step", "steps"),
}
#: How some values read in a sentence (placement per-core: one rank per core).
VALUE_WORDS = {
    ("placement", "per-core"): "one rank per core", ("placement", "per-socket"): "one rank per socket",
    ("placement", "per-node"): "one rank per node",
    ("code", "pic"): "the paper's whole PIC run (particles and fields, its own step count)",
    ("code", "yee"): "a fields-only solver run",
}
NOT_RECORDED = {"numa_distance": "no NUMA distance table recorded"}
_COUNT = re.compile(r"_(\d+)_nodes$")
_BASELINE = re.compile(r"_vs_\d+_nodes$")   # efficiency_vs_4_nodes: 4 is the baseline, not the count


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nodes(metric, params, hardware):
    count = _COUNT.search(metric)
    if count and not _BASELINE.search(metric):
        return int(count.group(1))
    if _int(hardware.get("nodes")):
        return hardware["nodes"]
    tasks, per_node = _int(params.get("num_tasks")), _int(params.get("num_tasks_per_node"))
    if tasks and per_node:
        return math.ceil(tasks / per_node)
    return 1 if tasks == 1 else None


def _placement(metric, params):
    found = re.match(r"per_(core|socket|node)_", metric)   # a binding sweep's case, named in its figure
    if found:
        return f"per-{found.group(1)}"
    return params["placement"] if params.get("placement") in ("per-core", "per-socket", "per-node") else None


def _implementation(metric, params):
    case = str(params.get("case", ""))
    if ":" in case:
        return case.split(":", 1)[1]
    found = re.match(r"([a-z0-9]+)_over_tuned", metric)
    return found.group(1) if found else params.get("implementation")


def _distance(table):
    """(largest remote distance, its cost over local in %) of a `numactl --hardware` table; None unless it
    is a square table of positive numbers (a recorded table may be anything)."""
    if not isinstance(table, list) or len(table) < 2 or not all(
            isinstance(r, list) and len(r) == len(table) for r in table):
        return None
    if not all(isinstance(d, (int, float)) and not isinstance(d, bool) and d > 0 for row in table for d in row):
        return None
    remote = max(d for i, row in enumerate(table) for j, d in enumerate(row) if i != j)
    local = min(row[i] for i, row in enumerate(table))
    return remote, 100.0 * (remote / local - 1)


def facts_of(row, hardware=None):
    """{fact: value or None} of a recorded row: its parameters, metric name and recorded hardware."""
    hw, params, metric = hardware or {}, row.get("parameters") or {}, row.get("metric") or ""
    tasks, per_node = _int(params.get("num_tasks")), _int(params.get("num_tasks_per_node"))
    ranks = _int(hw.get("ranks")) or _int(params.get("ranks")) or _int(params.get("num_procs")) or tasks
    distance = _distance(hw.get("numa_distances"))
    facts = {
        "nodes": _nodes(metric, params, hw), "ranks": ranks, "ranks_per_node": per_node,
        "sockets_per_node": _int(hw.get("sockets_per_node")), "numa_nodes_per_node": _int(hw.get("numa_nodes_per_node")),
        # a sweep's job holds a rank per core of every node (yeebench.sweep_check): num_tasks_per_node = cores
        "full_packing_nodes": math.ceil(_int(params.get("ranks")) / per_node)
        if _int(params.get("ranks")) and per_node else None,
        "placement": _placement(metric, params), "buffers": params.get("buffers"),
        "transport": params.get("transport"), "implementation": _implementation(metric, params),
        "numa_distance": distance[0] if distance else None,
        "code": "yee",   # every row is the suite's own solver or probes, never the papers' codes
        "steps": _int(params.get("steps")),
    }
    return facts


def distance_cost(hardware):
    """The cost of remote memory the NUMA distance table states (% over local), or None without a table."""
    found = _distance((hardware or {}).get("numa_distances"))
    return found[1] if found else None


def met(condition, facts):
    have = facts.get(condition.fact)
    if have is None:
        return False
    if condition.op == "in":
        return have in condition.value
    if not isinstance(have, (int, float)):
        return False
    if condition.op == "between":
        return condition.value[0] <= have <= condition.value[1]
    return have >= condition.value if condition.op == ">=" else have == condition.value


def _value_words(fact, value):
    return VALUE_WORDS.get((fact, value), FACTS[fact].format(value))


def _count(fact, n):
    one, many = FACTS[fact]
    return f"{n} {one if n == 1 else many}"


def describe(condition):
    """What a condition needs, in words: '18 nodes', '2 sockets per node or more', 'host buffers'."""
    fact, op, value = condition
    if isinstance(FACTS[fact], str):
        values = value if op == "in" else (value,)
        if any((fact, v) in VALUE_WORDS for v in values):
            return " or ".join(_value_words(fact, v) for v in values)
        return FACTS[fact].format(" or ".join(str(v) for v in values))
    if op == "between":
        return f"{value[0]} to {_count(fact, value[1])}"
    return _count(fact, value) + (" or more" if op == ">=" else "")


def have_words(fact, facts):
    """The run's value of a fact, in words ('1 node', 'device buffers', 'no record of the NUMA distances')."""
    have = facts.get(fact)
    if have is None:
        return NOT_RECORDED.get(fact) or (
            f"{FACTS[fact][1] if isinstance(FACTS[fact], tuple) else fact.replace('_', ' ')} not recorded")
    if fact == "code" and facts.get("steps"):
        return f"{_value_words(fact, have)} of {_count('steps', facts['steps'])}"
    return _value_words(fact, have) if isinstance(FACTS[fact], str) else _count(fact, have)


def unknown_facts(conditions):
    """The conditions' fact names that FACTS does not know (a typo in a paper row)."""
    return [c.fact for c in conditions if c.fact not in FACTS]
