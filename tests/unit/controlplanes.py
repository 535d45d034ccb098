"""A ControlPlane in the notation the access tests share: ``control_plane("openstack", "cp", "tenant-a",
"edge-a@edge-1")`` assigns ``tenant-a`` on the management cluster and ``edge-a`` on the target ``edge-1``."""


def control_plane(ns, name="cp", *entries, uid=None):
    items = []
    for entry in entries:
        namespace, _, cluster = entry.partition("@")
        item = {"namespace": namespace}
        if cluster:
            item["targetClusterRef"] = {"name": cluster}
        items.append(item)
    return {"metadata": {"namespace": ns, "name": name, "uid": uid or "uid-%s-%s" % (ns, name)},
            "spec": {"namespaceAssignments": items}}
