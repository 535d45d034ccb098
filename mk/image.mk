# make image: the OCI image archive of the controller and the collection, .image/c5c3-orders-<version>.tar, built
# here as root without Docker or a registry (image/build.py; docs/install.md "The image"): a Debian bookworm root from
# mmdebstrap pinned by image/debian.lock, a venv with requirements/runtime.lock installed with
# `pip install --require-hashes`, the collection's own tarball and kubernetes.core installed with ansible-galaxy,
# layers written by umoci. The tarball is the execution environment's (make collection-build, mk/collections.mk):
# `ansible-galaxy collection build` of the files git would ship, so no ignored scratch folder of the checkout (a
# benchmark's .bench-*/ copy of the collection, say) reaches the image, as it does with make collection's build of
# the working folder. Reproducible (same inputs, same digest); the digest, size and the inputs'
# hashes go to .image/<version>.json. A second make image with unchanged inputs reuses the archive; every stage is
# cached under $(CACHE)/image/ by the hash of its inputs. IMAGE_REBUILD=1 builds every stage again, using no cache,
# and fails when the digest differs from the recorded one.
# The locks: make image-lock (pip-compile --generate-hashes, with the pip-tools of requirements/lock-tools.txt;
# IMAGE_LOCK_ARGS=--upgrade to move the pins) and make image-lock-debian (what the Debian mirror serves now).
# Included by the main Makefile, which sets CACHE, VENV, PYTHON, COLLECTION_VERSION (mk/collection.mk), EE_BUILD and
# collection-build (mk/collections.mk).
IMAGE_DIR         := $(CURDIR)/.image
IMAGE_ARCHIVE     := $(IMAGE_DIR)/c5c3-orders-$(COLLECTION_VERSION).tar
IMAGE_REBUILD     ?=
IMAGE_LOCK_ARGS   ?=
LOCK_TOOLS_HASH   := $(shell cat requirements/lock-tools.txt | sha256sum | cut -c1-12)
LOCK_VENV         ?= $(CACHE)/venv-lock-$(LOCK_TOOLS_HASH)
UMOCI_VERSION     := $(shell awk '$$1 == "github.com/opencontainers/umoci" {print $$2}' image/umoci/go.mod)
UMOCI             := $(CACHE)/bin/umoci-$(UMOCI_VERSION)/umoci
# The commit time, unless given: the mtime of the top layer and the image's creation time.
IMAGE_EPOCH        = $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),0)
PIP_COMPILE       := env -u PIP_FIND_LINKS CUSTOM_COMPILE_COMMAND="make image-lock" $(LOCK_VENV)/bin/pip-compile -q \
                     --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url $(IMAGE_LOCK_ARGS)

$(LOCK_VENV)/.complete: | requirements/lock-tools.txt
	python3 -m venv $(LOCK_VENV)
	env -u PIP_FIND_LINKS $(LOCK_VENV)/bin/pip install -q --require-hashes -r requirements/lock-tools.txt
	touch $@

.PHONY: lock-venv
lock-venv: $(LOCK_VENV)/.complete  ## the pinned venv of the lock tool (pip-tools, hash-checked)

# umoci's go.mod replaces a module, so `go install ...@version` refuses it: built from image/umoci/go.mod instead,
# cached by version like the stack's other Go builds (stack/build-binaries.sh).
$(UMOCI):
	mkdir -p $(dir $@)
	cd image/umoci && GOFLAGS=-buildvcs=false CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags="-s -w" \
	  -o $@.tmp github.com/opencontainers/umoci/cmd/umoci
	mv $@.tmp $@

.PHONY: umoci
umoci: $(UMOCI)  ## build umoci (image/umoci/go.mod) into the cache

.PHONY: image
image: collection-build lock-venv $(UMOCI)  ## the OCI image archive .image/c5c3-orders-<version>.tar (+ <version>.json)
	nice -n 10 $(PYTHON) image/build.py build --collection $(EE_BUILD)/collection/c5c3-orders.tar.gz \
	  --version $(COLLECTION_VERSION) \
	  --umoci $(UMOCI) --pip $(LOCK_VENV)/bin/pip --out $(IMAGE_DIR) --cache $(CACHE) \
	  --source-date-epoch $(IMAGE_EPOCH) $(if $(IMAGE_REBUILD),--rebuild)

.PHONY: image-lock
image-lock: lock-venv  ## pip-compile --generate-hashes: requirements/lock-tools.txt and requirements/runtime.lock
	$(PIP_COMPILE) --output-file=requirements/lock-tools.txt requirements/lock-tools.in
	$(PIP_COMPILE) --output-file=requirements/runtime.lock requirements/runtime-image.in

.PHONY: image-lock-debian
image-lock-debian: venv  ## pin the image's Debian packages to what the mirror serves now (image/debian.lock)
	nice -n 10 $(PYTHON) image/build.py lock-debian --cache $(CACHE)
