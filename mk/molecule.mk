# Molecule scenarios of the collection (extensions/molecule/, docs/molecule.md), run from the collection's root with
# the test venv's molecule and ansible-lint (pinned in requirements/test.txt). The scenarios use the checkout through
# ANSIBLE_COLLECTIONS_PATH (.collections link + .collections-deps, exported by the main Makefile); Galaxy is never
# asked. Included by the main Makefile (VENV, collection-link, collections-deps; controller-stack-env is in
# mk/controller.mk).
MOLECULE_ENV := NO_COLOR=1 ANSIBLE_NOCOLOR=1 PATH=$(VENV)/bin:$$PATH ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false

.PHONY: molecule
molecule: venv collection-link collections-deps controller-stack-env  ## molecule test -s default, then -s node (the image on the stack's node), against the running local stack
	$(MOLECULE_ENV) molecule reset -s default  # molecule keeps "prepared" per checkout path: always prepare again
	source $(CURDIR)/.stack/env && $(MOLECULE_ENV) molecule test -s default
	@# the node scenario: the image (built when .image/ lacks it) installed on the stack's node
	source $(CURDIR)/.stack/env; if echo " $${C5C3_SKIPPED_PARTS:-} " | grep -qw node; then \
	  echo "molecule node: skipped (the stack was brought up without its node)"; else \
	  [ -f $(IMAGE_ARCHIVE) ] || $(MAKE) --no-print-directory image; \
	  $(MOLECULE_ENV) molecule reset -s node && $(MOLECULE_ENV) molecule test -s node; fi

.PHONY: molecule-check
molecule-check: venv collection-link collections-deps  ## molecule syntax of every scenario and ansible-lint of scenarios, playbooks and roles (no cluster needed)
	$(MOLECULE_ENV) molecule syntax -s default
	$(MOLECULE_ENV) molecule syntax -s kind
	$(MOLECULE_ENV) molecule syntax -s node
	$(MOLECULE_ENV) ansible-lint extensions/molecule playbooks
