"""Which integration tests may run side by side on the one shared stack (docs/testing.md, "Lanes").

``make test`` runs the integration tests in two steps: first the lanes of ``SIDE_BY_SIDE``, each lane's files one
after the other in one pytest-xdist worker and the lanes beside each other (``-n <lanes> --dist loadgroup``); then
the ``ALONE`` files one after the other with nothing beside them. Every file belongs to exactly one lane; a new file
that is not listed fails the collection, so nobody adds a test that silently races another.

A file may run beside other lanes when everything it does is its own:

- its orders live in namespaces of its own and its passes and controllers are limited to them (``namespaces=`` or
  ``orders=``; ``--namespace``), so no pass or controller of another lane decides them;
- the Keystone user names of its KeystoneUser orders never fold alike with another lane's, since one ControlPlane
  ranks every order of a name (docs/reconciler.md, "One owner per Keystone user"): names are ``orders.unique(...)``,
  and a fixed name (``svc``) is used by one lane only (the two ``keystone-*`` lanes say which);
- it freezes, restarts or stops no shared part (a gateway, Keystone, OpenBao): such files run ``ALONE``;
- whatever else it shares is written by one lane only: every file that changes a CRD is in ``crds-and-install``.

The lanes are balanced by the durations ``make test`` measured (docs/testing.md, "Figures").
"""
from pathlib import Path
from typing import Dict, List

SIDE_BY_SIDE: Dict[str, List[str]] = {
    # KeystoneUser orders decided by controllers or torn down; the fixed order names "svc" and "solo" live only here
    "keystone-controllers": [
        "test_controller.py",
        "test_controller_shards.py",
        "test_controller_target.py",
        "test_keystoneuser_teardown_e2e.py",
        "test_pass_requests.py",
        # installs of the image with run-unique names, here for the balance of the lanes (the installs lane is the
        # longest)
        "test_version_skew_node.py",
        "test_upgrade.py",  # release 0.2.0's install upgraded by this checkout's role, run-unique names
    ],
    # KeystoneUser orders reconciled by passes from here; the fixed names "fresh" and "intruder" live only here
    "keystone-passes": [
        "test_target_tokens.py",   # edge-1 accounts of run-unique names; no order
        "test_incluster_ha.py",    # two replicas of an install of run-unique names, on the node's Pod network
        "test_credentials_audit.py",
        "test_keystoneuser_e2e.py",
        "test_keystoneuser_rotation_e2e.py",
        "test_namespace_mark.py",
        "test_secret_template.py",
        "test_tenant_isolation_e2e.py",
    ],
    # BucketCredential and ObjectStoreAccount orders on the gateways, each in tenant namespaces of its own; and the
    # files without any order (the stack's parts, the image, the node)
    "objectstorage": [
        "test_controller_objectstorage.py",
        "test_image.py",
        "test_keystone_names_mariadb.py",
        "test_least_privilege_options.py",
        "test_node.py",
        "test_objectstorage_accounts_e2e.py",
        "test_objectstorage_e2e.py",
        "test_objectstorage_flows_e2e.py",
        "test_objectstorage_revocation_e2e.py",
        "test_objectstorage_rollout_e2e.py",
        "test_objectstorage_root_rotation_schedule_e2e.py",
        "test_objectstorage_rotation_schedule_e2e.py",
        "test_rgw_store_info.py",
        "test_smoke_controllers.py",
        "test_smoke_kube.py",
        "test_smoke_rgw.py",
        "test_smoke_services.py",
    ],
    # every writer of a CRD (the install role applies them on both clusters, test_crd_admission replaces them,
    # test_faults_e2e loosens edge-1's for a moment), and the GitOps render (its apply balances the lanes)
    "crds-and-install": [
        "test_crd_admission.py",
        "test_faults_e2e.py",
        "test_install.py",
        "test_gitops_render.py",
        "test_uninstall.py",
    ],
    # installs of the image (in-cluster, least privilege) and the collection as users get it: each has run-unique names (its admission policies
    # bind its own ServiceAccount only, its controller watches its own tenant namespace); the CRDs they apply are
    # the checkout's, so their server-side apply changes nothing another lane sees
    "installs": [
        "test_incluster.py",
        "test_least_privilege.py",
        "test_installed_collection.py",
    ],
}

ALONE: List[str] = [
    # faults of shared parts: a frozen gateway, Keystone or OpenBao stopped
    "test_faults_subset.py",
    "test_faults_objectstorage_subset.py",
    "test_objectstorage_frozen_gateway_e2e.py",
]


def lane_of(filename: str) -> str:
    """The lane of a test file (``ALONE`` for the files that run with nothing beside them); KeyError when unlisted."""
    for lane, files in SIDE_BY_SIDE.items():
        if filename in files:
            return lane
    if filename in ALONE:
        return "ALONE"
    raise KeyError(filename)


def unlisted(folder: Path) -> List[str]:
    """The test files of ``folder`` that no lane lists."""
    listed = set(ALONE).union(*SIDE_BY_SIDE.values())
    return sorted(p.name for p in folder.glob("test_*.py") if p.name not in listed)


def _scheduling_base():
    try:  # pytest-xdist is in the test venv; lanes.py is also read without it (tests/unit)
        from xdist.scheduler import LoadScopeScheduling
    except ImportError:  # pragma: no cover
        return object
    return LoadScopeScheduling


class LaneScheduling(_scheduling_base()):  # type: ignore[misc]
    """pytest-xdist's scope scheduling with the lane as the scope: a lane is one unit of work, run by one worker."""

    def _split_scope(self, nodeid: str) -> str:
        return lane_of(nodeid.split("::", 1)[0].rsplit("/", 1)[-1])
