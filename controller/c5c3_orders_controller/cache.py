"""The objects the watches last saw, per stream: what a targeted pass's snapshot is built from (snapshot.py).

Each watch stream (a kind on a cluster, across it or in one namespace) keeps its objects by namespace and name, as
compact JSON without ``metadata.managedFields`` and the last-applied annotation (nothing a pass reads; more than
half of most objects), with their labels and an index by the values of the collection's label keys and by
namespace, so that finding one order's children costs a lookup, not a scan of every child. The label keys indexed
are those the order-kind descriptors declare for the children: each child's name label and the labels the pass
looks children up by (the K-ORC User's name key). Secrets are watched as
metadata only, so no Secret data is ever held here.

Not thread-safe by itself: the watchers and the snapshot builder share the mapper's lock.
"""
import json
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Set, Tuple

from .kinds import KINDS, origin_of
from .watchset import WatchKey

# every child's name label and lookup labels, once each
INDEXED_LABELS = tuple(dict.fromkeys(label for child in (origin_of(kind).child for kind in KINDS) if child is not None
                                     for label in (child.name_label,) + child.index_labels))
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
Ref = Tuple[str, str]  # (namespace, name)


class Entry(NamedTuple):
    namespace: str
    name: str
    labels: Mapping[str, str]
    raw: str  # the object as compact JSON

    def obj(self) -> Dict[str, Any]:
        return json.loads(self.raw)


def slim(obj: Mapping[str, Any]) -> Optional[Entry]:
    """The cache entry of an object (None without a name)."""
    found = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(found, Mapping) or not isinstance(found.get("name"), str):
        return None
    meta: Dict[str, Any] = {k: v for k, v in found.items() if k != "managedFields"}
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping) and LAST_APPLIED in annotations:
        meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    labels = meta["labels"] if isinstance(meta.get("labels"), Mapping) else {}
    body = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    body["metadata"] = meta
    namespace = meta["namespace"] if isinstance(meta.get("namespace"), str) else ""
    return Entry(namespace, meta["name"], {str(k): str(v) for k, v in labels.items()},
                 json.dumps(body, separators=(",", ":"), sort_keys=True))


class Stream:
    """One stream's objects and indexes."""

    def __init__(self) -> None:
        self.entries: Dict[Ref, Entry] = {}
        self.by_label: Dict[Tuple[str, str], Set[Ref]] = {}
        self.by_namespace: Dict[str, Set[Ref]] = {}

    def put(self, entry: Entry) -> None:
        ref = (entry.namespace, entry.name)
        self.drop(ref)
        self.entries[ref] = entry
        self.by_namespace.setdefault(entry.namespace, set()).add(ref)
        for label in INDEXED_LABELS:
            if label in entry.labels:
                self.by_label.setdefault((label, entry.labels[label]), set()).add(ref)

    def drop(self, ref: Ref) -> None:
        old = self.entries.pop(ref, None)
        if old is None:
            return
        _discard(self.by_namespace, old.namespace, ref)
        for label in INDEXED_LABELS:
            if label in old.labels:
                _discard(self.by_label, (label, old.labels[label]), ref)

    def labelled(self, label: str, values: Iterable[str]) -> List[Entry]:
        refs: Set[Ref] = set()
        for value in values:
            refs |= self.by_label.get((label, value), set())
        return [self.entries[r] for r in sorted(refs)]

    def in_namespaces(self, namespaces: Iterable[str]) -> List[Entry]:
        refs: Set[Ref] = set()
        for namespace in namespaces:
            refs |= self.by_namespace.get(namespace, set())
        return [self.entries[r] for r in sorted(refs)]


def _discard(index: Dict[Any, Set[Ref]], key: Any, ref: Ref) -> None:
    found = index.get(key)
    if found is not None:
        found.discard(ref)
        if not found:
            del index[key]


class ObjectCache:
    def __init__(self) -> None:
        self._streams: Dict[WatchKey, Stream] = {}

    def seed(self, key: WatchKey, items: Iterable[Mapping[str, Any]]) -> None:
        stream = self._streams[key] = Stream()
        for obj in items:
            entry = slim(obj)
            if entry is not None:
                stream.put(entry)

    def handle(self, key: WatchKey, event_type: str, obj: Mapping[str, Any]) -> None:
        entry = slim(obj)
        if entry is None:
            return
        stream = self._streams.setdefault(key, Stream())
        if event_type == "DELETED":
            stream.drop((entry.namespace, entry.name))
        elif event_type in ("ADDED", "MODIFIED"):
            stream.put(entry)

    def forget(self, key: Optional[WatchKey] = None) -> None:
        if key is None:
            self._streams.clear()
        else:
            self._streams.pop(key, None)

    def stream(self, key: WatchKey) -> Optional[Stream]:
        return self._streams.get(key)

    def keys(self) -> Iterator[WatchKey]:
        return iter(list(self._streams))

    def __len__(self) -> int:
        return sum(len(s.entries) for s in self._streams.values())
