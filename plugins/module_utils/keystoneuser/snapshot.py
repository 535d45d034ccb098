"""Everything one pass over one order may look at, read by the I/O edge before the pass.

This is the input half of the contract between the pure core and the I/O edge (the output half is
``plan.py``). The core reads nothing else: no API call, no clock, no randomness besides
``new_password``. Objects are raw dicts as the API returns them (``apiVersion``, ``kind``,
``metadata``, ``spec``, ``status``).

Fields:
- ``order``: the KeystoneUser as read (metadata incl. uid, generation, resourceVersion, finalizers,
  deletionTimestamp; spec; status).
- ``cluster``: "" for the management cluster, else the name the order's target cluster is
  registered under.
- ``now``: tz-aware UTC; the only clock.
- ``control_plane``: the ControlPlane ``spec.controlPlaneRef`` names, read on the management cluster;
  None = not found.
- ``secret_store``: the store the ControlPlane's namespace pushes through (SecretStore
  ``openbao-tenant-store`` unless the ControlPlane's ``spec.secretStoreRef`` names another); None =
  missing. ``store_kind`` is its kind, as the PushSecret must reference it.
- ``children``: every object in the ControlPlane's namespace that carries this order's three labels
  (K-ORC Users incl. the probe, Secrets, PushSecrets), raw with apiVersion/kind. The core itself
  decides which of them are really ours (labels AND one of our names).
- ``delivered``: the live Secret ``<name>-credentials`` beside the order (same namespace and cluster)
  if it carries the label ``c5c3.io/keystoneuser-name=<name>``; None otherwise. (An unlabelled
  Secret of that name is found by the 409 its Create gets.)
- ``role_assignments`` / ``app_credentials``: the KeystoneRoleAssignments / KeystoneApplicationCredentials
  (c5c3.io) in the order's namespace; None = the cluster does not serve that kind. An entry names
  the order through ``spec.userRef.name``; ``metadata.deletionTimestamp`` marks one being deleted.
- ``new_password``: called at most once per new password Secret; the edge passes
  ``lambda: secrets.token_urlsafe(32)`` (43 characters), tests a deterministic fake.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping, Optional, Sequence

DEFAULT_STORE_KIND = "SecretStore"


@dataclass(frozen=True)
class Snapshot:
    order: Mapping[str, Any]
    cluster: str
    now: datetime
    control_plane: Optional[Mapping[str, Any]]
    secret_store: Optional[Mapping[str, Any]]
    children: Sequence[Mapping[str, Any]]
    delivered: Optional[Mapping[str, Any]]
    role_assignments: Optional[Sequence[Mapping[str, Any]]]
    app_credentials: Optional[Sequence[Mapping[str, Any]]]
    new_password: Callable[[], str] = field(repr=False)
    store_kind: str = DEFAULT_STORE_KIND
