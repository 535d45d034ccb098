"""The floor: the bare list calls a converged pass makes, with the same client, and no decision.

The same reads as ``plugins/module_utils/k8s/inventory.py`` on a management cluster without target
clusters -- discovery of c5c3.io/v1alpha1, then one list per kind, children by label -- made through the
collection's own ``KubeClient`` and ``KubeService.list`` (so with its paging and JSON decoding, and
whatever it drops from each item), and nothing else. Prints {"seconds", "requests", "items"}; the
benchmark times the process around it too, so both the in-process cost and the cost with interpreter
start are known.

    python benchmarks/floor.py KUBECONFIG      (PYTHONPATH=.collections)
"""
import json
import sys
import time

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.inventory import LABEL_NAME
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService

DISCOVERY = "c5c3.io/v1alpha1"   # which order kinds the cluster serves
LISTS = (
    (R.KEYSTONEUSER, None),        # the orders
    (R.SECRET, LABEL_NAME),        # password, source and delivered Secrets
    (R.ROLE_ASSIGNMENT, None),     # credential orders naming a user
    (R.APP_CREDENTIAL, None),
    (R.CONTROLPLANE, None),
    (R.KORC_USER, LABEL_NAME),     # managed Users and probes
    (R.PUSHSECRET, LABEL_NAME),    # backups
    (R.SECRETSTORE, None),         # the stores the backups push through
)


def main(kubeconfig):
    client = KubeClient({"kubeconfig": kubeconfig})
    service = KubeService(client, "c5c3-orders")
    started = time.monotonic()
    service.served(DISCOVERY)
    items = sum(len(service.list(resource, label_selector=selector)) for resource, selector in LISTS)
    seconds = time.monotonic() - started
    client.close()
    print(json.dumps({"seconds": seconds, "requests": client.requests, "items": items}))


if __name__ == "__main__":
    main(sys.argv[1])
