# The yeebench package as a site installs it (reframe/test-package.sh):
#   make test-package   sdist + wheel from the checkout (left as it was), installed with constraints.txt into
#                       a fresh virtual environment outside the checkout; `yeebench checks-dir`, the shipped
#                       sources, the checks listed with a minimal ReFrame-documentation-style configuration,
#                       the smoke set run (-r) from the installed package under it, on the newest and on the
#                       oldest supported ReFrame
# RFM_OLDEST is pyproject's lower bound of reframe-hpc (tests/test_package.py checks that they agree).
RFM_OLDEST ?= 4.9.0
PACKAGE_EXPECT_EQUAL ?= 1

TEST_TARGETS += test-package
TEST_QUIET   += test-package

.PHONY: test-package

test-package: venv
	PY=$(PY) OUT=$(BUILD)/package RFM_OLDEST=$(RFM_OLDEST) PACKAGE_EXPECT_EQUAL=$(PACKAGE_EXPECT_EQUAL) \
	  bash reframe/test-package.sh
