"""Version skew between the install role and the image (docs/install.md, "Version skew") on the stack's node: an
image whose tag names another version is refused before anything is applied, and a controller deployed by a role of
another version refuses to start, the install's wait naming why. The node, the image and the tenant are
tests/integration/test_incluster.py's fixtures (a module of their own here, so these installs run in another lane
than the in-cluster ones: tests/integration/lanes.py).
"""
import subprocess
import uuid

import pytest

from test_incluster import (  # noqa: F401 - fixtures by name
    VERSION_,
    InCluster,
    image,
    kubernetes_core_present,
    node,
    playbook,
    tenant,
    world,
)
from test_install import remove_install_leftovers


def test_an_image_of_another_version_is_refused_before_anything_is_applied(node, kube, tenant,
                                                                          kubernetes_core_present):
    """Version skew, detected by the role: the image's tag names another version, so nothing is applied."""
    skewed = InCluster(node, kube, tenant)
    with pytest.raises(AssertionError) as failed:
        skewed.install(c5c3_install_image="localhost/c5c3-orders:0.1.0")
    assert "version skew: the image localhost/c5c3-orders:0.1.0 is c5c3.orders 0.1.0" in str(failed.value)
    assert "nothing was applied" in str(failed.value)
    assert skewed.namespace not in [n.metadata.name for n in skewed.core.list_namespace().items]


def test_a_controller_deployed_by_a_role_of_another_version_refuses_to_start_and_the_install_says_why(
        node, image, kube, tenant, kubernetes_core_present):
    """Version skew, detected by the image: under a tag that names no version (``latest``, a branch) the role cannot
    judge it; the role says it is 0.1.0, the controller refuses to start, and the install's wait names the
    termination message (that an allowed skew only warns is a unit test: tests/unit/install/test_version_skew.py)."""
    by_tag = f"localhost/c5c3-orders:skew-{uuid.uuid4().hex[:6]}"  # the same image, under a tag of no version
    ctr = images_ctr(node)
    subprocess.run(ctr + ["tag", image, by_tag], check=True, capture_output=True, timeout=60)
    skewed = InCluster(node, kube, tenant)
    try:
        with pytest.raises(AssertionError) as failed:
            skewed.install(c5c3_install_mode="deployment", c5c3_install_image=by_tag,
                           c5c3_install_collection_version="0.1.0", c5c3_install_wait_timeout=30)
        output = str(failed.value)
        assert "c5c3.orders: the controller is not available" in output, output[-3000:]
        assert f"version skew: this image runs c5c3.orders {VERSION_}, the install role that deployed it is 0.1.0" \
            in output, output[-3000:]
    finally:
        try:
            playbook("install.yml", skewed.vars(c5c3_install_state="absent"), skewed.kubeconfig)
        finally:
            remove_install_leftovers(skewed.name, skewed.namespace)
            subprocess.run(ctr + ["rm", by_tag], capture_output=True, timeout=60)


def images_ctr(node):
    """``ctr images`` on the node's containerd, in the kubelet's namespace."""
    return [node["C5C3_NODE_CTR"], "--address", node["C5C3_NODE_CONTAINERD"], "-n", "k8s.io", "images"]
