"""Which stack a fault scenario runs against: the matrix's own (``.stack-faults/``, every port shifted) or the
shared one (``.stack/``) for the faults that disturb nobody else.

Faults stop etcd, Keystone, OpenBao, the controllers and the Ceph gateway; doing that on the shared stack would break every
other test running on it. The matrix's own stack is the same code (``stack/c5c3stack``) started with
``C5C3_STACK_DIR`` and every ``C5C3_PORT_<NAME>`` moved by ``PORT_OFFSET``, so both run side by side.
"""
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

REPO = Path(__file__).resolve().parents[3]
STACK_SRC = REPO / "stack"
FAULTS_DIR = Path(__file__).resolve().parents[1]
HOOK_DIR = FAULTS_DIR / "hook"
COLLECTIONS = REPO / ".collections"
PORT_OFFSET = 1000
FAULTS_STATE = REPO / ".stack-faults"
TARGET = "edge-1"
CP_NS, CP_NAME = "openstack", "cp"


def stack_modules() -> None:
    """Make the stack's own package (``stack/c5c3stack``) importable."""
    if str(STACK_SRC) not in sys.path:
        sys.path.insert(0, str(STACK_SRC))


def default_ports() -> Dict[str, int]:
    """Every port the stack knows (read from its own config, so a port added there is shifted here too)."""
    stack_modules()
    from c5c3stack.config import DEFAULT_PORTS  # pylint: disable=import-outside-toplevel
    return dict(DEFAULT_PORTS)


def read_env_file(path: Path) -> Dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = shlex.split(value)[0] if value else ""
    return env


@dataclass
class StackHandle:
    """One running stack as the harness sees it: where its state is, how to reach its parts."""

    state: Path
    overrides: Dict[str, str] = field(default_factory=dict)  # environment of its c5c3stack processes
    isolated: bool = False                                    # ours: parts may be stopped
    _env: Optional[Dict[str, str]] = None

    @property
    def env(self) -> Dict[str, str]:
        """The stack's ``env`` file (KUBECONFIG, BAO_ADDR, OS_CLIENT_CONFIG_FILE, ...), re-read after ``up``."""
        if self._env is None:
            self._env = read_env_file(self.state / "env")
        return self._env

    def forget_env(self) -> None:
        self._env = None

    def process_env(self) -> Dict[str, str]:
        """The environment for a process that must act on this stack (c5c3stack, kubectl, ...)."""
        env = dict(os.environ)
        env.update(self.overrides)
        return env

    @property
    def admin_kubeconfig(self) -> str:
        return self.env["KUBECONFIG"]

    def target_kubeconfig(self, name: str = TARGET) -> str:
        return self.env["C5C3_KUBECONFIG_" + name.upper().replace("-", "_")]

    @property
    def targets(self):
        return self.env.get("C5C3_TARGET_CLUSTERS", "").split()

    @property
    def pass_kubeconfig(self) -> str:
        """The identity passes run as: on our stack a plain user (APF exempts system:masters), else the admin."""
        own = self.state / "faults" / "pass.kubeconfig"
        return str(own) if self.isolated and own.exists() else self.admin_kubeconfig

    def pid_file(self, service: str) -> Path:
        return self.state / "pids" / f"{service}.pid"


def faults_stack() -> StackHandle:
    # the object-storage rows need the Tentacle gateway (accounts); the Reef one serves no row: left out
    overrides = {"C5C3_STACK_DIR": str(FAULTS_STATE), "C5C3_SKIP_PARTS": "rgw-reef node"}
    for name, port in default_ports().items():
        overrides[f"C5C3_PORT_{name.upper()}"] = str(port + PORT_OFFSET)
    return StackHandle(FAULTS_STATE, overrides, isolated=True)


def shared_stack() -> StackHandle:
    return StackHandle(Path(os.environ.get("C5C3_STACK_DIR", REPO / ".stack")), {}, isolated=False)
