"""Container images without a registry: write an OCI image archive, import any OCI archive into the node.

No container registry is reachable from this machine, so every image the node runs is made here and
imported into its containerd (namespace ``k8s.io``, the one the kubelet's CRI uses):

- ``write_archive`` packs files (static binaries, a few text files) into a one-layer OCI image layout
  archive. The archive is reproducible: entries sorted, owner 0:0, every timestamp ``SOURCE_DATE_EPOCH``
  (default 0), gzip header without name or time, JSON with sorted keys. The same inputs give the same bytes,
  so the same image digest.
- ``import_archive`` loads any OCI (or docker-save) archive into the node's containerd with
  ``ctr images import``; the controller image another part of the build writes to ``.image/*.tar`` goes the
  same way (``python -m c5c3stack import-image .image/controller.tar``).
"""
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .process import StackError, run

NAMESPACE = "k8s.io"  # containerd's namespace for images and containers of the CRI (the kubelet's)
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


@dataclass(frozen=True)
class ImageFile:
    """One file of an image: its content comes from ``source`` (a path) or ``data`` (bytes)."""

    path: str                 # inside the image, e.g. "pause" or "etc/passwd"
    source: Optional[Path] = None
    data: Optional[bytes] = None
    mode: int = 0o755

    def content(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.source is None:
            raise StackError(f"image file {self.path}: neither source nor data")
        return self.source.read_bytes()


@dataclass(frozen=True)
class ImageSpec:
    """What ``write_archive`` packs: a full reference (``c5c3.local/pause:1``) and the image's files."""

    name: str
    files: Sequence[ImageFile]
    entrypoint: Sequence[str]
    cmd: Sequence[str] = ()
    env: Sequence[str] = ("PATH=/",)
    user: str = ""
    dirs: Sequence[Tuple[str, int]] = (("etc", 0o755), ("tmp", 0o1777))
    labels: Mapping[str, str] = field(default_factory=dict)


def _epoch() -> int:
    return int(os.environ.get("SOURCE_DATE_EPOCH", "0"))


def _rfc3339(epoch: int) -> str:
    import datetime
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _json(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _tar_entry(tar: tarfile.TarFile, name: str, data: Optional[bytes], mode: int, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
    info.mode = mode
    if data is None:
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def _layer(spec: ImageSpec, epoch: int) -> bytes:
    """The uncompressed layer tar: parent directories first, every entry sorted."""
    entries: Dict[str, Tuple[Optional[bytes], int]] = {}
    for d, mode in spec.dirs:
        entries[d.strip("/") + "/"] = (None, mode)
    for f in spec.files:
        path = f.path.strip("/")
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            entries.setdefault("/".join(parts[:i]) + "/", (None, 0o755))
        entries[path] = (f.content(), f.mode)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            data, mode = entries[name]
            _tar_entry(tar, name.rstrip("/") if data is None else name, data, mode, epoch)
    return buf.getvalue()


def _gzip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as gz:
        gz.write(data)
    return buf.getvalue()


def split_reference(name: str) -> Tuple[str, str]:
    """``repo[:tag]`` -> (repo, tag); the tag defaults to ``latest``. Digests are not accepted."""
    if "@" in name:
        raise StackError(f"image name {name!r}: give a tag, not a digest")
    repo, _, tag = name.rpartition(":")
    if not repo or "/" in tag:
        return name, "latest"
    return repo, tag


def write_archive(spec: ImageSpec, out: Path) -> str:
    """Write ``spec`` as an OCI image layout archive at ``out``; returns the manifest digest."""
    epoch = _epoch()
    layer_tar = _layer(spec, epoch)
    layer = _gzip(layer_tar)
    runtime = {"Entrypoint": list(spec.entrypoint), "Cmd": list(spec.cmd) or None, "Env": list(spec.env),
               "User": spec.user or None, "WorkingDir": "/", "Labels": dict(spec.labels) or None}
    config = {
        "architecture": "amd64", "os": "linux", "created": _rfc3339(epoch),
        "config": {k: v for k, v in runtime.items() if v is not None},
        "rootfs": {"type": "layers", "diff_ids": [_digest(layer_tar)]},
        "history": [{"created": _rfc3339(epoch), "created_by": "c5c3stack.images.write_archive"}],
    }
    config_blob = _json(config)
    manifest = {
        "schemaVersion": 2, "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": _digest(config_blob), "size": len(config_blob)},
        "layers": [{"mediaType": OCI_LAYER, "digest": _digest(layer), "size": len(layer)}],
    }
    manifest_blob = _json(manifest)
    _, tag = split_reference(spec.name)
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [{
        "mediaType": OCI_MANIFEST, "digest": _digest(manifest_blob), "size": len(manifest_blob),
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": tag},
    }]}
    files = {"oci-layout": _json({"imageLayoutVersion": "1.0.0"}), "index.json": _json(index)}
    for blob in (config_blob, manifest_blob, layer):
        files["blobs/sha256/" + hashlib.sha256(blob).hexdigest()] = blob
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            _tar_entry(tar, d, None, 0o755, epoch)
        for name in sorted(files):
            _tar_entry(tar, name, files[name], 0o644, epoch)
    tmp.replace(out)
    return _digest(manifest_blob)


def archive_images(path: Path) -> List[Tuple[str, str]]:
    """(name, manifest digest) of each image an OCI archive names by ``io.containerd.image.name``."""
    with tarfile.open(path) as tar:
        member = tar.extractfile("index.json")
        if member is None:
            raise StackError(f"{path}: no index.json (not an OCI image layout archive)")
        index = json.load(member)
    return [(m["annotations"]["io.containerd.image.name"], m["digest"]) for m in index.get("manifests", [])
            if "io.containerd.image.name" in m.get("annotations", {})]


def ctr_base(ctr: Path, address: Path) -> List[str]:
    return [str(ctr), "--address", str(address), "--namespace", NAMESPACE]


def present(ctr: Path, address: Path) -> Dict[str, str]:
    """Image name -> manifest (target) digest of every image in the node's containerd."""
    out = run(ctr_base(ctr, address) + ["images", "list"], timeout=60)
    images = {}
    for line in out.splitlines()[1:]:
        cols = line.split()
        if len(cols) >= 3:
            images[cols[0]] = cols[2]
    return images


def import_archive(ctr: Path, address: Path, archive: Union[str, Path], base_name: str = "",
                   log: Optional[Path] = None) -> List[str]:
    """Import an OCI or docker archive into the node's containerd (unpacked for overlayfs, the CRI's
    snapshotter) unless every image it names is already there with the same digest; returns their names.

    ``base_name`` is for archives whose index names images by tag only
    (``org.opencontainers.image.ref.name``): ``ctr`` then calls them ``<base_name>:<tag>``.
    """
    archive = Path(archive)
    if not archive.is_file():
        raise StackError(f"{archive}: no such image archive")
    try:
        named = archive_images(archive)
    except (tarfile.TarError, KeyError, json.JSONDecodeError, StackError):
        named = []  # a docker-save archive or an index without names: let ctr decide
    if named:
        have = present(ctr, address)
        if all(have.get(name) == digest for name, digest in named):
            return [name for name, _ in named]
    args = ctr_base(ctr, address) + ["images", "import", "--snapshotter", "overlayfs", "--local"]
    if base_name:
        args += ["--base-name", base_name]
    out = run(args + [str(archive)], log=log, timeout=600)
    names = [name for name, _ in named] or re.findall(r"^unpacking (\S+) \(", out, re.M)
    if not names:
        raise StackError(f"ctr imported no named image from {archive}:\n{out[-2000:]}")
    return names
