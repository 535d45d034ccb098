# The rendered documentation and the changelog (README.md), in a venv of their own (requirements/docs.txt,
# like mk/bench.mk's): antsibull-docs turns every module's DOCUMENTATION/EXAMPLES/RETURN, the doc fragments, the
# filter plugins and the roles' meta/argument_specs.yml into reStructuredText, Sphinx builds the static site into
# the ignored .docs-build/html/ (open .docs-build/html/index.html). The collection is read through
# ANSIBLE_COLLECTIONS_PATH (the checkout's link, exported by the main Makefile), so what is rendered is this tree.
# `make docs` prints Sphinx's warnings (a reference that does not resolve); `make docs-lint` fails on any problem
# of the documentation's markup and references.
# antsibull-changelog lints every fragment; `make changelog-release` writes CHANGELOG.rst for a release.
DOCS_HASH    := $(shell cat requirements/docs.lock | sha256sum | cut -c1-12)
DOCS_VENV    ?= $(CACHE)/venv-docs-$(DOCS_HASH)
DOCS_BUILD   := $(CURDIR)/.docs-build
DOCS_ENV     := PATH=$(DOCS_VENV)/bin:$$PATH ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.collections

$(DOCS_VENV)/.complete: | requirements/docs.lock
	python3 -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/pip install -q --require-hashes -r requirements/docs.lock
	touch $@

.PHONY: docs-venv
docs-venv: $(DOCS_VENV)/.complete  ## the pinned docs venv (antsibull-docs, antsibull-changelog, Sphinx)

# The Ansible docsite's labels the generated pages point at (return values, configuration, ANSIBLE_* variables, the
# pages of kubernetes.core named under "See also"): resolved through intersphinx online, they cannot be here, so the
# build drops intersphinx and ignores exactly these.
DOCS_OFFLINE_REFS := undefined label: .(common_return_values|ansible_configuration_settings|ansible_collections\.kubernetes\.core\.[a-z0-9_]+_module).|.envvar. reference target not found: ANSIBLE_

.PHONY: docs
docs: docs-venv collection-link  ## render the module, plugin and role documentation into a static site in .docs-build/html/
	rm -rf $(DOCS_BUILD) && mkdir -m 700 $(DOCS_BUILD)
	$(DOCS_ENV) antsibull-docs sphinx-init --use-current --squash-hierarchy --fail-on-error --title c5c3.orders \
	  --project c5c3.orders --copyright "c5c3.orders contributors" --dest-dir $(DOCS_BUILD) c5c3.orders >/dev/null
	printf '\n# make docs builds offline: no intersphinx inventory is fetched.\nintersphinx_mapping = {}\n' \
	  >> $(DOCS_BUILD)/conf.py
	chmod og-w $(DOCS_BUILD)/rst
	cd $(DOCS_BUILD) && $(DOCS_ENV) antsibull-docs --config-file antsibull-docs.cfg collection --use-current \
	  --squash-hierarchy --fail-on-error --cleanup everything --dest-dir rst c5c3.orders
	cd $(DOCS_BUILD) && $(DOCS_ENV) sphinx-build -q -b html -c . -w warnings.txt rst html 2> stderr.txt || { cat stderr.txt; exit 1; }
	@grep -v -E "$(DOCS_OFFLINE_REFS)" $(DOCS_BUILD)/warnings.txt | sed 's/^/docs warning: /' || true
	@echo "$(DOCS_BUILD)/html/index.html: $$(ls $(DOCS_BUILD)/html/*.html | wc -l) pages"

.PHONY: docs-lint
docs-lint: docs-venv collection-link  ## antsibull-docs' checks of every plugin's and role's documentation (markup, references)
	$(DOCS_ENV) antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs=self $(CURDIR)

.PHONY: changelog-lint
changelog-lint: docs-venv  ## antsibull-changelog lint on every fragment in changelogs/fragments/
	$(DOCS_VENV)/bin/antsibull-changelog lint

.PHONY: changelog-release
changelog-release: docs-venv  ## turn the fragments into changelogs/changelog.yaml and CHANGELOG.rst for galaxy.yml's version
	$(DOCS_ENV) antsibull-changelog release
