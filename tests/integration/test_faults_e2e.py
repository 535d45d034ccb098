"""Faults of a single order end to end on the real stack (docs/reconciler.md, "What an order is refused, and why"): a
delivered Secret that lost its label, a stored spec that no longer parses, a re-pointed controlPlaneRef, times and
texts at the edge of their range, and the children's names (docs/reconciler.md, "Where the children live").

Each test says what the pass did before the change that fixed it (commit dac833c). Orders whose stored spec breaks a
CRD rule are written on the stack's target cluster (edge-1) through a CRD loosened for the moment of the write
(``edgecluster.loosened_crd``), as a cluster whose CRD predates the rule stores them.
"""
import base64
import hashlib
import re

from edgecluster import Edge, edge_namespace, loosened_crd
from kubewait import wait_for
from orders import CP_NS, KORC, Stack, unique
from passes import assigned_namespace, order_summary, ready, reconcile_until, run_pass

LABEL_NAME, LABEL_NAMESPACE = "c5c3.io/keystoneuser-name", "c5c3.io/keystoneuser-namespace"
FAR_FUTURE = "9999-12-31T23:59:59Z"
# 1.05 MB of a valid Go duration (0). Today's CRD admits it (its pattern and rules, no length bound); the test writes
# it through a loosened CRD all the same, so it still holds once the CRD bounds the text.
MEGABYTE_OF_ZERO = "0ns" * 350_000


def ready_on(namespace, name, cluster):
    """A reconcile_until check: the order on ``cluster`` is Ready and its last pass wrote nothing."""
    def check(result):
        entry = order_summary(result, namespace, name, cluster)
        return entry is not None and entry["ready"] and not entry["changed"]
    return check


def provisioned(stack, namespace, name, cluster="", pass_args=None):
    """Run passes until the order is Ready and its probe is gone; returns (userID, sorted child names)."""
    args = dict(pass_args or {}, orders=[f"{namespace}/{name}"])
    reconcile_until(ready_on(namespace, name, cluster), 180, f"{namespace}/{name} to become Ready", **args)
    base = stack.base_name(namespace, name, cluster)
    expected = sorted([f"{base}-user", f"{base}-backup", f"{base}-password-v1", f"{base}-source"])
    children = wait_for(lambda: sorted(stack.children(namespace, name, cluster)) == expected and expected, 30,
                        what="the probe to go")
    user_ids = stack.keystone_users_named(name)
    assert len(user_ids) == 1, f"{len(user_ids)} Keystone users named {name}"
    return user_ids[0], children


def assert_torn_down(stack, namespace, name, cluster, clouds_yaml):
    """The Keystone user, every password Secret, the backup and every other child are gone."""
    assert stack.keystone_users_named(name) == [], "the Keystone user stayed"
    assert not stack.authenticates(clouds_yaml)
    assert stack.password_secrets(namespace, name, cluster) == {}, "a password Secret stayed"
    assert not stack.backup_exists(stack.backup_path(namespace, name, cluster)), "the OpenBao backup stayed"
    assert stack.children(namespace, name, cluster) == [], "a child stayed"


def edge_delivered(edge, namespace, name):
    secret = edge.delivered_secret(namespace, name)
    return {k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()} if secret else None


# -- ownership by uid ------------------------------------------------------------------------------------

def test_an_owned_delivered_secret_without_its_label_is_repaired(stack):
    """Before: the delivered Secret was recognised by its c5c3.io/keystoneuser-name label, so one whose label was
    removed was foreign: DeliveryRefused on every pass, never repaired, and after the next rotation its consumer
    held a password Keystone no longer accepted. Now ownership is the controller owner reference (uid): the pass's
    Create meets 409, reads the Secret back, sees it owned and repairs it (labels and keys)."""
    with assigned_namespace(stack, "unlabelled") as ns:
        name = unique("svc")
        ref = [f"{ns}/{name}"]
        stack.create_order(ns, name)
        provisioned(stack, ns, name)
        order_uid = stack.order(ns, name)["metadata"]["uid"]
        secret_name = f"{name}-credentials"

        def never_refused(_result):
            """Read from the order itself: what its tenant sees."""
            cond = Stack.condition(stack.order(ns, name), "DeliveryReady")
            assert cond.get("reason") != "DeliveryRefused", "an owned Secret read as foreign"

        def strip_label(**data):
            stack.core.patch_namespaced_secret(secret_name, ns, {"metadata": {"labels": {LABEL_NAME: None}},
                                                                  "data": data})
            assert LABEL_NAME not in (stack.core.read_namespaced_secret(secret_name, ns).metadata.labels or {})

        def assert_repaired(generation):
            secret = stack.core.read_namespaced_secret(secret_name, ns)
            labels = secret.metadata.labels or {}
            assert (labels.get(LABEL_NAME), labels.get(LABEL_NAMESPACE)) == (name, ns), "labels not restored"
            assert [(o.uid, o.controller) for o in secret.metadata.owner_references or []] == [(order_uid, True)]
            delivered = stack.delivered(ns, name)
            assert delivered["password"] == stack.password_secrets(ns, name)[generation], "password not current"
            assert stack.authenticates(delivered["clouds.yaml"])
            return delivered

        # the label removed and the password edited: both repaired
        strip_label(password=base64.b64encode(b"stale").decode())
        reconcile_until(ready(ns, name), 90, "the unlabelled Secret to be repaired", orders=ref, each=never_refused)
        first = assert_repaired(1)

        # the label removed, then a rotation: the consumer gets the new password
        strip_label()
        stack.patch_order(ns, name, {"spec": {"passwordGeneration": 2}})
        reconcile_until(lambda r: ready(ns, name)(r) and stack.order(ns, name)["status"]["passwordGeneration"] == 2,
                        120, "the rotation to reach the unlabelled Secret", orders=ref, each=never_refused)
        second = assert_repaired(2)
        assert second["password"] != first["password"] and not stack.authenticates(first["clouds.yaml"])


