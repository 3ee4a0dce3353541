"""The acceptance verdicts and how a ReFrame result maps to one (the sign-off page, acceptance/report.py,
and the results report's acceptance figure, results/figures/acceptance.py, both read them from here)."""
from yeebench.verdicts import FAIL, NOT_MEASURED, PASS  # noqa: F401 (the words are the check library's)

#: A skip the acceptance checks did not explain (ReFrame's own, e.g. no idle nodes for a
#: flexible job, or the check library's): nothing was measured and nobody said why.
UNEXPLAINED_SKIP = ("skipped by ReFrame or the check library without a recorded reason "
                    "(see ReFrame's output, e.g. no idle nodes for a job spanning the partition)")
#: ReFrame result -> acceptance verdict.  A skipped or aborted check measured nothing.
VERDICTS = {"pass": PASS, "fail": FAIL, "xfail": FAIL, "skip": NOT_MEASURED, "abort": NOT_MEASURED}
