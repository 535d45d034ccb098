"""The API cost of a converged KeystoneUser pass is a constant (issue 7): it does not grow with the orders.

Timings are measured and printed by ``make bench`` (docs/benchmarks.md), never asserted; the number of
requests of a converged pass is deterministic, so it is asserted here, on the real stack with the real
K-ORC and ESO.

Where the constant comes from (plugins/module_utils/k8s/inventory.py, a pass over the management cluster
only -- no ``target_clusters`` -- with at least one admitted order):

====  ==========================================================================  =========================
 #    request                                                                     made by
====  ==========================================================================  =========================
 1    GET  /apis/c5c3.io/v1alpha1 (which order kinds the cluster serves)          ClusterInventory.__init__
 2    LIST keystoneusers, all namespaces (the namespace filter is applied after)  ClusterInventory.__init__
 3    LIST secrets, labelled c5c3.io/keystoneuser-name (children + delivered)     ClusterInventory.load
 4    LIST keystoneroleassignments (credential orders naming a user)             ClusterInventory.load
 5    LIST keystoneapplicationcredentials                                         ClusterInventory.load
 6    LIST controlplanes                                                          ManagementInventory.load
 7    LIST users.openstack.k-orc.cloud, labelled                                  ManagementInventory.load
 8    LIST pushsecrets, labelled                                                  ManagementInventory.load
 9    LIST secretstores (once, for the first order whose ControlPlane has none    ManagementInventory.store_for
      named in spec.secretStoreRef)
====  ==========================================================================  =========================

Each LIST is one request while it holds at most ``PAGE_SIZE`` items (1000, plugins/module_utils/k8s/
service.py; a longer list takes one more request per further page). On the shared stack every list is far
below that. A converged pass writes nothing: no child differs and the status is unchanged. So: 9 requests,
0 writes (``make bench`` reports the count at each N it measures, pages included).
"""
import pytest

from orders import unique
from passes import assigned_namespace, ready, reconcile_until, run_pass

CONVERGED_PASS_REQUESTS = 9
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
