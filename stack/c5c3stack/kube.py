"""A real Kubernetes control plane as local processes: etcd, kube-apiserver, kube-controller-manager.

The management cluster is index 0; a target cluster ("edge-1", ...) is an independent second control
plane with its own etcd, ports, PKI and kubeconfig. The controller manager runs the controllers the
collection relies on (garbage collection of owner references, namespace deletion), so finalizers,
ownerReferences and namespace teardown behave as on a real cluster, and those workloads need on the
node (node.py): Deployments, ReplicaSets, Jobs, CronJobs, each namespace's ``default`` ServiceAccount and
``kube-root-ca.crt`` ConfigMap. The API server signs ServiceAccount tokens (projected volumes) and
presents ``kubelet-client.crt`` to kubelets (logs, exec).

``stale`` names the running servers whose command line differs from what ``up`` would start now: ``up``
reuses a running server as it is, so a flag added here reaches a running stack only after a restart. The
management API server's certificate also names the node's Pod gateway (``ensure_cluster_pki``); when ``up``
signs it again for that, a reused API server loads the new file by itself (``_serving_cert_current``).
"""
import ssl
import time
from pathlib import Path
from typing import Dict, List

from . import binaries
from .certs import ensure_pki
from .config import HOST, PodNetwork, StackConfig
from .process import Service, StackError, http_ok, wait_until

MANAGEMENT = "management"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager")
# garbagecollector, namespace: what the collection relies on; the rest: what Deployments, Jobs and CronJobs
# need to run on the node (serviceaccount makes each namespace's "default" ServiceAccount, which Pod admission
# requires; root-ca-cert-publisher the "kube-root-ca.crt" ConfigMap a projected token volume mounts;
# nodelifecycle lifts the not-ready taint a kubelet registers its node with, and taints a node that stops)
CONTROLLERS = ("garbagecollector", "namespace", "serviceaccount", "serviceaccount-token",
               "root-ca-cert-publisher", "deployment", "replicaset", "job", "cronjob", "ttl-after-finished",
               "nodelifecycle")


def cluster_dir(cfg: StackConfig, cluster: str) -> Path:
    return cfg.dir("kube", cluster)


def kubeconfig_path(cfg: StackConfig, cluster: str = MANAGEMENT) -> Path:
    return cluster_dir(cfg, cluster) / "kubeconfig"


def _services(cfg: StackConfig, cluster: str, index: int, bins: Path, pki: dict):
    d = cluster_dir(cfg, cluster)
    etcd_url = f"http://{HOST}:{cfg.port('etcd_client', index)}"
    peer_url = f"http://{HOST}:{cfg.port('etcd_peer', index)}"
    api_port = cfg.port("apiserver", index)
    admin = (str(pki["admin.crt"]), str(pki["admin.key"]))
    tag = "" if cluster == MANAGEMENT else f"-{cluster}"

    etcd = Service(cfg, f"etcd{tag}", [
        str(bins / "etcd"), "--name", "default", "--data-dir", str(d / "etcd"),
        "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
        "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
        "--initial-cluster", f"default={peer_url}", "--unsafe-no-fsync", "--log-level", "warn",
    ], ready=lambda: http_ok(f"{etcd_url}/health"), timeout=60)

    apiserver = Service(cfg, f"kube-apiserver{tag}", [
        str(bins / "kube-apiserver"),
        "--etcd-servers", etcd_url, "--etcd-prefix", "/registry",
        "--bind-address", HOST, "--advertise-address", HOST, "--secure-port", str(api_port),
        "--tls-cert-file", str(pki["server.crt"]), "--tls-private-key-file", str(pki["server.key"]),
        "--client-ca-file", str(pki["ca.crt"]),
        # the aggregation-layer CA: without it the controller manager's delegated auth logs errors
        "--requestheader-client-ca-file", str(pki["ca.crt"]),
        "--requestheader-allowed-names", "front-proxy-client",
        "--requestheader-username-headers", "X-Remote-User",
        "--requestheader-group-headers", "X-Remote-Group",
        "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
        "--service-account-issuer", "https://kubernetes.default.svc",
        "--service-account-key-file", str(pki["sa.pub"]),
        "--service-account-signing-key-file", str(pki["sa.key"]),
        "--service-cluster-ip-range", "10.0.0.0/24",
        "--kubelet-client-certificate", str(pki["kubelet-client.crt"]),
        "--kubelet-client-key", str(pki["kubelet-client.key"]),
        "--authorization-mode", "RBAC",
        "--endpoint-reconciler-type", "none",
        "--enable-priority-and-fairness=false",
        "--profiling=false",
        "--cert-dir", str(d / "certs-runtime"),
    ], ready=lambda: http_ok(f"https://{HOST}:{api_port}/readyz", cafile=str(pki["ca.crt"]), cert=admin),
        timeout=120)

    kcm_port = cfg.port("kcm", index)
    kcm = Service(cfg, f"kube-controller-manager{tag}", [
        str(bins / "kube-controller-manager"),
        "--kubeconfig", str(kubeconfig_path(cfg, cluster)),
        "--authentication-kubeconfig", str(kubeconfig_path(cfg, cluster)),
        "--authorization-kubeconfig", str(kubeconfig_path(cfg, cluster)),
        "--controllers", ",".join(CONTROLLERS),
        "--service-account-private-key-file", str(pki["sa.key"]),
        "--root-ca-file", str(pki["ca.crt"]),
        "--leader-elect=false", "--use-service-account-credentials=false",
        "--bind-address", HOST, "--secure-port", str(kcm_port),
        "--cert-dir", str(d / "kcm-certs"),
        "--concurrent-gc-syncs", "5",
    ], ready=lambda: http_ok(f"https://{HOST}:{kcm_port}/healthz"), timeout=60)
    return etcd, apiserver, kcm


