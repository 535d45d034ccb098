# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which per-namespace grants the controller should hold on each cluster, from the ControlPlanes (pure).

The access contract (docs/install.md, "Permissions"): on the management cluster a RoleBinding to the
``<name>-controlplane`` ClusterRole in the namespace of every ControlPlane and one to ``<name>-tenant`` in every
namespace a ControlPlane assigns there; on a target cluster ``<t>`` one to ``<name>-tenant`` in every namespace
assigned on ``<t>``. A grant no longer wanted *drains*: it stays while an order that needs it still carries one of
the collection's teardown finalizers, so the teardown can finish, and goes once none is left.

Grants go by **allowlist** (docs/install.md, "Security model"): with ``marks`` given, a grant is made only in a
namespace whose labels match the mark of its kind (``{"tenant": {"c5c3.io/tenant": "true"}, "controlplane":
{"c5c3.io/controlplane": "true"}}``), whatever a ControlPlane assigns; an assigned namespace without its mark is
reported ``unmarked``, and a grant already there is revoked at once (like one in a forbidden namespace: no draining,
the platform withdrew the namespace).

Used by the role c5c3.orders.namespace_access (the access sync); kept in Python so the rules are unit-tested
(tests/unit/access/).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

FINALIZERS = ("c5c3.io/keystoneuser-teardown", "c5c3.io/bucketcredential-teardown")
RBAC_GROUP = "rbac.authorization.k8s.io"
CONTROLPLANE = "controlplane"
TENANT = "tenant"
GRANT_LABEL = "c5c3.io/grant"


def _meta(obj):
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _spec(obj):
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec if isinstance(spec, dict) else {}


def _str(value):
    return value if isinstance(value, str) else ""


def assignments(control_planes):
    """``{cluster: set(namespace)}`` of every ``spec.namespaceAssignments`` entry ("" = the management cluster)."""
    out = {}
    for cp in control_planes or []:
        for entry in _spec(cp).get("namespaceAssignments") or []:
            if not isinstance(entry, dict) or not _str(entry.get("namespace")):
                continue
            ref = entry.get("targetClusterRef")
            cluster = _str(ref.get("name")) if isinstance(ref, dict) else ""
            out.setdefault(cluster, set()).add(entry["namespace"])
    return out


def controlplane_namespaces(control_planes):
    return set(_str(_meta(cp).get("namespace")) for cp in control_planes or []) - set([""])


def holds_finalizer(order):
    return any(f in FINALIZERS for f in _meta(order).get("finalizers") or [])


def controlplane_namespace_of(order):
    """The namespace of an order's ControlPlane: a KeystoneUser's ``spec.controlPlaneRef.namespace``, a
    BucketCredential's ``spec.objectStoreRef.namespace`` (the store lives in its ControlPlane's namespace); unset,
    the order's own."""
    spec = _spec(order)
    ref = spec.get("controlPlaneRef") or spec.get("objectStoreRef")
    ref = ref if isinstance(ref, dict) else {}
    return _str(ref.get("namespace")) or _str(_meta(order).get("namespace"))


def normalise_subject(subject):
    kind = _str(subject.get("kind"))
    out = {"kind": kind, "name": _str(subject.get("name"))}
    if kind == "ServiceAccount":
        out["namespace"] = _str(subject.get("namespace"))
    else:
        out["apiGroup"] = RBAC_GROUP
    return out


def binding(name, grant, namespace, subjects, labels):
    """The RoleBinding of one grant: ``<name>-<grant>`` to the ClusterRole of the same name."""
    role = "%s-%s" % (name, grant)
    return {
        "apiVersion": "%s/v1" % RBAC_GROUP,
        "kind": "RoleBinding",
        "metadata": {"name": role, "namespace": namespace, "labels": dict(labels, **{GRANT_LABEL: grant})},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [normalise_subject(s) for s in subjects],
    }


def _same(existing, wanted):
    """Whether an existing RoleBinding already is ``wanted`` (labels as a subset: others may add labels)."""
    labels = _meta(existing).get("labels") or {}
    return (existing.get("roleRef") == wanted["roleRef"]
            and [normalise_subject(s) for s in existing.get("subjects") or []] == wanted["subjects"]
            and all(labels.get(k) == v for k, v in wanted["metadata"]["labels"].items()))


def usable(namespaces):
    """Names of the namespaces that exist and are not being deleted (a RoleBinding cannot go anywhere else)."""
    out = set()
    for ns in namespaces or []:
        if isinstance(ns, str):
            out.add(ns)
        elif _str((ns.get("status") or {}).get("phase")) != "Terminating" and not _meta(ns).get("deletionTimestamp"):
            out.add(_str(_meta(ns).get("name")))
    return out


def _forbidden(namespace, forbidden):
    return any(namespace == f or (f.endswith("*") and namespace.startswith(f[:-1])) for f in forbidden)


def labels_by_name(namespaces):
    """``{name: labels}`` of the Namespace objects (a bare name has no labels: it matches no mark)."""
    out = {}
    for ns in namespaces or []:
        if isinstance(ns, str):
            out[ns] = {}
        else:
            labels = _meta(ns).get("labels")
            out[_str(_meta(ns).get("name"))] = labels if isinstance(labels, dict) else {}
    return out


def marked(labels, mark):
    """Whether namespace ``labels`` match ``mark`` (every key with its value; an empty mark matches anything)."""
    return all(isinstance(labels, dict) and labels.get(k) == v for k, v in (mark or {}).items())


