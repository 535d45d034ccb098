"""The collection's own Python code, where the controller needs the very same function or declaration as the pass
modules.

The controller runs the collection's playbook, so the collection is installed beside it (``ANSIBLE_COLLECTIONS_PATH``,
or Ansible's default paths); its pure module_utils import nothing from Ansible and are loaded from there as plain
Python. The controller takes from it:

- the share a namespace falls in (``passes/sharding.py``), which the controller and the passes must compute alike;
- every order kind's descriptor (``orders/kinds/``): its resource, children, owner labels, related kinds and the
  references it names, from which ``kinds.py`` builds every watch stream and ``mapping.py`` / ``storagemap.py``
  find the orders an event concerns, reading each reference as the pass reads it;
- the API resources (``k8s/resources.py``) and the defensive raw-object readers (``orders/rawobj.py``).
"""
import os
import sys


def _collection_roots():
    configured = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or os.environ.get("ANSIBLE_COLLECTIONS_PATHS") or ""
    roots = [p for p in configured.split(os.pathsep) if p]
    roots += [os.path.expanduser("~/.ansible/collections"), "/usr/share/ansible/collections"]
    repo = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ".collections")
    return roots + [repo]


try:
    from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import shard_of
except ImportError:
    for _root in _collection_roots():
        if os.path.isdir(os.path.join(_root, "ansible_collections", "c5c3", "orders")) and _root not in sys.path:
            sys.path.append(_root)
    from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import shard_of  # noqa: E402

# pylint: disable=wrong-import-position
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.orders import kinds as order_kinds  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds import Child, OrderKind, Related  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (  # noqa: E402
    dig,
    is_mapping,
    labels_of,
    name_of,
    namespace_of,
    text,
)

__all__ = ["Child", "OrderKind", "Related", "dig", "is_mapping", "labels_of", "name_of", "namespace_of", "order_kinds",
           "resources", "shard_of", "text"]
