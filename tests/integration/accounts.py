"""Identities for RBAC and admission tests: ``kubectl auth can-i --as`` matrices, and real requests made with a real
token of a ServiceAccount (``kubectl create token``), so the apiserver authenticates, authorizes and admits exactly
as it would for the installed workload."""
import json
import subprocess
from pathlib import Path

import yaml


def can_i(kubeconfig, user, verb, resource, namespace=None, subresource=None):
    """``kubectl auth can-i`` as ``user``: True or False. ``namespace="*"`` asks across all namespaces."""
    cmd = ["kubectl", "--kubeconfig", kubeconfig, "auth", "can-i", verb, resource, f"--as={user}"]
    if subresource:
        cmd.append(f"--subresource={subresource}")
    if namespace == "*":
        cmd.append("--all-namespaces")
    elif namespace:
        cmd += ["-n", namespace]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    answer = (proc.stdout.strip().splitlines() or [""])[-1]
    if answer not in ("yes", "no"):
        raise AssertionError(f"{' '.join(cmd)}: {proc.stdout}{proc.stderr}")
    return answer == "yes"


def check_matrix(kubeconfig, user, matrix, where):
    """Ask every row of ``matrix`` ((verb, resource, subresource, namespace, expected)); fail listing every
    mismatch. Prints the matrix (pytest -s shows it)."""
    rows, wrong = [], []
    for verb, resource, subresource, namespace, expected in matrix:
        got = can_i(kubeconfig, user, verb, resource, namespace, subresource)
        what = f"{verb} {resource}{'/' + subresource if subresource else ''}" + (
            "" if namespace is None else " (all namespaces)" if namespace == "*" else f" -n {namespace}")
        rows.append(f"  {'yes' if got else 'no ':3}  {what}")
        if got != expected:
            wrong.append(f"{what}: expected {'yes' if expected else 'no'}")
    print(f"\ncan-i as {user} ({where}):\n" + "\n".join(rows))
    assert not wrong, f"RBAC of {user} differs from the access contract:\n" + "\n".join(wrong)


class Account:
    """A ServiceAccount with a real (one-hour) token, written into a kubeconfig of its own in ``workdir``."""

    def __init__(self, admin_kubeconfig, namespace, name, workdir):
        self.namespace, self.name = namespace, name
        self.user = f"system:serviceaccount:{namespace}:{name}"
        proc = subprocess.run(["kubectl", "--kubeconfig", admin_kubeconfig, "create", "token", name, "-n", namespace,
                               "--duration=1h"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"cannot create a token for {self.user}: {proc.stderr}"
        cfg = yaml.safe_load(Path(admin_kubeconfig).read_text())
        cfg["users"] = [{"name": name, "user": {"token": proc.stdout.strip()}}]
        for ctx in cfg["contexts"]:
            ctx["context"]["user"] = name
        self.config = cfg
        self.kubeconfig = str(Path(workdir) / f"{namespace}.{name}.kubeconfig")
        Path(self.kubeconfig).write_text(yaml.safe_dump(cfg))
        Path(self.kubeconfig).chmod(0o600)

    def kubectl(self, *args, body=None):
        """A real request as this account; ``body`` (a dict) goes to stdin as JSON."""
        return subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args], capture_output=True, text=True,
                              timeout=60, input=json.dumps(body) if body is not None else None)

    def allowed(self, *args, body=None):
        proc = self.kubectl(*args, body=body)
        assert proc.returncode == 0, f"{self.user}: kubectl {' '.join(args)} was refused: {proc.stderr[-600:]}"
        return proc

    def denied(self, *args, body=None, says=""):
        """The request is refused as Forbidden (RBAC, or an admission policy whose message contains ``says``)."""
        proc = self.kubectl(*args, body=body)
        assert proc.returncode != 0, f"{self.user}: kubectl {' '.join(args)} was allowed"
        assert "forbidden" in proc.stderr.lower(), f"{self.user}: kubectl {' '.join(args)}: {proc.stderr[-600:]}"
        assert says in proc.stderr, f"{self.user}: kubectl {' '.join(args)} refused without {says!r}: " \
                                    f"{proc.stderr[-600:]}"
        return proc
