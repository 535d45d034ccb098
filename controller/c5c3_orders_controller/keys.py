"""How the controller names what a pass reconciles (pure).

A KeystoneUser is ``<namespace>/<name>``, the form the reconcile role's ``c5c3_reconcile_orders`` takes (and the
form every log line and metric of the controller has always used). The object-storage kinds share one pass and
one ``orders`` option, but an event names one kind, so their keys carry it: ``BucketCredential:<ns>/<name>``,
``ObjectStore:<ns>/<name>``, ``ObjectStoreAccount:<ns>/<name>``. ``by_pass`` splits a batch into what each pass
module gets.
"""
from typing import Dict, Iterable, List, NamedTuple

from .collection import order_kinds
from .kinds import KEYSTONEUSER_PASS

# the kinds and the pass of each, as the collection's order-kind descriptors declare them
KEYSTONEUSER = order_kinds.KEYSTONEUSER.kind
BUCKETCREDENTIAL = order_kinds.BUCKETCREDENTIAL.kind
OBJECTSTORE = order_kinds.OBJECTSTORE.kind
OBJECTSTOREACCOUNT = order_kinds.OBJECTSTOREACCOUNT.kind
PASS_OF = {descriptor.kind: descriptor.pass_name for descriptor in order_kinds.ORDER_KINDS}
# the kinds tenants order (the others are the platform's)
ORDER_KINDS = tuple(descriptor.kind for descriptor in order_kinds.ORDER_KINDS if descriptor.tenant_order)


class Key(NamedTuple):
    kind: str
    namespace: str
    name: str

    @property
    def ref(self) -> str:
        """``<namespace>/<name>``: what the pass module's ``orders`` option takes."""
        return "%s/%s" % (self.namespace, self.name)


def order_key(namespace: str, name: str, kind: str = KEYSTONEUSER) -> str:
    ref = "%s/%s" % (namespace, name)
    return ref if kind == KEYSTONEUSER else "%s:%s" % (kind, ref)


def parse(key: str) -> Key:
    kind, sep, ref = key.partition(":")
    if not sep:
        kind, ref = KEYSTONEUSER, key
    namespace, _sep, name = ref.partition("/")
    return Key(kind, namespace, name)


def namespace_of(key: str) -> str:
    return parse(key).namespace


def key_of_summary(summary) -> str:
    """The key of an order summary of a pass module's result (``kind``, ``namespace``, ``name``)."""
    return order_key(summary.get("namespace") or "", summary.get("name") or "", summary.get("kind") or KEYSTONEUSER)


def by_pass(keys: Iterable[str]) -> Dict[str, List[str]]:
    """``{pass: sorted <namespace>/<name> refs}`` for every pass a batch of keys needs (none: no entry)."""
    out: Dict[str, set] = {}
    for key in keys:
        parsed = parse(key)
        out.setdefault(PASS_OF.get(parsed.kind, KEYSTONEUSER_PASS), set()).add(parsed.ref)
    return {name: sorted(refs) for name, refs in out.items()}
