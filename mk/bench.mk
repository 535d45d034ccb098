# make bench: the cost of a KeystoneUser pass against N orders, side by side with a bulk and a naive kubernetes.core
# playbook; writes docs/benchmarks.md and docs/benchmarks.png. Runs on its own control plane
# (benchmarks/cluster.py), so the local stack's management cluster is not needed and not touched; works from a
# fresh clone (it creates .bench/). Further scenarios plug in as benchmarks/scenario_<name>.py (benchmarks/scenarios.py);
# scenario_revision runs this tree side by side with an earlier commit (BENCH_ARGS=--against <rev>, default HEAD~1).
# The main Makefile sets CACHE, VENV (test venv) and the deps target; BENCH_ARGS passes options to
# benchmarks/run.py, e.g. make bench BENCH_ARGS=--quick, or BENCH_ARGS="--baseline-budget 7200".
# Time here (2 cores, from a fresh clone, nothing else running, 2026-12-06): make bench (N = 100, 1,000, 5,000, every
# scenario) took 41 min (2,476 s at 5f540e1, 2,489 s at ad17a39); make bench BENCH_ARGS=--quick (N = 50, 200) took 27 min.
BENCH_HASH      := $(shell cat requirements/bench.lock | sha256sum | cut -c1-12)
BENCH_VENV      ?= $(CACHE)/venv-bench-$(BENCH_HASH)
BENCH_PYTHON    := $(BENCH_VENV)/bin/python
BENCH_ARGS      ?=

$(BENCH_VENV)/.complete: | requirements/bench.lock
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --require-hashes -r requirements/bench.lock
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

# make bench-scale: 20,000 orders on a second bench cluster (port index 6, folder .bench-scale/), so it may run while
# make bench runs on index 5: run.py's first, converged and drift passes, floor and memory at that N, then
# benchmarks/scenario_scale.py (a targeted pass, the passes of 2 and 4 shares alone and side by side, the API server's
# CPU and RSS). No baselines, and docs/benchmarks.* stay as they are: the figures go to .bench-scale/results.json and
# .bench-scale/report.md; docs/scaling.md builds its capacity model on them. Takes about an hour here (nice'd).
SCALE_ORDERS    ?= 20000
SCALE_WORK      := .bench-scale

.PHONY: bench-scale
bench-scale: deps bench-deps  ## 20,000 orders on a second bench cluster: full, targeted and sharded passes, memory, API server load (.bench-scale/)
	C5C3_BENCH_PORT_INDEX=6 C5C3_BENCH_WORK=$(SCALE_WORK) nice $(BENCH_PYTHON) benchmarks/run.py --sizes $(SCALE_ORDERS) \
		--no-baseline --scenarios scale $(BENCH_ARGS)
	$(BENCH_PYTHON) benchmarks/scenario_scale.py $(SCALE_WORK)/results.json > $(SCALE_WORK)/report.md
	@echo "written: $(SCALE_WORK)/results.json, $(SCALE_WORK)/report.md"
