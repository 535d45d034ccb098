"""Tenant isolation end to end on the real stack (docs/reconciler.md, "What an order is refused, and why"): no order
reaches a platform account, another tenant's Keystone user, the ControlPlane's own namespaces, a redirected auth_url,
a store other than the ControlPlane namespace's own SecretStore, or a condition that carries a password.

Each test says what the pass did before the change that fixed it (commit dac833c). The real kube-apiserver, Keystone
on MariaDB, OpenBao, K-ORC and ESO answer; a second ControlPlane (``cp2``, in a namespace of its own, made the way
the stack's fixtures make ``cp``) serves the tests that must change a ControlPlane without disturbing the shared one.
"""
import base64
import contextlib
import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from edgecluster import Edge, edge_namespace, loosened_crd
from kubewait import wait_for
from orders import CP_NAME, CP_NS, GROUP, KORC, VERSION, unique
from passes import assigned_namespace, drain_namespace, order_summary, ready, reconcile_until, run_pass

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

FINALIZER = "c5c3.io/keystoneuser-teardown"
ANNOTATION = "c5c3.io/keystone-in-cluster-url"
NOWHERE = "http://127.0.0.1:9/v3"  # what the annotation asks for: not Keystone
REFUSED_NAMES = ["barbican ", " placement", "cinder\t"]


def keystone_url():
    return json.loads(os.environ["C5C3_KEYSTONE_INTERNAL_URLS"])[f"{CP_NS}/{CP_NAME}"]


def auth_url_of(delivered):
    return next(iter(yaml.safe_load(delivered["clouds.yaml"])["clouds"].values()))["auth"]["auth_url"]


def conditions(order):
    return {c["type"]: c for c in (order.get("status") or {}).get("conditions") or []}


def assert_frozen_by(order, reason, *phrases):
    """Both sub-conditions False with ``reason``, each message saying every phrase; no finalizer installed."""
    found = conditions(order)
    for kind in ("UserReady", "DeliveryReady"):
        cond = found.get(kind, {})
        assert (cond.get("status"), cond.get("reason")) == ("False", reason), (kind, cond.get("reason"))
        for phrase in phrases:
            assert phrase in cond["message"], (kind, phrase, cond["message"])
    assert FINALIZER not in (order["metadata"].get("finalizers") or [])


def release(stack, namespace, name, **pass_args):
    """Delete an order; one that got our finalizer (a failing test) is torn down by passes."""
    stack.delete_order(namespace, name)
    if stack.order(namespace, name) is not None:
        reconcile_until(lambda r: stack.order(namespace, name) is None, 120, f"{namespace}/{name} to go",
                        orders=[f"{namespace}/{name}"], **pass_args)


# -- reserved names ------------------------------------------------------------------------------------

def test_reserved_names_in_disguise_are_refused_and_never_reach_keystone(stack):
    """Before: "barbican ", " placement" and "cinder\\t" (on a CRD without the pattern) and "hypervißor-operator"
    became Ready, and Keystone held users barbican, placement, cinder and hypervißor-operator (Keystone strips the
    name; MariaDB's collation equates ß with s). Now the CRD refuses the first three at admission, and the pass
    refuses the fourth as a built-in service account (ServiceAccountCollision) before anything is created."""
    with assigned_namespace(stack, "reserved") as ns:
        for user_name in REFUSED_NAMES:
            with pytest.raises(ApiException) as refused:
                stack.create_order(ns, unique("ws"), userName=user_name)
            assert refused.value.status == 422 and "spec.userName" in refused.value.body, repr(user_name)

        name = unique("hv")
        stack.create_order(ns, name, userName="hypervißor-operator")
        for _ in range(2):  # refused on every pass, not only the first
            entry = order_summary(run_pass(orders=[f"{ns}/{name}"]), ns, name)
            assert entry["reasons"]["UserReady"] == "ServiceAccountCollision", entry["reasons"]
        cond = stack.condition(stack.order(ns, name), "UserReady")
        assert (cond["status"], cond["reason"]) == ("False", "ServiceAccountCollision")
        assert "reserved" in cond["message"]
        assert stack.children(ns, name) == [] and stack.delivered(ns, name) is None
        for probe in ("hypervißor-operator", "hypervisor-operator"):
            assert stack.keystone_users_named(probe) == [], probe


