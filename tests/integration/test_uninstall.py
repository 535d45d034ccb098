"""Uninstall in its two modes (docs/install.md, "Uninstall"), with live orders of both kinds on the real stack: a
KeystoneUser (Keystone, K-ORC, ESO, OpenBao) and a BucketCredential (the Tentacle gateway), converged by passes.

- ``keep``: the install goes, every order's teardown finalizer is released, and every credential stays - the
  delivered Secrets unchanged, the password still authenticating at Keystone, the key still working at the
  gateway, every child in the ControlPlane namespace left. A later install adopts them: the next passes make both
  orders Ready again with the same password and key and no new generation.
- ``revoke``: every order is deleted and torn down before the install goes - the Keystone user, the key, the
  children, the backup and the delivered Secrets - and the tenant namespace is then deleted without hanging.

Both are limited to the test's namespace (``c5c3_install_uninstall_namespaces``), so the orders of tests running
beside it are untouched; the install's controller never runs here (the node is not used), so the passes stand for
it.
"""
import time

import pytest
from kubernetes.client.rest import ApiException

from objectstores import converged, tenant_namespace
from objectstores import reconcile_until as reconcile_storage_until
from orders import Stack, unique
from passes import ready, reconcile_until
from test_install import Install, remove_install_leftovers  # noqa: F401 - the install's playbook runs

FINALIZERS = {"c5c3.io/keystoneuser-teardown", "c5c3.io/bucketcredential-teardown"}


@pytest.fixture(scope="module")
def install(stack_env, kube, tmp_path_factory):
    inst = Install(stack_env["KUBECONFIG"], kube, tmp_path_factory.mktemp("uninstall"))
    yield inst
    try:
        inst.run(c5c3_install_state="absent")
    finally:
        remove_install_leftovers(inst.name, inst.namespace)


def _finalizers(obj):
    return set((obj or {}).get("metadata", {}).get("finalizers") or []) & FINALIZERS


def _uninstall(install, mode, ns):
    """The playbook's run; a failed run raises with its output (test_install.Play)."""
    return install.run(c5c3_install_state="absent", c5c3_install_uninstall=mode,
                       c5c3_install_uninstall_namespaces=[ns])


def test_keep_leaves_every_credential_for_a_later_install_and_revoke_takes_them_all(install, stack, storage):
    user, bucket_order = unique("keep-u"), "keep-b"
    with tenant_namespace(stack, storage, "uninst") as ns:
        bucket = f"{ns}-b"
        install.own_namespaces.add(ns)
        install.run()
        stack.create_order(ns, user)
        storage.create_credential(ns, bucket_order, bucket)
        reconcile_until(ready(ns, user), 240, "the KeystoneUser to go Ready", namespaces=[ns])
        reconcile_storage_until(converged("BucketCredential", ns, bucket_order), 240, "the BucketCredential to go Ready",
                                namespaces=[ns])
        delivered, key = stack.delivered(ns, user), storage.delivered_key(ns, bucket_order)
        children = stack.children(ns, user)
        bucket_children = storage.children(ns, bucket_order)
        generation = stack.order(ns, user)["status"]["passwordGeneration"]
        assert _finalizers(stack.order(ns, user)) and _finalizers(storage.get("BucketCredential", ns, bucket_order))

        # keep: the install goes; the orders hold no finalizer of ours; every credential stays and works
        _uninstall(install, "keep", ns)
        assert not install.exists(install.apps.read_namespaced_deployment, f"{install.name}-controller",
                                  install.namespace)
        assert not _finalizers(stack.order(ns, user)), stack.order(ns, user)["metadata"]
        assert not _finalizers(storage.get("BucketCredential", ns, bucket_order))
        assert stack.delivered(ns, user) == delivered and Stack.authenticates(delivered["clouds.yaml"])
        assert storage.delivered_key(ns, bucket_order) == key and storage.round_trip(storage.s3(key), bucket)
        assert stack.children(ns, user) == children and storage.children(ns, bucket_order) == bucket_children

        # a later install adopts them: Ready again, the same password and key, no new generation
        install.run()
        reconcile_until(ready(ns, user), 240, "the kept KeystoneUser to be adopted", namespaces=[ns])
        reconcile_storage_until(converged("BucketCredential", ns, bucket_order), 240,
                                "the kept BucketCredential to be adopted", namespaces=[ns])
        assert stack.delivered(ns, user) == delivered and storage.delivered_key(ns, bucket_order) == key
        assert stack.order(ns, user)["status"]["passwordGeneration"] == generation
        assert _finalizers(stack.order(ns, user)) and _finalizers(storage.get("BucketCredential", ns, bucket_order))

        # revoke: every order deleted and torn down before the install goes
        _uninstall(install, "revoke", ns)
        assert stack.order(ns, user) is None and storage.get("BucketCredential", ns, bucket_order) is None
        assert stack.children(ns, user) == [] and storage.children(ns, bucket_order) == []
        assert stack.delivered(ns, user) is None and storage.delivered(ns, bucket_order) is None
        assert not Stack.authenticates(delivered["clouds.yaml"]), "the Keystone user is gone"
        assert storage.rejected(key, bucket), "the key no longer works at the gateway"

    # tenant_namespace deleted the namespace on leaving: nothing held it
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            stack.core.read_namespace(ns)
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        time.sleep(2)
    pytest.fail(f"namespace {ns} still terminating after the uninstall: {stack.core.read_namespace(ns).status}")


def test_an_unknown_uninstall_mode_is_refused_before_anything_is_removed(install):
    install.run()
    with pytest.raises(AssertionError) as refused:
        install.run(c5c3_install_state="absent", c5c3_install_uninstall="purge")
    assert "c5c3_install_uninstall" in str(refused.value)
    assert install.exists(install.core.read_namespace, install.namespace), "nothing was removed"