def write_kubeconfig(path: Path, server: str, pki: dict, name: str) -> None:
    """A kubeconfig with file references (not inline data), readable by kubectl and the Python client."""
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: {server}
    certificate-authority: {pki['ca.crt']}
users:
- name: {name}-admin
  user:
    client-certificate: {pki['admin.crt']}
    client-key: {pki['admin.key']}
contexts:
- name: {name}
  context: {{cluster: {name}, user: {name}-admin}}
current-context: {name}
""")
    path.chmod(0o600)


def ensure_cluster_pki(cfg: StackConfig, cluster: str = MANAGEMENT) -> dict:
    """The cluster's PKI as ``up`` wants it: the management API server's certificate also names the node's Pod
    gateway, where node.py's forwarder relays pods' connections (computed from the config: no node need run)."""
    extra = (PodNetwork.of(cfg).gateway,) if cluster == MANAGEMENT else ()
    return ensure_pki(cfg.dir("kube", cluster, "pki"), HOST, extra)


def served_cert_matches(port: int, crt: Path) -> bool:
    """True when the API server on ``HOST:port`` presents the certificate of the file ``crt``."""
    try:
        served = ssl.get_server_certificate((HOST, port), timeout=5)
        return ssl.PEM_cert_to_DER_cert(served) == ssl.PEM_cert_to_DER_cert(crt.read_text())
    except (OSError, ValueError):
        return False


def _serving_cert_current(svc: Service, crt: Path, port: int) -> str:
    """A reused API server presents the certificate it last read: it watches the file (fsnotify, and reads it
    again every minute), so a certificate ``up`` signed again shows within a minute; restarted if not."""
    if served_cert_matches(port, crt):
        return "reused"
    try:
        wait_until(lambda: served_cert_matches(port, crt), 75, f"{svc.name} serving the new {crt.name}",
                   interval=1, alive=lambda: svc.pid() is not None, log=svc.log_file)
        return "reused-reloaded-cert"
    except StackError:
        svc.stop()
        svc.ensure()
        return "restarted-for-cert"


def up(cfg: StackConfig, cluster: str = MANAGEMENT, index: int = 0) -> Dict[str, str]:
    bins = binaries.ensure_built(cfg, binaries.KUBE, BINARIES)
    d = cluster_dir(cfg, cluster)
    pki = ensure_cluster_pki(cfg, cluster)
    write_kubeconfig(kubeconfig_path(cfg, cluster), f"https://{HOST}:{cfg.port('apiserver', index)}",
                     pki, "c5c3-" + cluster)
    timings = {}
    for svc in _services(cfg, cluster, index, bins, pki):
        t0 = time.monotonic()
        state = svc.ensure()
        if state == "reused" and svc.name.startswith("kube-apiserver"):
            state = _serving_cert_current(svc, pki["server.crt"], cfg.port("apiserver", index))
        timings[svc.name] = (state, time.monotonic() - t0)
    _wait_default_namespace(cfg, cluster, pki, index)
    (d / "timings").write_text("".join(f"{k} {s} {t:.1f}s\n" for k, (s, t) in timings.items()))
    key = "KUBECONFIG" if cluster == MANAGEMENT else "C5C3_KUBECONFIG_" + cluster.upper().replace("-", "_")
    return {key: str(kubeconfig_path(cfg, cluster))}


def _wait_default_namespace(cfg: StackConfig, cluster: str, pki: dict, index: int) -> None:
    url = f"https://{HOST}:{cfg.port('apiserver', index)}/api/v1/namespaces/default"
    admin = (str(pki["admin.crt"]), str(pki["admin.key"]))
    wait_until(lambda: http_ok(url, cafile=str(pki["ca.crt"]), cert=admin), 60,
               f"{cluster}: namespace default")


def down(cfg: StackConfig, cluster: str = MANAGEMENT, index: int = 0) -> None:
    if not (cfg.state / "kube" / cluster).exists():
        return
    pki = ensure_pki(cfg.dir("kube", cluster, "pki"), HOST)
    bins = binaries.bin_dir(cfg, binaries.KUBE)
    for svc in reversed(_services(cfg, cluster, index, bins, pki)):
        svc.stop()


def services(cfg: StackConfig, cluster: str = MANAGEMENT, index: int = 0) -> List[Service]:
    """The cluster's etcd, kube-apiserver and kube-controller-manager as ``up`` would start them now."""
    if not (cfg.state / "kube" / cluster / "pki").exists():
        return []
    pki = ensure_pki(cfg.dir("kube", cluster, "pki"), HOST)
    return list(_services(cfg, cluster, index, binaries.bin_dir(cfg, binaries.KUBE), pki))


def stale(cfg: StackConfig, cluster: str = MANAGEMENT, index: int = 0) -> List[str]:
    """The cluster's running servers whose command line is not the one ``up`` would start now."""
    return [svc.name for svc in services(cfg, cluster, index) if svc.running_argv() not in (None, list(svc.argv))]


def status(cfg: StackConfig, cluster: str = MANAGEMENT, index: int = 0):
    if not (cfg.state / "kube" / cluster / "pki").exists():
        return [(f"kube/{cluster}", "down", "never started")]
    pki = ensure_pki(cfg.dir("kube", cluster, "pki"), HOST)
    bins = binaries.bin_dir(cfg, binaries.KUBE)
    return [(svc.name, "up" if svc.running() else "down", f"pid {svc.pid()}")
            for svc in _services(cfg, cluster, index, bins, pki)]


__all__ = ["up", "down", "status", "services", "stale", "kubeconfig_path", "MANAGEMENT", "StackError"]