def test_names_with_surrounding_whitespace_on_a_crd_without_the_pattern_never_reach_keystone(stack, stack_env,
                                                                                            target_kube):
    """A target cluster whose CRD predates the pattern stores "barbican " as written. Before, the pass provisioned
    it and Keystone stored user "barbican". Now the parser refuses it (InvalidSpec) and nothing is created."""
    edge = Edge(stack, stack_env, target_kube)
    with edge_namespace(stack, edge, "reserved-edge") as ns:
        names = {user_name: unique("ws") for user_name in REFUSED_NAMES}
        with loosened_crd(edge, ns):
            for user_name, name in names.items():
                edge.create_order(ns, name, userName=user_name)
        result = run_pass(**edge.pass_args(namespaces=[ns]))
        for user_name, name in names.items():
            entry = order_summary(result, ns, name, edge.name)
            assert entry is not None and entry["reasons"]["UserReady"] == "InvalidSpec", repr(user_name)
            assert entry["actions"] == [], repr(user_name)
            assert_frozen_by(edge.order(ns, name), "InvalidSpec", "whitespace")
            assert stack.children(ns, name, edge.name) == [], repr(user_name)
            assert stack.keystone_users_named(user_name.strip()) == [], repr(user_name)


# -- one owner per Keystone user ------------------------------------------------------------------------

def test_names_that_fold_alike_in_two_tenants_have_one_owner(stack):
    """Before: raceX in one tenant and RACEX in another, reconciled in the same pass, both ended
    UserReady=True/UserProvisioned on one Keystone user (each rotation broke the other; either teardown deleted it
    under the other). Now the older order (creationTimestamp, then uid) provisions, the other reports
    ServiceAccountCollision without naming the other tenant and never touches the user, in this pass and later."""
    stem = unique("race").replace("-", "")
    with assigned_namespace(stack, "tenant-a") as ns_a, assigned_namespace(stack, "tenant-b") as ns_b:
        alpha, beta = unique("alpha"), unique("beta")
        stack.create_order(ns_a, alpha, userName=f"{stem}x")
        stack.create_order(ns_b, beta, userName=f"{stem}X".upper())
        ranked = sorted([(ns_a, alpha), (ns_b, beta)], key=lambda ref: (
            stack.order(*ref)["metadata"]["creationTimestamp"], stack.order(*ref)["metadata"]["uid"]))
        (win_ns, winner), (lose_ns, loser) = ranked

        def one_owner(result):
            assert stack.children(lose_ns, loser) == [], "the later order touched the user"
            entry = order_summary(result, lose_ns, loser)
            assert entry["reasons"].get("UserReady") == "ServiceAccountCollision", entry["reasons"]

        reconcile_until(ready(win_ns, winner), 180, "the older order to become Ready", namespaces=[ns_a, ns_b],
                        each=one_owner)
        user_id = stack.order(win_ns, winner)["status"]["userID"]
        assert stack.keystone_users_named(f"{stem}x") == [user_id]
        cond = stack.condition(stack.order(lose_ns, loser), "UserReady")
        assert (cond["status"], cond["reason"]) == ("False", "ServiceAccountCollision")
        assert win_ns not in cond["message"] and winner not in cond["message"], "names the other tenant"
        assert stack.delivered(lose_ns, loser) is None

        # across passes: a pass limited to the later order (it sees only its own children) still refuses it, and
        # an order created after the owner is Ready is refused the same way
        gamma = unique("gamma")
        stack.create_order(lose_ns, gamma, userName=f"{stem[0].upper()}{stem[1:]}x")
        for ref in ((lose_ns, loser), (lose_ns, gamma)):
            entry = order_summary(run_pass(orders=["/".join(ref)]), *ref)
            assert entry["reasons"]["UserReady"] == "ServiceAccountCollision", (ref, entry["reasons"])
            assert entry["actions"] == [] or all("finalizer" in a for a in entry["actions"]), entry["actions"]
            assert stack.children(*ref) == []

        # the refused orders' teardown leaves the owner's user alone
        for ref in ((lose_ns, loser), (lose_ns, gamma)):
            release(stack, *ref)
        assert stack.keystone_users_named(f"{stem}x") == [user_id]
        assert stack.authenticates(stack.delivered(win_ns, winner)["clouds.yaml"])


