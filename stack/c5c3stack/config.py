"""Where the stack keeps its state and which loopback ports it uses.

Every port can be moved with an environment variable ``C5C3_PORT_<NAME>`` so two checkouts (or a
developer's stack and CI) can run side by side. Nothing binds anything but 127.0.0.1, except the node's forwarder,
which listens on its Pod network's gateway (``PodNetwork``, stack/c5c3stack/node.py), an address on a bridge with
no uplink.
"""
import hashlib
import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"

# name -> default port. A target cluster "<t>" shifts the kube ports by TARGET_PORT_STEP * index.
DEFAULT_PORTS = {
    "etcd_client": 23790,
    "etcd_peer": 23800,
    "apiserver": 16443,
    "kcm": 16444,
    "mariadb": 13306,
    "keystone": 15000,
    "openbao": 18200,
    "openbao_cluster": 18201,
    "korc_metrics": 18081,
    "korc_health": 18082,
    "eso_metrics": 18083,
    "eso_health": 18084,
    # Ceph (stack/c5c3stack/rgw.py): the gateway's HTTP port, the mon's, and the first of 20 messenger ports
    "rgw": 17480,
    "rgw_mon": 16789,
    "rgw_msgr": 16800,
    "rgw_reef": 17580,
    "rgw_reef_mon": 16889,
    "rgw_reef_msgr": 16900,
    # the node (stack/c5c3stack/node.py): the kubelet's API and health ports, kube-scheduler's
    "kubelet": 16450,
    "kubelet_healthz": 16451,
    "scheduler": 16452,
}
TARGET_PORT_STEP = 100
KUBE_PORTS = ("etcd_client", "etcd_peer", "apiserver", "kcm")


# Parts a developer may leave out with C5C3_SKIP_PARTS (comma or space separated): "rgw" (every Ceph
# cluster), "rgw-reef" (the pre-accounts gateway only) or "node" (containerd, kubelet, kube-scheduler).
OPTIONAL_PARTS = ("rgw", "rgw-reef", "node")


def skipped_parts() -> frozenset:
    """What C5C3_SKIP_PARTS names (unchecked: rgw.wanted() refuses a name it does not know)."""
    named = frozenset(os.environ.get("C5C3_SKIP_PARTS", "").replace(",", " ").split())
    return named | {"rgw-reef"} if "rgw" in named else named


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class StackConfig:
    root: Path = field(default_factory=repo_root)

    @property
    def state(self) -> Path:
        """Logs, PID files, data directories and generated credentials (ignored by git)."""
        return Path(os.environ.get("C5C3_STACK_DIR", self.root / ".stack"))

    @property
    def cache(self) -> Path:
        """Built binaries and venvs, outside the checkout, reused across clones."""
        return Path(os.environ.get("C5C3_CACHE", Path.home() / ".cache" / "c5c3-orders"))

    @property
    def env_file(self) -> Path:
        return self.state / "env"

    def port(self, name: str, cluster_index: int = 0) -> int:
        base = int(os.environ.get(f"C5C3_PORT_{name.upper()}", DEFAULT_PORTS[name]))
        return base + TARGET_PORT_STEP * cluster_index if name in KUBE_PORTS else base

    def dir(self, *parts: str) -> Path:
        path = self.state.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def state_digest(self) -> str:
        """sha256 of the resolved state dir: what makes the node's host-wide names (cgroup root, bridge, subnet)
        differ between two stacks on one machine (``.stack`` and the fault matrix's ``.stack-faults``)."""
        return hashlib.sha256(str(self.state.resolve()).encode()).hexdigest()


POD_SUBNETS = ipaddress.IPv4Network("10.253.0.0/16")  # one /24 of it per stack; nothing else here uses 10.253/16


@dataclass(frozen=True)
class PodNetwork:
    """The node's Pod network (stack/c5c3stack/node.py), computed from the config alone: the API server's
    certificate (kube.py) names the gateway before any node runs, and ``down`` finds the bridge after a crash.
    ``C5C3_NODE_POD_SUBNET`` (a private IPv4 network) replaces the derived /24 if it clashes on a machine."""

    bridge: str
    subnet: ipaddress.IPv4Network

    @classmethod
    def of(cls, cfg: "StackConfig") -> "PodNetwork":
        digest = cfg.state_digest
        override = os.environ.get("C5C3_NODE_POD_SUBNET", "").strip()
        if override:
            subnet = ipaddress.IPv4Network(override)
            if not subnet.is_private or subnet.prefixlen > 28:
                raise ValueError(f"C5C3_NODE_POD_SUBNET={override}: not a private IPv4 network of /28 or larger")
        else:  # the third octet 1..254: never the /16's first or last /24
            third = int(digest[:8], 16) % 254 + 1
            subnet = ipaddress.IPv4Network((int(POD_SUBNETS.network_address) + (third << 8), 24))
        return cls(f"c5c3-{digest[:6]}", subnet)  # 11 characters: a Linux interface name has at most 15

    @property
    def gateway(self) -> str:
        """The bridge's address on the host: the first of the subnet (host-local keeps it out of its pool)."""
        return str(self.subnet.network_address + 1)

    @property
    def gateway_cidr(self) -> str:
        return f"{self.gateway}/{self.subnet.prefixlen}"
