"""The rows of the fault matrix: which fault, in which phase, struck at which point of the pass.

Pause points are write signatures (``<cluster or mgmt> METHOD path``, see hook/sitecustomize.py): the pass stops
right before that write, the fault is injected, and the write goes out into it.
"""
from typing import Dict, List

from .injectors import FreezeGateway, Intrude, KillGateway, KillPass, NoFault, StopServers, Throttle
from .rows import Row

PHASE_NAMES = ("provision", "rotation", "teardown")
# the object-storage phases (ostorage.py), on the Tentacle gateway of the matrix's stack
OS_PHASE_NAMES = ("issue", "rotate-slot", "revoke-slot", "teardown", "migrate", "rotate-root", "rotate-scheduled",
                  "rotate-root-scheduled")
OS = "BucketCredential"
GATEWAY_WRITE = r"^gw "
KEY_ISSUE = r"^gw iam:CreateAccessKey$"
KEY_REVOKE = r"^gw (iam:DeleteAccessKey|admin DELETE /admin/user)"
CP = "/namespaces/openstack/"
ANY_WRITE = r"^mgmt "
PASSWORD_CREATE = rf"^mgmt POST /api/v1{CP}secrets$"
USER_APPLY = rf"^mgmt PATCH /apis/openstack\.k-orc\.cloud/v1alpha1{CP}users/[^/]+-user$"
USER_DELETE = rf"^mgmt DELETE /apis/openstack\.k-orc\.cloud/v1alpha1{CP}users/[^/]+-user$"
PUSH_WRITE = rf"^mgmt (POST|PATCH) /apis/external-secrets\.io/v1alpha1{CP}pushsecrets"
PUSH_DELETE = rf"^mgmt DELETE /apis/external-secrets\.io/v1alpha1{CP}pushsecrets/"
TARGET_WRITE = r"^edge-1 "
TARGET_SERVERS = ["etcd-edge-1", "kube-apiserver-edge-1", "kube-controller-manager-edge-1"]

# server family -> (servers to stop, how to start them, {phase: (pause point, what it is)}, seconds down).
# etcd: kube-apiserver holds a request while etcd is away and answers 504 only after its storage timeout (34 s
# for a write, 60 s for a read, measured on this stack); a shorter outage only delays the pass. So etcd stays
# down 40 s, and one extra row shows the brief outage.
FIRST = (ANY_WRITE, "before the phase's first write")
USER_POINTS = {"provision": (PASSWORD_CREATE, "before the password Secret and the User are created"),
               "rotation": (USER_APPLY, "before the User is pointed at the new password"),
               "teardown": (USER_DELETE, "before the User is deleted")}
PUSH_POINTS = {"provision": (PUSH_WRITE, "before the PushSecret is written"),
               "rotation": (PUSH_WRITE, "before the PushSecret is re-stamped"),
               "teardown": (PUSH_DELETE, "before the PushSecret is deleted")}
STOPS: Dict[str, tuple] = {
    "etcd": (["etcd"], ["etcd"], {p: FIRST for p in PHASE_NAMES}, 40.0),
    "keystone": (["keystone"], ["keystone"], USER_POINTS, 5.0),
    "openbao": (["openbao"], ["openbao"], PUSH_POINTS, 5.0),
    "k-orc": (["k-orc"], ["k-orc"], USER_POINTS, 5.0),
    "eso": (["eso"], ["eso"], PUSH_POINTS, 5.0),
    "target cluster": (TARGET_SERVERS, ["kube-edge-1"],
                       {"provision": (TARGET_WRITE, "before the first write on the target"),
                        "rotation": (PASSWORD_CREATE, "before the rotation's first write"),
                        "teardown": (r"^mgmt DELETE ", "before the first delete")}, 5.0),
}
FAULT_NAMES = {
    "etcd": "etcd stopped (kube-apiserver answers 504)",
    "keystone": "Keystone stopped",
    "openbao": "OpenBao stopped (dev server: restarts empty)",
    "k-orc": "K-ORC stopped and restarted",
    "eso": "ESO stopped and restarted",
    "target cluster": "target cluster edge-1 disappears (etcd, apiserver, controller manager)",
}


