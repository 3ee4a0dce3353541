"""Comparison results as a text table, JSON, CSV or Markdown."""
import csv
import io
import json
import math

COLUMNS = ("check", "parameters", "metric", "unit", "direction", "baseline_value", "baseline_n",
           "candidate_value", "candidate_n", "change", "noise", "p_worse", "verdict")
HEADERS = ("check", "parameters", "metric", "unit", "better", "baseline", "n", "candidate", "n",
           "change", "noise", "p", "verdict")


def _num(value):
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}"


def _pct(value):
    if value is None:
        return "-"
    return f"{value * 100:+.1f}%"


def _cells(result):
    p = result.get("p_worse") if result.get("verdict") != "improved" else result.get("p_better")
    return (result["check"], result["parameters"], result["metric"], result["unit"] or "-",
            result["direction"], _num(result.get("baseline_value")), str(result.get("baseline_n", 0)),
            _num(result.get("candidate_value")), str(result.get("candidate_n", 0)),
            _pct(result.get("change")), _noise(result), _num(p), verdict_text(result))


def _noise(result):
    """The noise band; 'unknown' when nothing measured it (never a false ±0.0%)."""
    if result.get("verdict") == "missing":
        return "-"
    noise = result.get("noise")
    return "unknown" if noise is None else f"±{noise * 100:.1f}%"


def verdict_text(result):
    if result["verdict"] == "insufficient":
        return "insufficient data" + (f" ({result['reason']})" if result.get("reason") else "")
    if result.get("missing_in"):
        return f"missing (not in {result['missing_in']})"
    return result["verdict"]


def summary_line(counts):
    return ", ".join(f"{n} {'insufficient data' if verdict == 'insufficient' else verdict}"
                     for verdict, n in counts.items() if n) or "nothing compared"


def as_table(results, counts, header_lines=()):
    rows = [HEADERS] + [_cells(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    out = list(header_lines)
    for i, row in enumerate(rows):
        out.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append(f"summary: {summary_line(counts)}")
    return "\n".join(out) + "\n"


def as_markdown(results, counts, header_lines=()):
    out = [f"{line}  " for line in header_lines]
    out.append("| " + " | ".join(HEADERS) + " |")
    out.append("|" + "---|" * len(HEADERS))
    for r in results:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |")
    out.append("")
    out.append(f"**summary:** {summary_line(counts)}")
    return "\n".join(out) + "\n"


def as_csv(results, counts, header_lines=()):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    fields = ("system", "partition", "environ") + COLUMNS + ("statistic", "baseline_median", "candidate_median",
                                                            "p_better", "baseline_rel_spread",
                                                            "candidate_rel_spread", "noise_source", "missing_in")
    writer.writerow(fields)
    for r in results:
        writer.writerow(["" if r.get(f) is None else r.get(f) for f in fields])
    return buffer.getvalue()


def finite_for_json(value):
    """JSON has no infinities or NaN: write null (a zero baseline gives an infinite change)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_for_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_for_json(v) for v in value]
    return value


def as_json(results, counts, header_lines=(), settings=None):
    doc = {"settings": settings or {}, "summary": dict(counts), "results": results}
    return json.dumps(finite_for_json(doc), indent=2, default=str, allow_nan=False) + "\n"


FORMATTERS = {"table": as_table, "markdown": as_markdown, "csv": as_csv, "json": as_json}