# -- the stored spec and the admission record -------------------------------------------------------------

class FrozenEdgeOrder:
    """An order on the target cluster, Ready, whose spec a test then breaks: what it had, and the checks that the
    frozen order keeps it and that its deletion removes it."""

    def __init__(self, stack, edge, namespace):
        self.stack, self.edge, self.ns = stack, edge, namespace
        self.name = unique("svc")
        self.ref = [f"{namespace}/{self.name}"]
        edge.create_order(namespace, self.name)
        _, self.children = provisioned(stack, namespace, self.name, edge.name, edge.pass_args())
        self.delivered = edge_delivered(edge, namespace, self.name)

    def refused(self, *phrases):
        """A pass refuses it (InvalidSpec, no action), saying each phrase; it keeps every child and its user."""
        entry = order_summary(run_pass(orders=self.ref, **self.edge.pass_args()), self.ns, self.name, self.edge.name)
        assert entry["reasons"]["UserReady"] == "InvalidSpec" and entry["actions"] == [], entry
        order = self.edge.order(self.ns, self.name)
        message = Stack.condition(order, "UserReady")["message"]
        assert all(phrase in message for phrase in phrases), message
        assert order["metadata"]["finalizers"] == ["c5c3.io/keystoneuser-teardown"]
        assert sorted(self.stack.children(self.ns, self.name, self.edge.name)) == self.children, "children moved"
        assert self.stack.authenticates(self.delivered["clouds.yaml"])

    def deleted(self, what):
        """Deleted, it is released by passes and nothing of it stays."""
        self.edge.delete_order(self.ns, self.name)
        reconcile_until(lambda r: self.edge.order(self.ns, self.name) is None, 180, what, orders=self.ref,
                        **self.edge.pass_args())
        assert_torn_down(self.stack, self.ns, self.name, self.edge.name, self.delivered["clouds.yaml"])


def test_an_order_whose_stored_spec_no_longer_parses_is_torn_down_when_deleted(stack, stack_env, target_kube):
    """Before: an order whose stored spec did not parse read InvalidSpec and was frozen, and when it was deleted
    with our finalizer the teardown parsed the spec again, failed the same way and never released it (the Keystone
    user, password Secrets and backup stayed too). Now the teardown runs on the admission record."""
    edge = Edge(stack, stack_env, target_kube)
    with edge_namespace(stack, edge, "unparsed") as ns:
        order = FrozenEdgeOrder(stack, edge, ns)
        assert edge.order(ns, order.name)["status"]["admittedAs"] == {
            "controlPlaneRef": {"name": "cp", "namespace": CP_NS}, "userName": order.name, "cluster": edge.name}
        # the cluster's CRD lacks the rules for the rest of the order's life: with them back, the API server would
        # refuse every write to the order (even the finalizer's removal), as the stored interval fails their CEL
        with loosened_crd(edge, ns):
            edge.patch_order(ns, order.name, {"spec": {"rotation": {"interval": "fortnight"}}})
            order.refused("cannot be read", "rotation.interval")
            order.deleted("the unparsable order to be released")


