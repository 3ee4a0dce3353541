# OSU Micro-Benchmarks built by the suite (included by the top-level Makefile).
#   make build-osu   build OSU from a release tarball into $(PREFIX)/libexec/osu-micro-benchmarks
#                    (OSU_TARBALL, OSU_MIRROR or the lab: see microbench/osu/find-tarball.sh);
#                    cached; with no tarball, or a bad one, it says why and the OSU checks skip
#   make test-osu    CI stage: the OSU checks run for real on this machine (per transport and per
#                    collective implementation); the checks' own skip reasons when OSU is absent
# Why the suite's build is not there is left in $(BUILD)/osu-build.{skipped,failed} for the checks.
OSU_STATUS_DIR := $(abspath $(PREFIX)/..)
OSU_RFM_DIR    := $(abspath $(BUILD)/reframe-osu)
# What test-osu runs: every OSU case this machine can place (the others skip with the reason).
# To keep the stage short on 2 shared cores: point-to-point up to 1 MiB (bw_large spans 256 KiB-1 MiB;
# the checks' default is 4 MiB), 1000 ping-pongs per size instead of OSU's 10000, and 20 windows
# (OSU's own count above 8 KB) for the bandwidth benchmarks, 100 calls per size for collectives
# (OSU: 1000 below 8 KB, 100 above; each is a barrier-separated call, costly on busy cores).
# The per-benchmark counts are the short_iterations of yeebench.osu.BENCHMARKS, the suite's one
# list of OSU benchmarks (read when test-osu runs, after the virtualenv exists).
OSU_ITERATIONS_FOR = $(shell $(PY) -m yeebench.osu iterations-for)
OSU_TEST_OPTS ?= -n '^OsuPt2Pt' -n '^OsuCollective' -S OsuPt2Pt.max_size=1048576 \
                 -S OsuPt2Pt.iterations_for=$(OSU_ITERATIONS_FOR) \
                 -S OsuCollective.iterations=100 -S OsuCollective.warmup=10

BUILD_TARGETS += build-osu
TEST_TARGETS  += test-osu

.PHONY: build-osu test-osu

build-osu:
	@mkdir -p $(OSU_STATUS_DIR); rm -f $(OSU_STATUS_DIR)/osu-build.skipped $(OSU_STATUS_DIR)/osu-build.failed; \
	tarball=$$(bash microbench/osu/find-tarball.sh 2> $(OSU_STATUS_DIR)/osu-build.why); rc=$$?; \
	if [ $$rc -eq 3 ]; then mv $(OSU_STATUS_DIR)/osu-build.why $(OSU_STATUS_DIR)/osu-build.skipped; \
	  echo "build-osu: skipped: $$(cat $(OSU_STATUS_DIR)/osu-build.skipped)"; \
	elif [ $$rc -ne 0 ]; then mv $(OSU_STATUS_DIR)/osu-build.why $(OSU_STATUS_DIR)/osu-build.failed; \
	  cat $(OSU_STATUS_DIR)/osu-build.failed; \
	elif ! bash microbench/osu/build-osu.sh "$$tarball" $(PREFIX) 2> $(OSU_STATUS_DIR)/osu-build.why; then \
	  mv $(OSU_STATUS_DIR)/osu-build.why $(OSU_STATUS_DIR)/osu-build.failed; cat $(OSU_STATUS_DIR)/osu-build.failed; \
	else rm -f $(OSU_STATUS_DIR)/osu-build.why; fi

test-osu: venv
	@[ -n "$(OSU_ITERATIONS_FOR)" ] || { echo "test-osu: $(PY) -m yeebench.osu iterations-for printed nothing"; exit 1; }
	YEEBENCH_PREFIX=$(PREFIX) YEEBENCH_RFM_DIR=$(OSU_RFM_DIR) $(VENV)/bin/reframe -C reframe/config/settings.py \
	  -c reframe/yeebench/checks/pt2pt/pt2pt.py -c reframe/yeebench/checks/collectives/collectives.py --system local $(OSU_TEST_OPTS) \
	  -r --report-file $(OSU_RFM_DIR)/report.json
