"""The node's configuration and host bookkeeping (stack/c5c3stack/node.py, images.py), without running anything:
containerd's TOML, the KubeletConfiguration, where every path goes, the control plane's flags, the parsers the
teardown relies on, and the reproducible OCI archive writer."""
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
if str(REPO / "stack") not in sys.path:
    sys.path.insert(0, str(REPO / "stack"))

from c5c3stack import binaries, images, kube, node  # noqa: E402
from c5c3stack.config import OPTIONAL_PARTS, StackConfig  # noqa: E402

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


def test_containerd_has_a_network_config_but_no_plugin_and_no_registry(containerd):
    cni = containerd["plugins"][CRI_RUNTIME]["cni"]
    assert cni["conf_dir"] == str(BASE / "etc" / "cni")
    assert cni["bin_dirs"] == [str(BASE / "cni" / "bin")]
    conf = json.loads(node.cni_config())
    assert [p["type"] for p in conf["plugins"]] == ["loopback"]
    registry = containerd["plugins"]["io.containerd.cri.v1.images"]["registry"]["config_path"]
    assert registry == str(BASE / "etc" / "registry")
    assert tomllib.loads(node.registry_hosts())["server"] == "http://127.0.0.1:9"


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
