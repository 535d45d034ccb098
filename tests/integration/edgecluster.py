"""Orders on the stack's target cluster (edge-1) for the end-to-end tests of tenant isolation and faults
(docs/reconciler.md, "What an order is refused, and why"): a namespace the ControlPlane assigns there, passes that
include the cluster, and the KeystoneUser CRD loosened for a moment.

A loosened CRD replays a cluster whose CRD predates a rule (a target cluster's chart is never upgraded by Helm):
the rules are dropped, the test writes what they would have refused, and the real CRD is put back at once. The
object stays stored as written; the API server ratchets, so later writes that leave those fields unchanged (the
pass's status and finalizer writes) are admitted, exactly as on such a cluster after its CRD is upgraded.
"""
import contextlib
import copy
import json

from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for
from orders import CP_NAME, CP_NS, GROUP, TENANT_LABELS, VERSION, unique
from passes import reconcile_until

CRD_NAME = "keystoneusers.c5c3.io"
RULE_KEYS = ("pattern", "maxLength", "minLength", "format", "minimum", "x-kubernetes-validations")


class Edge:
    """The first target cluster of the stack: its API clients and the pass arguments that include it."""

    def __init__(self, stack, stack_env, target_kube):
        self.stack = stack
        self.name = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
        self.kubeconfig = stack_env["C5C3_KUBECONFIG_" + self.name.upper().replace("-", "_")]
        self.co = client.CustomObjectsApi(target_kube)
        self.core = client.CoreV1Api(target_kube)
        self.ext = client.ApiextensionsV1Api(target_kube)

    def pass_args(self, **args):
        """Arguments of ``run_pass``/``reconcile_until`` for a pass over the management cluster and this one."""
        return dict(args, target_clusters=[{"name": self.name, "kubeconfig": self.kubeconfig}])

    def create_order(self, namespace, name, dry_run=None, **spec):
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser",
                "metadata": {"name": name, "namespace": namespace},
                "spec": dict({"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}, **spec)}
        kwargs = {"dry_run": dry_run} if dry_run else {}
        return self.co.create_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", body, **kwargs)

    def order(self, namespace, name):
        """The order on this cluster; None when gone."""
        return self.stack.order(namespace, name, co=self.co)

    def orders(self, namespace):
        return self.co.list_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers")["items"]

    def patch_order(self, namespace, name, patch):
        return self.co.patch_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name, patch)

    def patch_status(self, namespace, name, patch):
        return self.co.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, "keystoneusers", name, patch)

    def delete_order(self, namespace, name):
        try:
            self.co.delete_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def delivered_secret(self, namespace, name):
        try:
            return self.core.read_namespaced_secret(f"{name}-credentials", namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    # the CRD ---------------------------------------------------------------------------------------
    def crd(self):
        return json.loads(self.ext.read_custom_resource_definition(CRD_NAME, _preload_content=False).data)

    def put_crd_spec(self, spec):
        """Replace the CRD's spec (resourceVersion precondition, retried on conflict)."""
        for _ in range(10):
            live = self.crd()
            body = {"apiVersion": live["apiVersion"], "kind": live["kind"],
                    "metadata": {"name": CRD_NAME, "resourceVersion": live["metadata"]["resourceVersion"]},
                    "spec": spec}
            try:
                self.ext.replace_custom_resource_definition(CRD_NAME, body, _preload_content=False)
                return
            except ApiException as exc:
                if exc.status != 409:
                    raise
        raise AssertionError(f"could not replace CRD {CRD_NAME} on {self.name} (conflicts)")


def _without_rules(schema):
    """A copy of a schema with every validation rule dropped (types, defaults and structure kept)."""
    if isinstance(schema, dict):
        return {k: _without_rules(v) for k, v in schema.items() if k not in RULE_KEYS}
    if isinstance(schema, list):
        return [_without_rules(v) for v in schema]
    return schema


def loosened_spec(crd_spec):
    """The CRD's spec with every rule on the orders' ``spec`` and on the whole object dropped."""
    spec = copy.deepcopy(crd_spec)
    for version in spec["versions"]:
        root = version["schema"]["openAPIV3Schema"]
        root.pop("x-kubernetes-validations", None)
        root["properties"]["spec"] = _without_rules(root["properties"]["spec"])
    return spec


@contextlib.contextmanager
def loosened_crd(edge, namespace):
    """While inside: edge's KeystoneUser CRD enforces no rule on the spec (as a CRD that predates them). The real
    CRD is restored on leaving, even on failure; both switches are waited for on observable behaviour (a dry-run
    create of an order the rules refuse, in ``namespace``), never on time."""
    real = edge.crd()["spec"]

    def admits_a_refused_name():
        try:
            edge.create_order(namespace, unique("crd-probe"), dry_run="All", userName=" probe")
        except ApiException as exc:
            if exc.status == 422:
                return False
            raise
        return True

    edge.put_crd_spec(loosened_spec(real))
    try:
        wait_for(admits_a_refused_name, 60, 0.2, what=f"the loosened CRD to be served on {edge.name}")
        yield
    finally:
        edge.put_crd_spec(real)
        wait_for(lambda: not admits_a_refused_name(), 60, 0.2, what=f"the real CRD to be served again on {edge.name}")


def _drain(edge, ns, timeout):
    listed = edge.orders(ns)
    for order in listed:
        edge.delete_order(ns, order["metadata"]["name"])
    if listed:
        reconcile_until(lambda r: not edge.orders(ns), timeout, f"the orders in {edge.name}/{ns} to be torn down",
                        **edge.pass_args(namespaces=[ns]))


@contextlib.contextmanager
def edge_namespace(stack, edge, prefix):
    """A fresh namespace on the target cluster that the ControlPlane assigns there; its orders are torn down by
    passes, the assignment withdrawn and the namespace deleted afterwards, even on failure. An order a failed test
    left with a stored spec the real CRD's rules cannot even evaluate is torn down under a loosened CRD."""
    ns = unique(prefix)
    edge.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})
    stack.assign(ns, edge.name)
    try:
        yield ns
    finally:
        try:
            try:
                _drain(edge, ns, 120)
            except AssertionError:
                with loosened_crd(edge, ns):
                    _drain(edge, ns, 120)
        finally:
            stack.withdraw(ns, edge.name)
            edge.core.delete_namespace(ns)
