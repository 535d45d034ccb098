"""The floor: the bare list calls a converged pass makes, with the same client, and no decision.

The same reads as ``plugins/module_utils/passes/keystoneuser.py`` on a management cluster without target clusters,
following the access contract (docs/install.md): discovery of c5c3.io/v1alpha1, the cluster-wide lists of what is
not secret (ControlPlanes, KeystoneUsers, the two credential-order kinds), then per ControlPlane namespace the
labelled Secrets, K-ORC Users and PushSecrets and the SecretStores, and per assigned namespace holding orders the
labelled Secrets. Every list goes through the collection's own ``KubeClient`` and ``KubeService.list`` (so with its
paging and JSON decoding, and whatever it drops from each item), and nothing else: no indexing, no redaction, no
decision. It imports ``ansible.module_utils.basic`` first, as every module does, so that its process costs what a
module's costs before it reads anything. Prints {"seconds", "cpu", "requests", "items", "calls"} (in-process wall
and CPU seconds of the lists); the benchmark times the process around it too, so both the in-process cost and the
cost with interpreter start are known, and checks that the pass made as many requests.

    python benchmarks/floor.py KUBECONFIG      (PYTHONPATH=.collections)
"""
import json
import sys
import time

import ansible.module_utils.basic  # noqa: F401  pylint: disable=unused-import  (what every module imports)
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import LABEL_NAME

DISCOVERY = "c5c3.io/v1alpha1"   # which order kinds the cluster serves


def list_calls(service):
    """Make the list calls of a converged full pass, in its order; yields (resource, namespace, selector, items)."""
    cps = service.list(R.CONTROLPLANE)
    yield R.CONTROLPLANE, None, None, cps
    orders = service.list(R.KEYSTONEUSER)
    yield R.KEYSTONEUSER, None, None, orders
    for namespace in sorted({cp["metadata"]["namespace"] for cp in cps}):
        for resource in (R.SECRET, R.KORC_USER, R.PUSHSECRET):
            yield resource, namespace, LABEL_NAME, service.list(resource, namespace, LABEL_NAME)
        yield R.SECRETSTORE, namespace, None, service.list(R.SECRETSTORE, namespace)
    assigned = {entry.get("namespace") for cp in cps for entry in (cp.get("spec") or {}).get("namespaceAssignments")
                or [] if not entry.get("targetClusterRef")}
    holding = {order["metadata"]["namespace"] for order in orders}
    for namespace in sorted(holding & assigned):
        yield R.SECRET, namespace, LABEL_NAME, service.list(R.SECRET, namespace, LABEL_NAME)
    if holding:
        for resource in (R.ROLE_ASSIGNMENT, R.APP_CREDENTIAL):
            yield resource, None, None, service.list(resource)


def main(kubeconfig):
    client = KubeClient({"kubeconfig": kubeconfig})
    service = KubeService(client, "c5c3-orders")
    started, cpu = time.monotonic(), time.process_time()
    service.served(DISCOVERY)
    items, calls = 0, 0
    for _resource, _namespace, _selector, listed in list_calls(service):
        items += len(listed)
        calls += 1
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    client.close()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "requests": client.requests, "items": items,
                      "calls": calls + 1}))


if __name__ == "__main__":
    main(sys.argv[1])
