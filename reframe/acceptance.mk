# Acceptance set (reframe/yeebench/checks/*/acceptance*.py, tag `acceptance`): included by the top-level Makefile.
#   make acceptance                 run the acceptance set on this machine, write the sign-off page
#   make test-acceptance            the same as a CI stage: fails when a check fails or no page is made
#   make test-acceptance-vcluster   the multi-node checks on the virtual Slurm cluster (reuses a running
#                                   one, else starts ACCEPTANCE_VC_NODES nodes and stops them after), then,
#                                   on a cluster it started, one node made bad on purpose (a slow link;
#                                   ACCEPTANCE_BAD_NODE_KINDS=link,cpu also caps its CPU: yeebench vcluster
#                                   degrade) must be the only node AcceptanceNetwork names; skipped, with
#                                   the reason, where this machine cannot host a cluster
# Unit tests of the acceptance library run in test-python (PYTEST_PATHS).
ACCEPTANCE_OUT      := $(abspath $(BUILD)/acceptance)
ACCEPTANCE_RUN      := reframe/yeebench/acceptance/run.sh
# The sign-off page's availability log and operator waivers (see reframe/yeebench/acceptance/README.md).
ACCEPTANCE_AVAILABILITY ?=
ACCEPTANCE_WAIVERS      ?=
export ACCEPTANCE_AVAILABILITY ACCEPTANCE_WAIVERS
# Extra ReFrame options, e.g. ACCEPTANCE_RFM_OPTS='--system mycluster -p host -S AcceptanceNetwork.tolerance=1'
ACCEPTANCE_RFM_OPTS ?= -p host
# What only the CI stage adds: triad_mpi's arrays stay 4x the last-level cache (on a 480 MiB L3 that is
# 1.9 GB an array), but each run keeps the best of 3 passes over them, not 10 (the 22 runs took 214 of
# the stage's 248 s); every scaling point is still the best of its runs.
ACCEPTANCE_CI_OPTS  ?= -S AcceptanceScaling.triad_repeats=3
# On the virtual cluster: only what needs several nodes (node-local checks already ran on this machine);
# jobs span all nodes, waiting for busy ones, rather than skipping when none is idle. Its nodes share
# the host's CPUs (5 nodes on 2 cores in CI), so a node counts as an outlier only when 100% worse.
ACCEPTANCE_VC_OPTS  ?= --system vcluster:srun -p host --flex-alloc-nodes=all -x AcceptanceScaling \
                       -x AcceptanceStorage -x AcceptanceNUMACosts -x AcceptanceGPU -x AcceptanceGPUStress \
                       -x AcceptanceOpenCL \
                       -S AcceptanceNetwork.tolerance=1.0
ACCEPTANCE_VC_NODES ?= 5
# The node made bad on purpose after the run (empty: none): the middle one, so both neighbours are healthy.
# Kinds: link (its link at 400 Mbit/s: the time it takes is set by the rate, not by the machine's load) in
# CI; cpu (10 % of one CPU) too on request: on a loaded machine the capped node's pairs can outlast the
# check's 3-minute limit, which names no node.
ACCEPTANCE_BAD_NODE ?= vc$(shell echo $$(( $(ACCEPTANCE_VC_NODES) / 2 )))
ACCEPTANCE_BAD_NODE_KINDS ?= link

PYTEST_PATHS += reframe/yeebench/acceptance/tests
TEST_TARGETS += test-acceptance test-acceptance-vcluster

.PHONY: acceptance test-acceptance test-acceptance-vcluster

acceptance test-acceptance: venv
	@test -x $(PREFIX)/bin/numa-bw || { echo "$@: $(PREFIX)/bin has no binaries: run 'make build' first"; exit 2; }
	YEEBENCH_PREFIX=$(PREFIX) bash $(ACCEPTANCE_RUN) $(ACCEPTANCE_OUT) $(ACCEPTANCE_RFM_OPTS) \
	  $(if $(filter test-acceptance,$@),$(ACCEPTANCE_CI_OPTS))

test-acceptance-vcluster: venv
	@why=$$($(VENV)/bin/yeebench vcluster preflight 2>&1) || { echo "$@: SKIP: $$why"; exit 0; }; \
	started=0; \
	if ! $(VENV)/bin/yeebench vcluster status > /dev/null 2>&1; then \
	  $(VENV)/bin/yeebench vcluster up --nodes $(ACCEPTANCE_VC_NODES) --cpus-per-node 1 || exit 1; started=1; \
	fi; \
	trap 'if [ $$started = 1 ]; then $(VENV)/bin/yeebench vcluster down; fi' EXIT; \
	rc=0; $(VENV)/bin/yeebench vcluster exec -- env YEEBENCH_PREFIX=$(PREFIX) \
	  bash $(ACCEPTANCE_RUN) $(ACCEPTANCE_OUT)-vcluster $(ACCEPTANCE_VC_OPTS) || rc=$$?; \
	if [ $$started = 1 ] && [ -n "$(ACCEPTANCE_BAD_NODE)" ]; then \
	  YEEBENCH_PREFIX=$(PREFIX) $(PY) -m yeebench.vcluster.bad_node --node $(ACCEPTANCE_BAD_NODE) \
	    --kinds $(ACCEPTANCE_BAD_NODE_KINDS) --out $(ACCEPTANCE_OUT)-bad-node -- $(ACCEPTANCE_VC_OPTS) || rc=1; \
	fi; exit $$rc
