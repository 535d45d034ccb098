# The two commands of the README are `make demo` and `make test`; everything else is a step of them.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CACHE     ?= $(HOME)/.cache/c5c3-orders
REQ_HASH  := $(shell cat requirements/test.lock | sha256sum | cut -c1-12)
VENV      ?= $(CACHE)/venv-test-$(REQ_HASH)
PYTHON    := $(VENV)/bin/python
STACK     := PYTHONPATH=$(CURDIR)/stack $(PYTHON) -m c5c3stack
TARGETS   ?= edge-1
PYTEST    ?= $(PYTHON) -m pytest
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections:$(CURDIR)/.collections-deps

include $(wildcard mk/*.mk)

.PHONY: help
help:  ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-26s %s\n", $$1, $$2}'

# installed from the hash lock (make locks; make lock-check proves it agrees with requirements/test.txt). The venv's
# name carries the lock's hash, so the lock is an order-only prerequisite: a fresh clone (every file new) or a pull
# that leaves the lock alone reuses the venv instead of installing into it again under other checkouts' feet.
$(VENV)/.complete: | requirements/test.lock
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --require-hashes -r requirements/test.lock
	touch $@

.PHONY: venv
venv: $(VENV)/.complete  ## create the hash-pinned test venv (outside the checkout, reused)

.PHONY: deps
deps: venv  ## Debian packages and Go builds the stack needs (idempotent)
	@command -v openssl >/dev/null || (apt-get update -qq && apt-get install -y -qq openssl)
	@command -v go >/dev/null || (apt-get update -qq && apt-get install -y -qq golang-go)
	@# the node's runc is built with seccomp (RuntimeDefault profiles): Debian 12's libseccomp-dev
	@echo " $${C5C3_SKIP_PARTS:-} " | tr , ' ' | grep -qw node || pkg-config --exists libseccomp 2>/dev/null \
	  || (apt-get update -qq && apt-get install -y -qq libseccomp-dev pkg-config)
	@# what is mostly download and unpacking (the Ceph roots, the servers' venv, MariaDB) beside the Go builds (CPU)
	@( PYTHONPATH=$(CURDIR)/stack nice -n 10 $(PYTHON) -m c5c3stack.prepare 2>&1 | sed -u 's/^/  [beside] /' ) & \
	  beside=$$!; stack/build-binaries.sh all; wait $$beside

.PHONY: stack-up
stack-up: deps  ## bring the local stack up (reuses running parts), with target cluster(s) $(TARGETS)
	$(STACK) up $(foreach t,$(TARGETS),--target $(t))

.PHONY: stack-down
stack-down:  ## stop every process of the local stack
	@if [ -x $(PYTHON) ]; then $(STACK) down; else python3 -c 'import sys; sys.path.insert(0, "stack"); from c5c3stack.cli import main; sys.exit(main(["down"]))'; fi

.PHONY: stack-status
stack-status:  ## print the state of every part of the local stack
	$(STACK) status

.PHONY: unit
unit: venv collection-link collections-deps  ## unit tests (pure core, parsing, docs and fixtures checks)
	$(PYTEST) -q tests/unit

# The lanes of tests/integration/lanes.py side by side (one pytest-xdist worker each), then the tests that run alone.
INTEGRATION_LANES ?= 5
INTEGRATION := $(PYTEST) -q --assert=plain --tb=short -p no:cacheprovider
INTEGRATION_TESTS := $(INTEGRATION) -n $(INTEGRATION_LANES) --dist loadgroup -m "not alone" tests/integration \
                     && $(INTEGRATION) -m alone tests/integration

.PHONY: integration
integration: stack-up  ## integration tests against the running local stack (lanes side by side, then the rest alone)
	$(INTEGRATION_TESTS)

$(CURDIR)/.collections/ansible_collections/c5c3/orders:
	mkdir -p $(dir $@) && ln -sfn $(CURDIR) $@

.PHONY: collection-link
collection-link: $(CURDIR)/.collections/ansible_collections/c5c3/orders

.PHONY: test
test: venv collection-link  ## set everything up and run every test (what CI runs)
	$(MAKE) lock-check deps
	$(MAKE) verify-crd-copies verify-invalid-cr-fixtures
	$(MAKE) typecheck
	$(MAKE) collection molecule-check
	$(MAKE) stack-up
	@# ansible-test sanity (CPU) runs beside the tests (mostly waiting), its output printed after them
	tests/tools/alongside.sh "$(MAKE) --no-print-directory sanity" \
	  sh -c '$(PYTEST) -q tests/unit && $(INTEGRATION_TESTS)'
	$(MAKE) molecule

.PHONY: demo
demo: collection-link stack-up  ## set everything up and run the main job on the local stack
	PYTHONPATH=$(CURDIR)/stack $(PYTHON) demo/demo.py
