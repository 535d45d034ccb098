"""The node's configuration and host bookkeeping (stack/c5c3stack/node.py, images.py), without running anything:
containerd's TOML, the KubeletConfiguration, where every path goes, the control plane's flags, the parsers the
teardown relies on, and the reproducible OCI archive writer; the Pod network's conflist and per-stack names, the
forwarder (forward.py, in-process on loopback) and the serving certificate's gateway SAN (certs.py, kube.py)."""
import asyncio
import hashlib
import io
import ipaddress
import json
import shutil
import socket
import ssl
import subprocess
import sys
import tarfile
import threading
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
if str(REPO / "stack") not in sys.path:
    sys.path.insert(0, str(REPO / "stack"))

from c5c3stack import binaries, certs, forward, images, kube, node  # noqa: E402
from c5c3stack.config import OPTIONAL_PARTS, PodNetwork, StackConfig  # noqa: E402

BASE = Path("/work/x/.stack/node")
PATHS = node.Paths(BASE, "c5c3-node-0123abcd")
SHIM = Path("/cache/containerd-v2.4.2/containerd-shim-runc-v2")
RUNC = Path("/cache/runc-v1.5.3/runc")
CRI_RUNTIME = "io.containerd.cri.v1.runtime"


@pytest.fixture(scope="module")
def containerd():
    return tomllib.loads(node.containerd_config(PATHS, SHIM, RUNC))


@pytest.fixture(scope="module")
def kubelet():
    return node.kubelet_config(PATHS, Path("/pki/ca.crt"), 16450, 16451)


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def test_containerd_keeps_everything_under_the_node_folder(containerd):
    assert containerd["version"] == 4
    assert containerd["imports"] == []
    plugins = containerd["plugins"]
    assert plugins["io.containerd.server.v1.grpc"]["address"] == str(BASE / "containerd.sock")
    for server in ("grpc-tcp", "debug", "metrics"):
        assert plugins[f"io.containerd.server.v1.{server}"]["address"] == ""
    absolute = [s for s in _strings(containerd) if s.startswith("/")]
    assert absolute and all(s.startswith(str(BASE) + "/") or s in (str(SHIM), str(RUNC)) for s in absolute), absolute
    assert plugins[CRI_RUNTIME]["netns_mounts_under_state_dir"] is True


def test_containerd_runs_runc_with_cgroupfs_and_the_local_sandbox_image(containerd):
    plugins = containerd["plugins"]
    runc = plugins[CRI_RUNTIME]["containerd"]["runtimes"]["runc"]
    assert runc["runtime_type"] == "io.containerd.runc.v2"
    assert runc["runtime_path"] == str(SHIM)
    assert runc["options"] == {"BinaryName": str(RUNC), "Root": str(BASE / "runc"), "SystemdCgroup": False}
    images_cfg = plugins["io.containerd.cri.v1.images"]
    assert images_cfg["snapshotter"] == "overlayfs"
    assert images_cfg["pinned_images"]["sandbox"] == node.PAUSE_IMAGE
    assert plugins[CRI_RUNTIME]["restrict_oom_score_adj"] is True  # no CAP_SYS_RESOURCE on this VM
    assert plugins["io.containerd.grpc.v1.cri"]["stream_server_address"] == "127.0.0.1"


def test_containerd_finds_the_pod_network_under_the_node_folder_and_no_registry(containerd):
    cni = containerd["plugins"][CRI_RUNTIME]["cni"]
    assert cni["conf_dir"] == str(BASE / "etc" / "cni")
    assert cni["bin_dirs"] == [str(PATHS.cni_bin)] == [str(BASE / "cni" / "bin")]  # links to the built plugins
    assert cni["max_conf_num"] == 1
    registry = containerd["plugins"]["io.containerd.cri.v1.images"]["registry"]["config_path"]
    assert registry == str(BASE / "etc" / "registry")
    assert tomllib.loads(node.registry_hosts())["server"] == "http://127.0.0.1:9"


