# Collections from outside and the execution environment's build context.
#
# kubernetes.core (used by roles/install and roles/target_cluster_access) is not a Python package and Galaxy is not
# reachable here: it comes out of the `ansible` wheel on PyPI, unpacked into .collections-deps/ (not committed).
# Put $(COLLECTIONS_DEPS) on ANSIBLE_COLLECTIONS_PATH to use it; tests/integration/test_install.py does.
# (mk/bench.mk uses it too, for the naive baseline.)
C5C3_ANSIBLE_WHEEL_VERSION := 12.3.0
COLLECTIONS_DEPS := $(CURDIR)/.collections-deps
C5C3_KCORE_STAMP := $(COLLECTIONS_DEPS)/.kubernetes.core-from-ansible-$(C5C3_ANSIBLE_WHEEL_VERSION)
EE_BUILD := $(CURDIR)/build
ANSIBLE_BUILDER_VENV := $(CACHE)/venv-ansible-builder
ANSIBLE_BUILDER_VERSION := 3.2.0

$(C5C3_KCORE_STAMP): | venv
	mkdir -p $(CACHE)/dl
	$(VENV)/bin/pip download -q --no-deps -d $(CACHE)/dl 'ansible==$(C5C3_ANSIBLE_WHEEL_VERSION)'
	rm -rf $(COLLECTIONS_DEPS)/ansible_collections/kubernetes/core
	$(PYTHON) -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
	  z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("ansible_collections/kubernetes/core/")])' \
	  $(CACHE)/dl/ansible-$(C5C3_ANSIBLE_WHEEL_VERSION)-py3-none-any.whl $(COLLECTIONS_DEPS)
	test -f $(COLLECTIONS_DEPS)/ansible_collections/kubernetes/core/MANIFEST.json
	touch $@

.PHONY: collections-deps
collections-deps: $(C5C3_KCORE_STAMP)  ## kubernetes.core (from the ansible wheel on PyPI) into .collections-deps/

# The install test needs kubernetes.core.
integration test: collections-deps

$(ANSIBLE_BUILDER_VENV)/bin/ansible-builder:
	python3 -m venv $(ANSIBLE_BUILDER_VENV)
	$(ANSIBLE_BUILDER_VENV)/bin/pip install -q 'ansible-builder==$(ANSIBLE_BUILDER_VERSION)'

.PHONY: collection-build
collection-build: venv  ## build the collection tarball into build/collection/ (from the files git would ship)
	rm -rf $(EE_BUILD)/src $(EE_BUILD)/collection && mkdir -p $(EE_BUILD)/src $(EE_BUILD)/collection
	@# tracked files deleted in the working tree are left out (a rename not committed yet)
	git ls-files -co --exclude-standard | grep -v -E '^(build|\.[^/]+)/' | while IFS= read -r f; do \
	  [ -e "$$f" ] && printf '%s\n' "$$f"; done | tar -cf - -T - | tar -xf - -C $(EE_BUILD)/src
	cd $(EE_BUILD)/src && $(VENV)/bin/ansible-galaxy collection build --force --output-path $(EE_BUILD)/collection .
	mv $(EE_BUILD)/collection/c5c3-orders-*.tar.gz $(EE_BUILD)/collection/c5c3-orders.tar.gz

.PHONY: ee-context
ee-context: collection-build $(ANSIBLE_BUILDER_VENV)/bin/ansible-builder  ## validate execution-environment.yml and render its build context into build/ee/ (no container engine needed)
	rm -rf $(EE_BUILD)/ee
	$(ANSIBLE_BUILDER_VENV)/bin/ansible-builder create -f execution-environment.yml -c $(EE_BUILD)/ee \
	  --output-filename Containerfile -v 2
	@echo "build it where a container engine runs: podman build -t c5c3-orders-ee:0.3.0 $(EE_BUILD)/ee"
