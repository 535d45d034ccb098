# make faults: the fault matrix of the KeystoneUser and object-storage passes (tests/faults/, docs/testing.md
# "The fault matrix").
# Brings up its own stack in .stack-faults/ with every port moved by 1000 (the shared .stack/ is not touched),
# runs every row (real faults: etcd, Keystone, OpenBao, K-ORC, ESO and a target cluster stopped, APF 429s, 409s
# from another field manager, the pass SIGKILLed at every write point, the controller SIGKILLed; the Tentacle
# Ceph gateway frozen and killed before, and the pass SIGKILLed after, every gateway write of issuing a key,
# rotating and revoking a slot, a teardown, a migration and a root-key rotation), rewrites
# docs/reliability.md and brings its stack down again. FAULTS_ARGS passes options to tests/faults/run.py,
# e.g. make faults FAULTS_ARGS="--only 'keystone|etcd'", FAULTS_ARGS="--only '^gateway-'" or
# FAULTS_ARGS=--keep-stack.
# The main Makefile sets PYTHON (the test venv), deps and collection-link.
FAULTS_ARGS ?=

.PHONY: faults
faults: deps collection-link  ## the fault matrix on its own stack (about 90 min); rewrites docs/reliability.md
	nice -n 5 $(PYTHON) tests/faults/run.py $(FAULTS_ARGS)

.PHONY: faults-report
faults-report: venv  ## rewrite docs/reliability.md from the last make faults run (.stack-faults/results.json)
	$(PYTHON) tests/faults/run.py --report-only

.PHONY: faults-down
faults-down: venv  ## stop the fault matrix's stack (after FAULTS_ARGS=--keep-stack or an interrupted run)
	$(PYTHON) tests/faults/run.py --down