NET = PodNetwork("c5c3-0123ab", ipaddress.IPv4Network("10.253.42.0/24"))


def _keys(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def test_pod_network_config_routes_nothing_off_the_machine():
    """The network rule: the bridge plugin with host-local, no routes (only the connected one), no NAT, no
    default gateway, and no isGateway (which would switch on the host's ip_forward)."""
    conf = json.loads(node.cni_config(NET, PATHS.ipam_data))
    assert conf["name"] == NET.bridge and conf["cniVersion"] == "1.0.0"
    [bridge] = conf["plugins"]
    assert bridge["type"] == "bridge" and bridge["bridge"] == "c5c3-0123ab"
    assert bridge["isGateway"] is False and bridge["isDefaultGateway"] is False
    assert bridge["ipMasq"] is False and bridge["hairpinMode"] is False and bridge["promiscMode"] is False
    assert "routes" not in set(_keys(conf)) and "ipMasqBackend" not in bridge
    assert bridge["ipam"] == {"type": "host-local", "dataDir": str(BASE / "cni" / "ipam"),
                              "ranges": [[{"subnet": "10.253.42.0/24", "gateway": "10.253.42.1"}]]}
    assert node.CNI_PLUGINS == ("bridge", "host-local", "loopback")  # containerd runs loopback for every sandbox
    assert (binaries.CNI, node.CNI_PLUGINS) in node.NODE_BINARIES


def test_cni_plugins_are_pinned_like_the_other_node_binaries():
    assert binaries.pinned(StackConfig(), "cni", binaries.CNI[1]).startswith("v1.")
    tools = (REPO / "stack" / "go" / "cni" / "go.mod").read_text()
    for plugin in ("main/bridge", "ipam/host-local", "main/loopback"):
        assert f"github.com/containernetworking/plugins/plugins/{plugin}\n" in tools


def test_pod_network_is_per_stack(monkeypatch):
    """Fixed state dirs, not tmp_path's: the /24 is a hash of the dir (254 of them), so four random dirs share one
    about once in 40 runs, which C5C3_NODE_POD_SUBNET is there to mend on a machine; these four never do."""
    monkeypatch.delenv("C5C3_NODE_POD_SUBNET", raising=False)
    nets, paths = [], []
    for name in ("a", "b", ".stack", ".stack-faults"):
        monkeypatch.setenv("C5C3_STACK_DIR", f"/srv/c5c3-checkout/{name}")
        nets.append(PodNetwork.of(StackConfig()))
        paths.append(node.Paths.of(StackConfig()))
    for net, p in zip(nets, paths):
        assert len(net.bridge) <= 15 and net.bridge.startswith("c5c3-")
        assert p.cgroup_name[len("c5c3-node-"):].startswith(net.bridge[len("c5c3-"):])  # the same hash
        assert net.subnet.prefixlen == 24 and net.subnet.subnet_of(ipaddress.IPv4Network("10.253.0.0/16"))
        assert net.subnet.network_address.packed[2] not in (0, 255)
        assert net.gateway == str(net.subnet.network_address + 1) and net.gateway_cidr == net.gateway + "/24"
    assert len({n.bridge for n in nets}) == 4 and len({n.subnet for n in nets}) == 4
    monkeypatch.setenv("C5C3_STACK_DIR", "/srv/c5c3-checkout/a")
    assert PodNetwork.of(StackConfig()) == nets[0]  # stable: down finds what up made


def test_pod_subnet_can_be_moved_but_only_to_a_private_network(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path))
    monkeypatch.setenv("C5C3_NODE_POD_SUBNET", "172.31.7.0/24")
    assert PodNetwork.of(StackConfig()).gateway == "172.31.7.1"
    for bad in ("8.8.8.0/24", "10.253.1.0/30", "10.253.1.1/24"):
        monkeypatch.setenv("C5C3_NODE_POD_SUBNET", bad)
        with pytest.raises(ValueError):
            PodNetwork.of(StackConfig())


