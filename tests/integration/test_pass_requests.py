"""The API cost of a converged KeystoneUser pass is a constant: it does not grow with the orders (docs/reconciler.md,
"Shape: read everything, decide per order, write the difference").

Timings are measured and printed by ``make bench`` (docs/benchmarks.md), never asserted; the number of
requests of a converged pass is deterministic, so it is asserted here, on the real stack with the real
K-ORC and ESO.

Where the constant comes from (plugins/module_utils/passes/keystoneuser.py, a pass limited to one assigned
namespace of the management cluster -- no ``target_clusters`` -- holding admitted orders of one ControlPlane). The
reads follow the access contract (docs/install.md): Secrets are listed per namespace, never cluster-wide.

====  ==========================================================================  ==============================
 #    request                                                                     made by
====  ==========================================================================  ==============================
 1    GET  /apis/c5c3.io/v1alpha1 (which order kinds the cluster serves)          ClusterReads.discover
 2    LIST controlplanes                                                          KeystoneUserSource.read
 3    LIST keystoneusers, all namespaces (the selection is applied after)         _read_orders
 4    LIST secrets in the ControlPlane namespace, labelled (the children)         _read_children
 5    LIST users.openstack.k-orc.cloud there, labelled                            _read_children
 6    LIST pushsecrets there, labelled                                            _read_children
 7    LIST users there whose name-key label is one of the orders' (every owner    _read_owners (limited passes
      of their folded names, whoever ordered them)                                only)
 8    LIST secretstores there                                                     _read_children
 9    LIST secrets in the tenant namespace, labelled (the delivered Secrets)      _read_beside_orders
10    LIST keystoneroleassignments (credential orders naming a user)             _read_beside_orders
11    LIST keystoneapplicationcredentials                                         _read_beside_orders
====  ==========================================================================  ==============================

Each LIST is one request while it holds at most ``PAGE_SIZE`` items (1000, plugins/module_utils/k8s/
service.py; a longer list takes one more request per further page). On the shared stack every list is far
below that. A converged pass writes nothing: no child differs and the status is unchanged. So: 11 requests,
0 writes; a full pass has no request 7, and one more request 9 per further assigned namespace holding orders
(``make bench`` reports the count at each N it measures, pages included).
"""
import pytest

from orders import unique
from passes import assigned_namespace, ready, reconcile_until, run_pass

CONVERGED_PASS_REQUESTS = 11
ORDERS = 3


@pytest.fixture
def tenant(stack):
    """A namespace the ControlPlane assigns; its orders are torn down and it is removed afterwards."""
    with assigned_namespace(stack, "reqs") as ns:
        yield ns


def test_converged_pass_makes_a_constant_number_of_requests_and_no_write(stack, tenant):
    names = [unique(f"req{i}") for i in range(ORDERS)]
    for name in names:
        stack.create_order(tenant, name)

    def all_ready(result):
        return all(ready(tenant, name)(result) for name in names)

    reconcile_until(all_ready, 240, f"{ORDERS} orders to become Ready", namespaces=[tenant])

    converged = run_pass(namespaces=[tenant])
    assert len(converged["orders"]) == ORDERS
    assert converged["changed"] is False
    assert converged["api_writes"] == 0
    assert converged["api_requests"] == CONVERGED_PASS_REQUESTS, converged["api_requests"]
    assert converged["errors"] == 0
