# The hash locks of every venv (docs/install.md, "Supply chain"): requirements/<venv>.txt holds the pins people edit,
# requirements/<venv>.lock what pip-compile made of it (every transitive dependency, pip and setuptools included, each
# with its hashes), and every venv is installed from its lock with `pip install --require-hashes`.
#   make locks        compile every lock again (network; LOCK_ARGS=--upgrade also moves the transitive pins)
#   make lock-check   fail when a pin file and its lock disagree (no network; the first step of make test)
# The image's locks (requirements/runtime.lock, requirements/lock-tools.txt) are made by make image-lock (mk/image.mk).
LOCKED_VENVS := test bench typecheck docs server

.PHONY: locks
locks: lock-venv  ## compile every venv's hash lock again (requirements/<venv>.lock), then the image's (image-lock)
	for v in $(LOCKED_VENVS); do \
	  env -u PIP_FIND_LINKS CUSTOM_COMPILE_COMMAND="make locks" $(LOCK_VENV)/bin/pip-compile -q --generate-hashes \
	    --allow-unsafe --strip-extras --no-emit-index-url $(LOCK_ARGS) \
	    --output-file=requirements/$$v.lock requirements/$$v.txt; \
	done
	$(MAKE) image-lock IMAGE_LOCK_ARGS="$(LOCK_ARGS)"
	python3 tests/tools/check_locks.py

.PHONY: lock-check
lock-check:  ## fail when a pin file and its hash lock disagree (no network)
	python3 tests/tools/check_locks.py
