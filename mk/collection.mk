# The collection as users get it: `ansible-galaxy collection build` straight from this folder (galaxy.yml's
# build_ignore keeps the stack, tests, benchmarks, caches and build output out), and an install of that tarball
# into a clean collections path, as `ansible-galaxy collection install` does it for a user.
# tests/integration/test_installed_collection.py builds, installs and runs it the same way on the local stack.
# Included by the main Makefile, which sets VENV, PYTHON and the collections-deps target (mk/collections.mk).
COLLECTION_VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
COLLECTION_DIST    := $(CURDIR)/build/dist
COLLECTION_TARBALL := $(COLLECTION_DIST)/c5c3-orders-$(COLLECTION_VERSION).tar.gz
COLLECTION_INSTALL := $(CURDIR)/build/installed

.PHONY: collection
collection: venv  ## build the collection tarball build/dist/c5c3-orders-<version>.tar.gz (and print its size)
	mkdir -p $(COLLECTION_DIST)
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(COLLECTION_DIST) $(CURDIR)
	@echo "$(COLLECTION_TARBALL): $$(du -k $(COLLECTION_TARBALL) | cut -f1) KiB, $$(tar tzf $(COLLECTION_TARBALL) | wc -l) entries"

.PHONY: collection-install
collection-install: collection collections-deps  ## install that tarball into build/installed/ (offline; kubernetes.core from .collections-deps)
	rm -rf $(COLLECTION_INSTALL)
	ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS_DEPS) $(VENV)/bin/ansible-galaxy collection install --offline \
	  $(COLLECTION_TARBALL) -p $(COLLECTION_INSTALL)
	@echo "use it with: ANSIBLE_COLLECTIONS_PATH=$(COLLECTION_INSTALL):$(COLLECTIONS_DEPS) ansible-playbook c5c3.orders.reconcile"
