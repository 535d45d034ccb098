"""A real node for the management cluster (stack part ``node``): containerd + runc, a kubelet, kube-scheduler.

Everything is built from Go modules (stack/build-binaries.sh node) and every file, socket and mount of the node
lives under ``<state>/node`` (``.stack/node``), but for what the kubelet and containerd have no setting for (its
device-plugin socket, its /var/log/containers links, six sysctls, libcni's result cache /var/lib/cni) and the Pod
network's bridge (see ``down``). The design follows this machine's rules:

- **A Pod network with no way off the machine.** A pod without ``hostNetwork`` gets an address of the stack's
  own /24 (``PodNetwork`` in config.py: ``10.253.<from the state dir's hash>.0/24`` on a bridge
  ``c5c3-<6 hex of the same hash>``, so a second stack's node gets its own) from the CNI plugins ``bridge`` and
  ``host-local`` (built from Go modules, linked into ``<state>/node/cni/bin``). The stack makes the bridge itself
  (``ensure_bridge``), with the gateway ``.1`` as its address; the bridge has no uplink (only the pods' veths
  are its ports), the pods get no route but their subnet's connected one (no default route, no ``routes`` in the
  config), no NAT (``ipMasq: false``), and ``isGateway: false``, because with it the plugin would switch on
  ``net.ipv4.ip_forward`` for the whole host. The pods reach the API server through ``forward.py``, a relay on
  ``<gateway>:<apiserver port>`` to the API server's loopback port, whose certificate names the gateway
  (``kube.ensure_cluster_pki``): they set ``KUBERNETES_SERVICE_HOST=<gateway>``,
  ``KUBERNETES_SERVICE_PORT=<apiserver port>`` (``up`` exports both). ``hostNetwork: true`` pods run as before:
  on the host's network, reaching the API server on ``127.0.0.1:<apiserver port>``.
- **Loopback names.** The node is called ``127.0.0.1``: the kubelet then reports only loopback addresses
  (InternalIP and Hostname ``127.0.0.1``) and neither it nor the API server ever resolves a node name (a
  name would be looked up in DNS, off the machine). The kubelet listens on 127.0.0.1 only.
- **No registry.** containerd's registry traffic goes to a closed loopback port (HTTP(S)_PROXY and a
  ``_default`` hosts.toml), so a pull fails at once and nothing leaves the machine. Images are built here and
  imported (images.py): the sandbox image ``c5c3.local/pause:1`` and the test image ``c5c3.local/probe:1``.
- **cgroup v1, no systemd.** cgroupfs driver everywhere, ``SystemdCgroup = false``, ``failCgroupV1: false``;
  the kubelet's cgroup root is ``/c5c3-node-<hash of the state dir>`` so two stacks' nodes never share one.

``down`` leaves nothing behind: the pods' tasks are killed through containerd, then every shim of this node's
containerd and every process in its cgroups is SIGKILLed, every mount under ``<state>/node`` unmounted
(deepest first), the cgroup tree removed depth-first under each hierarchy, the kubelet's
``/var/log/containers`` links removed, the bridge, any veth still on it, the IPAM data and this node's entries of
libcni's fixed result cache ``/var/lib/cni/results`` removed; the last node of the machine to stop restores the
sysctls the kubelet set and removes its device-plugin folder and ``/var/lib/cni`` (what existed before is
recorded by the first to start, in /run). The cgroup v1 layout is
what this was run on; on a cgroup v2 host the cgroup root is made and removed the same way, untested.
"""
import ctypes
import errno
import ipaddress
import json
import os
import signal
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from . import binaries, images, kube
from .certs import ensure_client_cert
from .config import HOST, PodNetwork, StackConfig, skipped_parts
from .kubectl import Kubectl
from .process import Service, StackError, http_ok, log_timing, pid_alive, tcp_ok, wait_until

PART = "node"
NODE_NAME = HOST  # an IP literal: no name to resolve, every address the kubelet reports is loopback
PAUSE_IMAGE = "c5c3.local/pause:1"
PROBE_IMAGE = "c5c3.local/probe:1"
# the CNI plugins of the Pod network; containerd's CRI runs loopback for every pod sandbox's lo
CNI_PLUGINS = ("bridge", "host-local", "loopback")
CNI_CONFLIST = "10-c5c3-pods.conflist"
OLD_CNI_CONFLISTS = ("10-host-network-only.conflist",)  # what a node of the hostNetwork-only days wrote
# libcni's result cache: containerd's go-cni sets no other, so each pod's ADD result is written there
CNI_CACHE = Path("/var/lib/cni")
# what `stack/build-binaries.sh node` builds, by cache folder
NODE_BINARIES = ((binaries.KUBE, ("kubelet", "kube-scheduler")),
                 (binaries.CONTAINERD, ("containerd", "containerd-shim-runc-v2", "ctr")),
                 (binaries.RUNC, ("runc",)),
                 (binaries.NODE_IMAGES, ("pause", "probe")),
                 (binaries.CNI, CNI_PLUGINS))
CLOSED_PORT = f"http://{HOST}:9"  # where containerd's registry traffic goes: nothing listens there
MAX_SOCKET_DIR = 42  # containerd's limit for its shim socket directory (a unix socket path is short)
# what the kubelet writes at start-up (setupKernelTunables); down puts back what was there before
KUBELET_SYSCTLS = ("vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
                   "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes")
