"""The resource types the controller watches, and where (pure: no I/O).

Where a kind may be watched is the access contract's (docs/install.md, "Permissions"): orders, ControlPlanes and
credential orders across the management cluster; Secrets, K-ORC Users, PushSecrets, SecretStores and the two
object-storage platform kinds only in the namespace of each ControlPlane; Secrets also in each namespace a
ControlPlane assigns; on a target cluster everything per assigned namespace. A kind is one ``Kind`` line below.

One resource type may be watched in several streams with different label selectors (the collection's Secrets
carry ``c5c3.io/keystoneuser-name`` or ``c5c3.io/bucketcredential-name`` or ``c5c3.io/objectstoreaccount-name``,
and a label selector cannot say "any of these keys"), so a Kind's ``key`` names the stream and ``shown`` the
resource in log lines ("event MODIFIED Secret t/x-s3").
"""
from typing import NamedTuple, Tuple

C5C3 = "c5c3.io/v1alpha1"
LABEL_NAME = "c5c3.io/keystoneuser-name"
LABEL_NAMESPACE = "c5c3.io/keystoneuser-namespace"
LABEL_CLUSTER = "c5c3.io/keystoneuser-cluster"
NAME_KEY_LABEL = "c5c3.io/keystoneuser-name-key"
BC_LABEL_NAME = "c5c3.io/bucketcredential-name"
BC_LABEL_NAMESPACE = "c5c3.io/bucketcredential-namespace"
ACCOUNT_LABEL = "c5c3.io/objectstoreaccount-name"

# Where a kind is watched on a cluster:
CLUSTER = "cluster"               # one watch across all namespaces
CONTROLPLANE_NS = "controlplane"  # one watch in the namespace of each ControlPlane
ASSIGNED_NS = "assigned"          # one watch in each namespace a ControlPlane assigns on this cluster

# Which pass reconciles an order kind (the reconcile role's c5c3_reconcile_kinds).
KEYSTONEUSER_PASS = "keystoneuser"
OBJECTSTORAGE_PASS = "objectstorage"


class Kind(NamedTuple):
    """A watch stream's resource type, its scopes on the management cluster and on a target cluster (empty: not
    watched there), and whether its events can concern an order at all (``triggers``; a SecretStore is watched
    only so that a targeted pass can read it from the controller's cache)."""

    key: str                 # names the stream in logs, metrics and WatchKeys
    api_version: str
    plural: str
    label_selector: str = ""
    metadata_only: bool = False
    management: Tuple[str, ...] = (CLUSTER,)
    target: Tuple[str, ...] = ()
    shown: str = ""          # the resource's kind in log lines (default: key)
    triggers: bool = True

    @property
    def display(self) -> str:
        return self.shown or self.key

    def collection_path(self, namespace: str = "") -> str:
        prefix = "/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version
        return prefix + ("/namespaces/" + namespace if namespace else "") + "/" + self.plural

    def scopes(self, cluster: str) -> Tuple[str, ...]:
        return self.management if cluster == "" else self.target


KEYSTONEUSER = Kind("KeystoneUser", C5C3, "keystoneusers", target=(ASSIGNED_NS,))
SECRET = Kind("Secret", "v1", "secrets", label_selector=LABEL_NAME, metadata_only=True,
              management=(CONTROLPLANE_NS, ASSIGNED_NS), target=(ASSIGNED_NS,))
CONTROLPLANE = Kind("ControlPlane", C5C3, "controlplanes")
KORC_USER = Kind("User", "openstack.k-orc.cloud/v1alpha1", "users", label_selector=LABEL_NAME,
                 management=(CONTROLPLANE_NS,))
PUSHSECRET = Kind("PushSecret", "external-secrets.io/v1alpha1", "pushsecrets", label_selector=LABEL_NAME,
                  management=(CONTROLPLANE_NS,))
ROLE_ASSIGNMENT = Kind("KeystoneRoleAssignment", C5C3, "keystoneroleassignments", target=(ASSIGNED_NS,))
APP_CREDENTIAL = Kind("KeystoneApplicationCredential", C5C3, "keystoneapplicationcredentials",
                      target=(ASSIGNED_NS,))
SECRETSTORE = Kind("SecretStore", "external-secrets.io/v1", "secretstores", management=(CONTROLPLANE_NS,),
                   triggers=False)
# the object-storage kinds (issue 13): orders across the management cluster and per assigned namespace on a
# target, the platform objects per ControlPlane namespace, and the children of each labelled with their owner
BUCKETCREDENTIAL = Kind("BucketCredential", C5C3, "bucketcredentials", target=(ASSIGNED_NS,))
OBJECTSTORE = Kind("ObjectStore", C5C3, "objectstores", management=(CONTROLPLANE_NS,))
OBJECTSTOREACCOUNT = Kind("ObjectStoreAccount", C5C3, "objectstoreaccounts", management=(CONTROLPLANE_NS,))
BC_SECRET = Kind("Secret.bucketcredential", "v1", "secrets", label_selector=BC_LABEL_NAME, metadata_only=True,
                 management=(CONTROLPLANE_NS, ASSIGNED_NS), target=(ASSIGNED_NS,), shown="Secret")
BC_PUSHSECRET = Kind("PushSecret.bucketcredential", "external-secrets.io/v1alpha1", "pushsecrets",
                     label_selector=BC_LABEL_NAME, management=(CONTROLPLANE_NS,), shown="PushSecret")
ACCOUNT_SECRET = Kind("Secret.objectstoreaccount", "v1", "secrets", label_selector=ACCOUNT_LABEL,
                      metadata_only=True, management=(CONTROLPLANE_NS,), shown="Secret")
ACCOUNT_PUSHSECRET = Kind("PushSecret.objectstoreaccount", "external-secrets.io/v1alpha1", "pushsecrets",
                          label_selector=ACCOUNT_LABEL, management=(CONTROLPLANE_NS,), shown="PushSecret")

KEYSTONEUSER_KINDS = (KEYSTONEUSER, SECRET, CONTROLPLANE, KORC_USER, PUSHSECRET, ROLE_ASSIGNMENT, APP_CREDENTIAL)
OBJECTSTORAGE_KINDS = (BUCKETCREDENTIAL, OBJECTSTORE, OBJECTSTOREACCOUNT, BC_SECRET, BC_PUSHSECRET,
                       ACCOUNT_SECRET, ACCOUNT_PUSHSECRET)
KINDS = KEYSTONEUSER_KINDS + OBJECTSTORAGE_KINDS + (SECRETSTORE,)
BY_KEY = {k.key: k for k in KINDS}


def kinds_for(cluster: str):
    """The kinds watched on a cluster ("" = management; target clusters hold orders, delivered Secrets and
    credential orders, while every projected child lives on the management cluster)."""
    return tuple(k for k in KINDS if k.scopes(cluster))
