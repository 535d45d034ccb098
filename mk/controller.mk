# The long-running controller (controller/, docs/controller.md) against the local stack.
# Included by the main Makefile, which defines PYTHON, VENV and the stack-up / collection-link targets.
CONTROLLER_STATE ?= $(CURDIR)/.stack/controller
CONTROLLER_METRICS_PORT ?= 9099
CONTROLLER_ARGS ?=
# every target cluster the stack runs, as --target-cluster NAME=KUBECONFIG
CONTROLLER_TARGET_ARGS = $$(for t in $${C5C3_TARGET_CLUSTERS:-}; do v=C5C3_KUBECONFIG_$$(echo $$t | tr a-z- A-Z_); \
  printf -- '--target-cluster %s=%s ' "$$t" "$${!v}"; done)

# These targets use the running stack as it is (make stack-up brings it up) and do not restart anything.
.PHONY: controller-stack-env
controller-stack-env:
	@test -f $(CURDIR)/.stack/env || { echo "the local stack is not up: run make stack-up first" >&2; exit 1; }

.PHONY: controller
controller: venv collection-link controller-stack-env  ## run the controller against the running local stack (metrics on :9099; Ctrl-C stops it)
	source $(CURDIR)/.stack/env && PYTHONPATH=$(CURDIR)/controller exec $(PYTHON) -m c5c3_orders_controller \
	  --kubeconfig "$$KUBECONFIG" $(CONTROLLER_TARGET_ARGS) --state-dir $(CONTROLLER_STATE) \
	  --metrics-port $(CONTROLLER_METRICS_PORT) --log-file $(CONTROLLER_STATE)/controller.log $(CONTROLLER_ARGS)

.PHONY: controller-figures
controller-figures: venv collection-link controller-stack-env  ## measure the controller's figures for docs/controller.md (~30 min)
	PYTHONPATH=$(CURDIR)/controller:$(CURDIR)/.collections $(PYTHON) controller/measure.py $(FIGURES_ARGS)
