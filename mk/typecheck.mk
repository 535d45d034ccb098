# make typecheck (run by make sanity): mypy over the collection's module_utils and the controller package, strict on
# the pure core (mypy.ini), and the import contract (.importlinter: the pure core imports no edge, the collection
# never the controller); docs/testing.md "Types and the import contract". Both tools live in a venv of their own
# (requirements/typecheck.txt); mypy reads the libraries' types from the test venv. The collection is checked as
# ansible_collections.c5c3.orders, through the checkout's link (collection-link).
# make no-redefinition: tests/tools/check_no_redefinition.py, no module of the controller package holds a copy of a
# label key, name or resource plural the collection defines.
TYPECHECK_HASH := $(shell cat requirements/typecheck.lock | sha256sum | cut -c1-12)
TYPECHECK_VENV ?= $(CACHE)/venv-typecheck-$(TYPECHECK_HASH)

$(TYPECHECK_VENV)/.complete: | requirements/typecheck.lock
	python3 -m venv $(TYPECHECK_VENV)
	$(TYPECHECK_VENV)/bin/pip install -q --require-hashes -r requirements/typecheck.lock
	touch $@

.PHONY: typecheck-venv
typecheck-venv: $(TYPECHECK_VENV)/.complete  ## the pinned venv of make typecheck (mypy, import-linter)

.PHONY: typecheck
typecheck: venv typecheck-venv collection-link no-redefinition  ## mypy (strict on the pure core) and the import contract; run by make sanity
	$(TYPECHECK_VENV)/bin/mypy --config-file $(CURDIR)/mypy.ini --python-executable $(PYTHON)
	cd $(CURDIR) && PYTHONPATH=$(CURDIR)/.collections:$(CURDIR)/controller \
	  $(TYPECHECK_VENV)/bin/lint-imports --no-cache $(CURDIR)/.importlinter

.PHONY: no-redefinition
no-redefinition: venv collection-link  ## fail when the controller package copies a label key or resource plural of the collection
	$(PYTHON) tests/tools/check_no_redefinition.py