VAR_LOG_CONTAINERS = Path("/var/log/containers")  # the kubelet's links to pod logs: a fixed path
# the kubelet's device-plugin socket and checkpoint: a fixed path as well (pluginapi.KubeletSocket)
DEVICE_PLUGINS = Path("/var/lib/kubelet/device-plugins")
HOST_STATE = Path("/run/c5c3-node-host-before.json")  # machine-wide: what the first node's kubelet changed


def wanted() -> bool:
    """False when C5C3_SKIP_PARTS names ``node``."""
    return PART not in skipped_parts()


@dataclass(frozen=True)
class Paths:
    """Where the node keeps everything (all under ``base``, the shim sockets too when the path is short)."""

    base: Path
    cgroup_name: str

    @classmethod
    def of(cls, cfg: StackConfig) -> "Paths":
        return cls(cfg.state / "node", f"c5c3-node-{cfg.state_digest[:8]}")

    @property
    def etc(self) -> Path:
        return self.base / "etc"

    @property
    def cni_bin(self) -> Path:
        """containerd's CNI bin_dirs: links to the built plugins (a running containerd keeps its config)."""
        return self.base / "cni" / "bin"

    @property
    def ipam_data(self) -> Path:
        """host-local's dataDir: one file per allocated pod address."""
        return self.base / "cni" / "ipam"

    @property
    def pki(self) -> Path:
        return self.base / "pki"

    @property
    def containerd_root(self) -> Path:
        return self.base / "containerd" / "root"

    @property
    def containerd_state(self) -> Path:
        return self.base / "containerd" / "state"

    @property
    def containerd_socket(self) -> Path:
        return self.base / "containerd.sock"

    @property
    def shim_sockets(self) -> Path:
        inside = self.base / "s"
        if len(str(inside)) <= MAX_SOCKET_DIR:
            return inside
        return Path("/run") / self.cgroup_name / "s"

    @property
    def runc_root(self) -> Path:
        return self.base / "runc"

    @property
    def kubelet_root(self) -> Path:
        return self.base / "kubelet"

    @property
    def pod_logs(self) -> Path:
        return self.base / "pod-logs"

    @property
    def images(self) -> Path:
        return self.base / "images"

    @property
    def cgroup_root(self) -> str:
        return "/" + self.cgroup_name


# ---------------------------------------------------------------------------------------------------------
# configuration (pure: rendered from paths and ports, checked by tests/unit/stack/test_node_config.py)

def containerd_config(p: Paths, shim: Path, runc: Path) -> str:
    """containerd's config (version 4): everything under ``p.base``, overlayfs, runc with cgroupfs, the
    local sandbox image, the Pod network's CNI config dir and plugin links, no registry, no NRI."""
    def q(value) -> str:
        return json.dumps(str(value))  # a TOML basic string is a JSON string

    return f"""# written by stack/c5c3stack/node.py; every path of this containerd is under {p.base}
version = 4
root = {q(p.containerd_root)}
state = {q(p.containerd_state)}
imports = []  # nothing of the host's /etc/containerd
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs",
  "io.containerd.nri.v1.nri", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing",
]

[debug]
  level = "info"

[plugins]
  # the servers (config version 4): the API and ttrpc sockets under the node's folder, nothing on TCP
  [plugins."io.containerd.server.v1.grpc"]
    address = {q(p.containerd_socket)}
  [plugins."io.containerd.server.v1.ttrpc"]
    address = {q(str(p.containerd_socket) + ".ttrpc")}
  [plugins."io.containerd.server.v1.grpc-tcp"]
    address = ""
  [plugins."io.containerd.server.v1.debug"]
    address = ""
  [plugins."io.containerd.server.v1.metrics"]
    address = ""

  [plugins."io.containerd.internal.v1.opt"]
    path = {q(p.base / "opt")}

  [plugins."io.containerd.image-verifier.v1.bindir"]
    bin_dir = {q(p.base / "opt" / "image-verifier")}

  [plugins."io.containerd.shim.v1.manager"]
    socket_dir = {q(p.shim_sockets)}

  [plugins."io.containerd.transfer.v1.local"]
    config_path = {q(p.etc / "registry")}

  [plugins."io.containerd.grpc.v1.cri"]
    disable_tcp_service = true
    stream_server_address = "{HOST}"
    stream_server_port = "0"
    enable_tls_streaming = false

  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "overlayfs"
    discard_unpacked_layers = false
    [plugins."io.containerd.cri.v1.images".pinned_images]
      sandbox = {q(PAUSE_IMAGE)}
    [plugins."io.containerd.cri.v1.images".registry]
      config_path = {q(p.etc / "registry")}

  [plugins."io.containerd.cri.v1.runtime"]
    enable_selinux = false
    # this VM withholds CAP_SYS_RESOURCE even from root: no process may lower its oom_score_adj, so the
    # sandbox's -998 (and a Guaranteed pod's -997) would fail in runc init; clamp them at containerd's own
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = [{q(p.etc / "cdi")}]
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        runtime_path = {q(shim)}
        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
          BinaryName = {q(runc)}
          Root = {q(p.runc_root)}
          SystemdCgroup = false
    [plugins."io.containerd.cri.v1.runtime".cni]
      bin_dirs = [{q(p.cni_bin)}]
      conf_dir = {q(p.etc / "cni")}
      max_conf_num = 1
"""


