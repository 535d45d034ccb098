# The c5c3.io CRDs: the shipped copies of the order kinds and the admission corpora (tests/crd/).
# Included by the main Makefile, which sets PYTHON to the test venv; python3 is the fallback on its own.
PYTHON ?= python3
CRD_PY_DEPS := $(if $(VENV),venv)  # the main Makefile's venv target builds $(PYTHON)
CRD_SOURCE_DIR := roles/install/files/crds
CRD_COPY_DIR := roles/target_cluster_access/files/crds
# The order kinds are served on target clusters too, from a byte-identical copy; the platform kinds are not.
CRD_COPIES := $(CRD_COPY_DIR)/c5c3.io_keystoneusers.yaml $(CRD_COPY_DIR)/c5c3.io_bucketcredentials.yaml
CRD_CORPUS_GENERATORS := $(sort $(wildcard tests/crd/invalid-*/_generate.py))

.PHONY: verify-invalid-cr-fixtures
verify-invalid-cr-fixtures: $(CRD_PY_DEPS)  ## fail when a corpus in tests/crd/ drifted from its generator or holds orphan files
	@status=0; for gen in $(CRD_CORPUS_GENERATORS); do $(PYTHON) $$gen --check || status=1; done; exit $$status

.PHONY: invalid-cr-fixtures
invalid-cr-fixtures: $(CRD_PY_DEPS)  ## regenerate every admission corpus in tests/crd/
	@for gen in $(CRD_CORPUS_GENERATORS); do $(PYTHON) $$gen || exit 1; done

.PHONY: verify-crd-copies
verify-crd-copies:  ## fail when a shipped copy of an order CRD differs from its source
	@for copy in $(CRD_COPIES); do \
	  source=$(CRD_SOURCE_DIR)/$$(basename $$copy); \
	  cmp $$source $$copy || { echo "cp $$source $$copy" >&2; exit 1; }; \
	done