# -- the ControlPlane's own namespaces ---------------------------------------------------------------------

def test_control_plane_namespace_admits_no_order_even_when_listed(stack):
    """Before: listing the ControlPlane's own namespace in spec.namespaceAssignments admitted an order there, which
    went Ready beside the admin credential. Now it is refused (NamespaceNotAssigned, frozen) listed or not."""
    entry = {"namespace": CP_NS}
    listed_before = entry in stack.assignments()
    name = unique("inside")
    stack.assign(CP_NS)
    try:
        stack.create_order(CP_NS, name)
        for _ in range(2):
            result = run_pass(orders=[f"{CP_NS}/{name}"])
            assert order_summary(result, CP_NS, name)["actions"] == []
        assert_frozen_by(stack.order(CP_NS, name), "NamespaceNotAssigned", "admits no order",
                         "spec.namespaceAssignments lists it or not")
        assert stack.children(CP_NS, name) == [] and stack.delivered(CP_NS, name) is None
        assert stack.keystone_users_named(name) == []
    finally:
        try:
            release(stack, CP_NS, name)
        finally:
            if not listed_before:
                stack.withdraw(CP_NS)
    assert (entry in stack.assignments()) == listed_before


# -- a second ControlPlane ----------------------------------------------------------------------------------

class SecondControlPlane:
    """ControlPlane ``cp2`` in a namespace of its own, made as stack/c5c3stack/fixtures.py makes ``cp``: the admin
    clouds Secret (a copy of cp's), the admin Domain import, a SecretStore with an OpenBao token confined to the
    namespace's path prefix, AdminCredentialReady. Its assignments are its own, so tests may edit it freely."""

    name = "cp2"

    def __init__(self, stack):
        self.stack = stack
        self.co = stack.co
        self.core = stack.core
        self.namespace = unique("cp2")
        self.policy = f"eso-test-{self.namespace}"
        self.token_accessor = None

    @property
    def ref(self):
        return {"name": self.name, "namespace": self.namespace}

    @property
    def key(self):
        return f"{self.namespace}/{self.name}"

    def create(self):
        ns = self.namespace
        self.core.create_namespace({"metadata": {"name": ns}})
        admin = self.core.read_namespaced_secret(f"{CP_NAME}-admin-password-cloud", CP_NS)
        self.core.create_namespaced_secret(ns, {"metadata": {"name": f"{self.name}-admin-password-cloud"},
                                                "type": "Opaque", "data": admin.data})
        bao = self.stack.bao
        caps = '["create", "read", "update", "delete", "list"]'
        bao.sys.create_or_update_policy(self.policy, "".join(
            f'path "kv-v2/{kind}/openstack/keystone/{ns}/*" {{ capabilities = {caps} }}\n'
            for kind in ("data", "metadata")))
        auth = bao.auth.token.create_orphan(policies=[self.policy], ttl="2h")["auth"]
        self.token_accessor = auth["accessor"]
        self.core.create_namespaced_secret(ns, {"metadata": {"name": "openbao-tenant-token"}, "type": "Opaque",
                                                "stringData": {"token": auth["client_token"]}})
        self.co.create_namespaced_custom_object("external-secrets.io", "v1", ns, "secretstores", {
            "apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
            "metadata": {"name": "openbao-tenant-store", "namespace": ns},
            "spec": {"provider": {"vault": {"server": self.stack.env["BAO_ADDR"], "path": "kv-v2", "version": "v2",
                                            "auth": {"tokenSecretRef": {"name": "openbao-tenant-token",
                                                                        "key": "token"}}}}}})
        self.co.create_namespaced_custom_object(*KORC, ns, "domains", {
            "apiVersion": "/".join(KORC), "kind": "Domain",
            "metadata": {"name": f"{self.name}-domain-default", "namespace": ns},
            "spec": {"cloudCredentialsRef": {"secretName": f"{self.name}-admin-password-cloud", "cloudName": "admin"},
                     "managementPolicy": "unmanaged", "import": {"filter": {"name": "Default"}}}})
        self.co.create_namespaced_custom_object(GROUP, VERSION, ns, "controlplanes", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "ControlPlane",
            "metadata": {"name": self.name, "namespace": ns, "annotations": {ANNOTATION: NOWHERE}},
            "spec": {"openStackRelease": "2025.2", "region": "RegionOne",
                     "korc": {"adminCredential": {
                         "userName": "admin", "domainName": "Default", "projectName": "admin",
                         "cloudCredentialsRef": {"cloudName": "admin",
                                                 "secretName": f"{self.name}-admin-password-cloud"}}},
                     "services": {"keystone": {"mode": "Managed", "publicEndpoint": keystone_url()}},
                     "namespaceAssignments": []}})
        self.co.patch_namespaced_custom_object_status(GROUP, VERSION, ns, "controlplanes", self.name, {
            "status": {"conditions": [{"type": "AdminCredentialReady", "status": "True",
                                       "reason": "AdminCredentialReady", "message": "test fixture",
                                       "lastTransitionTime": "2025-01-01T00:00:00Z"}]}})
        wait_for(lambda: self._true("external-secrets.io", "v1", "secretstores", "openbao-tenant-store", "Ready"),
                 90, what="cp2's SecretStore to be Ready")
        wait_for(lambda: self._true(*KORC, "domains", f"{self.name}-domain-default", "Available"), 90,
                 what="cp2's Domain import to be Available")

    def _true(self, group, version, plural, name, kind):
        obj = self.co.get_namespaced_custom_object(group, version, self.namespace, plural, name)
        return any(c["type"] == kind and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions", []))

    def delete(self):
        try:
            self.core.delete_namespace(self.namespace)
        finally:
            if self.token_accessor:
                self.stack.bao.auth.token.revoke_accessor(self.token_accessor)
            self.stack.bao.sys.delete_policy(self.policy)

    def patch_spec(self, spec):
        self.co.patch_namespaced_custom_object(GROUP, VERSION, self.namespace, "controlplanes", self.name,
                                               {"spec": spec})

    def edit_assignments(self, edit):
        cp = self.co.get_namespaced_custom_object(GROUP, VERSION, self.namespace, "controlplanes", self.name)
        self.patch_spec({"namespaceAssignments": edit(list(cp["spec"].get("namespaceAssignments") or []))})

    def children(self, namespace, name):
        """Every child of an order of this ControlPlane (in its namespace), by name."""
        selector = f"c5c3.io/keystoneuser-name={name},c5c3.io/keystoneuser-namespace={namespace}"
        found = [u["metadata"]["name"] for u in self.co.list_namespaced_custom_object(
            *KORC, self.namespace, "users", label_selector=selector)["items"]]
        found += [p["metadata"]["name"] for p in self.co.list_namespaced_custom_object(
            "external-secrets.io", "v1alpha1", self.namespace, "pushsecrets", label_selector=selector)["items"]]
        found += [s.metadata.name for s in self.core.list_namespaced_secret(self.namespace,
                                                                            label_selector=selector).items]
        return found

    def backup_path(self, namespace, name):
        return (f"openstack/keystone/{self.namespace}/{self.stack.base_name(namespace, name)}"
                "/service-accounts/credentials")

    @contextlib.contextmanager
    def tenant(self, prefix):
        """A fresh namespace this ControlPlane assigns on the management cluster; drained afterwards."""
        ns = unique(prefix)
        self.core.create_namespace({"metadata": {"name": ns}})
        entry = {"namespace": ns}
        self.edit_assignments(lambda entries: entries + [entry])
        try:
            yield ns
        finally:
            try:
                drain_namespace(self.stack, ns)
            finally:
                self.edit_assignments(lambda entries: [e for e in entries if e != entry])
                self.core.delete_namespace(ns)


@pytest.fixture(scope="module")
def cp2(stack):
    plane = SecondControlPlane(stack)
    try:
        plane.create()
        yield plane
    finally:
        plane.delete()


def test_dedicated_service_namespace_admits_no_order_even_when_listed(stack, cp2):
    """Before: only the assignment was consulted, so a ControlPlane listing its glance namespace admitted orders
    there. Now a dedicated service namespace (spec.services.<svc>.namespace.name) admits no order."""
    with cp2.tenant("glance") as ns:
        cp2.patch_spec({"services": {"glance": {"namespace": {"name": ns}}}})
        name = unique("svc")
        try:
            stack.create_order(ns, name, controlPlaneRef=cp2.ref)
            assert order_summary(run_pass(orders=[f"{ns}/{name}"]), ns, name)["actions"] == []
            assert_frozen_by(stack.order(ns, name), "NamespaceNotAssigned", "admits no order")
            assert cp2.children(ns, name) == [] and stack.delivered(ns, name) is None
        finally:
            cp2.patch_spec({"services": {"glance": None}})


def test_control_plane_annotation_does_not_redirect_the_delivered_auth_url(stack, cp2):
    """Before: the ControlPlane annotation c5c3.io/keystone-in-cluster-url replaced the auth_url of every delivered
    clouds.yaml, so whoever could annotate a ControlPlane chose where consumers sent their passwords. Now the URL
    comes from the auth URL table (the in-cluster Service; docs/reconciler.md, "The auth URL, and the operator's
    override"), and only the operator's module option overrides it."""
    assert stack.co.get_namespaced_custom_object(GROUP, VERSION, cp2.namespace, "controlplanes", cp2.name)[
        "metadata"]["annotations"][ANNOTATION] == NOWHERE
    with cp2.tenant("annotated") as ns:
        name = unique("svc")
        ref = [f"{ns}/{name}"]
        stack.create_order(ns, name, controlPlaneRef=cp2.ref)
        reconcile_until(ready(ns, name), 180, "the order on cp2 to become Ready", orders=ref)
        assert auth_url_of(stack.delivered(ns, name)) == f"http://cp2-keystone.{cp2.namespace}.svc:5000/v3"

        # the operator's override (module option), and nothing else, points it at the stack's loopback Keystone
        urls = dict(json.loads(os.environ["C5C3_KEYSTONE_INTERNAL_URLS"]), **{cp2.key: keystone_url()})
        reconcile_until(lambda r: ready(ns, name)(r) and auth_url_of(stack.delivered(ns, name)) == keystone_url(),
                        120, "the overridden auth_url to be delivered", orders=ref, keystone_internal_urls=urls)
        delivered = stack.delivered(ns, name)
        assert stack.authenticates(delivered["clouds.yaml"])
        assert stack.backup(cp2.backup_path(ns, name))["password"] == delivered["password"]


def test_a_secret_store_ref_naming_a_cluster_store_or_no_kind_pushes_nothing(stack, cp2):
    """Before: spec.secretStoreRef's kind was ignored: a ClusterSecretStore reference (or one without kind, which
    ESO reads as a ClusterSecretStore) was looked up as a SecretStore of that name, and the backup went through it.
    Now only a SecretStore in the ControlPlane's namespace is used; anything else is SecretStoreNotReady, saying
    why, and nothing is created or pushed."""
    store = "openbao-tenant-store"  # the name of the namespace's own SecretStore: only the kind is wrong
    cases = [({"name": store, "kind": None}, "ClusterSecretStore (an empty kind)"),
             ({"name": store, "kind": "ClusterSecretStore"}, f"ClusterSecretStore '{store}'")]
    with cp2.tenant("store") as ns:
        name = unique("svc")
        ref = [f"{ns}/{name}"]
        stack.create_order(ns, name, controlPlaneRef=cp2.ref)
        try:
            for store_ref, says in cases:
                cp2.patch_spec({"secretStoreRef": store_ref})
                for _ in range(2):
                    entry = order_summary(run_pass(orders=ref), ns, name)
                    assert entry["reasons"]["UserReady"] == "SecretStoreNotReady", (says, entry["reasons"])
                    assert all("finalizer" in a for a in entry["actions"]), entry["actions"]
                cond = stack.condition(stack.order(ns, name), "UserReady")
                assert says in cond["message"] and "nothing is pushed" in cond["message"], cond["message"]
                assert cp2.children(ns, name) == [] and stack.delivered(ns, name) is None
                assert not stack.backup_exists(cp2.backup_path(ns, name))
        finally:
            cp2.patch_spec({"secretStoreRef": None})
        # the namespace's own store: the same order goes through
        reconcile_until(ready(ns, name), 180, "the order to go through the namespace's own SecretStore", orders=ref)
        assert stack.backup(cp2.backup_path(ns, name))["password"] == stack.delivered(ns, name)["password"]


# -- redaction ----------------------------------------------------------------------------------------------

@contextlib.contextmanager
def echoing_admission_policy(kube, namespace, secret_names):
    """A ValidatingAdmissionPolicy that refuses writes of the named Secrets in ``namespace`` with a message
    echoing their data (base64, as a Secret's data is stored); removed afterwards, even on failure. Returns once
    the API server enforces it (a probe Secret is refused)."""
    admission = client.AdmissionregistrationV1Api(kube)
    name = unique("echo-secret-data")
    probe = unique("probe")
    names = ", ".join(f"'{n}'" for n in list(secret_names) + [probe])
    admission.create_validating_admission_policy({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["CREATE", "UPDATE"],
                                                         "resources": ["secrets"]}]},
                 "matchConditions": [{"name": "named", "expression": f"object.metadata.name in [{names}]"}],
                 "validations": [{"expression": "false", "messageExpression":
                                  "'echo: ' + object.data.map(k, k + '=' + string(object.data[k])).join(' ')"}]}})
    try:
        admission.create_validating_admission_policy_binding({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"],
                     "matchResources": {"namespaceSelector": {"matchLabels": {
                         "kubernetes.io/metadata.name": namespace}}}}})
        core = client.CoreV1Api(kube)

        def probe_refused():
            try:
                core.create_namespaced_secret(namespace, {"metadata": {"name": probe},
                                                          "stringData": {"x": "not-a-secret"}})
            except ApiException as exc:
                return exc.status in (403, 422) and "echo:" in (exc.body or "")
            core.delete_namespaced_secret(probe, namespace)
            return False

        wait_for(probe_refused, 30, 0.2, what="the admission policy to be enforced")
        yield name
    finally:
        for remove in (admission.delete_validating_admission_policy_binding,
                       admission.delete_validating_admission_policy):
            try:
                remove(name)
            except ApiException as exc:
                if exc.status != 404:
                    raise


