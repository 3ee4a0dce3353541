# Virtual Slurm cluster (reframe/yeebench/vcluster): the suite's multi-node path on one machine.
#   make vcluster-up      VCLUSTER_NODES=2 VCLUSTER_LINK_RATE=1gbit  (root; namespaces, munge, Slurm)
#   make vcluster-status  daemons and node states
#   make vcluster-down    stop and remove everything (safe to repeat, also after a crash)
#   make test-vcluster    CI stage: up, NetPIPE intra/inter through ReFrame's Slurm path, ingest,
#                         verify (inter-node bandwidth within 15% of the link rate, intra beats inter),
#                         down, always; skipped with the reason printed where namespaces are missing
VCLUSTER_NODES     ?= 2
VCLUSTER_LINK_RATE ?= 1gbit
VCLUSTER_OUT       := $(abspath $(BUILD)/vcluster-smoke)
# ReFrame --system for the smoke run: vcluster:srun (srun --mpi=pmix) or vcluster (also mpirun)
VCLUSTER_PARTITIONS ?= vcluster

PYTEST_PATHS += reframe/yeebench/vcluster/tests
TEST_TARGETS += test-vcluster

.PHONY: vcluster-up vcluster-down vcluster-status test-vcluster

vcluster-up: venv
	$(VENV)/bin/yeebench vcluster up --nodes $(VCLUSTER_NODES) --link-rate $(VCLUSTER_LINK_RATE)

vcluster-down: venv
	$(VENV)/bin/yeebench vcluster down

vcluster-status: venv
	$(VENV)/bin/yeebench vcluster status

# `smoke` tears down the cluster it started in every case (failure, Ctrl-C, SIGTERM); a cluster that
# was already up before is left alone and the stage fails.
test-vcluster: venv
	YEEBENCH_PREFIX=$(PREFIX) $(VENV)/bin/yeebench vcluster smoke --nodes $(VCLUSTER_NODES) \
	  --link-rate $(VCLUSTER_LINK_RATE) --partitions $(VCLUSTER_PARTITIONS) --out $(VCLUSTER_OUT) \
	  --skip-unsupported