def test_subnet_clashes_ignore_the_bridge_and_the_default_route():
    addresses = [{"ifname": "lo", "addr_info": [{"local": "127.0.0.1", "prefixlen": 8}]},
                 {"ifname": "eth0", "addr_info": [{"local": "192.0.2.2", "prefixlen": 24}]},
                 {"ifname": NET.bridge, "addr_info": [{"local": "10.253.42.1", "prefixlen": 24}]}]
    routes = [{"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"},
              {"dst": "192.0.2.0/24", "dev": "eth0"},
              {"type": "local", "dst": "10.253.42.1", "dev": NET.bridge, "table": "local"},
              {"type": "unreachable", "dst": "0.0.0.0/0", "table": "255"}]
    assert node.subnet_clashes(NET, addresses, routes) == []
    addresses.append({"ifname": "wg0", "addr_info": [{"local": "10.253.0.5", "prefixlen": 16}]})
    routes.append({"dst": "10.253.42.128/25", "dev": "tun0"})
    assert node.subnet_clashes(NET, addresses, routes) == ["address 10.253.0.5/16 on wg0",
                                                           "route 10.253.42.128/25 dev tun0"]


def test_cni_cache_entries_of_this_node_are_recognised():
    ours = {"kind": "cniCacheV1", "containerId": "abc", "ifName": "eth0", "networkName": NET.bridge}
    loopback = {"kind": "cniCacheV1", "networkName": "cni-loopback", "ifName": "lo",
                "netns": str(BASE / "containerd/state/io.containerd.grpc.v1.cri/netns/cni-1")}
    other = {"networkName": "cni-loopback", "netns": "/work/x/.stack-faults/node/containerd/state/netns/cni-2"}
    assert node.is_our_cni_result(ours, BASE, NET) and node.is_our_cni_result(loopback, BASE, NET)
    assert not node.is_our_cni_result(other, BASE, NET)
    assert not node.is_our_cni_result({"networkName": "c5c3-ffffff"}, BASE, NET)


def test_forwarder_listens_on_the_gateway_and_relays_to_the_api_server(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path))
    cfg = StackConfig()
    net = PodNetwork.of(cfg)
    svc = node._forwarder(cfg, net)  # pylint: disable=protected-access
    argv = list(svc.argv)
    assert argv[1:3] == ["-m", "c5c3stack.forward"]
    port = cfg.port("apiserver")
    assert argv[argv.index("--listen") + 1] == f"{net.gateway}:{port}"
    assert argv[argv.index("--to") + 1] == f"127.0.0.1:{port}"
    assert svc.env["PYTHONPATH"] == str(REPO / "stack")


def test_forwarder_relays_bytes_both_ways_and_half_closes():
    """forward.py in-process between two loopback sockets: what the client sends reaches the upstream, the
    upstream's answer comes back, and each side's EOF is passed on (so a TLS close_notify gets through)."""
    async def scenario():
        seen = []

        async def upstream(reader, writer):
            data = await reader.read()  # until the client's EOF arrives through the relay
            seen.append(data)
            writer.write(b"pong:" + data)
            await writer.drain()
            writer.close()

        target = await asyncio.start_server(upstream, "127.0.0.1", 0)
        relay = await forward.start(("127.0.0.1", 0), target.sockets[0].getsockname()[:2])
        host, port = relay.sockets[0].getsockname()[:2]
        reader, writer = await asyncio.open_connection(host, port)
        payload = bytes(range(256)) * 1024  # 256 KiB: several chunks
        writer.write(payload)
        writer.write_eof()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        relay.close()
        target.close()
        await relay.wait_closed()
        await target.wait_closed()
        return seen, answer, payload

    seen, answer, payload = asyncio.run(scenario())
    assert seen == [payload]
    assert answer == b"pong:" + payload


