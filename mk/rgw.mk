# The Ceph roots of the local stack's RGW part (stack/c5c3stack/cephroot.py): Debian's Ceph packages in
# mmdebstrap roots, built once per suite and pinned version into $(CACHE)/ceph/ (never into the host).
# C5C3_SKIP_PARTS=rgw (or rgw-reef) leaves them out, as it leaves the clusters out of `make stack-up`.
.PHONY: rgw-roots
rgw-roots: venv  ## build (or find cached) the Ceph roots the stack's RGW clusters run from
	PYTHONPATH=$(CURDIR)/stack $(PYTHON) -m c5c3stack.cephroot
# make deps builds them beside the Go builds (stack/c5c3stack/prepare.py).
