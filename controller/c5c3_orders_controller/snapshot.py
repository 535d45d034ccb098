"""A targeted KeystoneUser pass's snapshot of the watch cache (pure; the file is written by ``write``).

The controller watches every object a KeystoneUser pass reads, so for a pass over a few orders it hands the module
the objects those orders need instead of letting it list them all again (``snapshot_file``; the module side is
``plugins/module_utils/passes/snapshot.py``, which says how each collection is used). Per watch stream that is in
sync (listed, not broken since):

- ControlPlanes and SecretStores: every one (few; ``complete``);
- KeystoneUsers: the pass's orders (``complete`` for a pass limited to them);
- KeystoneRoleAssignments and KeystoneApplicationCredentials: every one in the namespaces of the pass's orders;
- Secrets (metadata only: the module GETs each), K-ORC Users and PushSecrets labelled ``c5c3.io/keystoneuser-name``
  with one of the orders' names (``covers`` those names), and the K-ORC Users carrying the name keys of the orders'
  own Users (``covers`` those keys: the other owners of the same Keystone user name).

Which stream is which follows from the KeystoneUser's descriptor (``kinds.origin_of``): a related kind naming no
order is sent whole, one naming orders by reference (``spec.userRef``) per namespace, a child stream by the name
label and the lookup labels its descriptor declares.

A stream that is not in sync is left out: the module lists it, as without a snapshot. A pass over more than
``MAX_ORDERS`` orders lists too (that many Secret GETs cost more than the lists). The snapshot's size does not grow
with the number of orders in the cluster, only with the pass's own.
"""
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from .cache import Entry, Stream
from .keys import KEYSTONEUSER, parse
from .kinds import KEYSTONEUSER_KINDS, Child, Kind, origin_of
from .watchset import WatchKey

VERSION = 1
MAX_ORDERS = 20
STREAM_KINDS = {k.key: k for k in KEYSTONEUSER_KINDS}  # every stream the KeystoneUser pass reads


def _collection(key: WatchKey, kind: Kind, items: List[Any], complete: bool = False,
                covers: Optional[Mapping[str, Iterable[str]]] = None) -> Dict[str, Any]:
    out = {"cluster": key.cluster, "apiVersion": kind.api_version, "kind": kind.display, "plural": kind.plural,
           "namespace": key.namespace, "metadataOnly": kind.metadata_only, "complete": complete,
           "items": [entry.obj() for entry in items]}
    if covers:
        out["covers"] = {label: sorted(values) for label, values in covers.items()}
    return out


def build(keys: Iterable[str], streams: Mapping[WatchKey, Stream]) -> Optional[Dict[str, Any]]:
    """The snapshot for a pass over ``keys`` (only their KeystoneUsers; None when there are none or too many), from
    the ``streams`` in sync."""
    refs = sorted({parse(k).ref for k in keys if parse(k).kind == KEYSTONEUSER})
    if not refs or len(refs) > MAX_ORDERS:
        return None
    wanted = {tuple(r.split("/", 1)) for r in refs}
    names = {name for _ns, name in wanted}
    namespaces = {ns for ns, _name in wanted}
    collections = []
    for key in sorted(streams):
        kind = STREAM_KINDS.get(key.kind)
        if kind is None:
            continue
        stream = streams[key]
        origin = origin_of(kind)
        if origin.related is not None and origin.related.names is None:  # ControlPlanes, SecretStores: every one
            collections.append(_collection(key, kind, list(stream.entries.values()), complete=True))
        elif origin.related is not None:  # role assignments, application credentials: by the orders' namespaces
            collections.append(_collection(key, kind, stream.in_namespaces(namespaces), complete=True))
        elif origin.child is None:  # the orders
            found = [stream.entries[r] for r in sorted(wanted) if r in stream.entries]
            collections.append(_collection(key, kind, found, complete=True))
        else:  # children labelled with an order's name, and (K-ORC Users) those sharing their lookup labels
            collections.append(_children(key, kind, origin.child, stream, names))
    return {"version": VERSION, "kind": KEYSTONEUSER, "orders": refs, "collections": collections}


def _children(key: WatchKey, kind: Kind, child: Child, stream: Stream, names: Set[str]) -> Dict[str, Any]:
    """The children labelled with one of the orders' ``names``, and those carrying the value of a lookup label
    (``Child.index_labels``: a K-ORC User's name key) one of them carries (the other owners of a Keystone user)."""
    own = stream.labelled(child.name_label, names)
    found: Dict[Tuple[str, str], Entry] = {(e.namespace, e.name): e for e in own}
    covers: Dict[str, Iterable[str]] = {child.name_label: names}
    for label in child.index_labels:
        values: Set[str] = {e.labels[label] for e in own if label in e.labels}
        found.update({(e.namespace, e.name): e for e in stream.labelled(label, values)})
        covers[label] = values
    return _collection(key, kind, [found[r] for r in sorted(found)], covers=covers)


def write(snapshot: Mapping[str, Any], directory: Path, ident: str) -> Path:
    """The snapshot as a file only this user can read (it holds object metadata, never Secret data), in the
    passes' temp dir; the caller removes it after the pass."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ("snapshot-%s.json" % ident)
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(snapshot, handle, separators=(",", ":"))
    return path
