# The two commands of the README are `make demo` and `make test`; everything else is a step of them.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CACHE     ?= $(HOME)/.cache/c5c3-orders
REQ_HASH  := $(shell cat requirements/test.txt requirements/runtime.txt | sha256sum | cut -c1-12)
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

$(VENV)/.complete: requirements/test.txt requirements/runtime.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements/test.txt
	touch $@

.PHONY: venv
venv: $(VENV)/.complete  ## create the pinned test venv (outside the checkout, reused)

.PHONY: deps
deps: venv  ## Debian packages and Go builds the stack needs (idempotent)
	@command -v openssl >/dev/null || (apt-get update -qq && apt-get install -y -qq openssl)
	@command -v go >/dev/null || (apt-get update -qq && apt-get install -y -qq golang-go)
	@# the node's runc is built with seccomp (RuntimeDefault profiles): Debian 12's libseccomp-dev
	@echo " $${C5C3_SKIP_PARTS:-} " | tr , ' ' | grep -qw node || pkg-config --exists libseccomp 2>/dev/null \
	  || (apt-get update -qq && apt-get install -y -qq libseccomp-dev pkg-config)
	stack/build-binaries.sh all

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
unit: venv  ## unit tests (pure core, parsing, docs and fixtures checks)
	$(PYTEST) -q tests/unit

.PHONY: integration
integration: stack-up  ## integration tests against the running local stack
	$(PYTEST) -q --assert=plain --tb=short tests/integration

$(CURDIR)/.collections/ansible_collections/c5c3/orders:
	mkdir -p $(dir $@) && ln -sfn $(CURDIR) $@

.PHONY: collection-link
collection-link: $(CURDIR)/.collections/ansible_collections/c5c3/orders

.PHONY: test
test: venv collection-link  ## set everything up and run every test (what CI runs)
	$(MAKE) deps
	$(MAKE) verify-crd-copies verify-invalid-cr-fixtures
	$(MAKE) typecheck
	$(MAKE) collection molecule-check
	$(MAKE) stack-up
	@# ansible-test sanity (CPU) runs beside the tests (mostly waiting), its output printed after them
	tests/tools/alongside.sh "$(MAKE) --no-print-directory sanity" \
	  sh -c '$(PYTEST) -q tests/unit && $(PYTEST) -q --assert=plain --tb=short tests/integration'
	$(MAKE) molecule

.PHONY: demo
demo: collection-link stack-up  ## set everything up and run the main job on the local stack
	PYTHONPATH=$(CURDIR)/stack $(PYTHON) demo/demo.py
