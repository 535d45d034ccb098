"""The real K-ORC and ESO controllers, built from their pinned Go modules, run out of cluster.

Both are installed with the CRDs that ship inside their modules (read from the Go module cache) and
watch the management cluster through the admin kubeconfig. ESO's vault provider is what pushes to
OpenBao (its dedicated openbao provider is read-only).
"""
import time
from typing import Dict

from . import binaries
from .config import HOST, StackConfig
from .kube import kubeconfig_path
from .kubectl import Kubectl
from .process import Service, http_ok

KORC_CRDS = ("users", "domains", "projects", "roles", "applicationcredentials")  # waited for


def _korc(cfg: StackConfig, bins) -> Service:
    health = cfg.port("korc_health")
    return Service(cfg, "k-orc", [
        str(bins / "manager"), "--leader-elect=false", "--metrics-bind-address=0",
        f"--health-probe-bind-address={HOST}:{health}",
    ], env={"KUBECONFIG": str(kubeconfig_path(cfg))},
        ready=lambda: http_ok(f"http://{HOST}:{health}/readyz"), timeout=90)


def _eso(cfg: StackConfig, bins) -> Service:
    metrics = cfg.port("eso_metrics")
    return Service(cfg, "eso", [
        str(bins / "external-secrets"), f"--metrics-addr={HOST}:{metrics}",
        "--enable-leader-election=false", "--enable-cluster-external-secret-reconciler=false",
        "--enable-cluster-push-secret-reconciler=false", "--concurrent=4", "--loglevel=info",
        "--store-requeue-interval=30s",
    ], env={"KUBECONFIG": str(kubeconfig_path(cfg))},
        ready=lambda: http_ok(f"http://{HOST}:{metrics}/metrics"), timeout=90)


def install_crds(cfg: StackConfig) -> None:
    k = Kubectl(cfg, kubeconfig_path(cfg))
    korc_dir = binaries.module_dir(cfg, binaries.KORC) / "config" / "crd" / "bases"
    korc_files = sorted(korc_dir.glob("openstack.k-orc.cloud_*.yaml"))  # the manager starts every controller
    eso_dir = binaries.module_dir(cfg, binaries.ESO) / "config" / "crds" / "bases"
    eso_files = sorted(p for p in eso_dir.glob("*.yaml") if p.name != "kustomization.yaml")
    k.apply_files(korc_files + eso_files)
    k.wait_crds([f"{n}.openstack.k-orc.cloud" for n in KORC_CRDS] +
                ["pushsecrets.external-secrets.io", "secretstores.external-secrets.io"])


def up(cfg: StackConfig) -> Dict[str, str]:
    korc_bins = binaries.ensure_built(cfg, binaries.KORC, ["manager"])
    eso_bins = binaries.ensure_built(cfg, binaries.ESO, ["external-secrets"])
    install_crds(cfg)
    timings = {}
    for svc in (_korc(cfg, korc_bins), _eso(cfg, eso_bins)):
        t0 = time.monotonic()
        timings[svc.name] = (svc.ensure(), time.monotonic() - t0)
    (cfg.dir("logs") / "controllers.timings").write_text(
        "".join(f"{k} {s} {t:.1f}s\n" for k, (s, t) in timings.items()))
    return {}


def down(cfg: StackConfig) -> None:
    _korc(cfg, binaries.bin_dir(cfg, binaries.KORC)).stop()
    _eso(cfg, binaries.bin_dir(cfg, binaries.ESO)).stop()


def status(cfg: StackConfig):
    out = []
    for svc in (_korc(cfg, binaries.bin_dir(cfg, binaries.KORC)), _eso(cfg, binaries.bin_dir(cfg, binaries.ESO))):
        out.append((svc.name, "up" if svc.running() else "down", f"pid {svc.pid()}"))
    return out
