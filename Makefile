# One command each: `make render` renders the example sites, `make test` runs every check.
# Each target creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: render test test-fast test-twin lint system controlplane kueueparity twin fmt golden bench fuzz fuzz-site clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

render: $(STAMP)
	$(BIN)/nvcregen render

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# promtool and Chromium for the tests: installed with apt when possible, else one command.
system:
	tools/system-deps.sh

# etcd, kube-apiserver and kube-controller-manager for tests/realserver/, built with Go from
# tools/controlplane/go.mod into ~/.cache/nvcregen/controlplane/<pins>/ (reused while the
# pins are unchanged; the first build takes many minutes).
controlplane:
	tools/controlplane/build.sh

# The Kueue parity tool for tests/realserver/test_cp_kueue_parity.py: Kueue v0.19.2's and
# Trainer v2.2.1's own Go code, built from tools/kueueparity/ into
# ~/.cache/nvcregen/kueueparity/<pins and sources>/ (reused while they are unchanged).
kueueparity:
	tools/kueueparity/build.sh

# The twin for tests/realserver/test_twin_*.py (issue #34): kwok, kube-scheduler, the
# Kueue, JobSet and Trainer managers and Flux's source- and kustomize-controller, built from
# the published modules pinned in tools/twin/*/go.mod (kube-scheduler from the control
# plane's) into ~/.cache/nvcregen/twin/<pins>/ (reused while they are unchanged; a cold
# build is about 15 minutes on a 2-core machine). `test` builds it when missing.
twin:
	tools/twin/build.sh

# The rehearsal tests alone, on the real controllers: builds the control plane and the
# twin when missing, then every tests/realserver/test_twin_*.py.
test-twin: $(STAMP) controlplane twin
	$(BIN)/pytest -q tests/realserver -k test_twin_ --durations=10

# Every test. The twin is built (when missing) and its rehearsal tests run beside the rest
# of the suite, not after it (tools/test.sh says why); both must pass.
test: lint system controlplane kueueparity
	tools/test.sh

# The inner loop: the suite less the tests marked slow (processes, Git repositories, half
# a second or more each) and controlplane (built binaries), on every core (pytest-xdist);
# no lint, no system packages. `make test` still runs every test, in one process.
test-fast: $(STAMP)
	$(BIN)/pytest -q -n auto -m 'not slow and not controlplane'

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Refresh golden files after an intended output change; review `git diff tests/golden` after.
golden: $(STAMP)
	$(BIN)/pytest -q tests/test_golden.py --update-golden

# The site loader and check's tree reader fuzzed longer than `make test` does (a few
# minutes): no input may end in an internal error.
fuzz-site: $(STAMP)
	NVCREGEN_FUZZ_EXAMPLES=2000 $(BIN)/pytest -q tests/unit/spec/test_fuzz_site_and_tree.py

bench: $(STAMP)
	$(BIN)/python -m tools.bench

# The readers' fuzz tests (tests/unit/fuzz/) with many more examples than `make test` runs.
FUZZ_EXAMPLES ?= 5000
fuzz: $(STAMP)
	NVCREGEN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q tests/unit/fuzz

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