def test_a_changed_control_plane_ref_is_refused_and_the_teardown_follows_the_record(stack, stack_env, target_kube):
    """Before: on a cluster without the immutability rule the pass acted on the current controlPlaneRef: it looked
    for the children under the new ControlPlane, found none, released the finalizer and stranded the Keystone user,
    the password Secrets and the OpenBao backup. Now the order is refused (InvalidSpec, naming both references) and
    its teardown removes everything the record names."""
    edge = Edge(stack, stack_env, target_kube)
    with edge_namespace(stack, edge, "repointed") as ns:
        order = FrozenEdgeOrder(stack, edge, ns)
        with loosened_crd(edge, ns):  # the write a CRD without the rule admits; the real one ratchets it afterwards
            edge.patch_order(ns, order.name, {"spec": {"controlPlaneRef": {"name": "cp-elsewhere",
                                                                           "namespace": CP_NS}}})
        assert edge.order(ns, order.name)["spec"]["controlPlaneRef"]["name"] == "cp-elsewhere"
        for _ in range(2):
            order.refused(f"{CP_NS}/cp-elsewhere", f"admitted for ControlPlane {CP_NS}/cp")
        order.deleted("the re-pointed order's teardown")


# -- bounded times and texts ---------------------------------------------------------------------------------

def test_a_far_future_rotation_time_and_a_megabyte_interval_do_not_break_a_pass(stack, stack_env, target_kube):
    """Before: status.lastPasswordRotation 9999-12-31T23:59:59Z plus the interval overflowed (the module failed,
    for every order of the pass), and a megabyte of "0ns" in spec.rotation.interval was parsed in full (over a
    second per order per pass). Now the sum saturates and a text longer than 64 characters is refused unread
    (InvalidSpec); the pass returns a decision for each order."""
    edge = Edge(stack, stack_env, target_kube)
    with edge_namespace(stack, edge, "bounds") as ns:
        args = edge.pass_args(namespaces=[ns])
        far, big = unique("far"), unique("big")
        edge.create_order(ns, far)
        provisioned(stack, ns, far, edge.name, edge.pass_args())
        edge.patch_status(ns, far, {"status": {"lastPasswordRotation": FAR_FUTURE}})
        assert edge.order(ns, far)["status"]["lastPasswordRotation"] == FAR_FUTURE
        with loosened_crd(edge, ns):
            edge.create_order(ns, big, rotation={"interval": MEGABYTE_OF_ZERO})
        assert len(edge.order(ns, big)["spec"]["rotation"]["interval"]) == len(MEGABYTE_OF_ZERO)

        for _ in range(2):
            result = run_pass(**args)
            decided = {n: order_summary(result, ns, n, edge.name) for n in (far, big)}
            assert all(entry is not None and "error" not in entry for entry in decided.values()), decided
            assert decided[big]["reasons"]["UserReady"] == "InvalidSpec" and decided[big]["actions"] == []
            assert decided[far]["reasons"]["UserReady"] == "UserProvisioned", decided[far]["reasons"]
        message = Stack.condition(edge.order(ns, big), "UserReady")["message"]
        assert "at most 64 characters" in message and MEGABYTE_OF_ZERO[:64] not in message
        assert edge_delivered(edge, ns, far) is not None


# -- child names ------------------------------------------------------------------------------------------

def test_child_names_follow_the_spec_pattern(stack):
    """Before: the managed User was <name>-<hash>-user and the probe <name>-<hash>-user-probe, which an operator
    following the spec would not recognise. Now every child is <name>-<8 hex>-user-<discriminator>: the User
    ...-user-user, the probe ...-user-user-probe, the password Secret ...-user-password-v1, the source Secret
    ...-user-source and the PushSecret ...-user-backup, the hash covering <cluster>/<namespace>/<name>."""
    with assigned_namespace(stack, "names") as ns:
        name = unique("svc")
        digest = hashlib.sha256(f"/{ns}/{name}".encode()).hexdigest()[:8]  # the spec's rule, computed here
        base = f"{name}-{digest}-user"
        selector = f"{LABEL_NAME}={name},{LABEL_NAMESPACE}={ns},c5c3.io/keystoneuser-cluster="

        def korc_users():
            return sorted(u["metadata"]["name"] for u in stack.co.list_namespaced_custom_object(
                *KORC, CP_NS, "users", label_selector=selector)["items"])

        stack.create_order(ns, name)
        run_pass(orders=[f"{ns}/{name}"])  # the first pass probes for an existing user
        assert korc_users() == [f"{base}-user-probe"], korc_users()

        provisioned(stack, ns, name)  # waits for exactly these four children (the probe gone)
        assert korc_users() == [f"{base}-user"]
        pushes = stack.co.list_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                        label_selector=selector)["items"]
        assert [p["metadata"]["name"] for p in pushes] == [f"{base}-backup"]
        secrets = sorted(s.metadata.name for s in stack.core.list_namespaced_secret(
            CP_NS, label_selector=selector).items)
        assert secrets == [f"{base}-password-v1", f"{base}-source"]
        assert all(re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{8}}-user-(user|password-v1|source|backup)", child)
                   for child in korc_users() + secrets + [f"{base}-backup"])
        assert stack.backup(f"openstack/keystone/{CP_NS}/{base}/service-accounts/credentials")["password"] == \
            stack.delivered(ns, name)["password"]
