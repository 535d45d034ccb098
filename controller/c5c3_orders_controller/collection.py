"""The collection's own Python code, where the controller needs the very same function as the pass modules.

The controller runs the collection's playbook, so the collection is installed beside it (``ANSIBLE_COLLECTIONS_PATH``,
or Ansible's default paths); its pure module_utils import nothing from Ansible and are loaded from there as plain
Python. Today that is one function: the share a namespace falls in (``passes/sharding.py``), which the controller
and the passes must compute alike.
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

__all__ = ["shard_of"]