def cni_config(net: PodNetwork, ipam_data: Path) -> str:
    """The Pod network's conflist: the stack's bridge, an address of its /24 and nothing else. No ``routes``
    (only the connected route: nothing to route off the machine), ``ipMasq: false`` (no NAT rules),
    ``isGateway: false`` (the stack gives the bridge the gateway address itself; with true the plugin would set
    the host's ``net.ipv4.ip_forward=1``). hostNetwork pods never run it."""
    return json.dumps({
        "cniVersion": "1.0.0", "name": net.bridge,
        "plugins": [{
            "type": "bridge", "bridge": net.bridge,
            "isGateway": False, "isDefaultGateway": False, "ipMasq": False,
            "hairpinMode": False, "promiscMode": False,
            "ipam": {"type": "host-local", "dataDir": str(ipam_data),
                     "ranges": [[{"subnet": str(net.subnet), "gateway": net.gateway}]]},
        }],
    }, indent=2) + "\n"


def registry_hosts() -> str:
    """containerd's ``_default/hosts.toml``: every registry is a closed loopback port."""
    return (f'# no registry is reachable from this machine: images are imported (stack/c5c3stack/images.py)\n'
            f'server = "{CLOSED_PORT}"\n')


def kubelet_config(p: Paths, ca: Path, port: int, healthz_port: int) -> dict:
    """The KubeletConfiguration (written as JSON, which the kubelet reads as YAML)."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        # serve on loopback only; the API server authenticates with its kubelet-client certificate
        "address": HOST, "port": port, "readOnlyPort": 0,
        "healthzBindAddress": HOST, "healthzPort": healthz_port,
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(ca)}},
        "authorization": {"mode": "Webhook"},
        "rotateCertificates": False, "serverTLSBootstrap": False,
        # cgroup v1 without systemd
        "cgroupDriver": "cgroupfs", "cgroupRoot": p.cgroup_root, "cgroupsPerQOS": True,
        "failCgroupV1": False,
        "containerRuntimeEndpoint": f"unix://{p.containerd_socket}",
        "imageServiceEndpoint": f"unix://{p.containerd_socket}",
        # no swap accounting, no host changes beyond what is listed in node.py's docstring
        "failSwapOn": False, "makeIPTablesUtilChains": False, "protectKernelDefaults": False,
        "podLogsDir": str(p.pod_logs), "volumePluginDir": str(p.base / "volume-plugins"),
        "resolvConf": str(p.etc / "resolv.conf"), "staticPodPath": "",
        # a small shared VM: evict only when really short; never collect the locally imported images
        "evictionHard": {"memory.available": "64Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%",
                         "imagefs.available": "1%"},
        "evictionPressureTransitionPeriod": "30s",
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "maxPods": 50, "serializeImagePulls": False, "shutdownGracePeriod": "0s",
        "registerNode": True, "nodeStatusReportFrequency": "1m",
    }


def kubeconfig(server: str, ca: Path, crt: Path, key: Path, user: str) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c5c3",
        "clusters": [{"name": "c5c3", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": user, "user": {"client-certificate": str(crt), "client-key": str(key)}}],
        "contexts": [{"name": "c5c3", "context": {"cluster": "c5c3", "user": user}}],
    }, indent=2) + "\n"


NODE_RBAC = f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: c5c3-stack:node
  labels: {{app.kubernetes.io/managed-by: c5c3-stack}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node"}}
subjects:
- {{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:node:{NODE_NAME}"}}
"""


# ---------------------------------------------------------------------------------------------------------
# host state: mounts, cgroups, processes (parsers pure, the rest acts on /proc and /sys)

def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def parse_mountinfo(text: str) -> List[Tuple[int, str, str, str]]:
    """(mount id, mount point, filesystem type, super options) of each line of /proc/self/mountinfo."""
    rows = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, rfields = left.split(), right.split()
        rows.append((int(fields[0]), _unescape(fields[4]), rfields[0], rfields[2] if len(rfields) > 2 else ""))
    return rows


def mounts_under(mountinfo: str, folders: Sequence[Path]) -> List[str]:
    """Mount points at or under any of ``folders``, in the order to unmount them: deepest path first, the
    most recent of stacked mounts first."""
    roots = [str(f).rstrip("/") for f in folders]
    hits = [(mid, point) for mid, point, _, _ in parse_mountinfo(mountinfo)
            if any(point == r or point.startswith(r + "/") for r in roots)]
    return [point for _, point in sorted(hits, key=lambda h: (-h[1].count("/"), -h[0]))]


def cgroup_mounts(mountinfo: str) -> List[Path]:
    """The mount points of every cgroup hierarchy: each v1 hierarchy, and the v2 one when it is mounted."""
    return [Path(point) for _, point, fstype, _ in parse_mountinfo(mountinfo) if fstype in ("cgroup", "cgroup2")]


def is_our_shim(argv: Sequence[str], address: Path) -> bool:
    """A containerd-shim-runc-v2 started by the containerd listening on ``address``."""
    if not argv or os.path.basename(argv[0]) != "containerd-shim-runc-v2":
        return False
    for i, arg in enumerate(argv[:-1]):
        if arg in ("-address", "--address") and argv[i + 1] == str(address):
            return True
    return any(arg in (f"-address={address}", f"--address={address}") for arg in argv)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _argv(pid: int) -> List[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode("utf-8", "replace") for a in fh.read().split(b"\0")[:-1]]
    except OSError:
        return []


