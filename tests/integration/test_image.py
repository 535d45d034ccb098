"""The image of ``make image`` (image/build.py, docs/install.md "The image"), read from its archive.

The archive ``.image/c5c3-orders-<version>.tar`` is reused as it is (``make image`` builds it first when it is
missing). Its layout is checked as any OCI consumer would (every descriptor's digest and size, the layers' diff_ids,
the names containerd and skopeo read), its layers are applied here in Python (not with the tool that wrote them) to
a root filesystem, and commands run in that root the way the install role's Pods run the image: as the image's
non-root user, on a **read-only** root filesystem, with writable /tmp and HOME only (chroot in a mount and PID
namespace of their own, tini as PID 1 where the image's entrypoint is used). One test runs a check-mode pass with
``ansible-runner run <private_data_dir> -p reconcile.yml`` against the local stack, as AWX runs a job in an EE.
Needs root (chroot, mounts), as ``make image`` does.
"""
import gzip
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from imagebuild import ensure_image
from kubeconfigs import flat_kubeconfig

REPO = Path(__file__).resolve().parents[2]
GALAXY = yaml.safe_load((REPO / "galaxy.yml").read_text())
VERSION = GALAXY["version"]
NAME = f"localhost/c5c3-orders:{VERSION}"
ARCHIVE = REPO / ".image" / f"c5c3-orders-{VERSION}.tar"
RECORD = REPO / ".image" / f"{VERSION}.json"
COLLECTIONS = "/usr/share/ansible/collections"
ORDERS = COLLECTIONS + "/ansible_collections/c5c3/orders"
ENTRYPOINTS = ("c5c3-orders-controller", "c5c3-orders-pass")
SUMMARY = re.compile(r"c5c3\.orders pass \(check mode\): clusters=(?P<clusters>\S+) orders=\d+ ready=\d+ "
                     r"changed=\d+ errors=\d+")

def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def archive():
    if os.geteuid() != 0:
        raise RuntimeError("tests/integration/test_image.py needs root (chroot and mounts), as make image does")
    ensure_image(ARCHIVE, RECORD)
    return ARCHIVE


@pytest.fixture(scope="module")
def layout(archive):
    """The archive's entries, by name (the blobs are a few dozen MiB: read once)."""
    entries, members = {}, []
    with tarfile.open(archive) as tar:
        for member in tar:
            members.append(member)
            if member.isfile():
                entries[member.name] = tar.extractfile(member).read()
    return {"entries": entries, "members": members}


def blob(layout, digest):
    return layout["entries"][f"blobs/sha256/{digest.split(':', 1)[1]}"]


@pytest.fixture(scope="module")
def image(layout):
    index = json.loads(layout["entries"]["index.json"])
    (descriptor,) = index["manifests"]
    manifest = json.loads(blob(layout, descriptor["digest"]))
    config = json.loads(blob(layout, manifest["config"]["digest"]))
    return {"index": index, "descriptor": descriptor, "manifest": manifest, "config": config}


def _apply_layer(data: bytes, root: Path) -> None:
    """One layer onto ``root``, whiteouts included (``.wh.<name>`` removes, ``.wh..wh..opq`` empties a folder)."""
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        members = []
        for member in tar.getmembers():
            name = member.name[2:] if member.name.startswith("./") else member.name
            path = Path(name.lstrip("/") or ".")
            if path.name == ".wh..wh..opq":
                folder = root / path.parent
                for child in folder.iterdir() if folder.is_dir() else []:
                    shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
            elif path.name.startswith(".wh."):
                gone = root / path.parent / path.name[len(".wh."):]
                if gone.is_dir() and not gone.is_symlink():
                    shutil.rmtree(gone)
                elif gone.exists() or gone.is_symlink():
                    gone.unlink()
            else:
                members.append(member)
        tar.extractall(root, members=members, numeric_owner=True, filter="fully_trusted")


@pytest.fixture(scope="module")
def rootfs(layout, image, tmp_path_factory):
    root = tmp_path_factory.mktemp("image") / "rootfs"
    root.mkdir()
    for layer in image["manifest"]["layers"]:
        _apply_layer(blob(layout, layer["digest"]), root)
    yield root
    shutil.rmtree(root.parent)  # ~190 MiB: not left for pytest's kept temp dirs


