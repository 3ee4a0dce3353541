"""The two properties the CI smoke run asserts on the virtual cluster's results:

1. honest measurement chain: the inter-node large-message bandwidth is within a tolerance of the
   configured link rate;
2. locality: intra-node beats inter-node on latency and on bandwidth.

Input: an ingested run (`yeebench results ingest` -> RUN_DIR/rows.jsonl) or a ReFrame JSON report, or
the rows of several runs of the same checks: each figure is then the best of its runs (the lowest latency,
the highest bandwidth), since a busy machine only ever slows a measurement. A comparison that fails on the
slow side (intra not ahead, inter-node bandwidth below the rate) is what a busy machine can cause, so the
smoke run measures those checks again (noise_suspects); an inter-node bandwidth above the rate cannot be
noise and is never retried.
"""
import json
import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

# (check, bandwidth metric, latency metric) pairs whose intra/inter rows are compared, in order of
# preference for the rate check: the vcluster check's bw_large first, then the suite's figures.
PAIRS = (
    ("VclusterNetPIPE", "bw_large", "latency_1B"),
    ("NetPIPEPt2Pt", "bw_large", "latency_1B"),
    ("NetPIPEPt2Pt", "peak_bw", "latency_1B"),
    ("OsuPt2Pt", "bw_large", "latency_1B"),      # osu_bw and osu_latency rows of the same pair
)
RATE_METRICS = ("bw_large",)     # peak over sizes is inflated by a token bucket: not a rate figure


class VerifyError(ValueError):
    """The input cannot be read as results."""


@dataclass
class Row:
    check: str
    partition: str
    locality: str
    metric: str
    value: float
    unit: str
    status: str


def _rows_from_jsonl(path: str) -> List[Row]:
    rows = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            locality = (d.get("parameters") or {}).get("locality")
            if locality and d.get("value") is not None:
                rows.append(Row(d["check"], d.get("partition", ""), locality, d["metric"],
                                float(d["value"]), d.get("unit", ""), d.get("status", "")))
    return rows


def _rows_from_report(path: str) -> List[Row]:
    with open(path) as f:
        report = json.load(f)
    rows = []
    for run in report.get("runs", [])[-1:]:
        for case in run.get("testcases", []):
            locality = case.get("locality")
            if not locality:
                continue
            check = case.get("name", "").split(" ")[0].split("%")[0]
            for key, values in (case.get("perfvalues") or {}).items():
                if values and values[0] is not None:
                    rows.append(Row(check, case.get("partition", ""), locality, key.rsplit(":", 1)[-1],
                                    float(values[0]), values[4], case.get("result", "")))
    return rows


def load_rows(path: str) -> List[Row]:
    try:
        if os.path.isdir(path):
            return _rows_from_jsonl(os.path.join(path, "rows.jsonl"))
        if path.endswith(".jsonl"):
            return _rows_from_jsonl(path)
        return _rows_from_report(path)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
        raise VerifyError(f"cannot read results from {path}: {err}")


def _pick(rows: List[Row], check: str, partition: str, locality: str, metric: str,
          lower_is_better: bool) -> Optional[Row]:
    """The best of the matching rows (one per run of the check): noise only slows a measurement."""
    found = [r for r in rows if r.check == check and r.partition == partition
             and r.locality == locality and r.metric == metric and r.status in ("pass", "")]
    if not found:
        return None
    return min(found, key=lambda r: r.value) if lower_is_better else max(found, key=lambda r: r.value)


def _to_mbs(row: Row) -> float:
    scale = {"MB/s": 1.0, "GB/s": 1e3, "B/s": 1e-6, "Mbit/s": 1 / 8, "Gbit/s": 1e3 / 8}
    if row.unit not in scale:
        raise VerifyError(f"{row.check} {row.metric}: unknown bandwidth unit {row.unit!r}")
    return row.value * scale[row.unit]


def verify(rows: List[Row], link_rate_bps: Optional[float], tolerance: float) -> Tuple[bool, List[str]]:
    """(ok, lines): each line states one compared figure and whether it holds."""
    judged, missing = _judge(rows, link_rate_bps, tolerance)
    lines = [line for _, line, _ in judged]
    if not lines:
        return False, ["FAIL no intra/inter pair of passing pt2pt results found"]
    if missing:
        return False, lines + [missing]
    return all(good for good, _, _ in judged), lines


def noise_suspects(rows: List[Row], link_rate_bps: Optional[float], tolerance: float) -> List[str]:
    """The checks whose failed comparisons a busy machine can cause (measuring them again may pass), or []
    when another comparison failed in a way noise cannot explain (an inter-node bandwidth above the rate)."""
    judged, _ = _judge(rows, link_rate_bps, tolerance)
    failed = [suspect for good, _, suspect in judged if not good]
    if not failed or None in failed:
        return []
    return sorted(set(failed))


def _judge(rows, link_rate_bps, tolerance):
    """([(good, line, check a rerun may clear or None)], line saying what is missing or None)."""
    judged, rate_checked = [], False
    partitions = sorted({r.partition for r in rows})
    for check, bw_metric, lat_metric in PAIRS:
        for part in partitions:
            pick = {(loc, m): _pick(rows, check, part, loc, m, lower_is_better=m == lat_metric)
                    for loc in ("intra", "inter") for m in (bw_metric, lat_metric)}
            if not all(pick.values()):
                continue
            bw_intra, bw_inter = _to_mbs(pick["intra", bw_metric]), _to_mbs(pick["inter", bw_metric])
            lat_intra, lat_inter = pick["intra", lat_metric].value, pick["inter", lat_metric].value
            good = lat_intra < lat_inter
            judged.append((good, f"{'ok  ' if good else 'FAIL'} {check}@{part}: latency intra {lat_intra:.2f} us < "
                                 f"inter {lat_inter:.2f} us", check))
            good = bw_intra > bw_inter
            judged.append((good, f"{'ok  ' if good else 'FAIL'} {check}@{part}: {bw_metric} intra {bw_intra:.1f} "
                                 f"MB/s > inter {bw_inter:.1f} MB/s", check))
            if link_rate_bps and bw_metric in RATE_METRICS:
                rate_checked = True
                expected = link_rate_bps / 8 / 1e6
                good = abs(bw_inter - expected) <= tolerance * expected
                judged.append((good, f"{'ok  ' if good else 'FAIL'} {check}@{part}: inter-node {bw_metric} "
                                     f"{bw_inter:.1f} MB/s = {100 * bw_inter / expected:.0f}% of the "
                                     f"{link_rate_bps / 1e9:g} Gbit/s link ({expected:.0f} MB/s), tolerance "
                                     f"{100 * tolerance:.0f}%", check if bw_inter < expected else None))
    missing = None
    if link_rate_bps and judged and not rate_checked:
        missing = "FAIL no large-message inter-node bandwidth (bw_large) to compare with the link rate"
    return judged, missing
