"""``python -m c5c3faults.stackctl up|down|start NAME``: the matrix's own stack, run in a child process whose
environment carries ``C5C3_STACK_DIR`` and the shifted ``C5C3_PORT_*`` (the harness never changes its own).

``up`` is the stack's own ``up`` (target cluster included) plus two things the fault matrix needs:

- API Priority and Fairness on the management apiserver. The stack starts kube-apiserver with
  ``--enable-priority-and-fairness=false`` and has no option for it, so this restarts that one process with
  the flag turned on (same argv otherwise, same PID file, so ``status``/``down`` keep working);
- the pass identity: a client certificate for user ``c5c3-faults-pass`` (group ``c5c3-faults``) signed by the
  cluster CA, bound to ``cluster-admin``. The admin kubeconfig is ``system:masters``, which APF exempts, so
  the 429 faults need an identity of their own.

``start NAME`` brings one stopped server back with the stack's own definition of it (``rgw-gw``: the Tentacle
radosgw alone) (the fault injectors stop
servers through their PID files).
"""
import sys
import time
from pathlib import Path

from .stackenv import STACK_SRC, TARGET

sys.path.insert(0, str(STACK_SRC))

from c5c3stack import binaries, cli, controllers, keystone, kube, mariadb, openbao, rgw  # noqa: E402
from c5c3stack.certs import ensure_pki  # noqa: E402
from c5c3stack.config import HOST, StackConfig  # noqa: E402
from c5c3stack.kubectl import Kubectl  # noqa: E402
from c5c3stack.process import run  # noqa: E402

APF_OFF = "--enable-priority-and-fairness=false"
APF_ON = "--enable-priority-and-fairness=true"
PASS_USER, PASS_GROUP = "c5c3-faults-pass", "c5c3-faults"
GATEWAY = "rgw-gw"  # the PID file name of the Tentacle radosgw (stack/c5c3stack/rgw.py)


def _kube_services(cfg: StackConfig, cluster: str):
    index = 0 if cluster == kube.MANAGEMENT else cli._target_index(cfg, cluster)  # pylint: disable=protected-access
    pki = ensure_pki(cfg.dir("kube", cluster, "pki"), HOST)
    services = kube._services(cfg, cluster, index, binaries.bin_dir(cfg, binaries.KUBE), pki)  # pylint: disable=protected-access
    apiserver = services[1]
    if cluster == kube.MANAGEMENT:
        apiserver.argv = [APF_ON if arg == APF_OFF else arg for arg in apiserver.argv]
    return services


def _cmdline(pid: int) -> list:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def enable_apf(cfg: StackConfig) -> str:
    apiserver = _kube_services(cfg, kube.MANAGEMENT)[1]
    pid = apiserver.pid()
    if pid and APF_ON in _cmdline(pid):
        return "reused"
    apiserver.stop()
    return apiserver.ensure()


def grant_pass_identity(cfg: StackConfig) -> Path:
    """A kubeconfig for the pass identity (created once; the binding is re-applied on every ``up``)."""
    pki = ensure_pki(cfg.dir("kube", kube.MANAGEMENT, "pki"), HOST)
    own = cfg.dir("faults")
    key, crt, kubeconfig = own / "pass.key", own / "pass.crt", own / "pass.kubeconfig"
    if not crt.exists():
        run(["openssl", "genrsa", "-out", str(key), "2048"])
        key.chmod(0o600)
        csr, ext = own / "pass.csr", own / "pass.ext"
        ext.write_text("extendedKeyUsage=clientAuth\n")
        run(["openssl", "req", "-new", "-key", str(key), "-subj", f"/O={PASS_GROUP}/CN={PASS_USER}", "-out", str(csr)])
        run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(pki["ca.crt"]), "-CAkey", str(pki["ca.key"]),
             "-CAcreateserial", "-days", "30", "-extfile", str(ext), "-out", str(crt)])
        csr.unlink()
        ext.unlink()
    kube.write_kubeconfig(kubeconfig, f"https://{HOST}:{cfg.port('apiserver')}",
                          {"ca.crt": pki["ca.crt"], "admin.crt": crt, "admin.key": key}, "c5c3-faults-pass")
    Kubectl(cfg, kube.kubeconfig_path(cfg)).apply(f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: {PASS_USER}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}
subjects:
- {{apiGroup: rbac.authorization.k8s.io, kind: User, name: {PASS_USER}}}
""")
    return kubeconfig


def start(cfg: StackConfig, name: str) -> str:
    """Start one server of the stack again (after a fault stopped it); returns 'started' or 'reused'."""
    kube_servers = {svc.name: svc for cluster in (kube.MANAGEMENT, TARGET) for svc in _kube_services(cfg, cluster)}
    if name in kube_servers:
        return kube_servers[name].ensure()
    if name == f"kube-{TARGET}":  # the whole target cluster: etcd first, as the stack starts it
        return ",".join(svc.ensure() for svc in _kube_services(cfg, TARGET))
    if name == "keystone":
        return keystone.service(cfg).ensure()
    if name == "mariadb":
        return mariadb.service(cfg).ensure()
    if name == "openbao":
        started = openbao.service(cfg, openbao._binary(cfg)).ensure()  # pylint: disable=protected-access
        openbao.up(cfg)  # dev mode keeps nothing: the mount and the tenant tokens are made again
        return started
    if name == "k-orc":
        return controllers._korc(cfg, binaries.bin_dir(cfg, binaries.KORC)).ensure()  # pylint: disable=protected-access
    if name == GATEWAY:  # the Tentacle radosgw alone: its mon and OSD (and so its data) keep running
        return rgw._gateway(cfg, rgw.TENTACLE).ensure()  # pylint: disable=protected-access
    if name == "eso":
        return controllers._eso(cfg, binaries.bin_dir(cfg, binaries.ESO)).ensure()  # pylint: disable=protected-access
    raise SystemExit(f"unknown server {name!r}")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cfg = StackConfig()
    verb = argv[0] if argv else "up"
    t0 = time.monotonic()
    if verb == "up":
        cli.up(cfg, [TARGET], True)
        print(f"  apiserver with APF             {enable_apf(cfg)}", flush=True)
        print(f"  pass identity                  {grant_pass_identity(cfg)}", flush=True)
    elif verb == "down":
        cli.down(cfg)
    elif verb == "start":
        print(f"{argv[1]}: {start(cfg, argv[1])} in {time.monotonic() - t0:.1f}s", flush=True)
    else:
        raise SystemExit(f"usage: python -m c5c3faults.stackctl up|down|start NAME (got {verb!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
