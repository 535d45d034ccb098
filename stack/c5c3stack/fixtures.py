"""What the c5c3-operator would have made before any order exists.

In the management cluster's ``openstack`` namespace: ControlPlane ``cp`` (AdminCredentialReady=True),
the admin clouds Secret ``cp-admin-password-cloud`` K-ORC authenticates with, the admin Domain import
``cp-domain-default``, and the namespaced SecretStore ``openbao-tenant-store`` with a token confined to
``openstack``'s OpenBao path prefix. Plus the fixture CRDs (ControlPlane, KeystoneRoleAssignment,
KeystoneApplicationCredential) and the KeystoneUser CRD the collection ships.
"""
import base64
import json
import time

from . import keystone, openbao
from .config import HOST, StackConfig
from .kube import kubeconfig_path
from .kubectl import Kubectl
from .process import StackError

CP_NAMESPACE = "openstack"
CP_NAME = "cp"
STORE = "openbao-tenant-store"
DEMO_NAMESPACE = "tenant-a"
FIXTURE_CRDS = ("controlplanes.c5c3.io", "keystoneroleassignments.c5c3.io",
                "keystoneapplicationcredentials.c5c3.io")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _clouds_yaml(cloud: dict) -> str:
    auth = cloud["auth"]
    lines = ["clouds:", "  admin:", "    auth:"]
    lines += [f"      {k}: {json.dumps(v)}" for k, v in auth.items()]
    for key in ("region_name", "interface", "identity_api_version"):
        if key in cloud:
            lines.append(f"    {key}: {json.dumps(cloud[key])}")
    return "\n".join(lines) + "\n"


def crd_files(cfg: StackConfig, target: bool = False):
    """The fixture CRDs and the collection's own: every kind on the management cluster; on a target cluster the
    order kinds the target_cluster_access role ships (never the ControlPlane or the platform's object-storage kinds)."""
    fixtures = [cfg.root / "stack" / "fixtures" / "crds" / f"{n}.yaml" for n in FIXTURE_CRDS]
    if target:
        fixtures = [f for f in fixtures if "controlplanes" not in f.name]
        shipped = cfg.root / "roles" / "target_cluster_access" / "files" / "crds"
    else:
        shipped = cfg.root / "roles" / "install" / "files" / "crds"
    return fixtures + sorted(shipped.glob("c5c3.io_*.yaml"))


def crd_name(path) -> str:
    """``c5c3.io_<plural>.yaml`` -> ``<plural>.c5c3.io``; a fixture file is named after its CRD already."""
    stem = path.name[:-len(".yaml")]
    return f"{stem[len('c5c3.io_'):]}.c5c3.io" if stem.startswith("c5c3.io_") else stem


def install_crds(k: Kubectl, cfg: StackConfig, target: bool = False) -> None:
    files = [f for f in crd_files(cfg, target) if f.exists()]
    k.apply_files(files)
    k.wait_crds([crd_name(f) for f in files])


def up(cfg: StackConfig) -> dict:
    k = Kubectl(cfg, kubeconfig_path(cfg))
    install_crds(k, cfg)
    token = openbao.tenant_token(cfg, CP_NAMESPACE)
    ks_url = keystone.auth_url(cfg)
    k.apply(f"""
apiVersion: v1
kind: Namespace
metadata: {{name: {CP_NAMESPACE}, labels: {{c5c3.io/controlplane: "true"}}}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: {DEMO_NAMESPACE}, labels: {{c5c3.io/tenant: "true"}}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: {CP_NAME}-admin-password-cloud, namespace: {CP_NAMESPACE}}}
type: Opaque
data:
  clouds.yaml: {_b64(_clouds_yaml(keystone.admin_cloud(cfg)))}
---
apiVersion: v1
kind: Secret
metadata: {{name: openbao-tenant-token, namespace: {CP_NAMESPACE}}}
type: Opaque
data:
  token: {_b64(token)}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {{name: {STORE}, namespace: {CP_NAMESPACE}}}
spec:
  provider:
    vault:
      server: {openbao.addr(cfg)}
      path: kv-v2
      version: v2
      auth:
        tokenSecretRef: {{name: openbao-tenant-token, key: token}}
---
apiVersion: openstack.k-orc.cloud/v1alpha1
kind: Domain
metadata: {{name: {CP_NAME}-domain-default, namespace: {CP_NAMESPACE}}}
spec:
  cloudCredentialsRef: {{secretName: {CP_NAME}-admin-password-cloud, cloudName: admin}}
  managementPolicy: unmanaged
  import:
    filter: {{name: Default}}
""")
    _create_control_plane(k, ks_url)
    k.patch_status(f"controlplanes.c5c3.io/{CP_NAME}", CP_NAMESPACE, {"status": {"conditions": [{
        "type": "AdminCredentialReady", "status": "True", "reason": "AdminCredentialReady",
        "message": "admin credential is ready (local stack fixture)",
        "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}})
    _wait_ready(k, f"secretstores.external-secrets.io/{STORE}", "Ready", 90)
    _wait_ready(k, f"domains.openstack.k-orc.cloud/{CP_NAME}-domain-default", "Available", 90)
    # The "in-cluster" Keystone URL is loopback here: the operator's configuration says so (the module option
    # keystone_internal_urls), never the ControlPlane.
    internal_urls = json.dumps({f"{CP_NAMESPACE}/{CP_NAME}": ks_url})
    return {"C5C3_CP_NAMESPACE": CP_NAMESPACE, "C5C3_CP_NAME": CP_NAME, "C5C3_KEYSTONE_INTERNAL_URLS": internal_urls}


def _create_control_plane(k: Kubectl, ks_url: str) -> None:
    """Created once, never re-applied: tests and users edit ``spec.namespaceAssignments`` (an atomic list),
    and re-applying the fixture would silently withdraw their entries."""
    try:
        k.get_json("-n", CP_NAMESPACE, f"controlplanes.c5c3.io/{CP_NAME}")
        return
    except StackError:
        pass
    k("create", "-f", "-", stdin=f"""apiVersion: c5c3.io/v1alpha1
kind: ControlPlane
metadata:
  name: {CP_NAME}
  namespace: {CP_NAMESPACE}
spec:
  openStackRelease: "2025.2"
  region: RegionOne
  korc:
    adminCredential:
      userName: admin
      domainName: Default
      projectName: admin
      cloudCredentialsRef: {{cloudName: admin, secretName: {CP_NAME}-admin-password-cloud}}
  services:
    keystone:
      mode: Managed
      publicEndpoint: {ks_url}
  namespaceAssignments:
  - namespace: {DEMO_NAMESPACE}
""")


def _wait_ready(k: Kubectl, resource: str, condition: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        obj = k.get_json("-n", CP_NAMESPACE, resource)
        for c in obj.get("status", {}).get("conditions", []):
            if c.get("type") == condition:
                last = c
                if c.get("status") == "True":
                    return
        time.sleep(1)
    raise StackError(f"{resource} is not {condition} after {timeout:.0f}s: {last}")


def up_target(cfg: StackConfig, cluster: str) -> None:
    """A target cluster serves the order kinds (CRDs only): the operator writes orders' status there."""
    install_crds(Kubectl(cfg, kubeconfig_path(cfg, cluster)), cfg, target=True)


__all__ = ["up", "up_target", "CP_NAMESPACE", "CP_NAME", "HOST"]