def test_forwarder_closes_a_client_when_the_target_is_down():
    async def scenario():
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        target = closed.getsockname()  # bound, never listening: connection refused
        relay = await forward.start(("127.0.0.1", 0), target)
        reader, writer = await asyncio.open_connection(*relay.sockets[0].getsockname()[:2])
        data = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        relay.close()
        await relay.wait_closed()
        closed.close()
        return data

    assert asyncio.run(scenario()) == b""


def test_forwarder_addresses_are_parsed():
    assert forward.parse_address("10.253.42.1:16443") == ("10.253.42.1", 16443)
    for bad in ("16443", "10.253.42.1:", ":16443", "host:port"):
        with pytest.raises(Exception):
            forward.parse_address(bad)


SAN_TEXT = """X509v3 Subject Alternative Name: \n    IP Address:127.0.0.1, DNS:localhost, DNS:kubernetes, \
DNS:kubernetes.default, DNS:kubernetes.default.svc, IP Address:10.0.0.1, IP Address:10.253.42.1\n"""


def test_server_san_and_its_parser():
    assert certs.parse_san_ips(SAN_TEXT) == {"127.0.0.1", "10.0.0.1", "10.253.42.1"}
    assert certs.server_san("127.0.0.1") == ("IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
                                             "DNS:kubernetes.default.svc,IP:10.0.0.1")
    assert certs.server_san("127.0.0.1", ["10.253.42.1", "127.0.0.1", "10.253.42.1"]).endswith(
        "IP:10.0.0.1,IP:10.253.42.1")


@pytest.fixture(scope="module")
def pki_dir(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("needs the openssl CLI")
    return tmp_path_factory.mktemp("pki")


def test_serving_certificate_is_signed_again_only_when_it_lacks_the_gateway(pki_dir):
    """A PKI made before the Pod network: its serving certificate gets the gateway on the next ensure, with the
    same key and CA (kubeconfigs stay valid); asking again, or without the gateway, changes nothing."""
    pki = certs.ensure_pki(pki_dir, "127.0.0.1")
    assert certs.cert_ips(pki["server.crt"]) == {"127.0.0.1", "10.0.0.1"}
    before = {n: pki[n].read_bytes() for n in ("server.crt", "server.key", "ca.crt", "admin.crt")}
    pki = certs.ensure_pki(pki_dir, "127.0.0.1", ["10.253.42.1"])
    assert certs.cert_ips(pki["server.crt"]) == {"127.0.0.1", "10.0.0.1", "10.253.42.1"}
    assert pki["server.crt"].read_bytes() != before["server.crt"]
    assert {n: pki[n].read_bytes() for n in ("server.key", "ca.crt", "admin.crt")} == \
        {n: before[n] for n in ("server.key", "ca.crt", "admin.crt")}
    renewed = pki["server.crt"].read_bytes()
    certs.ensure_pki(pki_dir, "127.0.0.1", ["10.253.42.1"])
    certs.ensure_pki(pki_dir, "127.0.0.1")
    assert pki["server.crt"].read_bytes() == renewed
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(pki["ca.crt"]), str(pki["server.crt"])],
                            capture_output=True, text=True, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert not list(pki_dir.glob("*.tmp")) and not list(pki_dir.glob("*.csr"))


def test_kube_notices_which_certificate_a_server_presents(pki_dir):
    """kube.up's check on a reused API server: the certificate it serves against the file."""
    pki = certs.ensure_pki(pki_dir, "127.0.0.1", ["10.253.42.1"])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(pki["server.crt"]), str(pki["server.key"]))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        stop = threading.Event()

        def serve():
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                try:
                    with ctx.wrap_socket(conn, server_side=True):
                        pass
                except (OSError, ssl.SSLError):
                    conn.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            assert kube.served_cert_matches(port, pki["server.crt"])
            assert not kube.served_cert_matches(port, pki["admin.crt"])
        finally:
            stop.set()
            thread.join(5)
    assert not kube.served_cert_matches(port, pki["server.crt"])  # nobody listens any more


