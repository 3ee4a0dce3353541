"""Acceptance testing: what a site runs before it signs for a new cluster.

The ReFrame checks live in reframe/yeebench/checks/acceptance/acceptance.py; the logic they rely on
(topology comparison, kernel-setting warnings, outlier detection, scaling
knees, availability EL, the sign-off report) lives here so it can be unit
tested on recorded data and used from the `yeebench acceptance` command.
"""