class Container:
    """Commands in the image's root as the install role's Pods run it (container.yml.j2, pod.yml.j2): the
    config's user, env and working dir; root filesystem read-only; /tmp and HOME writable (emptyDirs there)."""

    def __init__(self, root: Path, config: dict, scratch: Path):
        self.root, self.config = root, config["config"]
        self.tmp, self.home = scratch / "tmp", scratch / "home"
        uid, gid = (int(x) for x in self.config["User"].split(":"))
        for folder in (self.tmp, self.home):
            folder.mkdir(parents=True, exist_ok=True)
            os.chown(folder, uid, gid)
        self.uid, self.gid = uid, gid

    def run(self, argv, entrypoint=False, env=None, timeout=300):
        script = ('set -e; R=$0; T=$1; H=$2; U=$3; W=$4; shift 5; '
                  'mount --bind "$R" "$R"; mount -o remount,bind,ro "$R"; '
                  'mount -t proc proc "$R/proc"; mount --rbind /dev "$R/dev"; '
                  'mount --bind "$T" "$R/tmp"; mount --bind "$H" "$R$W"; '
                  'exec chroot --userspec="$U" "$R" /usr/bin/env -i -C "$W" "$@"')
        variables = dict(item.split("=", 1) for item in self.config["Env"])
        variables.update(env or {})
        command = (self.config["Entrypoint"] if entrypoint else []) + list(argv)
        full = ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script,
                str(self.root), str(self.tmp), str(self.home), f"{self.uid}:{self.gid}", self.config["WorkingDir"],
                "--"] + [f"{k}={v}" for k, v in variables.items()] + command
        return subprocess.run(full, capture_output=True, text=True, timeout=timeout, check=False)

    def python(self, code, env=None):
        return self.run(["python3", "-c", code], env=env)


@pytest.fixture(scope="module")
def container(rootfs, image, tmp_path_factory):
    return Container(rootfs, image["config"], tmp_path_factory.mktemp("container"))


# -- the archive ------------------------------------------------------------------------------------------------