def test_management_pki_names_the_gateway_and_a_target_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(kube, "ensure_pki", lambda folder, host, extra=(): calls.append((folder.name, host,
                                                                                           tuple(extra))))
    kube.ensure_cluster_pki(StackConfig())
    kube.ensure_cluster_pki(StackConfig(), "edge-1")
    assert calls == [("pki", "127.0.0.1", (PodNetwork.of(StackConfig()).gateway,)), ("pki", "127.0.0.1", ())]


def test_kubelet_on_cgroup_v1_without_systemd(kubelet):
    assert kubelet["cgroupDriver"] == "cgroupfs"
    assert kubelet["cgroupRoot"] == "/c5c3-node-0123abcd"
    assert kubelet["failCgroupV1"] is False
    assert kubelet["failSwapOn"] is False
    assert kubelet["containerRuntimeEndpoint"] == f"unix://{BASE}/containerd.sock"


def test_kubelet_serves_loopback_only_and_authenticates_the_api_server(kubelet):
    assert kubelet["address"] == kubelet["healthzBindAddress"] == "127.0.0.1"
    assert kubelet["readOnlyPort"] == 0
    assert kubelet["authentication"]["anonymous"] == {"enabled": False}
    assert kubelet["authentication"]["x509"] == {"clientCAFile": "/pki/ca.crt"}
    assert kubelet["authorization"] == {"mode": "Webhook"}


def test_kubelet_changes_nothing_of_the_host_it_need_not(kubelet):
    assert kubelet["makeIPTablesUtilChains"] is False
    for key in ("podLogsDir", "volumePluginDir", "resolvConf"):
        assert kubelet[key].startswith(str(BASE) + "/"), key
    assert kubelet["imageGCHighThresholdPercent"] == 100  # the imported images are never collected
    assert set(kubelet["evictionHard"]) == {"memory.available", "nodefs.available", "nodefs.inodesFree",
                                            "imagefs.available"}


def test_kubeconfig_is_json_with_file_references():
    cfg = json.loads(node.kubeconfig("https://127.0.0.1:1", Path("/ca"), Path("/c"), Path("/k"), "system:node:x"))
    assert cfg["users"][0] == {"name": "system:node:x", "user": {"client-certificate": "/c", "client-key": "/k"}}
    assert cfg["clusters"][0]["cluster"] == {"server": "https://127.0.0.1:1", "certificate-authority": "/ca"}


def test_node_rbac_binds_the_node_role_to_the_node_user():
    assert 'name: "system:node:127.0.0.1"' in node.NODE_RBAC and 'name: "system:node"' in node.NODE_RBAC


def test_paths_are_per_stack_and_sockets_stay_short(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path / "a"))
    a = node.Paths.of(StackConfig())
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path / "b"))
    b = node.Paths.of(StackConfig())
    assert a.cgroup_name != b.cgroup_name and a.cgroup_name.startswith("c5c3-node-")
    assert node.Paths.of(StackConfig()) == b
    deep = node.Paths(Path("/" + "d" * 60) / "node", "c5c3-node-0123abcd")
    assert deep.shim_sockets == Path("/run/c5c3-node-0123abcd/s")
    assert len(str(PATHS.shim_sockets)) <= node.MAX_SOCKET_DIR and PATHS.shim_sockets == BASE / "s"


MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu
32 30 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
33 30 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 22 254:0 /work/x/.stack/node/kubelet /work/x/.stack/node/kubelet rw shared:5 - ext4 /dev/vda rw
41 40 0:40 / /work/x/.stack/node/kubelet/pods/u/volumes/kubernetes.io~projected/kube-api-access-1 rw - tmpfs tmpfs rw
42 22 0:41 / /work/x/.stack/node/containerd/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw
43 22 0:42 / /work/x/.stack/node/containerd/state/io.containerd.grpc.v1.cri/sandboxes/abc/shm rw - tmpfs shm rw
44 42 0:43 / /work/x/.stack/node/containerd/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - tmpfs tmpfs rw
45 22 0:44 / /work/x/.stack/node-other/with\\040space rw - tmpfs tmpfs rw
46 22 0:45 / /work/x/.stack/node/with\\040space rw - tmpfs tmpfs rw
"""


def test_mounts_under_orders_deepest_and_newest_first():
    points = node.mounts_under(MOUNTINFO, [BASE])
    assert "/work/x/.stack/node-other/with space" not in points  # a sibling folder is not ours
    for i, earlier in enumerate(points):  # nothing is unmounted before a mount below it
        assert not any(later.startswith(earlier + "/") for later in points[i + 1:]), (earlier, points)
    assert points.index(str(BASE / "kubelet")) > points.index(
        str(BASE / "kubelet/pods/u/volumes/kubernetes.io~projected/kube-api-access-1"))
    rootfs = [i for i, p in enumerate(points) if p.endswith("/abc/rootfs")]
    assert len(rootfs) == 2  # a stacked mount: both unmounted
    assert str(BASE / "with space") in points


def test_cgroup_mounts_are_every_hierarchy():
    assert node.cgroup_mounts(MOUNTINFO) == [Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/memory"),
                                             Path("/sys/fs/cgroup/unified")]


def test_shims_are_recognised_by_their_containerd_address():
    sock = BASE / "containerd.sock"
    argv = ["/cache/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", str(sock)]
    assert node.is_our_shim(argv, sock)
    assert not node.is_our_shim(argv[:-1] + ["/run/containerd/containerd.sock"], sock)
    assert not node.is_our_shim(["/usr/bin/containerd", "-address", str(sock)], sock)
    assert not node.is_our_shim([], sock)


def test_node_is_an_optional_part():
    assert "node" in OPTIONAL_PARTS


def test_control_plane_runs_what_workloads_need(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path))
    pki = {n: tmp_path / n for n in ("ca.crt", "ca.key", "server.crt", "server.key", "admin.crt", "admin.key",
                                     "sa.key", "sa.pub", "kubelet-client.crt", "kubelet-client.key")}
    _, apiserver, kcm = kube._services(StackConfig(), kube.MANAGEMENT, 0, tmp_path, pki)  # pylint: disable=protected-access
    api = list(apiserver.argv)
    assert api[api.index("--kubelet-client-certificate") + 1] == str(pki["kubelet-client.crt"])
    for flag in ("--service-account-issuer", "--service-account-key-file", "--service-account-signing-key-file"):
        assert flag in api
    argv = list(kcm.argv)
    controllers = set(argv[argv.index("--controllers") + 1].split(","))
    assert {"deployment", "replicaset", "job", "cronjob", "serviceaccount", "serviceaccount-token",
            "root-ca-cert-publisher", "garbagecollector", "namespace", "nodelifecycle"} <= controllers
    assert argv[argv.index("--root-ca-file") + 1] == str(pki["ca.crt"])
    assert argv[argv.index("--service-account-private-key-file") + 1] == str(pki["sa.key"])


class _Running:
    """A Service stand-in whose process runs with ``argv``."""

    def __init__(self, name, argv):
        self.name, self.argv = name, argv

    def running_argv(self):
        return list(self.argv)


def test_control_plane_gaps_name_what_an_older_control_plane_lacks(tmp_path, monkeypatch):
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path))
    pki = {n: tmp_path / n for n in ("ca.crt", "ca.key", "server.crt", "server.key", "admin.crt", "admin.key",
                                     "sa.key", "sa.pub", "kubelet-client.crt", "kubelet-client.key")}
    current = kube._services(StackConfig(), kube.MANAGEMENT, 0, tmp_path, pki)  # pylint: disable=protected-access
    monkeypatch.setattr(kube, "services", lambda cfg: [_Running(s.name, s.argv) for s in current])
    assert node.control_plane_gaps(StackConfig()) == []
    older = [_Running("kube-apiserver", ["kube-apiserver", "--authorization-mode", "RBAC"]),
             _Running("kube-controller-manager", ["kcm", "--controllers", "garbagecollector,namespace"])]
    monkeypatch.setattr(kube, "services", lambda cfg: older)
    gaps = node.control_plane_gaps(StackConfig())
    assert gaps[0].startswith("kube-apiserver: --kubelet-client-certificate")
    assert "deployment" in gaps[1] and "nodelifecycle" in gaps[1] and "garbagecollector" not in gaps[1]
    assert gaps[2] == "kube-controller-manager: --root-ca-file"


@pytest.mark.skipif(not shutil.which("sha256sum"), reason="needs coreutils")
def test_source_hash_matches_the_build_script():
    folder = REPO / "stack" / "go" / "nodeimages"
    shell = subprocess.run("find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12",
                           shell=True, cwd=folder, capture_output=True, text=True, check=True).stdout.strip()
    assert binaries.source_hash(folder) == shell


def _spec(tmp_path):
    binary = tmp_path / "prog"
    binary.write_bytes(b"\x7fELF not really")
    return images.ImageSpec("c5c3.local/t:1", [images.ImageFile("bin/prog", binary),
                                                images.ImageFile("etc/hello", data=b"hi\n", mode=0o644)],
                            entrypoint=["/bin/prog"], cmd=["x"], user="65532")


def test_archive_is_reproducible(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    assert images.write_archive(_spec(tmp_path), a) == images.write_archive(_spec(tmp_path), b)
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(a) as tar:
        members = tar.getmembers()
    assert {m.mtime for m in members} == {1700000000} and {(m.uid, m.gid) for m in members} == {(0, 0)}


def test_archive_is_an_oci_layout_ctr_can_name(tmp_path):
    path = tmp_path / "img.tar"
    digest = images.write_archive(_spec(tmp_path), path)
    assert images.archive_images(path) == [("c5c3.local/t:1", digest)]
    with tarfile.open(path) as tar:
        blob = lambda d: tar.extractfile("blobs/sha256/" + d.split(":")[1]).read()  # noqa: E731
        assert json.loads(tar.extractfile("oci-layout").read()) == {"imageLayoutVersion": "1.0.0"}
        index = json.loads(tar.extractfile("index.json").read())
        manifest_bytes = blob(index["manifests"][0]["digest"])
        assert "sha256:" + hashlib.sha256(manifest_bytes).hexdigest() == digest
        manifest = json.loads(manifest_bytes)
        config = json.loads(blob(manifest["config"]["digest"]))
        layer = blob(manifest["layers"][0]["digest"])
    assert index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "1"
    assert config["config"]["Entrypoint"] == ["/bin/prog"] and config["config"]["User"] == "65532"
    assert config["os"] == "linux" and config["architecture"] == "amd64"
    import gzip
    raw = gzip.decompress(layer)
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(raw).hexdigest()]
    with tarfile.open(fileobj=io.BytesIO(raw)) as layer_tar:
        names = layer_tar.getnames()
        assert names == sorted(names)
        assert {"bin", "bin/prog", "etc", "etc/hello", "tmp"} == set(names)
        assert layer_tar.getmember("tmp").mode == 0o1777
        assert layer_tar.extractfile("etc/hello").read() == b"hi\n"


@pytest.mark.parametrize("name, expected", [("c5c3.local/pause:1", ("c5c3.local/pause", "1")),
                                            ("localhost:5000/x", ("localhost:5000/x", "latest")),
                                            ("x", ("x", "latest"))])
def test_split_reference(name, expected):
    assert images.split_reference(name) == expected


def test_the_api_of_a_state_folder_without_certificates_does_not_answer(tmp_path, monkeypatch):
    """``down`` of a node whose management cluster's folder is gone (deleted by hand) must finish, not trace back."""
    monkeypatch.setenv("C5C3_STACK_DIR", str(tmp_path / "gone"))
    assert node._api(StackConfig(), "DELETE", f"/api/v1/nodes/{node.NODE_NAME}") is None
