# make bench: the cost of a KeystoneUser pass against N orders, side by side with a bulk and a naive kubernetes.core
# playbook (issues 7 and 14); writes docs/benchmarks.md and docs/benchmarks.png. Runs on its own control plane
# (benchmarks/cluster.py), so the local stack's management cluster is not needed and not touched; works from a
# fresh clone (it creates .bench/). Further scenarios plug in as benchmarks/scenario_<name>.py (benchmarks/scenarios.py).
# The main Makefile sets CACHE, VENV (test venv) and the deps target; BENCH_ARGS passes options to
# benchmarks/run.py, e.g. make bench BENCH_ARGS=--quick, or BENCH_ARGS="--baseline-budget 7200".
BENCH_HASH      := $(shell cat requirements/bench.txt requirements/test.txt requirements/runtime.txt | sha256sum | cut -c1-12)
BENCH_VENV      ?= $(CACHE)/venv-bench-$(BENCH_HASH)
BENCH_PYTHON    := $(BENCH_VENV)/bin/python
BENCH_ARGS      ?=

$(BENCH_VENV)/.complete: requirements/bench.txt requirements/test.txt requirements/runtime.txt
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --upgrade pip
	$(BENCH_VENV)/bin/pip install -q -r requirements/bench.txt
	touch $@

.PHONY: bench-venv
bench-venv: $(BENCH_VENV)/.complete  ## the pinned benchmark venv (test venv + matplotlib, pyinstrument)

.PHONY: bench-deps
bench-deps: bench-venv collection-link collections-deps  ## what make bench needs besides the stack's binaries

.PHONY: bench
bench: deps bench-deps  ## measure a pass at 100/1000/5000 orders against a bulk and a naive playbook; writes docs/benchmarks.*
	$(BENCH_PYTHON) benchmarks/run.py $(BENCH_ARGS)

.PHONY: bench-report
bench-report: bench-venv  ## rewrite docs/benchmarks.md and .png from the last run's figures (.bench/results.json)
	$(BENCH_PYTHON) benchmarks/report.py
