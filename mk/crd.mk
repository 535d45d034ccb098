# The KeystoneUser CRD: its shipped copies and its admission corpus (tests/crd/).
# Included by the main Makefile, which sets PYTHON to the test venv; python3 is the fallback on its own.
PYTHON ?= python3
CRD_PY_DEPS := $(if $(VENV),venv)  # the main Makefile's venv target builds $(PYTHON)
CRD_SOURCE := roles/install/files/crds/c5c3.io_keystoneusers.yaml
CRD_COPIES := roles/target_cluster_access/files/crds/c5c3.io_keystoneusers.yaml
CRD_CORPUS_GENERATOR := tests/crd/invalid-keystoneuser/_generate.py

.PHONY: verify-invalid-cr-fixtures
verify-invalid-cr-fixtures: $(CRD_PY_DEPS)  ## fail when tests/crd/ drifted from its generator or holds orphan files
	$(PYTHON) $(CRD_CORPUS_GENERATOR) --check

.PHONY: invalid-cr-fixtures
invalid-cr-fixtures: $(CRD_PY_DEPS)  ## regenerate the KeystoneUser admission corpus in tests/crd/
	$(PYTHON) $(CRD_CORPUS_GENERATOR)

.PHONY: verify-crd-copies
verify-crd-copies:  ## fail when a shipped copy of the KeystoneUser CRD differs from its source
	@for copy in $(CRD_COPIES); do cmp $(CRD_SOURCE) $$copy || { echo "cp $(CRD_SOURCE) $$copy" >&2; exit 1; }; done
