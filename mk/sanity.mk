# ansible-test sanity on the collection as shipped (plugins, roles, playbooks, meta, docs, changelogs).
# ansible-test wants the tree under ansible_collections/<ns>/<name> and bootstraps pip from a URL this
# network cannot reach; the stand-in below runs the pip wheel that ships with ensurepip instead.
SANITY_ROOT := $(CURDIR)/.sanity/ansible_collections/c5c3/orders
GET_PIP := $(HOME)/.ansible/test/cache/get_pip_24_2.py

$(GET_PIP): stack/get_pip_standin.py
	mkdir -p $(dir $@)
	cp $< $@

.PHONY: sanity
sanity: venv $(GET_PIP) typecheck  ## make typecheck, then ansible-test sanity (validate-modules, pylint, pep8, yamllint, changelog, ...)
	rm -rf $(CURDIR)/.sanity && mkdir -p $(SANITY_ROOT)
	git ls-files -co --exclude-standard plugins roles playbooks meta docs changelogs controller galaxy.yml README.md \
	  tests/config.yml tests/sanity | while IFS= read -r f; do if [ -e "$$f" ]; then printf '%s\n' "$$f"; fi; done \
	  | tar -cf - -T - | tar -xf - -C $(SANITY_ROOT)
	cd $(SANITY_ROOT) && git init -q . && printf "tests/output/\n" > .gitignore && git add -A \
	  && $(VENV)/bin/ansible-test sanity --venv --python 3.11 --color no
