"""Whether a change the gate reports between two runs of the same code is noise (gate_ci.py).

Runs A and B of unchanged code can only differ by noise, so a figure compare calls regressed (or
improved) between them is a false alarm. A third run C of the same code tells what kind: noise is an
event in one run (C then agrees with the other) or a change of the machine's load between runs (the
two runs made under the same load agree); a gate that calls equal code different does so in every pair.
"""

FLAGGED = ("regressed", "improved")


def flagged(results):
    """{figure: change} of the figures a compare (its --format json "results") called regressed or improved."""
    return {f"{r['check']} {r['parameters']} {r['metric']}": r["change"] for r in results
            if r.get("verdict") in FLAGGED}


def describe(figures):
    return ", ".join(f"{name} {change * 100:+.1f}%" for name, change in sorted(figures.items())) or "nothing"


def judge(a_b, a_c, b_c):
    """('pass' | 'noise' | 'fail', reason) from flagged() of the three pairs of runs A, B, C of one code.

    a_b alone decides when it flags nothing; otherwise the false alarm counts as noise when one pair
    with the third run agrees, and fails when all three pairs differ."""
    if not a_b:
        return "pass", "the two runs of the same code agree"
    agreeing = [name for name, pair in (("A vs C", a_c), ("B vs C", b_c)) if not pair]
    if agreeing:
        return "noise", (f"A vs B flagged {describe(a_b)}, but {' and '.join(agreeing)} agree: one run was "
                         f"disturbed or the machine's load changed between runs (A vs C flagged {describe(a_c)}, "
                         f"B vs C flagged {describe(b_c)})")
    return "fail", (f"every pair of three runs of the same code differs: A vs B {describe(a_b)}, A vs C "
                    f"{describe(a_c)}, B vs C {describe(b_c)}: the gate calls noise a change here")