def test_the_archive_is_an_oci_image_layout(layout, image):
    entries = layout["entries"]
    assert json.loads(entries["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    index, descriptor, manifest, config = image["index"], image["descriptor"], image["manifest"], image["config"]
    assert index["schemaVersion"] == 2 and index["mediaType"] == "application/vnd.oci.image.index.v1+json"
    # containerd's import names the image after io.containerd.image.name, skopeo and the OCI tools after ref.name
    assert descriptor["annotations"] == {"io.containerd.image.name": NAME,
                                         "org.opencontainers.image.ref.name": NAME}
    assert descriptor["mediaType"] == manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    assert manifest["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
    referenced = [descriptor, manifest["config"], *manifest["layers"]]
    for desc in referenced:  # every descriptor names its blob's exact size and digest
        data = blob(layout, desc["digest"])
        assert len(data) == desc["size"] and sha256(data) == desc["digest"], desc["digest"]
    blobs = {name for name in entries if name.startswith("blobs/")}
    assert blobs == {f"blobs/sha256/{d['digest'].split(':')[1]}" for d in referenced}, "an orphan or missing blob"
    assert config["os"] == "linux" and config["architecture"] == "amd64"
    assert config["rootfs"]["type"] == "layers"
    assert len(config["rootfs"]["diff_ids"]) == len(manifest["layers"]) == 3
    for layer, diff_id in zip(manifest["layers"], config["rootfs"]["diff_ids"]):
        assert layer["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
        assert sha256(gzip.decompress(blob(layout, layer["digest"]))) == diff_id


def test_the_archive_is_written_reproducibly(layout, image):
    """Sorted entries, owned by root, one mtime (SOURCE_DATE_EPOCH, as recorded); the image created then."""
    record = json.loads(RECORD.read_text())
    members = layout["members"]
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert {m.mtime for m in members} == {record["source_date_epoch"]}
    assert image["config"]["created"] == record["created"]


def test_the_recorded_digest_is_the_archives(archive, image):
    record = json.loads(RECORD.read_text())
    assert record["image"] == NAME
    assert record["digest"] == image["descriptor"]["digest"]
    assert record["archive_sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert record["size"] == archive.stat().st_size
    assert [layer["digest"] for layer in record["layers"]] == [d["digest"] for d in image["manifest"]["layers"]]
    for name in ("image/debian.lock", "requirements/runtime.lock", "collection tarball (content)"):
        assert re.fullmatch(r"[0-9a-f]{64}", record["inputs"][name]), name


# -- the root filesystem ----------------------------------------------------------------------------------------

def test_it_runs_as_a_non_root_user_on_a_read_only_root(image, rootfs, container):
    config = image["config"]["config"]
    uid, gid = (int(x) for x in config["User"].split(":"))  # numeric: kubelet's runAsNonRoot can check it
    assert uid != 0 and gid != 0
    users = {line.split(":")[2]: line.split(":") for line in (rootfs / "etc/passwd").read_text().splitlines()}
    home = dict(item.split("=", 1) for item in config["Env"])["HOME"]
    assert users[str(uid)][5] == home == config["WorkingDir"]
    # every command of these tests runs so: as that user, its root filesystem mounted read-only
    proc = container.run(["sh", "-c", "id -u; id -g; pwd; awk '$5 == \"/\" {print $6}' /proc/self/mountinfo"])
    assert proc.stdout.split() == [str(uid), str(gid), home, proc.stdout.split()[-1]], proc.stdout + proc.stderr
    assert "ro" in proc.stdout.split()[-1].split(","), proc.stdout


def test_the_entrypoints(image, rootfs, container):
    config = image["config"]["config"]
    assert config["Entrypoint"] == ["/usr/bin/tini", "--"] and config["Cmd"] == ["c5c3-orders-controller"]
    for name in ENTRYPOINTS:
        path = rootfs / "usr/local/bin" / name
        assert path.is_file() and path.stat().st_mode & 0o111, name
        interpreter = path.read_text().splitlines()[0][2:]
        assert (rootfs / interpreter.lstrip("/")).exists(), interpreter
    proc = container.run(["c5c3-orders-controller", "--help"], entrypoint=True)  # tini as PID 1, as a Pod runs it
    assert proc.returncode == 0 and "--kubeconfig" in proc.stdout and "--state-dir" in proc.stdout, proc.stderr
    proc = container.run(["c5c3-orders-pass", "--help"], entrypoint=True)
    assert proc.returncode == 0 and "c5c3.orders.reconcile" in proc.stdout, proc.stderr
    # the install role's Deployment runs the module with python3 on PATH
    proc = container.run(["python3", "-m", "c5c3_orders_controller", "--version"])
    assert proc.returncode == 0 and proc.stdout.strip() == VERSION, proc.stdout + proc.stderr


def test_the_collection_and_the_controller_import(container):
    code = ("import ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding as sharding; "
            "import c5c3_orders_controller, c5c3_orders_controller.controller, c5c3_orders_controller.runner; "
            "import kubernetes, boto3, prometheus_client, ansible_runner, ansible.release as rel; "
            "print(sharding.__file__, c5c3_orders_controller.__file__, c5c3_orders_controller.__version__, "
            "rel.__version__)")
    proc = container.python(code, env={"PYTHONPATH": COLLECTIONS})
    assert proc.returncode == 0, proc.stderr
    sharding, controller, version, ansible_version = proc.stdout.split()
    assert sharding.startswith(ORDERS + "/plugins/") and controller.startswith(ORDERS + "/controller/")
    assert version == VERSION
    assert f"ansible-core=={ansible_version}" in (REPO / "requirements/runtime.lock").read_text()
    # without PYTHONPATH the controller finds the installed collection by itself (collection.py)
    proc = container.python("import c5c3_orders_controller.collection as c; print(c.shard_of.__module__)")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("passes.sharding"), proc.stderr


def test_the_installed_collections(container):
    proc = container.run(["ansible-galaxy", "collection", "list", "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)[COLLECTIONS + "/ansible_collections"]
    assert listed["c5c3.orders"]["version"] == VERSION
    assert listed["kubernetes.core"]["version"].split(".")[0] == "6"  # galaxy.yml: >=6.0.0,<7.0.0
    assert GALAXY["dependencies"] == {"kubernetes.core": ">=6.0.0,<7.0.0"}


def test_botocore_keeps_the_models_the_rgw_edge_uses(container):
    services = set()
    for source in (REPO / "plugins/module_utils/rgw").glob("*.py"):
        services |= set(re.findall(r'^\s+service = "([a-z0-9-]+)"', source.read_text(), re.M))
    assert services >= {"iam", "s3"}
    code = ("import boto3; s = boto3.session.Session(); "
            + "; ".join(f"s.client({svc!r}, region_name='us-east-1', endpoint_url='http://127.0.0.1:9', "
                        "aws_access_key_id='x', aws_secret_access_key='y')" for svc in sorted(services))
            + "; print('ok')")
    proc = container.python(code)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_bytecode_carries_no_timestamps(rootfs):
    """Every .pyc is unchecked-hash based (PEP 552: flags 0b01), so neither mtimes nor a read-only root matter."""
    pycs = list(rootfs.rglob("*.pyc"))
    assert len(pycs) > 2000
    flags = {}
    for pyc in pycs:
        with open(pyc, "rb") as fh:
            flags.setdefault(int.from_bytes(fh.read(8)[4:8], "little"), []).append(pyc)
    assert set(flags) == {1}, {k: [str(p) for p in v[:3]] for k, v in flags.items()}


def test_no_build_leftovers(rootfs):
    for rel in ("etc/resolv.conf", "etc/hostname", "etc/apt", "var/lib/apt", "var/cache/apt", "var/log/apt",
                "var/lib/dpkg/status-old", "opt/c5c3-orders/bin/pip", "opt/c5c3-orders/bin/ansible-test"):
        assert not (rootfs / rel).exists(), rel
    for rel in ("usr/share/man", "usr/share/locale", "usr/share/bash-completion"):  # dpkg's path excludes
        assert not [p for p in (rootfs / rel).rglob("*") if not p.is_dir()], rel
    for folder in ("dev", "tmp", "runner"):
        assert not list((rootfs / folder).iterdir()), folder
    docs = {p.name for p in (rootfs / "usr/share/doc").rglob("*") if p.is_file()}
    assert docs == {"copyright"}, docs - {"copyright"}
    assert not list(rootfs.glob("opt/c5c3-orders/lib/python3.11/site-packages/pip"))
    hidden = [p.name for p in (rootfs / ORDERS.lstrip("/")).iterdir() if p.is_dir() and p.name.startswith(".")]
    assert not hidden, f"the collection tarball brought the checkout's {hidden} (galaxy.yml build_ignore)"


# -- a pass ------------------------------------------------------------------------------------------------------

def test_a_pass_without_a_cluster_fails_and_says_so(container):
    proc = container.run(["c5c3-orders-pass", "-e", "c5c3_reconcile_kubeconfig=/nonexistent"], entrypoint=True)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "cannot load the cluster configuration" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("c5c3-orders-pass: the pass FAILED") and "rc=2" in last, last


def test_ansible_runner_runs_the_pass_as_awx_does(stack_env, rootfs, container):
    """A check-mode pass over the management cluster: ``ansible-runner run <dir> -p reconcile.yml`` with the image's
    private data dir, the connection given as AWX gives it (env/envvars, env/cmdline)."""
    private = container.tmp / "pd"
    shutil.rmtree(private, ignore_errors=True)
    shutil.copytree(rootfs / "usr/share/c5c3-orders/runner", private)
    (private / "env").mkdir()
    (private / "kubeconfig").write_text(flat_kubeconfig(Path(stack_env["KUBECONFIG"])))
    envvars = {"K8S_AUTH_KUBECONFIG": "/tmp/pd/kubeconfig"}
    if stack_env.get("C5C3_KEYSTONE_INTERNAL_URLS"):
        envvars["C5C3_KEYSTONE_INTERNAL_URLS"] = stack_env["C5C3_KEYSTONE_INTERNAL_URLS"]
    (private / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    (private / "env" / "cmdline").write_text("--check")
    for path in [private, *private.rglob("*")]:
        os.chown(path, container.uid, container.gid)
    proc = container.run(["ansible-runner", "run", "/tmp/pd", "-p", "reconcile.yml"], entrypoint=True)
    (artifacts,) = (private / "artifacts").iterdir()
    stdout = (artifacts / "stdout").read_text()
    assert proc.returncode == 0, stdout[-3000:] + proc.stderr[-2000:]
    assert (artifacts / "status").read_text().strip() == "successful"
    assert (artifacts / "rc").read_text().strip() == "0"
    match = SUMMARY.search(stdout)
    assert match and match.group("clusters").split(",")[0] == "management", stdout[-3000:]
    assert "--check" in json.loads((artifacts / "command").read_text())["command"]
    print(f"\n{shlex.join(['ansible-runner', 'run', '/tmp/pd', '-p', 'reconcile.yml'])}: {match.group(0)}")
