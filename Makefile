# Two entry points: `make lab` (the course) and `make test` (the test suite). Both install what they need.
PYTHON ?= python3
# CI pins the CPU build of torch; elsewhere set TORCH to what suits the machine (pyproject allows torch>=2.4).
TORCH ?= torch==2.13.0
ARGS ?=

.PHONY: install lab test bench
install:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check "$(TORCH)"
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e ".[dev]"

lab: install
	$(PYTHON) -m autograder.cli lab $(ARGS)

test: install
	PYTHON=$(PYTHON) bash .ci/browser-deps.sh || echo "browser tests will be skipped: chromium or playwright could not be installed"
	$(PYTHON) -m pytest $(ARGS)

bench: install
	$(PYTHON) -m benchmarks $(ARGS)
