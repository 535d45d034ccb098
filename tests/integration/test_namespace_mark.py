"""The platform's allowlist in the passes (docs/install.md, "The allowlist of namespaces"): given the module option
``tenant_namespace_selector``, an order in a namespace the ControlPlane assigns but the platform has not marked is
frozen with ``NamespaceNotMarked`` on both conditions, the message naming the labels, and nothing is written for it
but its status; once the platform marks the namespace, the next pass admits it. An order in a marked namespace goes
Ready as without the option. Both passes: KeystoneUser, and BucketCredential on the stack's Tentacle gateway (where
an unmarked tenant gets no ObjectStoreAccount either).
"""
from objectstores import converged, entry, tenant_namespace
from objectstores import reconcile_until as reconcile_storage_until
from objectstores import run_pass as run_storage_pass
from orders import CP_NS, TENANT_LABELS, Stack, unique
from passes import assigned_namespace, order_summary, ready, reconcile_until, run_pass

MARK = dict(TENANT_LABELS)
MARK_TEXT = ", ".join(f"{k}={v}" for k, v in sorted(MARK.items()))
CREDENTIAL = "BucketCredential"


def unmark(stack, namespace):
    stack.core.patch_namespace(namespace, {"metadata": {"labels": {key: None for key in MARK}}})


def mark(stack, namespace):
    stack.core.patch_namespace(namespace, {"metadata": {"labels": dict(MARK)}})


def assert_frozen(conditions, namespace, message_of):
    for kind in conditions:
        condition = message_of(kind)
        assert condition.get("status") == "False" and condition.get("reason") == "NamespaceNotMarked", (kind, condition)
        assert MARK_TEXT in condition["message"] and repr(namespace) in condition["message"], condition
        assert f"{CP_NS}/" in condition["message"] and "frozen" in condition["message"], condition


def test_a_keystoneuser_in_an_unmarked_assigned_namespace_is_frozen_until_the_platform_marks_it(stack):
    name = unique("o")
    with assigned_namespace(stack, "mark-ku") as ns:
        unmark(stack, ns)
        stack.create_order(ns, name)
        args = dict(namespaces=[ns], tenant_namespace_selector=MARK)

        def frozen(result):
            return (order_summary(result, ns, name) or {}).get("reasons", {}).get("UserReady") == "NamespaceNotMarked"
        reconcile_until(frozen, 60, "the order to be refused as not marked", **args)
        order = stack.order(ns, name)
        assert_frozen(("UserReady", "DeliveryReady"), ns, lambda kind: Stack.condition(order, kind))
        assert Stack.condition(order, "Ready").get("status") == "False"
        assert not order["metadata"].get("finalizers"), "a frozen order gets no finalizer"
        assert stack.children(ns, name) == [], "nothing is made for it in the ControlPlane namespace"
        assert stack.delivered(ns, name) is None
        again = run_pass(**args)
        assert again["api_writes"] == 0 and not again["changed"], again  # converged: the status stays as written
        assert again["unreadable"] == []

        mark(stack, ns)
        reconcile_until(ready(ns, name), 120, "the marked order to go Ready", **args)
        assert stack.delivered(ns, name) is not None


def test_a_keystoneuser_in_a_marked_namespace_goes_ready_with_the_option(stack):
    name = unique("o")
    with assigned_namespace(stack, "mark-ok") as ns:
        stack.create_order(ns, name)
        reconcile_until(ready(ns, name), 120, "the order to go Ready", namespaces=[ns], tenant_namespace_selector=MARK)
        quiet = run_pass(namespaces=[ns], tenant_namespace_selector=MARK)
        assert quiet["api_writes"] == 0 and quiet["unreadable"] == [], quiet


def test_a_bucketcredential_in_an_unmarked_assigned_namespace_gets_no_account_until_marked(stack, storage):
    name, bucket = "data", unique("mark-bucket")
    with tenant_namespace(stack, storage, "mark-os") as ns:
        unmark(stack, ns)
        storage.create_credential(ns, name, bucket)
        args = dict(namespaces=[ns], tenant_namespace_selector=MARK)

        def frozen(result):
            found = entry(result, CREDENTIAL, ns, name) or {}
            return found.get("reasons", {}).get("CredentialReady") == "NamespaceNotMarked"
        reconcile_storage_until(frozen, 60, "the credential to be refused as not marked", **args)
        order = storage.get(CREDENTIAL, ns, name)
        assert_frozen(("CredentialReady", "DeliveryReady"), ns, lambda kind: storage.condition(order, kind))
        assert not order["metadata"].get("finalizers")
        assert storage.account_of(ns) is None, "an unmarked tenant gets no ObjectStoreAccount"
        assert storage.delivered(ns, name) is None
        for _ in range(3):  # a store probe that comes due writes the store's status: then the next pass
            again = run_storage_pass(**args)
            if again["api_writes"] == 0:
                break
        assert again["api_writes"] == 0 and again["gateway_writes"] == 0 and again["unreadable"] == [], again

        mark(stack, ns)
        reconcile_storage_until(converged(CREDENTIAL, ns, name), 180, "the marked credential to go Ready", **args)
        assert storage.account_of(ns) is not None and storage.delivered(ns, name) is not None
