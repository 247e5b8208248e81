# Two entry points: `make lab` (the course) and `make test` (the test suite). Both first make or update the
# virtual environment $(VENV) (tools/venv.sh: skipped when nothing changed), then run from it.
# PYTHON is the interpreter the venv is made from (any Python 3.11+, an externally managed one included).
PYTHON ?= python3
# CI pins the CPU build of torch; elsewhere set TORCH to what suits the machine (pyproject allows torch>=2.4).
TORCH ?= torch==2.13.0
VENV ?= .venv
ARGS ?=
# pytest-xdist workers for `make test`: three on two cores, because much of the suite waits on the processes its tests
# start (kernels, hubs, clusters, sleeping submissions): measured here, the pytest pass took 507 s with three workers
# against 657 s with two
WORKERS ?= 3
BIN := $(abspath $(VENV))/bin

.PHONY: venv venv-test lab test bench
venv:
	@PYTHON="$(PYTHON)" TORCH="$(TORCH)" VENV="$(VENV)" EXTRAS="" sh tools/venv.sh

VENV_TEST = PYTHON="$(PYTHON)" TORCH="$(TORCH)" VENV="$(VENV)" EXTRAS="dev,browser,postgres" sh tools/venv.sh
venv-test:
	@$(VENV_TEST)

lab: venv
	PATH="$(BIN):$$PATH" $(BIN)/python -m autograder.cli lab $(ARGS)

# System pieces some tests need (chromium, configurable-http-proxy, postgresql) come from .ci/deps-*.sh, each
# installing only what is missing. As root, their system packages (apt, npm) install while tools/venv.sh makes
# the venv (pip and uv), and what they print follows the venv's lines; their Python packages are then checked in
# the venv. Without root (sudo may ask for a password) one comes after the other.
test:
	@if [ "$$(id -u)" -ne 0 ]; then $(VENV_TEST) && bash .ci/deps.sh system; else \
	    mkdir -p build; bash .ci/deps.sh system > build/system-deps.log 2>&1 & deps=$$!; \
	    $(VENV_TEST); made=$$?; wait $$deps; cat build/system-deps.log; exit $$made; fi
	@PYTHON="$(BIN)/python" bash .ci/deps.sh python
	PATH="$(BIN):$$PATH" $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup $(ARGS)
	@if [ -z "$(ARGS)" ]; then bash tools/private-home-pass.sh "$(BIN)/python"; fi

bench: venv-test
	PATH="$(BIN):$$PATH" $(BIN)/python -m benchmarks $(ARGS)

# The course as a static website in build/site (docs/site/build.py: every lesson executed now, exercise task text
# from the release, benchmarks, guides). Open build/site/index.html.
.PHONY: site compat
site: venv-test
	PATH="$(BIN):$$PATH" $(BIN)/python docs/site/build.py $(ARGS)

# The course on a second torch release, in its own venv: every lesson runs, solutions score full marks and
# releases zero (tests/test_course.py), and every mutant is caught (fxcourse validate).
COMPAT_TORCH ?= torch==2.14.1
COMPAT_VENV ?= .venv-torch2.14
compat:
	$(MAKE) test VENV="$(COMPAT_VENV)" TORCH="$(COMPAT_TORCH)" ARGS="tests/test_course.py $(ARGS)"
	PATH="$(abspath $(COMPAT_VENV))/bin:$$PATH" $(abspath $(COMPAT_VENV))/bin/python -m autograder.cli validate