def _pids() -> Iterable[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def _cgroup_dirs(p: Paths) -> List[Path]:
    return [m / p.cgroup_name for m in cgroup_mounts(_read(Path("/proc/self/mountinfo")))]


def _cgroup_pids(p: Paths) -> Set[int]:
    pids: Set[int] = set()
    for top in _cgroup_dirs(p):
        if not top.is_dir():
            continue
        for folder, _, _ in os.walk(top):
            for line in _read(Path(folder) / "cgroup.procs").split():
                pids.add(int(line))
    return pids


def _shim_pids(p: Paths) -> Set[int]:
    return {pid for pid in _pids() if is_our_shim(_argv(pid), p.containerd_socket)}


def _make_cgroup_root(p: Paths) -> None:
    """The kubelet's --cgroup-root must exist in every hierarchy; a new v1 cpuset starts empty, so it gets its
    parent's CPUs and memory nodes."""
    for top in _cgroup_dirs(p):
        top.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            mine, parent = top / name, top.parent / name
            if mine.exists() and not _read(mine).strip():
                mine.write_text(_read(parent).strip() + "\n")


def _remove_cgroups(p: Paths) -> List[str]:
    """rmdir every cgroup under the node's root, depth-first, in every hierarchy; returns what is left."""
    left = []
    for top in _cgroup_dirs(p):
        if not top.is_dir():
            continue
        for folder, _, _ in os.walk(top, topdown=False):
            try:
                os.rmdir(folder)
            except OSError as exc:
                left.append(f"{folder}: {exc.strerror}")
    return left


# ---------------------------------------------------------------------------------------------------------
# the Pod network: the bridge on the host (iproute2's ip), libcni's result cache (parsers pure)

def subnet_clashes(net: PodNetwork, addresses: list, routes: list) -> List[str]:
    """What of ``ip -j -4 addr show`` and ``ip -j -4 route show table all`` overlaps the Pod subnet on an
    interface other than the node's bridge (a default route overlaps everything and is no clash)."""
    found = []
    for link in addresses:
        if link.get("ifname") == net.bridge:
            continue
        for addr in link.get("addr_info", []):
            cidr = f"{addr.get('local')}/{addr.get('prefixlen', 32)}"
            if ipaddress.ip_network(cidr, strict=False).overlaps(net.subnet):
                found.append(f"address {cidr} on {link.get('ifname')}")
    for route in routes:
        dst = route.get("dst", "")
        if route.get("dev") == net.bridge or dst in ("", "default"):
            continue
        try:
            network = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            continue
        if network.prefixlen and network.version == 4 and network.overlaps(net.subnet):
            found.append(f"route {dst} dev {route.get('dev')}")
    return found


def is_our_cni_result(doc: dict, base: Path, net: PodNetwork) -> bool:
    """A libcni cache entry of this node: its network is the node's, or its netns is under the node's folder
    (the loopback plugin's entries carry the shared name ``cni-loopback``)."""
    return doc.get("networkName") == net.bridge or str(doc.get("netns", "")).startswith(str(base) + "/")


def _ip(*args: str, check: bool = True) -> str:
    try:
        out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    except FileNotFoundError as exc:
        raise StackError("the node's Pod network needs the ip command (iproute2)") from exc
    if check and out.returncode != 0:
        raise StackError(f"ip {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def _ip_json(*args: str) -> list:
    """``ip -j ARGS`` parsed; [] when the device does not exist (or there is no ip: nothing to find or remove)."""
    if not shutil.which("ip"):
        return []
    out = _ip("-j", *args, check=False)
    try:
        return json.loads(out) if out.strip() else []
    except ValueError:
        return []


def bridge_exists(net: PodNetwork) -> bool:
    return bool(_ip_json("link", "show", "dev", net.bridge))


def ensure_bridge(net: PodNetwork) -> None:
    """The node's bridge with the gateway as its only IPv4 address, up: made by the stack (before any pod) so
    the forwarder can listen on the gateway; idempotent. Refuses a subnet another interface or route uses."""
    clashes = subnet_clashes(net, _ip_json("-4", "addr", "show"), _ip_json("-4", "route", "show", "table", "all"))
    if clashes:
        raise StackError(f"the Pod subnet {net.subnet} is in use on this machine ({'; '.join(clashes)}): "
                         "choose another with C5C3_NODE_POD_SUBNET")
    if not bridge_exists(net):
        _ip("link", "add", "name", net.bridge, "type", "bridge")
    present = [f"{a['local']}/{a['prefixlen']}" for link in _ip_json("-4", "addr", "show", "dev", net.bridge)
               for a in link.get("addr_info", [])]
    for cidr in present:
        if cidr != net.gateway_cidr:  # the gateway of a subnet an earlier C5C3_NODE_POD_SUBNET chose
            _ip("addr", "del", cidr, "dev", net.bridge)
    if net.gateway_cidr not in present:
        _ip("addr", "add", net.gateway_cidr, "dev", net.bridge)
    _ip("link", "set", "dev", net.bridge, "up")


def bridge_ports(net: PodNetwork) -> List[str]:
    """The interfaces enslaved to the bridge: the host ends of pods' veths."""
    return [link["ifname"] for link in _ip_json("link", "show", "master", net.bridge) if "ifname" in link]


def cni_cache_files(base: Path, net: PodNetwork) -> List[Path]:
    folder = CNI_CACHE / "results"
    found = []
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        try:
            doc = json.loads(entry.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and is_our_cni_result(doc, base, net):
            found.append(entry)
    return found


def remove_pod_network(p: Paths, net: PodNetwork) -> List[str]:
    """Delete the veths left on the bridge, the bridge, the IPAM data and this node's libcni cache entries (a
    pod's CNI DEL never ran when ``down`` killed it); returns what failed."""
    problems = []
    for port in bridge_ports(net):
        out = subprocess.run(["ip", "link", "del", "dev", port], capture_output=True, text=True, timeout=30)
        if out.returncode != 0 and "Cannot find device" not in out.stderr:
            problems.append(f"veth {port}: {out.stderr.strip()}")
    if bridge_exists(net):
        out = subprocess.run(["ip", "link", "del", "dev", net.bridge], capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            problems.append(f"bridge {net.bridge}: {out.stderr.strip()}")
    shutil.rmtree(p.ipam_data, ignore_errors=True)
    for entry in cni_cache_files(p.base, net):
        entry.unlink(missing_ok=True)
    return problems


_libc = ctypes.CDLL(None, use_errno=True)
MNT_DETACH = 2


def _umount(point: str) -> Optional[str]:
    if _libc.umount2(point.encode(), 0) == 0:
        return None
    err = ctypes.get_errno()
    if err == errno.EINVAL:  # no longer a mount point (a parent's unmount took it along)
        return None
    if _libc.umount2(point.encode(), MNT_DETACH) == 0:
        return None
    return f"{point}: {os.strerror(ctypes.get_errno())}"


def _unmount_all(folders: Sequence[Path]) -> List[str]:
    """Unmount everything at or under ``folders`` until nothing is left (a propagated mount may appear
    again once its parent is gone); returns what could not be unmounted."""
    errors: List[str] = []
    for _ in range(10):
        points = mounts_under(_read(Path("/proc/self/mountinfo")), folders)
        if not points:
            return []
        errors = [e for e in (_umount(point) for point in points) if e]
    return errors or [f"still mounted: {p}" for p in mounts_under(_read(Path("/proc/self/mountinfo")), folders)]


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_leftovers(p: Paths) -> List[int]:
    """SIGKILL every process in the node's cgroups (containers first), then its shims; returns survivors."""
    for _ in range(50):
        inside = _cgroup_pids(p)
        shims = _shim_pids(p)
        if not inside and not shims:
            return []
        _kill(inside)
        if not inside:
            _kill(shims)
        time.sleep(0.1)
    return sorted(pid for pid in _cgroup_pids(p) | _shim_pids(p) if pid_alive(pid))


# ---------------------------------------------------------------------------------------------------------
# the part

def _bins(cfg: StackConfig, build: bool) -> Dict[str, Path]:
    out = {}
    for part, names in NODE_BINARIES:
        folder = (binaries.ensure_built(cfg, part, names, script_part="node") if build
                  else binaries.bin_dir(cfg, part))
        out.update({name: folder / name for name in names})
    return out


def _unix_socket_ok(path: Path) -> bool:
    if not path.exists():
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _services(cfg: StackConfig, p: Paths, bins: Dict[str, Path]) -> Tuple[Service, Service, Service]:
    kubelet_health = cfg.port("kubelet_healthz")
    scheduler_port = cfg.port("scheduler")
    path_env = os.pathsep.join([str(bins["containerd"].parent), str(bins["runc"].parent),
                                os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")])
    no_registry = {name: CLOSED_PORT for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    no_registry.update({"NO_PROXY": "", "no_proxy": ""})
    containerd = Service(cfg, "containerd", [str(bins["containerd"]), "--config", str(p.etc / "containerd.toml")],
                         env={"PATH": path_env, **no_registry},
                         ready=lambda: _unix_socket_ok(p.containerd_socket), timeout=60)
    kubelet = Service(cfg, "kubelet", [
        str(bins["kubelet"]), "--config", str(p.etc / "kubelet.json"),
        "--kubeconfig", str(p.etc / "kubelet.kubeconfig"),
        "--hostname-override", NODE_NAME,
        "--root-dir", str(p.kubelet_root), "--cert-dir", str(p.kubelet_root / "pki"),
        "--v", "1",
    ], ready=lambda: http_ok(f"http://{HOST}:{kubelet_health}/healthz"), timeout=90)
    scheduler = Service(cfg, "kube-scheduler", [
        str(bins["kube-scheduler"]),
        "--kubeconfig", str(p.etc / "scheduler.kubeconfig"),
        "--authentication-kubeconfig", str(p.etc / "scheduler.kubeconfig"),
        "--authorization-kubeconfig", str(p.etc / "scheduler.kubeconfig"),
        "--leader-elect=false", "--bind-address", HOST, "--secure-port", str(scheduler_port),
        "--profiling=false",
    ], ready=lambda: http_ok(f"https://{HOST}:{scheduler_port}/healthz"), timeout=60)
    return containerd, kubelet, scheduler


def _forwarder(cfg: StackConfig, net: PodNetwork) -> Service:
    """forward.py on ``<gateway>:<apiserver port>``, relaying to the API server's loopback port."""
    port = cfg.port("apiserver")
    return Service(cfg, "node-pod-api-forward", [
        sys.executable, "-m", "c5c3stack.forward", "--listen", f"{net.gateway}:{port}", "--to", f"{HOST}:{port}",
    ], env={"PYTHONPATH": str(cfg.root / "stack")}, ready=lambda: tcp_ok(net.gateway, port), timeout=20)


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    path.chmod(mode)


def _link_cni_plugins(p: Paths, bins: Dict[str, Path]) -> None:
    """``<node>/cni/bin/<plugin>`` -> the built plugin in the cache (renewed when the pinned version moves)."""
    p.cni_bin.mkdir(parents=True, exist_ok=True)
    for name in CNI_PLUGINS:
        link = p.cni_bin / name
        if link.is_symlink() and os.readlink(link) == str(bins[name]):
            continue
        link.unlink(missing_ok=True)
        link.symlink_to(bins[name])


def _write_config(cfg: StackConfig, p: Paths, bins: Dict[str, Path], pki: dict, net: PodNetwork) -> None:
    server = f"https://{HOST}:{cfg.port('apiserver')}"
    node_crt, node_key = ensure_client_cert(pki, p.pki, "node", f"/O=system:nodes/CN=system:node:{NODE_NAME}")
    sched_crt, sched_key = ensure_client_cert(pki, p.pki, "scheduler", "/CN=system:kube-scheduler")
    _write(p.etc / "kubelet.kubeconfig", kubeconfig(server, pki["ca.crt"], node_crt, node_key,
                                                    f"system:node:{NODE_NAME}"), 0o600)
    _write(p.etc / "scheduler.kubeconfig", kubeconfig(server, pki["ca.crt"], sched_crt, sched_key,
                                                      "system:kube-scheduler"), 0o600)
    _write(p.etc / "kubelet.json", json.dumps(kubelet_config(p, pki["ca.crt"], cfg.port("kubelet"),
                                                             cfg.port("kubelet_healthz")), indent=2) + "\n")
    _write(p.etc / "containerd.toml", containerd_config(p, bins["containerd-shim-runc-v2"], bins["runc"]))
    # plugins first: a running containerd reloads its CNI config as soon as the file changes
    _link_cni_plugins(p, bins)
    _write(p.etc / "cni" / CNI_CONFLIST, cni_config(net, p.ipam_data))
    for old in OLD_CNI_CONFLISTS:
        (p.etc / "cni" / old).unlink(missing_ok=True)
    _write(p.etc / "registry" / "_default" / "hosts.toml", registry_hosts())
    _write(p.etc / "resolv.conf", "# pods of the local stack's node get no name server (network rule)\n")
    for folder in (p.containerd_root, p.containerd_state, p.shim_sockets, p.runc_root, p.kubelet_root,
                   p.pod_logs, p.ipam_data, p.etc / "cdi", p.images):
        folder.mkdir(parents=True, exist_ok=True)


def image_specs(bins: Dict[str, Path]) -> List[images.ImageSpec]:
    return [
        images.ImageSpec(PAUSE_IMAGE, [images.ImageFile("pause", bins["pause"])], entrypoint=["/pause"]),
        images.ImageSpec(PROBE_IMAGE, [images.ImageFile("probe", bins["probe"])], entrypoint=["/probe"]),
    ]


def _import_images(cfg: StackConfig, p: Paths, bins: Dict[str, Path]) -> None:
    for spec in image_specs(bins):
        archive = p.images / (images.split_reference(spec.name)[0].rsplit("/", 1)[-1] + ".tar")
        images.write_archive(spec, archive)
        images.import_archive(bins["ctr"], p.containerd_socket, archive, log=cfg.dir("logs") / "node-images.log")


def _other_kubelets(p: Paths) -> List[int]:
    """Kubelets running on this machine that are not this node's (another stack's node, e.g. the fault matrix's)."""
    mine = str(p.kubelet_root)
    return [pid for pid in _pids() if (argv := _argv(pid)) and os.path.basename(argv[0]) == "kubelet"
            and mine not in argv]


def _record_host_state(p: Paths) -> None:
    """Before a kubelet of the stack first changes the host: the kernel settings it writes and whether
    /var/log/containers, its device-plugin folder and libcni's cache existed, kept machine-wide (in /run) by the
    first node that starts, so the last one to stop puts them back."""
    if HOST_STATE.exists():
        return
    state = {"sysctl": {k: _read(Path("/proc/sys") / k).strip() for k in KUBELET_SYSCTLS},
             "var_log_containers": VAR_LOG_CONTAINERS.exists(),
             "device_plugins": [str(d) for d in (DEVICE_PLUGINS.parent, DEVICE_PLUGINS) if d.exists()],
             "cni_cache": [str(d) for d in (CNI_CACHE, CNI_CACHE / "results") if d.exists()]}
    HOST_STATE.write_text(json.dumps(state, indent=2) + "\n")


def _restore_host_state(p: Paths) -> List[str]:
    """Remove this node's /var/log/containers links; when no other node's kubelet runs, restore what
    ``_record_host_state`` kept. Returns what failed."""
    errors: List[str] = []
    if VAR_LOG_CONTAINERS.is_dir():
        for link in VAR_LOG_CONTAINERS.iterdir():
            if link.is_symlink() and os.readlink(link).startswith(str(p.pod_logs) + "/"):
                link.unlink()
    if not HOST_STATE.exists() or _other_kubelets(p):
        return errors
    state = json.loads(HOST_STATE.read_text())
    for key, value in state.get("sysctl", {}).items():
        path = Path("/proc/sys") / key
        if value and _read(path).strip() != value:
            try:
                path.write_text(value + "\n")
            except OSError as exc:
                errors.append(f"sysctl {key}: {exc}")
    if (not state.get("var_log_containers") and VAR_LOG_CONTAINERS.is_dir()
            and not any(VAR_LOG_CONTAINERS.iterdir())):
        VAR_LOG_CONTAINERS.rmdir()
    existed = set(state.get("device_plugins", [str(DEVICE_PLUGINS.parent), str(DEVICE_PLUGINS)]))
    if str(DEVICE_PLUGINS) not in existed and DEVICE_PLUGINS.is_dir():
        for name in ("kubelet.sock", "kubelet_internal_checkpoint"):
            (DEVICE_PLUGINS / name).unlink(missing_ok=True)
        for folder in (DEVICE_PLUGINS, DEVICE_PLUGINS.parent):
            if str(folder) not in existed and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    # a record of a node older than the Pod network has no "cni_cache": then both count as existing before
    existed = set(state.get("cni_cache", [str(CNI_CACHE), str(CNI_CACHE / "results")]))
    for folder in (CNI_CACHE / "results", CNI_CACHE):
        if str(folder) not in existed and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    HOST_STATE.unlink()
    return errors


def _api(cfg: StackConfig, method: str, path: str) -> Optional[dict]:
    """One request to the management API server as the stack's admin; None when it does not answer."""
    pki_dir = cfg.state / "kube" / kube.MANAGEMENT / "pki"
    req = urllib.request.Request(f"https://{HOST}:{cfg.port('apiserver')}{path}", method=method)
    try:  # a state folder whose management cluster is gone (deleted by hand) has no certificates: no answer either
        ctx = ssl.create_default_context(cafile=str(pki_dir / "ca.crt"))
        ctx.load_cert_chain(str(pki_dir / "admin.crt"), str(pki_dir / "admin.key"))
        with urllib.request.urlopen(req, timeout=5, context=ctx) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as exc:
        return {"code": exc.code}
    except (urllib.error.URLError, OSError, ValueError):
        return None


# what the node needs of the running control plane (stack/c5c3stack/kube.py has it since the node exists)
NEEDED_CONTROLLERS = ("serviceaccount", "root-ca-cert-publisher", "deployment", "replicaset", "job", "cronjob",
                      "nodelifecycle")


def control_plane_gaps(cfg: StackConfig) -> List[str]:
    """What the running management kube-apiserver and kube-controller-manager lack for the node: a control
    plane started before these flags existed keeps running as it is (``up`` reuses running servers)."""
    gaps = []
    for svc in kube.services(cfg):
        argv = svc.running_argv()
        if argv is None:
            continue
        if svc.name == "kube-apiserver" and "--kubelet-client-certificate" not in argv:
            gaps.append("kube-apiserver: --kubelet-client-certificate (kubectl logs)")
        if svc.name == "kube-controller-manager":
            running = argv[argv.index("--controllers") + 1].split(",") if "--controllers" in argv[:-1] else []
            missing = [c for c in NEEDED_CONTROLLERS if c not in running and "*" not in running]
            if missing:
                gaps.append(f"kube-controller-manager: controllers {','.join(missing)}")
            if "--root-ca-file" not in argv:
                gaps.append("kube-controller-manager: --root-ca-file")
    return gaps


def node_ready(cfg: StackConfig) -> bool:
    node = _api(cfg, "GET", f"/api/v1/nodes/{NODE_NAME}") or {}
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in node.get("status", {}).get("conditions", []))


def up(cfg: StackConfig) -> Dict[str, str]:
    t0 = time.monotonic()
    p = Paths.of(cfg)
    net = PodNetwork.of(cfg)
    bins = _bins(cfg, build=True)
    pki = kube.ensure_cluster_pki(cfg)  # its serving certificate names the Pod gateway
    ensure_bridge(net)  # before the CNI config names it, before any pod, before the forwarder binds the gateway
    forwarder = _forwarder(cfg, net)
    states = [forwarder.ensure()]
    _write_config(cfg, p, bins, pki, net)
    Kubectl(cfg, kube.kubeconfig_path(cfg)).apply(NODE_RBAC)
    containerd, kubelet, scheduler = _services(cfg, p, bins)
    states.append(containerd.ensure())
    _import_images(cfg, p, bins)
    _make_cgroup_root(p)
    _record_host_state(p)
    states.append(kubelet.ensure())
    wait_until(lambda: node_ready(cfg), 120, f"node {NODE_NAME} Ready", interval=1,
               alive=lambda: kubelet.pid() is not None, log=kubelet.log_file)
    states.append(scheduler.ensure())
    gaps = control_plane_gaps(cfg)
    if gaps:
        print(f"  note: the running control plane predates the node ({'; '.join(gaps)}): the node is Ready but "
              "stays tainted, and Deployments, Jobs, ServiceAccount tokens and kubectl logs need it restarted "
              "(make stack-down && make stack-up)", flush=True)
    log_timing(cfg, PART, t0, "/".join(states))
    return {
        "C5C3_NODE_NAME": NODE_NAME,
        "C5C3_NODE_PAUSE_IMAGE": PAUSE_IMAGE,
        "C5C3_NODE_PROBE_IMAGE": PROBE_IMAGE,
        "C5C3_NODE_CONTAINERD": str(p.containerd_socket),
        "C5C3_NODE_CTR": str(bins["ctr"]),
        # a pod without hostNetwork: KUBERNETES_SERVICE_HOST/PORT (the forwarder to the API server)
        "C5C3_NODE_POD_GATEWAY": net.gateway,
        "C5C3_NODE_POD_API_PORT": str(cfg.port("apiserver")),
        "C5C3_NODE_POD_SUBNET": str(net.subnet),
    }


def import_image(cfg: StackConfig, archive: Path, base_name: str = "") -> List[str]:
    """Import an image archive (OCI or docker) into the running node's containerd; returns the names."""
    p = Paths.of(cfg)
    if not _unix_socket_ok(p.containerd_socket):
        raise StackError("the node's containerd is not running: make stack-up (without C5C3_SKIP_PARTS=node)")
    bins = _bins(cfg, build=False)
    return images.import_archive(bins["ctr"], p.containerd_socket, archive, base_name=base_name,
                                 log=cfg.dir("logs") / "node-images.log")


def _stop_tasks(bins: Dict[str, Path], p: Paths) -> None:
    """The gentle part of ``down``: while containerd still runs, kill and delete every task (containers and
    pod sandboxes), so each shim unmounts its rootfs and removes its cgroup itself."""
    if not _unix_socket_ok(p.containerd_socket) or not bins["ctr"].exists():
        return
    ctr = images.ctr_base(bins["ctr"], p.containerd_socket)
    try:
        listing = subprocess.run(ctr + ["tasks", "list", "--quiet"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return
    for task in listing.stdout.split():
        for args in (["tasks", "kill", "--signal", "SIGKILL", "--all", task], ["tasks", "delete", "--force", task]):
            try:
                subprocess.run(ctr + args, capture_output=True, timeout=20)
            except subprocess.TimeoutExpired:
                pass


def down(cfg: StackConfig) -> None:
    """Stop the node and leave no process, mount, cgroup or interface of it behind; raises if something stays."""
    p = Paths.of(cfg)
    net = PodNetwork.of(cfg)
    if not p.base.exists() and not bridge_exists(net):
        return
    bins = _bins(cfg, build=False)
    containerd, kubelet, scheduler = _services(cfg, p, bins)
    scheduler.stop()
    kubelet.stop()
    _stop_tasks(bins, p)
    containerd.stop()
    _forwarder(cfg, net).stop()
    problems = [f"pid {pid} survived SIGKILL" for pid in _kill_leftovers(p)]
    problems += _unmount_all([p.base, p.shim_sockets.parent] if not str(p.shim_sockets).startswith(str(p.base))
                             else [p.base])  # the pods' network namespaces too: their veths go with them
    problems += _remove_cgroups(p)
    problems += remove_pod_network(p, net)
    problems += _restore_host_state(p)
    if not str(p.shim_sockets).startswith(str(p.base)):
        shutil.rmtree(p.shim_sockets.parent, ignore_errors=True)
    if _api(cfg, "DELETE", f"/api/v1/nodes/{NODE_NAME}") is None:
        pass  # the API server is already down: the Node object goes with the next reset of etcd, or stays NotReady
    if problems:
        raise StackError("node teardown left:\n  " + "\n  ".join(problems))


def status(cfg: StackConfig) -> List[Tuple[str, str, str]]:
    if not wanted():
        return []
    p = Paths.of(cfg)
    net = PodNetwork.of(cfg)
    bins = _bins(cfg, build=False)
    containerd, kubelet, scheduler = _services(cfg, p, bins)
    ready = "Ready" if kubelet.pid() and node_ready(cfg) else "not Ready"
    bridge = ("node-pod-network", "up", f"bridge {net.bridge} {net.gateway_cidr}") if bridge_exists(net) else \
        ("node-pod-network", "down", f"no bridge {net.bridge}")
    return [containerd.status_row(str(p.containerd_socket)),
            kubelet.status_row(f"node {NODE_NAME} {ready}"),
            scheduler.status_row(f"{HOST}:{cfg.port('scheduler')}"),
            bridge,
            _forwarder(cfg, net).status_row(f"{net.gateway}:{cfg.port('apiserver')} -> {HOST}")]


def leftovers(cfg: StackConfig) -> Dict[str, list]:
    """What of the node exists on the host right now (for tests and for checking ``down``)."""
    p = Paths.of(cfg)
    net = PodNetwork.of(cfg)
    roots = [p.base] + ([p.shim_sockets.parent] if not str(p.shim_sockets).startswith(str(p.base)) else [])
    return {
        "mounts": mounts_under(_read(Path("/proc/self/mountinfo")), roots),
        "cgroups": [str(d) for d in _cgroup_dirs(p) if d.exists()],
        "processes": sorted(_cgroup_pids(p) | _shim_pids(p)),
        "bridge": [net.bridge] if bridge_exists(net) else [],
        "veths": bridge_ports(net),
        "cni_cache": [str(f) for f in cni_cache_files(p.base, net)],
    }
