"""The acceptance sign-off tool: `yeebench acceptance report` turns a run of the acceptance checks into
the page a site signs (verdicts, availability, waivers).

The checks live with their experiments under reframe/yeebench/checks/ (tag `acceptance`); what they
compute is in the check library. This package reads their results through ReFrame's report only.
"""