def _unmarked(grant, namespace, ns_labels, marks):
    """A grant whose kind has a mark, in an existing namespace that does not carry it."""
    return grant in marks and namespace in ns_labels and not marked(ns_labels[namespace], marks[grant])


def plan(control_planes, clusters, name, labels, forbidden=(), drain=True, marks=None):
    """One plan per cluster: what to apply, what to delete, what drains, what cannot be granted.

    ``clusters``: ``[{"name": "" or target, "ok": bool, "subjects": [...], "namespaces": [Namespace objects or
    names], "bindings": [our RoleBindings], "orders": [orders of every kind]}, ...]``. A cluster that could not be
    read (``ok`` false) gets no plan, and since its orders are unknown every ControlPlane-namespace grant on the
    management cluster is kept. ``drain`` false (an uninstall) keeps nothing that is not wanted. ``marks``
    (``{grant: {label: value}}``): a grant only in a namespace that carries its mark (``unmarked`` otherwise).
    """
    marks = marks or {}
    wanted_by_cluster = assignments(control_planes)
    cp_namespaces = controlplane_namespaces(control_planes)
    all_known = all(c.get("ok") for c in clusters)
    needed_cp = set(controlplane_namespace_of(o) for c in clusters for o in c.get("orders") or [] if holds_finalizer(o))
    plans = []
    for cluster in clusters:
        cname = _str(cluster.get("name"))
        if not cluster.get("ok"):
            plans.append({"cluster": cname, "ok": False, "apply": [], "delete": [], "draining": [], "missing": [],
                          "refused": [], "unmarked": [], "granted": []})
            continue
        wanted = set((TENANT, ns) for ns in wanted_by_cluster.get(cname, ()))
        if cname == "":
            wanted |= set((CONTROLPLANE, ns) for ns in cp_namespaces)
        finalized = set(_str(_meta(o).get("namespace")) for o in cluster.get("orders") or [] if holds_finalizer(o))
        present = usable(cluster.get("namespaces"))
        ns_labels = labels_by_name(cluster.get("namespaces"))
        existing = {}
        for rb in cluster.get("bindings") or []:
            grant = _str((_meta(rb).get("labels") or {}).get(GRANT_LABEL))
            existing[(grant, _str(_meta(rb).get("namespace")))] = rb
        refused = sorted("%s:%s" % g for g in wanted if _forbidden(g[1], forbidden))
        wanted = set(g for g in wanted if not _forbidden(g[1], forbidden))
        unmarked = sorted("%s:%s" % g for g in wanted if _unmarked(g[0], g[1], ns_labels, marks))
        wanted = set(g for g in wanted if not _unmarked(g[0], g[1], ns_labels, marks))
        missing = sorted("%s:%s" % g for g in wanted if g[1] not in present)
        keep, draining = set(), []
        for key in existing:
            grant, ns = key
            if not drain or key in wanted or _forbidden(ns, forbidden) or _unmarked(grant, ns, ns_labels, marks) \
                    or grant not in (TENANT, CONTROLPLANE):
                continue
            if grant == TENANT and ns in finalized:
                draining.append("%s:%s" % key)
                keep.add(key)
            elif grant == CONTROLPLANE and cname == "" and (ns in needed_cp or not all_known):
                draining.append("%s:%s" % key)
                keep.add(key)
        apply, delete = [], []
        for key in sorted(wanted):
            if key[1] not in present:
                continue
            want = binding(name, key[0], key[1], cluster.get("subjects") or [], labels)
            have = existing.get(key)
            if have is not None and have.get("roleRef") != want["roleRef"]:
                delete.append(_minimal(have))  # roleRef is immutable: replace
            if have is None or not _same(have, want):
                apply.append(want)
        for key in sorted(existing):
            if key not in wanted and key not in keep:
                delete.append(_minimal(existing[key]))
        plans.append({"cluster": cname, "ok": True, "apply": apply, "delete": delete, "draining": sorted(draining),
                      "missing": missing, "refused": refused, "unmarked": unmarked,
                      "granted": sorted("%s:%s" % k for k in set(k for k in wanted if k[1] in present) | keep)})
    return plans


def _minimal(rb):
    meta = _meta(rb)
    return {"apiVersion": "%s/v1" % RBAC_GROUP, "kind": "RoleBinding",
            "metadata": {"name": _str(meta.get("name")), "namespace": _str(meta.get("namespace"))}}


def summary(plans):
    """The plans without the object definitions: per cluster what is granted, applied, revoked, draining,
    missing (the namespace does not exist), refused (a forbidden namespace) and unmarked (a namespace without the
    mark of its grant)."""
    out = []
    for p in plans:
        entry = dict((k, v) for k, v in p.items() if k not in ("apply", "delete"))
        entry.setdefault("unmarked", [])
        entry["cluster"] = p["cluster"] or "management"
        entry["applied"] = ["%s:%s" % (b["metadata"]["labels"][GRANT_LABEL], b["metadata"]["namespace"])
                            for b in p["apply"]]
        entry["revoked"] = ["%s/%s" % (b["metadata"]["namespace"], b["metadata"]["name"]) for b in p["delete"]]
        out.append(entry)
    return out


class FilterModule(object):
    def filters(self):
        return {"namespace_grants": plan, "namespace_grants_summary": summary}