def test_an_admission_error_echoing_the_secret_data_is_redacted(stack, kube, stack_env, tmp_path):
    """Before: an apiserver error text went verbatim into the condition, the module's result and the controller's
    log, so an admission message built from object.data carried the password (base64, and the clouds.yaml around
    it) into a tenant-visible condition. Now the edge scrubs every secret value the pass has seen from every error
    text. The controller drives the order into the refusal; module passes run here meet it again for the result."""
    with assigned_namespace(stack, "redact") as ns:
        name = unique("svc")
        ref = [f"{ns}/{name}"]
        with echoing_admission_policy(kube, ns, [f"{name}-credentials"]) as policy:
            lease = unique("redact-lease")
            ctl = ControllerProcess(tmp_path, "redact", lease, namespaces=[ns],
                                    kubeconfig=stack_env["KUBECONFIG"],
                                    extra_args=["--lease-namespace", "default", "--debounce", "1"])
            ctl.start()
            try:
                stack.create_order(ns, name)
                wait_for(lambda: stack.condition(stack.order(ns, name), "DeliveryReady").get("reason")
                         == "DeliveryError", 180, 0.5, what="the controller's delivery to be refused by admission")
                ctl.wait_log(r"pass \w+ in [0-9.]+s: .*errors=[1-9]", 60)  # the failing pass is logged
            finally:
                assert ctl.terminate() == 0, "the controller did not exit cleanly"
                with contextlib.suppress(ApiException):
                    client.CoordinationV1Api(kube).delete_namespaced_lease(lease, "default")
            # module passes of our own until the refusal is reached again (the operator's URL override makes them
            # push a new document first): the same admission text, scrubbed by the module
            results = []
            reconcile_until(lambda r: any(e["namespace"] == ns and e["reasons"].get("DeliveryReady") == "DeliveryError"
                                          for e in r["orders"]), 120, "a module pass to meet the refusal",
                            orders=ref, each=results.append)
            passwords = stack.password_secrets(ns, name)
            message = stack.condition(stack.order(ns, name), "DeliveryReady")["message"]
        assert passwords and all(passwords.values()), "no password Secret to compare with"
        assert policy in message and "echo:" in message, "the admission error did not reach the condition"
        assert "[redacted]" in message, "the echoed Secret data was not scrubbed"
        assert "password=[redacted]" in message and "clouds.yaml=[redacted]" in message, "a value was not masked"
        texts = {"the condition message": message, "the module results": json.dumps(results)}
        texts.update({f"the controller's {path.name}": path.read_text(errors="replace") for path in ctl.files()})
        for password in passwords.values():
            encoded = base64.b64encode(password.encode()).decode()
            for where, text in texts.items():
                assert password not in text and encoded not in text, f"a password in {where}"
        # once the policy is gone the same order is delivered
        reconcile_until(ready(ns, name), 120, "the delivery once the policy is gone", orders=ref)
        assert stack.delivered(ns, name)["password"] == passwords[max(passwords)]


def test_a_pass_that_writes_the_backup_document_still_names_the_order(stack):
    """Only secrets are no_log values. The pass that writes the backup's source Secret (which also carries the user
    name, the domain, the region and the auth_url) must still name the order in its result: a caller (the
    controller, a playbook) finds its order there by namespace and name."""
    with assigned_namespace(stack, "named") as ns:
        name = unique("svc")
        stack.create_order(ns, name)
        results = []
        reconcile_until(ready(ns, name), 180, "the order to become Ready", orders=[f"{ns}/{name}"],
                        each=results.append)
        wrote_source = [r for r in results if any(re.match(r"(create|apply) Secret \S+-user-source:", action)
                                                  for entry in r["orders"] for action in entry["actions"])]
        assert wrote_source, "no pass wrote the source Secret"
        for result in wrote_source:
            assert order_summary(result, ns, name) is not None, "the order is not named in the result"
            assert "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" not in json.dumps(result), "a name is masked"
