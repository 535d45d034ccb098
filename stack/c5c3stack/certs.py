"""A throw-away PKI for one local control plane: CA, serving cert, admin client cert, SA keys, the API
server's client cert for kubelets, and (``ensure_client_cert``) more client certs signed by the same CA.

Made with the openssl CLI (always on Debian) so the stack needs no Python crypto library.
Files are created once and reused, so a kubeconfig stays valid across restarts; only the serving certificate is
signed again (same key, same CA) when it lacks an IP address it must carry (``extra_ips``: the node's Pod gateway).
"""
import os
import re
import subprocess
from pathlib import Path
from typing import Iterable, Set, Tuple

from .process import run

DAYS = "3650"
SERVICE_IP = "10.0.0.1"  # the first of kube.py's --service-cluster-ip-range: the kubernetes Service


def _key(path: Path) -> None:
    if not path.exists():
        run(["openssl", "genrsa", "-out", str(path), "2048"])
        path.chmod(0o600)


def server_san(host: str, extra_ips: Iterable[str] = ()) -> str:
    """The serving certificate's subjectAltName: loopback and the in-cluster names, then ``extra_ips``."""
    extra = [f"IP:{ip}" for ip in dict.fromkeys(extra_ips) if ip not in (host, SERVICE_IP)]
    return ",".join([f"IP:{host}", "DNS:localhost", "DNS:kubernetes", "DNS:kubernetes.default",
                     "DNS:kubernetes.default.svc", f"IP:{SERVICE_IP}"] + extra)


def parse_san_ips(text: str) -> Set[str]:
    """The IP addresses in ``openssl x509 -noout -ext subjectAltName`` output."""
    return set(re.findall(r"IP Address:([0-9A-Fa-f.:]+)", text))


def cert_ips(crt: Path) -> Set[str]:
    """The IP addresses a certificate's subjectAltName names (empty when it has none or cannot be read)."""
    out = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(crt)],
                         capture_output=True, text=True, timeout=30)
    return parse_san_ips(out.stdout) if out.returncode == 0 else set()


def ensure_pki(folder: Path, host: str, extra_ips: Iterable[str] = ()) -> dict:
    """Create (once) and return the paths of the cluster's certificates and keys. The serving certificate also
    names ``extra_ips``; one made before them is signed again, and the running API server loads it from the file
    (kube.py waits for that)."""
    extra_ips = list(extra_ips)
    p = {n: folder / n for n in ("ca.key", "ca.crt", "server.key", "server.crt", "admin.key",
                                 "admin.crt", "sa.key", "sa.pub", "kubelet-client.key", "kubelet-client.crt")}
    _key(p["ca.key"])
    if not p["ca.crt"].exists():
        run(["openssl", "req", "-x509", "-new", "-key", str(p["ca.key"]), "-days", DAYS,
             "-subj", "/CN=c5c3-local-ca", "-out", str(p["ca.crt"])])
    lacking = p["server.crt"].exists() and not {host, *extra_ips} <= cert_ips(p["server.crt"])
    _signed(folder, p, "server", "/CN=kube-apiserver",
            f"subjectAltName={server_san(host, extra_ips)}\nextendedKeyUsage=serverAuth", renew=lacking)
    _signed(folder, p, "admin", "/O=system:masters/CN=c5c3-admin", "extendedKeyUsage=clientAuth")
    # what kube-apiserver presents to a kubelet (logs, exec): the node's kubelet accepts the cluster CA
    _signed(folder, p, "kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client",
            "extendedKeyUsage=clientAuth")
    _key(p["sa.key"])
    if not p["sa.pub"].exists():
        run(["openssl", "rsa", "-in", str(p["sa.key"]), "-pubout", "-out", str(p["sa.pub"])])
    return p


def _signed(folder: Path, p: dict, name: str, subject: str, extensions: str, renew: bool = False) -> None:
    """Sign ``<name>.crt`` once (again when ``renew``, with the same key); written to a temporary file and
    renamed, so a server watching the file never reads half a certificate."""
    crt = p[f"{name}.crt"]
    _key(p[f"{name}.key"])
    if crt.exists() and not renew:
        return
    csr, ext, tmp = folder / f"{name}.csr", folder / f"{name}.ext", folder / f"{name}.crt.tmp"
    ext.write_text(extensions + "\n")
    run(["openssl", "req", "-new", "-key", str(p[f"{name}.key"]), "-subj", subject, "-out", str(csr)])
    run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(p["ca.crt"]), "-CAkey", str(p["ca.key"]),
         "-CAcreateserial", "-days", DAYS, "-extfile", str(ext), "-out", str(tmp)])
    os.replace(tmp, crt)
    csr.unlink()
    ext.unlink()


def ensure_client_cert(pki: dict, folder: Path, name: str, subject: str) -> Tuple[Path, Path]:
    """A client certificate ``<folder>/<name>.crt`` (and key) for ``subject`` (``/O=group/CN=user``), signed
    by the cluster CA of ``pki`` (what ``ensure_pki`` returned); created once and reused."""
    folder.mkdir(parents=True, exist_ok=True)
    p = {"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"],
         f"{name}.crt": folder / f"{name}.crt", f"{name}.key": folder / f"{name}.key"}
    _signed(folder, p, name, subject, "extendedKeyUsage=clientAuth")
    return p[f"{name}.crt"], p[f"{name}.key"]
