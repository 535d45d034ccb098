"""kubectl calls the stack makes while setting a cluster up (apply, wait, status patches)."""
import json
import subprocess
from pathlib import Path
from typing import Optional, Sequence

from . import binaries
from .config import StackConfig
from .process import StackError


class Kubectl:
    def __init__(self, cfg: StackConfig, kubeconfig: Path):
        self.cfg = cfg
        self.base = [binaries.kubectl(cfg), "--kubeconfig", str(kubeconfig)]

    def __call__(self, *args: str, stdin: Optional[str] = None, timeout: float = 120) -> str:
        proc = subprocess.run(self.base + list(args), input=stdin, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            raise StackError(f"kubectl {' '.join(args[:4])}: {proc.stderr.strip()[-2000:]}")
        return proc.stdout

    def apply(self, manifest: str) -> None:
        """Server-side apply under the stack's own field manager."""
        self("apply", "--server-side", "--force-conflicts", "--field-manager=c5c3-stack", "-f", "-",
             stdin=manifest)

    def apply_files(self, files: Sequence[Path]) -> None:
        args = ["apply", "--server-side", "--force-conflicts", "--field-manager=c5c3-stack"]
        for f in files:
            args += ["-f", str(f)]
        self(*args, timeout=300)

    def wait_crds(self, names: Sequence[str], timeout: int = 60) -> None:
        self("wait", "--for", "condition=Established", f"--timeout={timeout}s",
             *[f"crd/{n}" for n in names], timeout=timeout + 10)

    def get_json(self, *args: str) -> dict:
        return json.loads(self("get", "-o", "json", *args))

    def patch_status(self, resource: str, namespace: str, patch: dict) -> None:
        self("patch", "-n", namespace, resource, "--subresource=status", "--type=merge",
             "-p", json.dumps(patch))