def fault_rows() -> List[Row]:
    rows = [Row(f"baseline/{p}", "none (baseline)", p, NoFault) for p in PHASE_NAMES]
    for family, (servers, start_as, points, hold) in STOPS.items():
        for phase in PHASE_NAMES:
            target = family == "target cluster"
            before, where = points[phase]
            rows.append(Row(
                f"{family.replace(' ', '-')}/{phase}", FAULT_NAMES[family], phase,
                lambda s=servers, b=before, h=hold, st=start_as: StopServers(s, b, hold=h, start_as=st),
                detail=f"{where}; down {hold:.0f} s" + ("; until a management-cluster order is Ready" if target else ""),
                cluster="edge-1" if target else "", bystander=target))
        if family == "etcd":
            rows.append(Row("etcd-brief/provision", "etcd stopped briefly (requests held)", "provision",
                            lambda: StopServers(["etcd"], ANY_WRITE, hold=5.0), detail="before the first write; down 5 s"))
    for phase in PHASE_NAMES:
        rows.append(Row(f"apf/{phase}", "APF: pass identity throttled (429)", phase, lambda: Throttle(hold=8.0),
                        detail="priority level of 1 share, Reject; its seats held by the same identity; 8 s"))
    for phase in PHASE_NAMES:
        rows.append(Row(f"conflict/{phase}", "conflicting write by another field manager (409)", phase,
                        lambda: Intrude(times=2), detail="before each of 2 preconditioned writes",
                        applicable=("" if phase != "rotation" else
                                    "no write of a rotation carries a precondition (Secrets created, User and "
                                    "PushSecret force-applied, status merged)")))
    return rows


def kill_rows(phase: str, writes: List[str], limit: int = 0) -> List[Row]:
    """One row per write point of ``phase``'s unkilled run: SIGKILL the pass right after write k."""
    rows = []
    for k, described in enumerate(writes, start=1):
        if limit and k > limit:
            break
        rows.append(Row(f"sigkill/{phase}/{k:02d}", "pass process SIGKILLed between two writes", phase,
                        lambda k=k: KillPass(after_write=k), detail=f"after write {k}: {described}"))
    return rows


def gateway_rows() -> List[Row]:
    """The object-storage baselines (their write sequences give the gateway rows their steps) and OpenBao and ESO
    stopped while a key is issued (before the key's PushSecret is written: the key exists, its backup does not)."""
    rows = [Row(f"gateway-baseline/{p}", "none (baseline)", p, NoFault, kind=OS) for p in OS_PHASE_NAMES]
    for family in ("openbao", "eso"):
        servers, start_as, _, hold = STOPS[family]
        rows.append(Row(f"gateway-{family}/issue", FAULT_NAMES[family] + " while a key is issued", "issue",
                        lambda s=servers, st=start_as, h=hold: StopServers(s, PUSH_WRITE, hold=h, start_as=st),
                        detail=f"before the new key's PushSecret is written; down {hold:.0f} s", kind=OS))
    return rows


def gateway_steps(writes: List[str]) -> List[tuple]:
    """(write index, description) of every gateway write of a baseline: each is a step a fault can hit."""
    return [(k, described) for k, described in enumerate(writes, start=1) if described.startswith("gw ")]


def gateway_fault_rows(phase: str, writes: List[str], limit: int = 0) -> List[Row]:
    """For each gateway write of ``phase``'s baseline: the gateway frozen and killed right before it, and the pass
    SIGKILLed right after it."""
    rows = []
    steps = gateway_steps(writes)[:limit or None]
    for k, described in steps:
        rows.append(Row(f"gateway-frozen/{phase}/{k:02d}", "Ceph RGW frozen (SIGSTOP, SIGCONT after 12 s)", phase,
                        lambda k=k: FreezeGateway(before_write=k), detail=f"before write {k}: {described}", kind=OS))
        rows.append(Row(f"gateway-killed/{phase}/{k:02d}", "Ceph RGW killed (SIGKILL, restarted after 12 s)", phase,
                        lambda k=k: KillGateway(before_write=k), detail=f"before write {k}: {described}", kind=OS))
    for k, described in steps:
        rows.append(Row(f"gateway-sigkill/{phase}/{k:02d}", "pass process SIGKILLed right after a gateway write",
                        phase, lambda k=k: KillPass(after_write=k), detail=f"after write {k}: {described}", kind=OS))
    return rows
